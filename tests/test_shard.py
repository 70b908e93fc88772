"""``--agenteval-shard i/n``: the partition (pure), and the option end to end, with and
without xdist."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agenteval.model.cases import Case, Scenario
from pytest_agenteval.plan import compile_case, compile_scenario
from pytest_agenteval.shard import item_weight, parse_shard, partition

from agents import read_record

# -- the partition -----------------------------------------------------------------------------


def _loads(shards: list[list[str]], weights: dict[str, int]) -> list[int]:
    return [sum(weights[k] for k in shard) for shard in shards]


def test_partition_balances_by_weight_heaviest_first() -> None:
    weights = {"S-5": 5, "S-3": 3, "S-2": 2, **{f"C-{i}": 1 for i in range(6)}}
    shards = partition(weights.items(), 3)
    assert shards == [["S-5", "C-5"], ["S-3", "C-1", "C-3"], ["S-2", "C-0", "C-2", "C-4"]]
    assert _loads(shards, weights) == [6, 5, 5]


def test_partition_ignores_the_order_it_is_given() -> None:
    weights = [(f"cases/x.yaml::I-{i:03d}", 1 + i % 4) for i in range(200)]
    shuffled = weights[:]
    random.Random(7).shuffle(shuffled)
    assert partition(weights, 4) == partition(shuffled, 4)


def test_more_shards_than_items_leaves_shards_empty() -> None:
    assert partition([("a", 1), ("b", 2)], 4) == [["b"], ["a"], [], []]


@given(st.dictionaries(st.text(min_size=1, max_size=12), st.integers(1, 40), max_size=120),
       st.integers(1, 9))
def test_partition_is_complete_disjoint_and_balanced(weights: dict[str, int], n: int) -> None:
    shards = partition(weights.items(), n)
    assert len(shards) == n
    dealt = [k for shard in shards for k in shard]
    assert sorted(dealt) == sorted(weights)  # every item in exactly one shard
    loads = _loads(shards, weights)
    assert max(loads) - min(loads) <= max(weights.values(), default=0)
    assert partition(list(reversed(weights.items())), n) == shards  # deterministic


def test_an_item_weighs_its_expected_turns() -> None:
    case = compile_case(Case.model_validate({"id": "C", "request": {"input": "你好"}}))
    scenario = compile_scenario(Scenario.model_validate(
        {"id": "S", "turns": [{"input": f"第{t}句"} for t in range(4)]}))
    simulated = compile_scenario(Scenario.model_validate(
        {"id": "SIM", "simulate": {"persona": "p", "goal": "g", "max_turns": 7}}))
    assert [item_weight(p) for p in (case, scenario, simulated)] == [1, 4, 7]
    assert [p.weight for p in (case, scenario, simulated)] == [1, 4, 7]


@pytest.mark.parametrize("text", ["3/2", "0/4", "a/b", "1/0", "2", "-1/3", "1/2/3"])
def test_an_invalid_shard_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="--agenteval-shard"):
        parse_shard(text)


def test_a_valid_shard_is_parsed() -> None:
    assert (parse_shard("2/4").index, parse_shard(" 2 / 4 ").count) == (2, 4)
    assert str(parse_shard("1/1")) == "1/1"


# -- the option, end to end ----------------------------------------------------------------------

CASES = "cases:\n" + "".join(
    f"  - {{id: C-{i:02d}, request: {{input: '你好{i}'}}}}\n" for i in range(10))
SCENARIOS = """\
scenarios:
  - id: S-4
    turns: [{input: 一}, {input: 二}, {input: 三}, {input: 四}]
  - id: S-3
    turns: [{input: 一}, {input: 二}, {input: 三}]
  - id: S-2
    turns: [{input: 一}, {input: 二}]
"""
PYTESTS = """\
def test_one():
    pass

def test_two():
    pass
"""


def _shard_runs(pytester: pytest.Pytester, n: int, *args: str) -> list[pytest.RunResult]:
    runs = []
    for i in range(1, n + 1):
        runs.append(pytester.runpytest("cases", "test_plain.py", f"--agenteval-shard={i}/{n}",
                                       f"--agenteval-reports-dir=runs/s{i}/reports", *args))
    return runs


def _shard_record(pytester: pytest.Pytester, i: int) -> dict:
    return read_record(pytester.path / "runs" / f"s{i}")


def test_the_shards_run_every_item_exactly_once(project, pytester, agent) -> None:
    project({"a.yaml": CASES, "s.yaml": SCENARIOS})
    pytester.makepyfile(test_plain=PYTESTS)
    runs = _shard_runs(pytester, 3)
    assert sorted(agent.sends_per_case()) == sorted([f"C-{i:02d}" for i in range(10)]
                                                    + ["S-2", "S-3", "S-4"])
    assert set(agent.sends_per_case().values()) == {1}
    shards = [_shard_record(pytester, i)["run"]["shard"] for i in (1, 2, 3)]
    assert [s["weight"] for s in shards] == [7, 6, 6]  # 19 turns: within one item's weight
    assert [s["items"] for s in shards] == [4, 4, 5]
    assert {(s["total_items"], s["total_weight"], s["collection_sha256"]) for s in shards} \
        == {(13, 19, shards[0]["collection_sha256"])}
    outcomes = [r.parseoutcomes() for r in runs]
    assert sum(o.get("passed", 0) for o in outcomes) == 13 + 2  # the two Python tests once
    assert all(o["deselected"] == 15 - (s["items"] + p) for o, s, p in
               zip(outcomes, shards, (1, 1, 0), strict=True))
    for i in (1, 2, 3):
        record = _shard_record(pytester, i)
        assert record["completeness"]["complete"] is True
        assert record["completeness"]["expected"] == shards[i - 1]["items"]


def test_under_xdist_the_workers_select_the_same_shard(project, pytester, agent) -> None:
    project({"a.yaml": CASES, "s.yaml": SCENARIOS})
    pytester.makepyfile(test_plain=PYTESTS)
    pytester.runpytest("cases", "--agenteval-shard=2/3", "--agenteval-reports-dir=runs/s/reports")
    serial = read_record(pytester.path / "runs" / "s")
    sent = agent.sends_per_case()
    agent.requests.clear()
    pytester.runpytest("cases", "--agenteval-shard=2/3", "-n", "2",
                       "--agenteval-reports-dir=runs/x/reports")
    parallel = read_record(pytester.path / "runs" / "x")
    assert agent.sends_per_case() == sent
    assert sorted(c["nodeid"] for c in parallel["cases"]) == sorted(c["nodeid"] for c in
                                                                    serial["cases"])
    assert parallel["run"]["shard"] == serial["run"]["shard"]
    # the controller expects the shard's items only: complete
    assert parallel["completeness"]["expected"] == serial["run"]["shard"]["items"]
    assert parallel["completeness"]["complete"] is True


def test_a_shard_composes_with_k_and_repeat(project, pytester, agent) -> None:
    project({"a.yaml": CASES, "s.yaml": SCENARIOS})
    for i in (1, 2):
        pytester.runpytest("cases", "-k", "C-0 or S-4", "--agenteval-repeat=2",
                           f"--agenteval-shard={i}/2", f"--agenteval-reports-dir=runs/s{i}/reports")
    shards = [_shard_record(pytester, i) for i in (1, 2)]
    nodeids = [c["nodeid"].split("::")[1] for r in shards for c in r["cases"]]
    # -k kept C-00..C-09 and S-4; each trial is an item of its own, in exactly one shard
    assert sorted(nodeids) == sorted(f"{n}[t{t}]" for n in [f"C-{i:02d}" for i in range(10)]
                                     + ["S-4"] for t in (1, 2))
    assert [r["run"]["shard"]["weight"] for r in shards] == [14, 14]  # 2×(10 + 4) turns


def test_a_file_that_cannot_be_loaded_makes_every_shard_incomplete(project, pytester) -> None:
    project({"a.yaml": CASES, "bad.yaml": "cases:\n  - id: B-1\n    nonsense: 1\n"})
    for i in (1, 2):
        pytester.runpytest("cases", f"--agenteval-shard={i}/2",
                           f"--agenteval-reports-dir=runs/s{i}/reports")
        completeness = _shard_record(pytester, i)["completeness"]
        assert completeness["collection_errors"] == ["cases/bad.yaml"]
        assert completeness["complete"] is False


@pytest.mark.parametrize("value", ["3/2", "0/4", "a/b"])
def test_an_invalid_shard_option_is_a_usage_error(project, pytester, value) -> None:
    project({"a.yaml": CASES})
    result = pytester.runpytest("cases", f"--agenteval-shard={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --agenteval-shard: *e.g. --agenteval-shard 1/*"])


def test_the_option_needs_a_project_that_uses_the_plugin(pytester) -> None:
    pytester.makepyfile(test_plain=PYTESTS)
    result = pytester.runpytest("--agenteval-shard=1/2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agenteval-shard given, but this project does not use*"])
