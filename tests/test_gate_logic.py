"""The release gate and the exit status on hand-built results (pytest_agenteval/metrics/gates.py).

The pytester tests of tests/test_gates.py check the same decisions end to end;
these pin the decision order of ``evaluate_gate`` and the ``exit_status`` table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_agenteval.metrics.gates import evaluate_gate, exit_status
from pytest_agenteval.metrics.summary import summarize
from pytest_agenteval.model.gates import GateMetric, GateResult, GatesFile
from pytest_agenteval.model.results import Completeness, ItemResult

from factories import intent, item, row

SOURCE = "rules/gates.yaml"


def _ok(cid: str, **extra: Any) -> ItemResult:
    return item(cid, rules=[row("BR-900", "passed", veto=True, origin="ledger")],
                intent_=intent("A", "A"), **extra)


#: two items pass; BYE-1 breaks the red line BR-900 (and is right about its intent)
RUN = [_ok("OK-1"), _ok("OK-2"),
       item("BYE-1", "failed", rules=[row("BR-900", "failed", veto=True, origin="ledger")],
            intent_=intent("B", "B"))]


def _gate(items: Sequence[ItemResult], completeness: Completeness | None = None,
          **gates: Any) -> GateResult:
    gates.setdefault("formal_requires_reviewed", False)
    spec = GatesFile(**gates)
    metrics = summarize(items, red_lines=spec.red_lines)
    if completeness is None:
        completeness = Completeness(expected=len(items), received=len(items))
    return evaluate_gate(spec, SOURCE, metrics, items, completeness)


def _metric(**fields: Any) -> list[GateMetric]:
    return [GateMetric(**fields)]


# --- red lines ------------------------------------------------------------------------------


def test_a_red_line_that_fails_once_blocks_with_a_readable_reason() -> None:
    gate = _gate(RUN, red_lines=["BR-900"])
    assert gate.result == "BLOCK" and gate.source == SOURCE
    assert gate.reasons == ["red line BR-900 failed in 1 item(s): BYE-1"]
    assert gate.checks[0].model_dump() == {
        "check": "red_line[BR-900]", "status": "failed", "value": 1, "bound": "= 0",
        "items": ["BYE-1"], "evaluations": 3,
        "reason": "red line BR-900 failed in 1 item(s): BYE-1"}


def test_a_red_line_that_holds_passes() -> None:
    gate = _gate(RUN[:2], red_lines=["BR-900"])
    assert gate.result == "PASS"
    assert gate.reasons == ["every red line held and every gated metric is within bounds"]
    assert gate.checks[0].reason == "red line BR-900 held (2 checks)"


def test_a_red_line_rule_that_raised_is_not_a_red_line_failure() -> None:
    crashed = item("X", "error", error="rule",
                   rules=[row("BR-900", "error", veto=True, origin="ledger")])
    gate = _gate([_ok("OK-1"), crashed], red_lines=["BR-900"], max_error_rate=0.5)
    assert gate.result == "PASS"
    check = gate.checks[0]
    assert (check.status, check.value) == ("passed", 0)
    assert check.reason == "red line BR-900 held (1 checks)"  # the error row is no check


# --- metric bounds --------------------------------------------------------------------------


@pytest.mark.parametrize(("bounds", "result", "reason"), [
    ({"min": 0.6}, "PASS", None),
    ({"min": 0.7}, "BLOCK", "pass_rate = 0.6667 (required ≥ 0.7)"),
    ({"max": 0.7}, "PASS", None),
    ({"max": 0.5}, "BLOCK", "pass_rate = 0.6667 (required ≤ 0.5)"),
    ({"min": 0.6, "max": 0.7}, "PASS", None),
    ({"min": 0.7, "max": 0.9}, "BLOCK", "pass_rate = 0.6667 (required ≥ 0.7 and ≤ 0.9)"),
])
def test_metric_bounds_min_and_max(bounds: dict[str, float], result: str,
                                   reason: str | None) -> None:
    gate = _gate(RUN, metrics=_metric(metric="pass_rate", **bounds))  # 2 of 3 passed
    assert gate.result == result
    assert gate.checks[0].value == pytest.approx(2 / 3)
    if reason is not None:
        assert gate.reasons == [reason]
        assert gate.checks[0].status == "failed"


@pytest.mark.parametrize("fields", [
    {"metric": "agent_error_rate", "max": 0},        # 0 errors: ≤ 0 holds
    {"metric": "recall", "label": "A", "min": 1},    # every A found
    {"metric": "accuracy", "min": 1},                # every intent right
])
def test_a_value_on_its_bound_passes(fields: dict[str, Any]) -> None:
    gate = _gate(RUN, metrics=_metric(**fields))
    assert gate.result == "PASS", gate.reasons


@pytest.mark.parametrize(("fields", "name"), [
    ({"metric": "judge_mean", "min": 4}, "judge_mean"),                 # no judge
    ({"metric": "recall", "label": "C", "min": 0.9}, "recall[C]"),      # no support
    ({"metric": "pass_hat_k", "k": 2, "min": 0.5}, "pass_hat_k[k=2]"),  # no trials
])
def test_a_metric_not_evaluated_is_a_risk(fields: dict[str, Any], name: str) -> None:
    gate = _gate(RUN[:2], metrics=_metric(**fields))
    assert gate.result == "PASS_WITH_RISK"
    bound = "≥ " + f"{fields['min']:g}"
    assert gate.reasons == [f"{name} is not evaluated in this run (required {bound})"]
    assert (gate.checks[0].status, gate.checks[0].value) == ("not_evaluated", None)


def test_a_failure_outweighs_a_risk() -> None:
    gate = _gate(RUN, red_lines=["BR-900"], metrics=_metric(metric="judge_mean", min=4))
    assert gate.result == "BLOCK"
    # failures first, then what could not be checked
    assert gate.reasons == ["red line BR-900 failed in 1 item(s): BYE-1",
                            "judge_mean is not evaluated in this run (required ≥ 4)"]


# --- flaky cases ----------------------------------------------------------------------------


def test_flaky_cases_are_a_risk() -> None:
    trials = [item(cid, status, trial=t, trials=2)
              for cid, statuses in (("STABLE", ("passed", "passed")),
                                    ("FLAKY", ("passed", "failed")))
              for t, status in enumerate(statuses)]
    gate = _gate(trials, metrics=_metric(metric="pass_rate", min=0.5))  # 3 of 4 passed
    assert gate.result == "PASS_WITH_RISK"
    assert gate.reasons == ["1 flaky case(s) across repeat trials"]
    blocked = _gate(trials, metrics=_metric(metric="pass_rate", min=0.8))
    assert blocked.result == "BLOCK"
    assert blocked.reasons == ["pass_rate = 0.75 (required ≥ 0.8)",
                               "1 flaky case(s) across repeat trials"]


# --- candidates -----------------------------------------------------------------------------


@pytest.mark.parametrize(("gates", "would_be"), [
    ({"red_lines": ["BR-900"]}, "BLOCK"),
    ({"metrics": _metric(metric="judge_mean", min=4)}, "PASS_WITH_RISK"),
    ({"metrics": _metric(metric="pass_rate", min=0.5)}, "PASS"),
])
def test_candidates_make_a_formal_gate_exploratory(gates: dict[str, Any], would_be: str) -> None:
    run = [RUN[0], RUN[1].model_copy(update={"review_status": "candidate"}), RUN[2]]
    gate = _gate(run, formal_requires_reviewed=True, **gates)
    assert gate.result == "EXPLORATORY"
    assert gate.reasons[0] == ("exploratory: 1 of 3 items are candidates "
                               "(formal_requires_reviewed); on reviewed data this run would be "
                               f"{would_be}")
    assert len(gate.reasons) == (1 if would_be == "PASS" else 2)
    # without formal_requires_reviewed the same data is judged as it is
    assert _gate(run, formal_requires_reviewed=False, **gates).result == would_be


def test_reviewed_data_is_judged_under_a_formal_gate() -> None:
    assert _gate(RUN, formal_requires_reviewed=True, red_lines=["BR-900"]).result == "BLOCK"


# --- incomplete runs ------------------------------------------------------------------------


@pytest.mark.parametrize(("completeness", "head"), [
    ({"missing": ["cases/a.yaml::OK-3", "cases/a.yaml::OK-4"]},
     "incomplete run: 2 selected item(s) have no result: cases/a.yaml::OK-3, cases/a.yaml::OK-4"),
    ({"collection_errors": ["cases/broken.yaml"]},
     "incomplete run: 1 case file(s) could not be loaded: cases/broken.yaml"),
    ({"duplicates": ["cases/a.yaml::OK-1"]},
     "incomplete run: items reported twice: cases/a.yaml::OK-1"),
])
def test_an_incomplete_run_blocks_first(completeness: dict[str, Any], head: str) -> None:
    incomplete = Completeness(expected=3, received=2, complete=False, **completeness)
    candidates = [i.model_copy(update={"review_status": "candidate"}) for i in RUN[:2]]
    # every check holds and the data are candidates: still BLOCK, not PASS or EXPLORATORY
    gate = _gate(candidates, incomplete, formal_requires_reviewed=True, red_lines=["BR-900"])
    assert gate.result == "BLOCK"
    assert gate.reasons == [head]
    # the failures of the run follow the incompleteness
    broken = _gate(RUN, incomplete, red_lines=["BR-900"])
    assert broken.reasons == [head, "red line BR-900 failed in 1 item(s): BYE-1"]


# --- exit status ----------------------------------------------------------------------------

#: pytest's status → (items mode: PASS, BLOCK), (gate mode: PASS, BLOCK)
EXIT = {
    0: ((0, 1), (0, 1)),   # OK
    1: ((1, 1), (0, 1)),   # TESTS_FAILED: the gate decides in gate mode
    2: ((2, 2), (2, 2)),   # INTERRUPTED
    3: ((3, 3), (3, 3)),   # INTERNAL_ERROR
    4: ((4, 4), (4, 4)),   # USAGE_ERROR
    5: ((5, 5), (5, 5)),   # NO_TESTS_COLLECTED
}


@pytest.mark.parametrize("status", sorted(EXIT))
@pytest.mark.parametrize(("mode", "column"), [("items", 0), ("gate", 1)])
@pytest.mark.parametrize(("gate", "blocked"), [("PASS", 0), ("BLOCK", 1)])
def test_exit_status_table(mode: str, column: int, status: int, gate: str, blocked: int) -> None:
    assert exit_status(mode, status, gate) == EXIT[status][column][blocked]


@pytest.mark.parametrize("gate", ["PASS_WITH_RISK", "EXPLORATORY", "NOT_CONFIGURED"])
def test_only_block_changes_the_exit_status(gate: str) -> None:
    for status in EXIT:
        assert exit_status("items", status, gate) == exit_status("items", status, "PASS")
        assert exit_status("gate", status, gate) == exit_status("gate", status, "PASS")


# --- GateMetric validation ------------------------------------------------------------------


@pytest.mark.parametrize(("fields", "message"), [
    ({"metric": "recal", "label": "A", "min": 0.9}, "unknown metric 'recal'; known: "),
    ({"metric": "recall", "min": 0.9}, "'recall' needs a 'label'"),
    ({"metric": "macro_f1", "label": "A", "min": 0.9}, "'macro_f1' takes no 'label'"),
    ({"metric": "pass_hat_k", "min": 0.9}, "'k' goes with metric pass_hat_k"),
    ({"metric": "pass_rate", "k": 2, "min": 0.9}, "'k' goes with metric pass_hat_k"),
    ({"metric": "pass_hat_k", "k": 0, "min": 0.9}, "greater than or equal to 1"),
    ({"metric": "pass_rate"}, "give 'min' or 'max'"),
])
def test_gate_metric_validation_errors(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message.replace("(", r"\(")):
        GateMetric(**fields)


def test_an_unknown_metric_lists_the_known_names() -> None:
    with pytest.raises(ValidationError) as exc:
        GateMetric(metric="recal", label="A", min=0.9)
    text = str(exc.value)
    for name in ("accuracy", "agent_error_rate", "hard_rule_pass_rate", "judge_mean",
                 "pass_hat_k", "pass_rate", "recall", "safety_pass_rate", "success_rate"):
        assert name in text


def test_gate_metric_names() -> None:
    assert GateMetric(metric="recall", label="A", min=0.9).name == "recall[A]"
    assert GateMetric(metric="pass_hat_k", k=3, min=0.9).name == "pass_hat_k[k=3]"
    assert GateMetric(metric="pass_rate", max=1).name == "pass_rate"


# --- the fail-safe: a run that proves too little never passes ---------------------------------


def _errored(cid: str) -> ItemResult:
    return item(cid, "error", error="connection")


@pytest.mark.parametrize("formal", [False, True])
def test_an_all_error_run_blocks_even_when_exploratory(formal) -> None:
    run = [_errored(f"E-{i}") for i in range(12)]
    gate = _gate(run, formal_requires_reviewed=formal,
                 metrics=_metric(metric="pass_rate", min=0.5))
    assert gate.result == "BLOCK"
    assert gate.reasons[0] == "nothing was evaluated: 12 of 12 items are ERRORs"
    assert "error rate 100.0% (12 of 12 items are ERRORs; required ≤ 5.0%, max_error_rate " \
           "in gates.yaml)" in gate.reasons
    assert exit_status("gate", 1, gate.result) == 1


def test_an_empty_run_blocks() -> None:
    gate = _gate([], metrics=_metric(metric="pass_rate", min=0.5))
    assert gate.result == "BLOCK"
    assert gate.reasons[0] == "nothing was evaluated: no item ran"


@pytest.mark.parametrize(("bound", "verdict"), [(None, "BLOCK"), (0.1, "PASS")])
def test_the_error_rate_above_its_bound_blocks(bound, verdict) -> None:
    run = [_ok(f"OK-{i}") for i in range(9)] + [_errored("E-1")]  # 10% errors
    extra = {} if bound is None else {"max_error_rate": bound}
    gate = _gate(run, red_lines=["BR-900"], **extra)
    assert gate.result == verdict
    check = next(c for c in gate.checks if c.check == "error_rate")
    assert check.value == pytest.approx(0.1)
    assert check.status == ("failed" if verdict == "BLOCK" else "passed")


def test_a_red_line_evaluated_zero_times_blocks_and_says_so() -> None:
    nobody = item("OK-1", rules=[row("BR-900", "not_applicable", veto=True, origin="ledger")])
    gate = _gate([nobody], red_lines=["BR-900"])
    assert gate.result == "BLOCK"
    assert gate.reasons == ["red line BR-900 was evaluated 0 times: no turn of the run is one "
                            "it applies to (or every such turn was an ERROR)"]
    check = gate.checks[0]
    assert (check.status, check.value, check.evaluations) == ("failed", 0, 0)


@pytest.mark.parametrize("formal", [False, True])
def test_a_metric_not_evaluated_because_of_errors_blocks_not_risks(formal) -> None:
    """recall[B] has no support because the only B item errored: not by design. Candidate
    data (EXPLORATORY) does not soften it."""
    run = [_ok(f"OK-{i}", review_status="candidate" if formal else "reviewed")
           for i in range(30)] + [_errored("B-1")]
    gate = _gate(run, formal_requires_reviewed=formal,
                 metrics=_metric(metric="recall", label="B", min=0.9))
    assert gate.result == "BLOCK"
    [reason] = gate.reasons
    assert reason.startswith("recall[B] is not evaluated in this run")
    assert reason.endswith("1 item(s) are ERRORs, which may be why")


def test_a_subset_run_says_so_in_the_reasons() -> None:
    spec = GatesFile(red_lines=["BR-900"], formal_requires_reviewed=False)
    items = RUN[:2]
    gate = evaluate_gate(spec, SOURCE, summarize(items, red_lines=spec.red_lines), items,
                         Completeness(expected=2, received=2), subset="-k OK")
    assert gate.result == "PASS"
    assert gate.reasons[-1] == "subset run (-k OK): the gate covers the selected items only"
