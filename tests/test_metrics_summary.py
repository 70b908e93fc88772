"""Unit tests of the run summary (pytest_agenteval/metrics/summary.py) on item results."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agenteval.metrics.counts import ItemPassRateFamily, RulesFamily
from pytest_agenteval.metrics.intent import IntentFamily
from pytest_agenteval.metrics.redlines import RedLinesFamily
from pytest_agenteval.metrics.service import ServiceFamily
from pytest_agenteval.metrics.success import SuccessFamily
from pytest_agenteval.metrics.summary import percentile, summarize
from pytest_agenteval.model.results import IntentResult, ItemResult, RuleRow, TurnResult

from factories import intent, item, row, scenario, turn

# --- percentile -----------------------------------------------------------------------------


@pytest.mark.parametrize("values, q, expected", [
    ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
    ([1.0, 2.0, 3.0, 4.0], 0, 1.0),
    ([1.0, 2.0, 3.0, 4.0], 100, 4.0),
    ([4.0, 1.0, 3.0, 2.0], 25, 1.75),
    ([10.0, 20.0], 90, 19.0),
    ([7.0], 95, 7.0),
])
def test_percentile_by_hand(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_of_nothing_is_none() -> None:
    assert percentile([], 50) is None


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60),
       st.floats(0, 100))
def test_percentile_matches_numpy_linear(values: list[float], q: float) -> None:
    expected = float(np.percentile(np.array(values), q, method="linear"))
    assert percentile(values, q) == pytest.approx(expected, rel=1e-9, abs=1e-6)


# --- summarize on hand-built item results ---------------------------------------------------


def _intent(correct: bool | None) -> IntentResult:
    """Right (predicted = expected), wrong, or no intent returned (``None``)."""
    if correct is None:
        return IntentResult(expected="VEHICLE_INFO", reason="the API returned no intent",
                            reason_code="no_intent")
    return intent("VEHICLE_INFO", "VEHICLE_INFO" if correct else "X")


def _rows(rules: tuple[tuple[str, str], ...]) -> list[RuleRow]:
    return [row(r, s) for r, s in rules]


def _case(cid: str, status: str, latency: float = 100.0, rules: tuple[tuple[str, str], ...] = (),
          intent: bool | None = None, error: str | None = None) -> ItemResult:
    return item(cid, status, latency=latency, error=error, rules=_rows(rules),
                intent_=None if error else _intent(intent))


def _turn(status: str, latency: float, intent: bool | None = None, error: str | None = None,
          rules: tuple[tuple[str, str], ...] = ()) -> TurnResult:
    return turn(status, latency=latency, error=error, rules=_rows(rules),
                intent_=None if error else _intent(intent))


RUN = [
    _case("A", "passed", 100.0, rules=(("BR-1", "passed"), ("BR-2", "not_applicable")),
          intent=True),
    _case("B", "failed", 300.0, rules=(("BR-1", "failed"), ("BR-2", "failed")), intent=False),
    _case("C", "review", 200.0, rules=(("BR-1", "failed"),), intent=None),
    _case("D", "error", 5000.0, error="timeout"),
    _case("E", "error", 40.0, error="http_status"),
    scenario("S1", "failed",
             _turn("passed", 50.0, intent=True, rules=(("BR-1", "passed"),)),
             _turn("failed", 150.0, intent=False, rules=(("BR-3", "failed"),))),
    scenario("S2", "error",
             _turn("passed", 400.0, intent=True),
             _turn("error", 30000.0, error="timeout")),
]


def test_counts_per_status() -> None:
    s = summarize(RUN).to_json()
    assert s["counts"] == {"total": 7, "passed": 1, "failed": 2, "review": 1, "error": 3,
                           "cases": 5, "scenarios": 2}
    assert s["pass_rate_items"] == pytest.approx(1 / 4)  # errors are not in the denominator


def test_failures_by_rule() -> None:
    rules = summarize(RUN)[RulesFamily]
    assert rules.failures_by_rule == {"BR-1": 2, "BR-2": 1, "BR-3": 1}
    assert next(iter(rules.failures_by_rule)) == "BR-1"  # most failures first
    # not_applicable rows are not evaluations
    assert rules.evaluations_by_rule == {"BR-1": 4, "BR-2": 1, "BR-3": 1}


def test_intent_accuracy_over_cases_and_scenario_turns() -> None:
    intent = summarize(RUN).to_json()["intent"]
    assert {k: intent[k] for k in ("evaluated_turns", "correct", "accuracy", "evaluated")} == {
        "evaluated_turns": 5, "correct": 3, "accuracy": pytest.approx(3 / 5), "evaluated": 5}


def test_intent_accuracy_none_when_nothing_evaluated() -> None:
    run = [_case("A", "passed", intent=None), _case("B", "error", error="connection")]
    intent = summarize(run)[IntentFamily]
    assert (intent.evaluated_turns, intent.correct, intent.accuracy) == (0, 0, None)
    assert intent.macro_f1 is None and intent.per_label == {}


def test_latency_ignores_errored_turns() -> None:
    latency = summarize(RUN).to_json()["service"]["latency_ms"]
    values = [100.0, 300.0, 200.0, 50.0, 150.0, 400.0]
    assert latency["turns"] == 6
    assert latency["mean"] == pytest.approx(sum(values) / 6)
    assert latency["max"] == 400.0
    assert latency["p50"] == pytest.approx(175.0)
    assert latency["p90"] == pytest.approx(float(np.percentile(values, 90)))
    assert latency["p95"] == pytest.approx(float(np.percentile(values, 95)))


def test_errors_by_kind_and_service_rates() -> None:
    service = summarize(RUN).to_json()["service"]
    assert service["errors_by_kind"] == {"http_status": 1, "timeout": 2}
    assert list(service["errors_by_kind"]) == ["http_status", "timeout"]
    # one call per case turn: 5 cases + 2 + 2 scenario turns
    assert service["agent_calls"] == 9
    assert service["agent_errors"] == 3
    assert service["agent_success_rate"] == pytest.approx(6 / 9)
    assert service["agent_error_rate"] == pytest.approx(3 / 9)
    assert set(service["not_measured"]) == {"ttft", "retrieval"}


def test_empty_run_has_no_rates() -> None:
    s = summarize([]).to_json()
    assert s["counts"] == {"total": 0, "passed": 0, "failed": 0, "review": 0, "error": 0,
                           "cases": 0, "scenarios": 0}
    assert s["pass_rate_items"] is None
    assert s["intent"]["accuracy"] is None
    assert s["service"]["agent_success_rate"] is None
    assert s["service"]["latency_ms"] == {"turns": 0, "mean": None, "p50": None, "p90": None,
                                          "p95": None, "max": None}
    assert s["rules"] == {"failures_by_rule": {}, "evaluations_by_rule": {}}


def test_all_errors_leaves_pass_rate_undefined() -> None:
    s = summarize([_case("A", "error", error="bad_body"),
                   _case("B", "error", error="timeout")]).to_json()
    assert s["pass_rate_items"] is None
    assert s["service"]["agent_success_rate"] == 0.0
    assert s["service"]["latency_ms"]["turns"] == 0


def test_a_rule_error_is_outside_pass_rates_and_agent_errors() -> None:
    crash = item("X", "error", error="rule", latency=80.0,
                 rules=[row("BR-1", "error", veto=True, origin="ledger")])
    s = summarize([_case("A", "passed"), _case("B", "failed"), crash], red_lines=["BR-1"])
    assert s[ItemPassRateFamily].root == 0.5
    success = s[SuccessFamily]
    assert success.errors == 1 and success.pass_rate.value == 0.5
    assert success.success_rate.n == 2
    assert s[RulesFamily].evaluations_by_rule == {} and s[RulesFamily].failures_by_rule == {}
    assert s[RedLinesFamily].red_lines["BR-1"].items_evaluated == 0
    service = s[ServiceFamily]
    assert (service.agent_calls, service.agent_errors, service.errors_by_kind) == (3, 0, {})
    assert service.latency_ms.turns == 3


@given(st.lists(st.sampled_from(["passed", "failed", "review", "error"]), max_size=30))
def test_counts_add_up(statuses: list[str]) -> None:
    run = [_case(str(i), s, error="timeout" if s == "error" else None)
           for i, s in enumerate(statuses)]
    s = summarize(run).to_json()
    counts = s["counts"]
    assert sum(counts[k] for k in ("passed", "failed", "review", "error")) == len(statuses)
    assert s["service"]["agent_errors"] == statuses.count("error")
    evaluated = len(statuses) - statuses.count("error")
    expected = statuses.count("passed") / evaluated if evaluated else None
    assert s["pass_rate_items"] == expected
