"""A simulated user (``simulate:``) against the reference agent, played by a local
OpenAI-compatible server through the real openai client."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest
from judge_server import JudgeServer, fenced_data, honest_scores

from agents import by_id, read_record

ROOT = Path(__file__).resolve().parent.parent

SIMULATED = """\
scenarios:
  - id: SIM-LEAD
    knowledge:
      carConfigInfo:
        title: 2021款 大众朗逸
        archives: {mileage: 3.37万公里}
        price: {listPrice: 8.98万}
    simulate:
      persona: 谨慎的上班族，想买二手朗逸
      goal: 问清价格，店家愿意核算就留下手机号，然后道别
      facts: {phone: '13800000000'}
      max_turns: 6
    outcome:
      task:
        mode: slot
        slots: [{name: phone, situation: user_gave_contact}]
"""

SCRIPT = [
    {"message": "这车多少钱", "action": "continue"},
    {"message": "13800000000", "action": "continue"},
    {"message": "好的，再见", "action": "stop"},
]


def _user(script: list[dict[str, Any]]) -> Any:
    """Plays the customer from ``script`` (by how many agent messages there are); judges
    honestly otherwise."""

    def play(body: dict[str, Any]) -> dict[str, Any]:
        if "You play a customer" not in body["messages"][0]["content"]:
            return honest_scores(body)
        convo = fenced_data(body)["conversation"]
        return script[sum(1 for m in convo if m["role"] == "agent")]

    return play


@pytest.fixture
def simulated(standalone, pytester, monkeypatch):
    monkeypatch.setenv("SIM_KEY", "k")

    def make(server: JudgeServer, text: str = SIMULATED, extra: str = "") -> None:
        root = standalone(f"target: {{adapter: builtin}}\njudge:\n  model: m\n  base_url: "
                          f"{server.base_url}\n  api_key_env: SIM_KEY\n  cache: null\n{extra}",
                          {"sim.yaml": text})
        (root / "rules").mkdir()
        for name in ("business-rules.yaml", "taxonomy.yaml"):  # no gate: not what this tests
            shutil.copy(ROOT / "rules" / name, root / "rules" / name)

    return make


def test_a_simulated_conversation_runs_end_to_end(simulated, pytester) -> None:
    with JudgeServer(score=_user(SCRIPT)) as server:
        simulated(server)
        result = pytester.runpytest("cases", "-v")
        users = [c for c in server.chat_calls
                 if "You play a customer" in c["body"]["messages"][0]["content"]]
    assert result.ret == 0, result.stdout.str()
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert [t["input"] for t in case["turns"]] == ["这车多少钱", "138****0000", "好的，再见"]
    assert all(t["reply"] for t in case["turns"])
    assert case["termination"] == "user_stop"
    assert case["simulator"] == {"calls": 3, "faults": [], "last_action": "stop"}
    assert case["task"]["success_level"] == "success"
    assert case["task"]["parts"][0]["turn"] == 1
    assert case["task"]["parts"][0]["decided_by"] == "situation"
    # the simulator's calls are its own: L3's three are the judge's
    metrics = read_record(pytester.path)["metrics"]
    assert metrics["flows"]["simulator_calls"] == 3
    assert (metrics["judge"]["calls"], metrics["judge"]["task_calls"]) == (3, 0)
    # the ledger's rules and L3 apply to simulated turns as to scripted ones
    rows = {(r["rule_id"], r["status"]) for r in case["turns"][2]["rules"]}
    assert ("BR-009", "passed") in rows and ("BR-003", "passed") in rows
    assert all(t["judge"]["status"] == "passed" for t in case["turns"])
    assert len(users) == 3
    # the agent's replies reach the simulator as fenced data, never as its instructions
    last = users[-1]["body"]["messages"]
    assert "留个手机号" not in last[0]["content"] and "<<<DATA " in last[1]["content"]
    assert users[0]["body"]["temperature"] == 0


def test_the_simulators_faults_are_its_own(simulated, pytester) -> None:
    script = [{"message": "作为一个AI，我想问这车多少钱", "action": "continue"},
              {"message": "我的手机13912345678", "action": "continue"},
              {"message": "再见", "action": "stop"}]
    with JudgeServer(score=_user(script)) as server:
        simulated(server)
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    kinds = [(f["turn"], f["kind"]) for f in case["simulator"]["faults"]]
    assert kinds == [(0, "broke_character"), (1, "invented_fact")]
    record = read_record(pytester.path)
    assert record["metrics"]["flows"]["simulator_faults"] == {"broke_character": 1,
                                                              "invented_fact": 1}


def test_half_a_character_from_the_simulator_is_sent_and_recorded_whole(simulated,
                                                                          pytester) -> None:
    """The model playing the user writes ``"\ud83d"`` (an emoji cut in two): the agent gets
    U+FFFD in its place, not a request the adapter cannot encode blamed on the agent."""
    script = [{"message": "这车多少钱\ud83d", "action": "continue"},
              {"message": "再见", "action": "stop"}]
    with JudgeServer(score=_user(script)) as server:
        simulated(server)
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert case["turns"][0]["error"] is None
    assert case["turns"][0]["input"] == "这车多少钱\ufffd"


def test_max_turns_ends_a_conversation_that_never_stops(simulated, pytester) -> None:
    script = [{"message": "这车多少钱", "action": "continue"}] * 10
    with JudgeServer(score=_user(script)) as server:
        simulated(server, SIMULATED.replace("max_turns: 6", "max_turns: 3"))
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert len(case["turns"]) == 3 and case["termination"] == "max_turns"
    assert case["task"]["success_level"] == "failure"  # the phone never came


def test_a_simulator_that_fails_is_an_infra_error_not_the_agents(simulated, pytester) -> None:
    from judge_server import Step

    with JudgeServer(score=_user(SCRIPT)) as server:
        simulated(server, extra="  max_attempts: 1\n")
        server.push(Step(content="说点什么"), Step(content="还是不合规"), Step(content="x"))
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert case["status"] == "error" and case["termination"] == "infra_error"
    assert case["error"]["kind"] == "simulator"
    assert "the simulated user failed" in case["error"]["detail"]


def test_a_first_own_message_that_ends_after_the_opening_stopped_early(simulated,
                                                                       pytester) -> None:
    script = [{}, {"message": "好的，再见", "action": "stop"}]  # [0]: the opening's turn
    opening = SIMULATED.replace("      max_turns: 6",
                                "      max_turns: 6\n      opening: 这车多少钱")
    with JudgeServer(score=_user(script)) as server:
        simulated(server, opening)
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert [t["input"] for t in case["turns"]] == ["这车多少钱", "好的，再见"]
    assert [(f["turn"], f["kind"]) for f in case["simulator"]["faults"]] == [
        (1, "stopped_early")]


PLAIN = "cases:\n  - {id: PLAIN, request: {input: 你好}}\n"


@pytest.mark.parametrize("xdist", [False, True])
def test_a_simulated_scenario_without_a_model_is_a_usage_error(standalone, pytester,
                                                               xdist) -> None:
    """The same usage error with and without xdist (there, on the controller, which has
    node ids and no items; with trials, whose names end in [t1], [t2])."""
    standalone("target: {adapter: builtin}\n", {"sim.yaml": SIMULATED, "plain.yaml": PLAIN})
    if xdist:
        result = pytester.runpytest_subprocess("cases", "-n", "2", "--agenteval-repeat", "2")
    else:
        result = pytester.runpytest("cases")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    first = "SIM-LEAD[[]t1[]]" if xdist else "SIM-LEAD)"
    result.stderr.fnmatch_lines([f"*agenteval: {2 if xdist else 1} simulated scenario(s) "
                                 f"(e.g. cases/sim.yaml::{first}*need a model to play the user*"])
    assert "PASSED" not in result.stdout.str() and "ERROR" not in result.stdout.str()
    assert not list(pytester.path.glob("reports/*"))  # nothing ran, nothing is recorded


def test_an_unset_simulator_key_is_a_usage_error_before_any_call(simulated, pytester) -> None:
    with JudgeServer(score=_user(SCRIPT)) as server:
        simulated(server, SIMULATED + PLAIN, extra="simulator: {api_key_env: NO_SIM_KEY}\n")
        result = pytester.runpytest("cases")
        calls = server.chat_calls
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*agenteval: the simulator cannot be called:*",
                                 "agenteval.yaml:* [[]simulator.api_key_env[]]: environment "
                                 "variable NO_SIM_KEY is not set*"])
    assert calls == [] and not list(pytester.path.glob("reports/*"))


def test_the_simulators_own_key_is_masked_everywhere(simulated, pytester, monkeypatch) -> None:
    monkeypatch.setenv("OWN_SIM_KEY", "sim-secret-key-4711")
    script = [{"message": "我的口令是sim-secret-key-4711", "action": "stop"}]
    with JudgeServer(score=_user(script)) as server:
        simulated(server, extra="simulator: {api_key_env: OWN_SIM_KEY}\n")
        pytester.runpytest("cases")
    case = by_id(read_record(pytester.path))["SIM-LEAD"]
    assert case["turns"][0]["input"] == "我的口令是***"
    assert "sim-secret-key-4711" not in (pytester.path / "reports").joinpath(
        next(p.name for p in (pytester.path / "reports").iterdir()), "results.json").read_text(
        encoding="utf-8")


class _WorkerConfig:
    """What a runner reads of an xdist worker's pytest config (one of three workers)."""

    workerinput: ClassVar[dict[str, Any]] = {"workerid": "gw0", "workercount": 3}

    def getoption(self, name: str, default: Any = None) -> Any:
        return default


def test_simulator_concurrency_is_shared_by_the_xdist_workers(tmp_path, monkeypatch) -> None:
    import asyncio

    from pytest_agenteval.config import load_config
    from pytest_agenteval.project import Project
    from pytest_agenteval.runner import Runner

    monkeypatch.setenv("SIM_KEY", "k")
    tmp_path.joinpath("agenteval.yaml").write_text(
        "judge: {model: m, api_key_env: SIM_KEY, cache: null}\nsimulator: {concurrency: 8}\n")
    runner = Runner(Project(tmp_path, load_config(tmp_path)), _WorkerConfig(), "worker")  # type: ignore[arg-type]
    sim = runner._make_simulator()
    assert sim is not None and sim.cfg.concurrency == 3  # ceil(8 / 3), like judge.concurrency
    asyncio.run(sim.aclose())


def test_turns_and_simulate_are_exclusive(standalone, pytester) -> None:
    both = SIMULATED.replace("    simulate:", "    turns: [{input: hi}]\n    simulate:")
    standalone("target: {adapter: builtin}\n", {"sim.yaml": both})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*give turns: (scripted) or simulate: (a simulated user)*"])
