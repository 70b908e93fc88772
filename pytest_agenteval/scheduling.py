"""Which items a process may run ahead, and the xdist scheduler that makes it safe.

Execute-ahead is only safe for items this process is *certain* to run.

* Without xdist every selected item runs here: submit them all.
* Under xdist with the default ``--dist load`` we replace the scheduler with
  the one of :func:`make_owned_scheduler`: item *i* of the collection belongs to worker
  ``gw{i % n}`` and is sent there as one unit, so a worker can submit all of
  its own items on its first touch. Items it receives that are not its own
  (a crashed worker's leftovers) run on demand.
* Under ``--dist loadfile`` / ``loadscope`` a case file is one unit: submit
  a file's items when the first of them arrives.
* Under any other mode (``worksteal``, ``each``, ``loadgroup``, or
  ``--agenteval-dist off``) nothing runs ahead: items run as they arrive.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

__all__ = ["Mode", "Prefetch", "make_owned_scheduler", "mode_for", "owner_of"]

Mode = Literal["all", "owned", "file", "none"]


def owner_of(index: int, workers: int) -> str:
    """The worker id that owns item ``index`` of the collection."""
    return f"gw{index % max(1, workers)}"


def mode_for(dist: str, agenteval_dist: str) -> Mode:
    """The prefetch mode of a worker, given the controller's dist mode."""
    if dist == "load" and agenteval_dist == "owned":
        return "owned"
    if dist in ("loadfile", "loadscope"):
        return "file"
    return "none"


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


class Prefetch:
    """Decides, on each item's first touch, which items to submit ahead."""

    def __init__(self, mode: Mode, worker_id: str | None = None, workers: int = 1) -> None:
        self.mode = mode
        self.worker_id = worker_id
        self.workers = workers
        self._started = False
        self._files: set[str] = set()

    def ahead(self, nodeid: str, items: Sequence[Any]) -> Iterable[Any]:
        """Items to submit now that ``nodeid`` is about to run (``items``: the collection)."""
        if self.mode == "all":
            if self._started:
                return []
            self._started = True
            return items
        if self.mode == "owned":
            if self._started:
                return []
            self._started = True
            ids = [it.nodeid for it in items]
            if nodeid not in ids or owner_of(ids.index(nodeid), self.workers) != self.worker_id:
                return []
            return [it for i, it in enumerate(items)
                    if owner_of(i, self.workers) == self.worker_id]
        if self.mode == "file":
            file = _file_of(nodeid)
            if file in self._files:
                return []
            self._files.add(file)
            return [it for it in items if _file_of(it.nodeid) == file]
        return []


def make_owned_scheduler(config: Any, log: Any) -> Any:
    """The ``--dist load`` scheduler with static ownership (xdist imported only when used)."""
    from xdist.scheduler import LoadScopeScheduling

    class _Owned(LoadScopeScheduling):  # type: ignore[misc]
        """``--dist load`` with static ownership: unit ``gwK`` goes to worker gwK."""

        _owner: dict[str, str]

        def schedule(self) -> None:
            if self.collection is None and self.collection_is_completed:
                first = next(iter(self.registered_collections.values()))
                self._owner = {nid: owner_of(i, self.numnodes) for i, nid in enumerate(first)}
            super().schedule()

        def _split_scope(self, nodeid: str) -> str:
            return self._owner.get(nodeid, nodeid)

        def remove_node(self, node: Any) -> str | None:
            # Unlike LoadScopeScheduling, do not send the crash item out again (it would
            # crash the replacement worker too, until --max-worker-restart runs out);
            # xdist reports it as failed, the rest of the dead worker's share is requeued.
            workload = self.assigned_work.pop(node)
            crash: str | None = next((nid for unit in workload.values()
                                      for nid, done in unit.items() if not done), None)
            if crash is None:
                return None
            workload[self._split_scope(crash)][crash] = True
            self.workqueue.update({scope: unit for scope, unit in workload.items()
                                   if not all(unit.values())})
            for other in self.assigned_work:
                self._reschedule(other)
            return crash

        def _assign_work_unit(self, node: Any) -> None:
            own = node.gateway.id
            if own in self.workqueue:
                self.workqueue.move_to_end(own, last=False)
            super()._assign_work_unit(node)

    return _Owned(config, log)

