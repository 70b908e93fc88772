"""The xdist schedulers on fake workers (xdist's Scheduling protocol, no processes)."""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadScheduling

from pytest_agenteval.scheduling import DeferredScheduling, OwnedScheduling, Prefetch, owner_of


class Node:
    """What a scheduler sees of an xdist worker: its id, what it is sent, its shutdown."""

    def __init__(self, wid: str) -> None:
        self.gateway = type("Gateway", (), {"id": wid})()
        self.sent: list[int] = []
        self.shutting_down = False

    def send_runtest_some(self, indices: list[int]) -> None:
        assert not self.shutting_down, "nothing is sent after shutdown"
        self.sent += indices

    def send_runtest_all(self) -> None:  # pragma: no cover - not used by these schedulers
        raise AssertionError

    def shutdown(self) -> None:
        self.shutting_down = True


class Config:
    """The two options the schedulers read."""

    def __init__(self, workers: int) -> None:
        self.values: dict[str, Any] = {"tx": [f"{workers}*popen"], "maxschedchunk": None}

    def getvalue(self, name: str) -> Any:
        return self.values[name]

    def getoption(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def is_case(nodeid: str) -> bool:
    return nodeid.startswith("cases/")


def _start(sched: Any, collection: list[str], workers: int = 2) -> list[Node]:
    nodes = [Node(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
    for node in nodes:
        sched.add_node_collection(node, collection)
    assert sched.collection_is_completed
    sched.schedule()
    return nodes


def _finish(sched: Any, nodes: list[Node]) -> None:
    """Complete every item in the order sent (as workers do), topping up as xdist does."""
    done: set[tuple[str, int]] = set()
    while True:
        progress = False
        for node in nodes:
            for index in list(node.sent):
                if (node.gateway.id, index) not in done:
                    done.add((node.gateway.id, index))
                    sched.mark_test_complete(node, index)
                    progress = True
        if not progress:
            return


CASES = [f"cases/a.yaml::C-{i}" for i in range(10)]
TESTS = [f"tests/test_x.py::test_{i}" for i in range(12)]


def test_case_items_are_owned_by_rank_and_sent_at_once() -> None:
    sched = OwnedScheduling(2, is_case)
    gw0, gw1 = _start(sched, CASES)
    assert gw0.sent == [0, 2, 4, 6, 8] and gw1.sent == [1, 3, 5, 7, 9]
    assert gw0.shutting_down and gw1.shutting_down  # all dealt: the workers may finish
    assert not sched.tests_finished
    _finish(sched, [gw0, gw1])
    assert sched.tests_finished and not sched.has_pending


def test_owners_agree_with_the_workers_prefetch() -> None:
    sched = OwnedScheduling(3, is_case)
    nodes = _start(sched, TESTS[:2] + CASES + TESTS[2:], workers=3)
    collection = TESTS[:2] + CASES + TESTS[2:]

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    cases = [Item(n) for n in collection if is_case(n)]
    for k, node in enumerate(nodes):
        own = Prefetch("owned", f"gw{k}", 3).ahead(cases[k].nodeid, cases)
        sent_cases = [collection[i] for i in node.sent if is_case(collection[i])]
        assert [it.nodeid for it in own] == sent_cases
    assert owner_of(4, 3) == "gw1"


def test_other_items_are_balanced_and_every_item_runs_once() -> None:
    sched = OwnedScheduling(2, is_case)
    collection = TESTS[:6] + CASES + TESTS[6:]
    nodes = _start(sched, collection)
    _finish(sched, nodes)
    sent = sorted(i for node in nodes for i in node.sent)
    assert sent == list(range(len(collection)))
    ordinary = [[i for i in node.sent if not is_case(collection[i])] for node in nodes]
    assert all(ordinary), "both workers get ordinary tests"
    assert sched.tests_finished


def test_a_crashed_worker_loses_only_the_item_it_was_running() -> None:
    sched = OwnedScheduling(2, is_case)
    gw0, gw1 = _start(sched, CASES)
    sched.mark_test_complete(gw0, 0)
    crashed = sched.remove_node(gw0)  # died while running C-2: C-4, C-6, C-8 go back
    assert crashed == "cases/a.yaml::C-2"
    assert sched.has_pending and not sched.tests_finished
    replacement = Node("gw2")
    sched.add_node(replacement)
    sched.add_node_collection(replacement, CASES)
    sched.schedule()
    assert replacement.sent == [4, 6, 8]
    _finish(sched, [gw1, replacement])
    assert sched.tests_finished


def test_a_worker_that_collected_other_items_gets_none() -> None:
    sched = OwnedScheduling(2, is_case)
    _start(sched, CASES)
    late = Node("gw2")
    sched.add_node(late)
    sched.add_node_collection(late, CASES[:3])
    assert late.sent == []


@pytest.mark.parametrize("collection, chosen", [
    (TESTS, LoadScheduling),  # no case item: xdist's own scheduler, untouched
    (CASES + TESTS, OwnedScheduling),
])
def test_the_scheduler_is_chosen_once_the_collection_is_known(collection, chosen) -> None:
    sched = DeferredScheduling(Config(2), None, is_case)
    assert not sched.collection_is_completed and not sched.has_pending
    nodes = _start(sched, collection)
    assert type(sched.inner) is chosen
    assert sched.nodes == nodes
    _finish(sched, nodes)
    assert sched.tests_finished
    assert sorted(i for n in nodes for i in n.sent) == list(range(len(collection)))
