"""What the xdist controller and its workers tell each other outside xdist's protocol.

Two promises need it, and a folder of small files carries both (the controller
makes it and hands its path to each worker in ``workerinput``):

* **Ctrl-C on the controller alone stops the workers' calls within a second.**
  xdist only stops *sending* items; a worker would go on with the items it holds,
  and the conversations it runs ahead, for up to ten seconds. On Ctrl-C the
  controller writes ``stop``; each worker watches for it and interrupts its own
  main thread, which is exactly what Ctrl-C in a terminal does to the whole group.
* **No conversation is sent to the agent twice.** Before a worker sends an item's
  first turn it appends the item's node id to its journal ``sent-<worker>``. When
  a worker crashes the controller writes ``crashed``; from then on a worker that
  is handed an item (the crashed worker's leftovers) first looks it up in the
  other journals, and an item already sent becomes an ERROR of kind
  ``not_resent`` instead of a second conversation (a second lead, a second
  booking).

A worker on another host (``--tx socket=…``, ``--tx ssh=…``) cannot reach that
folder. It runs with a :class:`BlindLink` instead: no stop watch (Ctrl-C on the
controller ends its calls only when xdist tears its gateway down), no journal,
and — under the owned scheduling, where a case item that a worker does not own
reaches it only as a crashed worker's leftover — it sends no leftover at all,
since it cannot tell which of them the dead worker had sent: each becomes an
ERROR of kind ``not_resent``. "No conversation is sent twice" still holds; the
dead worker's unsent items are not run (the run is incomplete anyway).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ROOTDIR_KEY", "WORKERINPUT_KEY", "BlindLink", "ControllerLink", "WorkerLink"]

WORKERINPUT_KEY = "agenteval_link"
#: the controller's rootdir: a worker in the same checkout sees the same files and folders
ROOTDIR_KEY = "agenteval_rootdir"
_STOP, _CRASHED, _SENT = "stop", "crashed", "sent-"
#: how often a worker looks for the controller's stop: well within the promised second
_WATCH_S = 0.1


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.touch()


class ControllerLink:
    """The controller's side: makes the folder, says stop and crashed, removes it."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="agenteval-link-"))

    def stop(self) -> None:
        _touch(self.dir / _STOP)

    def crashed(self) -> None:
        _touch(self.dir / _CRASHED)

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


class WorkerLink:
    """A worker's side: its journal, the others' journals, and the stop watch."""

    def __init__(self, folder: str, worker_id: str) -> None:
        self.dir = Path(folder)
        self.worker_id = worker_id
        #: asked before each item's first send: a string, not a Path made each time
        self._crashed = os.fspath(self.dir / _CRASHED)
        self._fd = os.open(self.dir / f"{_SENT}{worker_id}",
                           os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        #: journal files read so far: name → (bytes read, node ids)
        self._others: dict[str, tuple[int, set[str]]] = {}
        self._done = threading.Event()
        self._watch: threading.Thread | None = None
        #: called on the watch thread when the controller says stop, before the interrupt
        self.on_stop: Callable[[], None] | None = None

    # -- the journal (called on the engine's loop, before an item's first send) -------------

    def sending(self, key: str) -> None:
        """Journal ``key`` as sent; one unbuffered append, so a crash right after keeps it."""
        os.write(self._fd, f"{key}\n".encode())

    def refusal(self, key: str) -> str | None:
        """Why ``key`` must not be sent (a crashed worker sent it already), else ``None``."""
        sender = self.sent_by(key)
        if sender is None:
            return None
        return (f"not sent again: worker {sender} sent this conversation to the agent and "
                "crashed before reporting it; a second send could repeat what the agent did "
                "(a lead, a booking)")

    def sent_by(self, key: str) -> str | None:
        """The worker that already sent ``key``, once a worker has crashed (else ``None``)."""
        if not os.path.exists(self._crashed):
            return None
        for path in self.dir.glob(f"{_SENT}*"):
            other = path.name[len(_SENT):]
            if other == self.worker_id:
                continue
            if key in self._read(path):
                return other
        return None

    def _read(self, path: Path) -> set[str]:
        seen, keys = self._others.get(path.name, (0, set()))
        try:
            with path.open("rb") as f:
                f.seek(seen)
                chunk = f.read()
        except OSError:
            return keys
        whole = chunk[:chunk.rfind(b"\n") + 1]  # a line cut by the crash is not a send yet
        keys |= set(whole.decode(errors="replace").splitlines())
        self._others[path.name] = (seen + len(whole), keys)
        return keys

    # -- the stop watch ---------------------------------------------------------------------

    def watch(self) -> None:
        """Interrupt this worker's main thread as soon as the controller says stop."""
        if self._watch is None:
            self._watch = threading.Thread(target=self._watching, name="agenteval-stop-watch",
                                           daemon=True)
            self._watch.start()

    def _watching(self) -> None:
        stop = self.dir / _STOP
        while not self._done.wait(_WATCH_S):
            if stop.exists():
                if self.on_stop is not None:
                    self.on_stop()  # no new call from here on, even before pytest unwinds
                _interrupt_main()
                return

    def close(self) -> None:
        self._done.set()
        fd, self._fd = self._fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)


class BlindLink(WorkerLink):
    """A worker's side when the controller's folder is out of reach (a worker on another
    host): nothing to watch or journal, and no leftover of another worker is sent.

    Only for the owned scheduling: ``cases`` gives the case items of the collection in
    order, whose k-th belongs to ``gw{k mod workers}``.
    """

    def __init__(self, worker_id: str, workers: int,
                 cases: Callable[[], Sequence[Any]]) -> None:  # no folder: no super().__init__
        self.worker_id = worker_id
        self.workers = workers
        self._cases = cases
        self._owners: dict[str, str] | None = None
        self._fd = -1
        self._done = threading.Event()
        self.on_stop = None

    def refusal(self, key: str) -> str | None:
        if self._owners is None:
            from .scheduling import owner_of

            self._owners = {it.nodeid: owner_of(k, self.workers)
                            for k, it in enumerate(self._cases())}
        owner = self._owners.get(key)
        if owner is None or owner == self.worker_id:
            return None
        return (f"not sent: worker {owner}, which owned this conversation, crashed, and this "
                f"worker ({self.worker_id}, on another host than the controller) cannot read "
                "its journal of sent conversations, so it may have sent it already; a second "
                "send could repeat what the agent did (a lead, a booking)")

    def sent_by(self, key: str) -> str | None:
        return None

    def sending(self, key: str) -> None:
        pass

    def watch(self) -> None:
        pass


def _interrupt_main() -> None:
    """Ctrl-C for the main thread: a real SIGINT to it where possible (it also wakes a main
    thread blocked in a lock), else the simulated one."""
    main = threading.main_thread().ident
    if hasattr(signal, "pthread_kill") and main is not None:
        signal.pthread_kill(main, signal.SIGINT)
    else:  # pragma: no cover - Windows
        import _thread

        _thread.interrupt_main()
