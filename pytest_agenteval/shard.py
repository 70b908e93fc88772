"""``--agenteval-shard i/n``: one machine's share of a run, balanced by expected turns.

Every machine collects the same items and computes the same partition, so the
``n`` runs together run every item exactly once:

* the case and scenario items that ``-k``/``-m``/``--deselect`` kept are dealt by
  weight — a case weighs 1, a scenario its number of turns, a ``simulate:`` scenario
  its ``max_turns`` (each trial of ``--agenteval-repeat`` is an item of its own) —
  greedily, heaviest first (ties by node id), each to the lightest shard so far
  (ties to the lowest index): the weights of any two shards differ by at most one
  item's weight;
* the other items (ledger examples, Python tests) are dealt the same way by count;
* an item that stands for a file that could not be loaded (``[load]``) stays in
  every shard: each shard's record says that it is incomplete.

The items of the other shards go through ``pytest_deselected`` like those of
``-k``, and the run record's ``run.shard`` says what this shard holds (and a hash
of the whole partitioned collection, which ``agenteval merge`` checks).
Under xdist each worker selects from its own collection, identically, so the
controller expects exactly the shard's items.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .plan import ItemPlan

__all__ = ["SHARD_INFO", "WORKEROUTPUT_KEY", "Shard", "Sharding", "collection_sha256",
           "item_weight", "parse_shard", "partition", "run_meta", "select", "take_worker_output"]

#: what this process selected (``run.shard``), once it has collected
SHARD_INFO = pytest.StashKey[dict[str, Any]]()
#: the key under which an xdist worker hands its ``run.shard`` to the controller
WORKEROUTPUT_KEY = "agenteval_shard"

_SPEC = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> Shard:
    """``"2/4"`` → ``Shard(2, 4)``; anything else is an error saying what to give.

    Raises:
        ValueError: the value is not ``i/n`` with 1 ≤ i ≤ n.
    """
    m = _SPEC.fullmatch(str(text))
    if m is None:
        raise ValueError(f"{text!r} is not i/n; give the shard's index and the number of "
                         "shards, e.g. --agenteval-shard 1/4")
    index, count = int(m.group(1)), int(m.group(2))
    if count < 1 or not 1 <= index <= count:
        raise ValueError(f"{text!r}: the index must be between 1 and the number of shards "
                         f"(1 ≤ i ≤ n); e.g. --agenteval-shard 1/{max(count, 1)} … "
                         f"{max(count, 1)}/{max(count, 1)}")
    return Shard(index, count)


def item_weight(plan: ItemPlan) -> int:
    """The turns an item is expected to send (:attr:`ItemPlan.weight`)."""
    return plan.weight


def partition(weights: Iterable[tuple[str, int]], count: int) -> list[list[str]]:
    """Deal ``(key, weight)`` pairs into ``count`` shards: longest processing time first.

    Heaviest first (ties by key), each to the lightest shard so far (ties to the lowest
    index), so the result depends on the set of pairs only, not on their order, and the
    heaviest and the lightest shard differ by at most the largest weight. Each shard
    lists its keys in the order they were dealt.
    """
    shards: list[list[str]] = [[] for _ in range(count)]
    heap = [(0, i) for i in range(count)]
    for key, weight in sorted(weights, key=lambda kw: (-kw[1], kw[0])):
        load, i = heapq.heappop(heap)
        shards[i].append(key)
        heapq.heappush(heap, (load + weight, i))
    return shards


def collection_sha256(weights: Iterable[tuple[str, int]]) -> str:
    """One hash over the partitioned items and their weights (the same on every shard)."""
    total = hashlib.sha256()
    for key, weight in sorted(weights):
        total.update(f"{key}\0{weight}\n".encode())
    return total.hexdigest()


class Sharding:
    """Selects this shard's items; registered where items are collected (single, workers)."""

    def __init__(self, shard: Shard) -> None:
        self.shard = shard

    @pytest.hookimpl(trylast=True)  # after -k, -m and --deselect: shards of what they kept
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        keep, drop, info = select(items, self.shard)
        config.stash[SHARD_INFO] = info
        if hasattr(config, "workeroutput"):
            config.workeroutput[WORKEROUTPUT_KEY] = info
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


def select(items: Sequence[pytest.Item],
           shard: Shard) -> tuple[list[pytest.Item], list[pytest.Item], dict[str, Any]]:
    """This shard's items (in collection order), the others', and ``run.shard``."""
    from .items import CaseItem, LoadErrorItem

    cases = {i.nodeid: item_weight(i.plan) for i in items if isinstance(i, CaseItem)}
    others = {i.nodeid: 1 for i in items
              if not isinstance(i, CaseItem | LoadErrorItem)}
    mine = set(partition(cases.items(), shard.count)[shard.index - 1])
    mine |= set(partition(others.items(), shard.count)[shard.index - 1])
    keep = [i for i in items if i.nodeid in mine or isinstance(i, LoadErrorItem)]
    drop = [i for i in items if i.nodeid not in mine and not isinstance(i, LoadErrorItem)]
    own = [n for n in cases if n in mine]
    info = {"index": shard.index, "count": shard.count, "items": len(own),
            "weight": sum(cases[n] for n in own), "total_items": len(cases),
            "total_weight": sum(cases.values()),
            "collection_sha256": collection_sha256(cases.items())}
    return keep, drop, info


def take_worker_output(config: pytest.Config, node: Any) -> None:
    """On the xdist controller: keep ``run.shard`` as the first worker that ends tells it
    (every worker selected the same)."""
    info = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
    if isinstance(info, dict) and SHARD_INFO not in config.stash:
        config.stash[SHARD_INFO] = info


def run_meta(config: pytest.Config, expected: int) -> dict[str, Any] | None:
    """``run.shard`` of the run record (``None`` without ``--agenteval-shard``).

    When no worker lived to tell it, the controller says what it knows: index, count
    and the items it expected.
    """
    shard: Shard | None = config.getoption("agenteval_shard", None)
    if shard is None:
        return None
    info = config.stash.get(SHARD_INFO, None)
    if info is not None:
        return dict(info)
    return {"index": shard.index, "count": shard.count, "items": expected, "weight": None,
            "total_items": None, "total_weight": None, "collection_sha256": None}
