"""Case files compiled once per xdist run, not once per worker.

Every xdist worker collects every case file (xdist checks that they all collected
the same items), so under ``-n 8`` each file was parsed, validated and compiled
eight times: at 10,000 cases, 30 s of CPU on two cores before the first request.
Here the first worker to reach a file compiles it and leaves the compiled items
(pickled) in the controller's link folder (see :mod:`._workers`); the others load
them, which is about nine times cheaper than compiling.

- **Keyed on content**: the file's bytes, its name in the run, the ledger's and the
  taxonomy's bytes and this plugin's version. A file changed amid the collection is
  simply another key.
- **One compiler per file**: the first worker claims it (an exclusive create); a
  worker that finds a claim waits for its result while the claimer lives, and
  compiles the file itself when the claimer is gone, failed, or takes too long.
- **Only what pickles by name in this plugin**: an item whose rule type comes from
  a conftest or another package (a function pickled by reference could resolve to
  another one in another process) is compiled by every worker, as before. So is a
  file with an error: each worker reports its own.

A worker that cannot reach the folder (another host) compiles everything itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["SharedPlans", "context"]

T = TypeVar("T")

#: how often a waiting worker looks for the claimer's result
_POLL_S = 0.005
#: how long a worker waits for a live claimer: a base, plus time for a large file
_WAIT_BASE_S = 10.0
_WAIT_PER_BYTE_S = 20e-6
#: the packages whose functions and classes may be pickled by name
_OWN = frozenset({"pytest_agenteval", "builtins", "re", "enum", "collections", "copyreg",
                  "pydantic", "pydantic_core", "typing", "datetime", "decimal", "pathlib",
                  "functools"})


class _Foreign(Exception):
    pass


class _Pickler(pickle.Pickler):
    """Refuses a function or class from outside this plugin (and the standard types)."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, type) or (callable(obj) and hasattr(obj, "__qualname__")):
            module = getattr(obj, "__module__", None) or ""
            if module.partition(".")[0] not in _OWN:
                raise _Foreign(f"{module}.{getattr(obj, '__qualname__', '?')}")
        return NotImplemented


def _dumps(value: Any) -> bytes | None:
    buf = io.BytesIO()
    try:
        _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    except (_Foreign, pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return None
    return buf.getvalue()


class SharedPlans:
    """A worker's view of the run's compiled case files (``<link folder>/plans``)."""

    def __init__(self, folder: Path, context: bytes) -> None:
        self.dir = folder / "plans"
        self.dir.mkdir(exist_ok=True)
        self._context = context
        #: how this process got its files: compiled (and shared), loaded, compiled alone
        self.counts = {"compiled": 0, "loaded": 0, "alone": 0}

    def get(self, path: Path, name: str, compile: Callable[[], T]) -> T:
        """``compile()``'s value for the case file ``path`` (``name`` in this run), from
        the worker that compiled it first when there is one."""
        try:
            data = path.read_bytes()
        except OSError:
            return compile()  # the loader says what is wrong with it
        key = hashlib.blake2b(self._context + name.encode() + b"\0" + data,
                              digest_size=20).hexdigest()
        entry = self.dir / f"{key}.pickle"
        got = _load(entry)
        if got is not None:
            self.counts["loaded"] += 1
            return got  # type: ignore[no-any-return]
        claim = self.dir / f"{key}.claim"
        try:
            fd = os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            got = self._wait(entry, claim, _WAIT_BASE_S + len(data) * _WAIT_PER_BYTE_S)
            if got is not None:
                self.counts["loaded"] += 1
                return got  # type: ignore[no-any-return]
            self.counts["alone"] += 1
            return compile()
        except OSError:
            self.counts["alone"] += 1
            return compile()
        try:
            os.write(fd, str(os.getpid()).encode())  # who is compiling it (see _wait)
        except OSError:
            pass
        finally:
            os.close(fd)
        try:
            value = compile()
        except BaseException:
            _touch(self.dir / f"{key}.failed")  # the waiters compile it themselves
            raise
        blob = _dumps(value)
        if blob is None:
            _touch(self.dir / f"{key}.failed")
            self.counts["alone"] += 1
            return value
        tmp = self.dir / f"{key}.{os.getpid()}.tmp"
        try:
            tmp.write_bytes(blob)
            os.replace(tmp, entry)  # whole or not at all, for the readers
        except OSError:
            _touch(self.dir / f"{key}.failed")
            with contextlib.suppress(OSError):
                tmp.unlink()
        self.counts["compiled"] += 1
        return value

    def _wait(self, entry: Path, claim: Path, budget_s: float) -> Any:
        """The claimer's result, or ``None`` when it failed, died or took too long."""
        failed = entry.with_suffix(".failed")
        deadline = time.monotonic() + budget_s
        pid = None
        checked = 0.0
        while time.monotonic() < deadline:
            got = _load(entry)
            if got is not None or entry.exists():  # a result, or one that cannot be read
                return got
            if failed.exists():
                return None
            now = time.monotonic()
            if now - checked > 0.2:  # is the claimer still alive?
                checked = now
                if pid is None:
                    with contextlib.suppress(OSError, ValueError):
                        pid = int(claim.read_text() or "0") or None
                if pid is not None and not _alive(pid):
                    return _load(entry)
            time.sleep(_POLL_S)
        return None


def _load(entry: Path) -> Any:
    try:
        blob = entry.read_bytes()
    except OSError:
        return None
    try:
        return pickle.loads(blob)
    except Exception:  # written by another version, or cut short: compile instead
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: it exists
    return True


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.touch()


def context(*parts: bytes | str | None) -> bytes:
    """What compiling a case file depends on besides the file itself, as key bytes."""
    h = hashlib.blake2b(digest_size=20)
    for part in parts:
        raw = b"\xff" if part is None else part.encode() if isinstance(part, str) else part
        h.update(len(raw).to_bytes(8, "little") + raw)
    return h.digest()
