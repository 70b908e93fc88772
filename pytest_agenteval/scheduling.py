"""Which items a process may run ahead, and the xdist scheduler that makes it safe.

Execute-ahead is only safe for items this process is *certain* to run.

* Without xdist every selected item runs here: submit them all.
* Under xdist with the default ``--dist load`` the controller uses
  :class:`OwnedScheduling`: the k-th case item of the collection belongs to
  worker ``gw{k % n}`` and is sent there at once, so the worker can submit all
  of its own items on its first touch. Items it receives that are not its own
  (a crashed worker's leftovers) run on demand. Every other test item is
  balanced the way xdist's ``load`` does it, and a collection without case
  items is scheduled by xdist's own ``LoadScheduling``, untouched.
* Under ``--dist loadfile`` / ``loadscope`` a case file is one unit: submit
  a file's items when the first of them arrives.
* Under any other mode (``worksteal``, ``each``, ``loadgroup``, or
  ``--agenteval-dist off``) nothing runs ahead: items run as they arrive.

The schedulers speak xdist's ``Scheduling`` protocol only (``xdist.scheduler.
protocol``), never its private methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

__all__ = ["Mode", "OwnedScheduling", "Prefetch", "make_scheduler", "mode_for", "owner_of"]

Mode = Literal["all", "owned", "file", "none"]
IsCase = Callable[[str], bool]


def owner_of(rank: int, workers: int) -> str:
    """The worker id that owns the case item of ``rank`` (its position among case items)."""
    return f"gw{rank % max(1, workers)}"


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
    """Decides, on a case item's first touch, which case items to submit ahead.

    ``items`` are the case items of the collection, in collection order.
    """

    def __init__(self, mode: Mode, worker_id: str | None = None, workers: int = 1) -> None:
        self.mode = mode
        self.worker_id = worker_id
        self.workers = workers
        self._started = False
        self._files: set[str] = set()

    def ahead(self, nodeid: str, items: Sequence[Any]) -> Iterable[Any]:
        """Case items to submit now that ``nodeid`` is about to run."""
        if self.mode == "all":
            if self._started:
                return []
            self._started = True
            return items
        if self.mode == "owned":
            if self._started:
                return []
            own = self.owned(items)
            return own if any(it.nodeid == nodeid for it in own) else []
        if self.mode == "file":
            file = _file_of(nodeid)
            if file in self._files:
                return []
            self._files.add(file)
            return [it for it in items if _file_of(it.nodeid) == file]
        return []

    def owned(self, items: Sequence[Any]) -> list[Any]:
        """This worker's own case items (``owned`` mode), once: nothing later runs ahead."""
        self._started = True
        return [it for k, it in enumerate(items) if owner_of(k, self.workers) == self.worker_id]


class OwnedScheduling:
    """``--dist load`` for a collection with case items (xdist's ``Scheduling`` protocol).

    Case items are owned: the k-th goes to worker ``gw{k % n}``, all at once. Other
    items are dealt like xdist's ``LoadScheduling`` deals them: a first chunk per
    worker, then more whenever a worker has fewer than two left. When a worker
    dies, the item it was running is reported as crashed by xdist and not sent
    again (it would crash the next worker too); the rest of its work goes back
    to the queue.
    """

    def __init__(self, numnodes: int, is_case: IsCase, log: Any = None,
                 maxschedchunk: int | None = None) -> None:
        self.numnodes = numnodes
        self.is_case = is_case
        self.log = log
        self.maxschedchunk = maxschedchunk
        self.node2collection: dict[Any, list[str]] = {}
        self.node2pending: dict[Any, list[int]] = {}  # in the order sent
        self.collection: list[str] | None = None
        self.case_queue: list[int] = []
        self.queue: list[int] = []

    @property
    def nodes(self) -> list[Any]:
        return list(self.node2pending)

    @property
    def collection_is_completed(self) -> bool:
        return len(self.node2collection) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or self.case_queue or self.queue:
            return False
        return all(len(p) < 2 for p in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        return bool(self.case_queue or self.queue
                    or any(self.node2pending.values()))

    def add_node(self, node: Any) -> None:
        assert node not in self.node2pending
        self.node2pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        assert node in self.node2pending
        if self.collection is not None and list(collection) != self.collection:
            self._log(f"worker {node.gateway.id} collected other tests; it gets none")
            return
        self.node2collection[node] = list(collection)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.node2pending[node].remove(item_index)
        self._refill(node, duration)

    def mark_test_pending(self, item: str) -> None:
        assert self.collection is not None
        index = self.collection.index(item)
        (self.case_queue if self.is_case(item) else self.queue).insert(0, index)
        for node in self.nodes:
            self._refill(node)

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError  # only for --dist worksteal

    def remove_node(self, node: Any) -> str | None:
        pending = self.node2pending.pop(node)
        if not pending:
            return None
        assert self.collection is not None
        crash, rest = pending[0], pending[1:]  # the worker runs its items in the order sent
        self.case_queue.extend(i for i in rest if self.is_case(self.collection[i]))
        self.queue.extend(i for i in rest if not self.is_case(self.collection[i]))
        for other in self.nodes:
            self._refill(other)
        return self.collection[crash]

    def schedule(self) -> None:
        assert self.collection_is_completed
        if self.collection is not None:  # a replacement worker joined: give it work
            for node in self.nodes:
                self._refill(node)
            return
        collections = list(self.node2collection.values())
        if any(c != collections[0] for c in collections[1:]):
            self._log("**Different tests collected, aborting run**")
            return
        self.collection = collections[0]
        self._deal()

    def _deal(self) -> None:
        assert self.collection is not None
        cases = [i for i, nid in enumerate(self.collection) if self.is_case(nid)]
        self.queue = [i for i, nid in enumerate(self.collection) if not self.is_case(nid)]
        by_id = {node.gateway.id: node for node in self.nodes}
        for k, index in enumerate(cases):
            owner = by_id.get(owner_of(k, self.numnodes))
            if owner is None:
                self.case_queue.append(index)
            else:
                self.node2pending[owner].append(index)
        for node, pending in self.node2pending.items():
            if pending:
                node.send_runtest_some(list(pending))
        if self.queue:
            per_node = len(self.queue) // max(1, len(self.nodes))
            chunk = max(2, min(per_node // 4, self.maxschedchunk or len(self.queue)))
            for node in self.nodes:
                self._send(node, self.queue, chunk)
        for node in self.nodes:
            self._refill(node)

    def _refill(self, node: Any, duration: float = 0) -> None:
        """Top up a worker (xdist ``load``'s heuristic), or shut it down when all is dealt."""
        if node.shutting_down:
            return
        if self.case_queue:
            self._send(node, self.case_queue, len(self.case_queue))
        if self.queue:
            pending = self.node2pending[node]
            low = max(2, len(self.queue) // len(self.node2pending) // 4)
            high = max(2, len(self.queue) // len(self.node2pending) // 2)
            if len(pending) >= low or (duration >= 0.1 and len(pending) >= 2):
                return  # enough to do (or slow items: wait before sending more)
            chunk = max(2 - len(pending), self.maxschedchunk or len(self.queue))
            self._send(node, self.queue, min(high - len(pending), chunk))
            return
        if not self.case_queue:
            node.shutdown()

    def _send(self, node: Any, queue: list[int], num: int) -> None:
        chunk = queue[:num]
        if chunk:
            del queue[:num]
            self.node2pending[node].extend(chunk)
            node.send_runtest_some(chunk)

    def _log(self, *args: Any) -> None:
        if self.log is not None:
            self.log(*args)


class DeferredScheduling:
    """Chooses the scheduler once the collection is known (xdist's ``Scheduling`` protocol).

    Until then it keeps the workers and their collections; then it hands them to
    :class:`OwnedScheduling` when case items were collected, and to xdist's own
    ``LoadScheduling`` otherwise, so a run without case items is scheduled
    exactly as without this plugin.
    """

    def __init__(self, config: Any, log: Any, is_case: IsCase) -> None:
        from xdist.workermanage import parse_tx_spec_config

        self.config = config
        self.log = log
        self.is_case = is_case
        self.numnodes = len(parse_tx_spec_config(config))
        self._nodes: list[Any] = []
        self._collections: dict[Any, list[str]] = {}
        self.inner: Any = None

    @property
    def nodes(self) -> list[Any]:
        return list(self.inner.nodes) if self.inner is not None else list(self._nodes)

    @property
    def collection_is_completed(self) -> bool:
        if self.inner is not None:
            return bool(self.inner.collection_is_completed)
        return len(self._collections) >= self.numnodes

    @property
    def tests_finished(self) -> bool:
        return self.inner is not None and bool(self.inner.tests_finished)

    @property
    def has_pending(self) -> bool:
        return self.inner is not None and bool(self.inner.has_pending)

    def add_node(self, node: Any) -> None:
        if self.inner is not None:
            self.inner.add_node(node)
        else:
            self._nodes.append(node)

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        if self.inner is not None:
            self.inner.add_node_collection(node, collection)
        else:
            self._collections[node] = list(collection)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        self.inner.mark_test_complete(node, item_index, duration)

    def mark_test_pending(self, item: str) -> None:
        self.inner.mark_test_pending(item)

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        self.inner.remove_pending_tests_from_node(node, indices)

    def remove_node(self, node: Any) -> str | None:
        if self.inner is not None:
            crash: str | None = self.inner.remove_node(node)
            return crash
        self._nodes.remove(node)
        self._collections.pop(node, None)
        return None

    def schedule(self) -> None:
        if self.inner is None:
            self.inner = self._choose()
            for node in self._nodes:
                self.inner.add_node(node)
            for node, collection in self._collections.items():
                self.inner.add_node_collection(node, collection)
        self.inner.schedule()

    def _choose(self) -> Any:
        first = next(iter(self._collections.values()), [])
        if any(self.is_case(nid) for nid in first):
            return OwnedScheduling(self.numnodes, self.is_case, self.log,
                                   self.config.getoption("maxschedchunk", None))
        from xdist.scheduler import LoadScheduling

        return LoadScheduling(self.config, self.log)


def make_scheduler(config: Any, log: Any, is_case: IsCase) -> DeferredScheduling:
    return DeferredScheduling(config, log, is_case)
