"""``agenteval compare``: comparability, changed items, metric deltas, red lines, exit codes.

Unit tests on constructed run records, and one end-to-end test on two runs of the
shipped suite (the second with defect (a) fixed).
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_agenteval.cli import main
from pytest_agenteval.metrics.rates import rate_by_case, wilson
from pytest_agenteval.report._labels import tables
from pytest_agenteval.report.compare import (
    Comparison,
    Interval,
    Limits,
    change_kind,
    compare_runs,
    newcombe,
    render_html,
    render_text,
    run,
    to_json,
    verdict,
)

ROOT = Path(__file__).resolve().parent.parent
SHA = "a" * 64


def _row(rule_id: str, status: str = "failed", veto: bool = False, evidence: str = "",
         turn: int | None = None) -> dict[str, Any]:
    row = {"rule_id": rule_id, "type": "regex", "status": status, "reason": f"{rule_id} said",
           "evidence": evidence, "veto": veto}
    return row if turn is None else {**row, "turn": turn}


def _case(case_id: str, status: str = "passed", *, rules: list[dict[str, Any]] | None = None,
          predicted: str | None = "A", expected: str | None = "A", trial: int | None = None,
          title: str = "", level: str | None = None, judge: str = "not_evaluated",
          turn_error: str | None = None) -> dict[str, Any]:
    intent = {"expected": expected, "predicted": predicted, "correct": expected == predicted}
    turn = {"index": 0, "status": status, "intent": intent,
            "error": {"kind": turn_error, "detail": "x"} if turn_error else None}
    case: dict[str, Any] = {
        "id": case_id, "kind": "case", "status": status, "title": title or case_id,
        "rules": rules or [], "intent": intent, "judge": {"status": judge},
        "task": {"success_level": level or ("failure" if status in ("failed", "error")
                                             else "success")},
        "turns": [turn]}
    if trial is not None:
        case.update(trial=trial, trials=2)
    return case


def _record(cases: list[dict[str, Any]], metrics: dict[str, Any] | None = None,
            **run: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "run": {"started": "2026-12-01T12:00:00+00:00", "language": "en",
                "dataset": {"sha256": SHA, "files": [{"path": "cases/a.yaml", "sha256": SHA}]},
                "rules": {"ledger_sha256": "b" * 64, "taxonomy_sha256": "c" * 64},
                "judge": {"configured": True, "model": "judge-1", "rubric_sha256": "d" * 64},
                "options": {"repeat": 1}},
        "cases": cases, "metrics": metrics or {}, "gate": {"result": "PASS"}}
    for key, value in run.items():
        section, _, name = key.partition("__")
        if name:
            doc["run"][section][name] = value
        else:
            doc["run"][section] = value
    return doc


def _compare(a: dict[str, Any], b: dict[str, Any]) -> Comparison:
    return compare_runs(a, b, Path("A.json"), Path("B.json"))


def _write(path: Path, doc: dict[str, Any]) -> str:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return str(path)


# -- classification -----------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b", "kind"), [
    ("failed", "passed", "fixed"), ("error", "review", "fixed"), ("failed", "review", "fixed"),
    ("passed", "failed", "regressed"), ("review", "error", "regressed"),
    ("passed", "review", "status"), ("failed", "error", "status"),
    ("review", "passed", "status"), ("passed", "passed", None), ("failed", "failed", None),
])
def test_a_status_change_is_fixed_regressed_or_other(a: str, b: str, kind: str | None) -> None:
    assert change_kind(a, b) == kind


def test_items_are_matched_by_id_and_trial_and_their_changes_listed() -> None:
    a = _record([
        _case("FIX", "failed", rules=[_row("R1")]),
        _case("REG", "passed"),
        _case("REV", "passed"),
        _case("RULES", "failed", rules=[_row("R1")]),
        _case("INTENT", "passed", predicted="A"),
        _case("JUDGE", "passed", judge="passed"),
        _case("LEVEL", "passed", level="success"),
        _case("SAME", "failed", rules=[_row("R1")]),
        _case("T", "passed", trial=1), _case("T", "passed", trial=2),
        _case("GONE"),
    ])
    b = _record([
        _case("FIX", "passed"),
        _case("REG", "error"),
        _case("REV", "review"),
        _case("RULES", "failed", rules=[_row("R2")]),
        _case("INTENT", "passed", predicted="B"),
        _case("JUDGE", "passed", judge="review"),
        _case("LEVEL", "passed", level="partial"),
        _case("SAME", "failed", rules=[_row("R1")]),
        _case("T", "passed", trial=1), _case("T", "failed", trial=2),
        _case("NEW"),
    ])
    c = _compare(a, b)
    got = {(x.id, x.trial): (x.change, [(d.field, d.a, d.b) for d in x.details])
           for x in c.changes}
    assert got == {
        ("FIX", None): ("fixed", [("failed_rules", "R1", "none"),
                                  ("success_level", "failure", "success")]),
        ("REG", None): ("regressed", [("success_level", "success", "failure")]),
        ("REV", None): ("status", []),
        ("RULES", None): ("detail", [("failed_rules", "R1", "R2")]),
        ("INTENT", None): ("detail", [("intent", "A", "B")]),
        ("JUDGE", None): ("detail", [("judge", "passed", "review")]),
        ("LEVEL", None): ("detail", [("success_level", "success", "partial")]),
        ("T", 2): ("regressed", [("success_level", "success", "failure")]),
    }
    assert [r.id for r in c.only_in_a] == ["GONE"]
    assert [r.id for r in c.only_in_b] == ["NEW"]
    text = render_text(c, verdict(c, Limits()), Limits())
    assert ("Changed items: 1 fixed · 2 regressed · 1 other status change(s) · "
            "4 with changed details · 1 only in A · 1 only in B") in text
    assert "T [trial 2]" in text


def test_failed_rules_of_a_scenario_name_their_turn() -> None:
    a = _record([_case("S", "failed", rules=[_row("BR-018", turn=1)])])
    b = _record([_case("S", "failed", rules=[_row("BR-018", turn=2)])])
    (change,) = _compare(a, b).changes
    assert change.details[0].a == "BR-018 (turn 2)" and change.details[0].b == "BR-018 (turn 3)"


# -- metrics ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("xa", "na", "xb", "nb", "published"), [
    # Newcombe (1998), Stat Med 17:873-890, table II, method 10 (B is his first sample)
    (48, 80, 56, 70, (0.0524, 0.3339)),
    (3, 10, 9, 10, (0.1705, 0.8090)),
    (0, 29, 5, 56, (-0.0381, 0.1926)),
    (0, 20, 10, 10, (0.6791, 1.0000)),
])
def test_newcombe_gives_the_published_intervals(xa: int, na: int, xb: int, nb: int,
                                                published: tuple[float, float]) -> None:
    def interval(x: int, n: int) -> Interval:
        w = wilson(x, n)
        return Interval(w["value"], w["low"], w["high"])

    d = newcombe(interval(xa, na), interval(xb, nb))
    assert d.value == pytest.approx(xb / nb - xa / na)
    assert (round(d.low, 4), round(d.high, 4)) == published


def _rate(x: int, n: int) -> dict[str, Any]:
    return {**wilson(x, n), "method": "wilson"}


def test_rates_get_a_newcombe_interval_from_each_runs_own_and_significance() -> None:
    a = _record([], {"success": {"success_rate": _rate(190, 200), "pass_rate": _rate(95, 100)}})
    b = _record([], {"success": {"success_rate": _rate(150, 200), "pass_rate": _rate(94, 100)}})
    by = {m.metric: m for m in _compare(a, b).metrics}
    drop, flat = by["success_rate"], by["pass_rate"]
    expected = newcombe(Interval(**{k: a["metrics"]["success"]["success_rate"][k]
                                    for k in ("value", "low", "high")}),
                        Interval(**{k: b["metrics"]["success"]["success_rate"][k]
                                    for k in ("value", "low", "high")}))
    assert (drop.delta, drop.low, drop.high) == pytest.approx(tuple(expected))
    assert drop.significant is True and drop.high is not None and drop.high < 0
    assert flat.significant is False and flat.low is not None and flat.low < 0 < flat.high


def test_a_null_metric_is_not_evaluated_never_zero() -> None:
    a = _record([], {"judge": {"mean": None, "availability": {"value": None, "low": None,
                                                              "high": None, "n": 0}}})
    b = _record([], {"judge": {"mean": 4.2, "availability": _rate(9, 10)}})
    c = _compare(a, b)
    by = {m.metric: m for m in c.metrics}
    assert by["judge_mean"].a is None and by["judge_mean"].delta is None
    assert by["judge_availability"].delta is None
    text = render_text(c, verdict(c, Limits()), Limits())
    line = next(x for x in text.splitlines() if x.strip().startswith("judge_mean"))
    assert "not evaluated" in line and "4.200" in line and "0.0" not in line
    assert to_json(c, verdict(c, Limits()))["metrics"][
        [m.metric for m in c.metrics].index("judge_mean")]["a"] is None


def test_figures_have_a_delta_and_no_interval() -> None:
    a = _record([], {"service": {"latency_ms": {"p95": 120.0}}, "judge": {"mean": 4.0}})
    b = _record([], {"service": {"latency_ms": {"p95": 150.0}}, "judge": {"mean": 3.5}})
    by = {m.metric: m for m in _compare(a, b).metrics}
    assert by["latency_p95_ms"].delta == 30.0 and by["latency_p95_ms"].low is None
    assert by["latency_p95_ms"].worsening() == 30.0  # lower is better
    assert by["judge_mean"].worsening() == 0.5


def test_a_bare_rate_gets_its_interval_recounted_from_the_cases() -> None:
    cases = [_case("P1"), _case("P2"), _case("P3"), _case("F1", "failed"), _case("E1", "error")]
    a = _record(cases, {"pass_rate_items": 0.75, "intent": {"accuracy": 1.0}})
    b = _record(cases, {"pass_rate_items": 0.5, "intent": {"accuracy": 0.9}})  # not recounted
    by = {m.metric: m for m in _compare(a, a).metrics}
    own = rate_by_case([("P1", 1.0), ("P2", 1.0), ("P3", 1.0), ("F1", 0.0)])
    half = math.hypot(own["value"] - own["low"], own["high"] - own["value"])
    assert (by["pass_rate_items"].low, by["pass_rate_items"].high) == pytest.approx((-half, half))
    assert by["pass_rate_items"].significant is False
    mismatch = {m.metric: m for m in _compare(a, b).metrics}
    assert mismatch["pass_rate_items"].delta == pytest.approx(-0.25)
    assert mismatch["pass_rate_items"].low is None  # the recount of B does not give 0.5
    assert mismatch["accuracy"].low is None


def test_recall_of_every_label_of_either_run() -> None:
    a = _record([_case("X", expected="A", predicted="A")],
                {"intent": {"per_label": {"A": {"recall": 1.0}}}})
    b = _record([_case("X", expected="A", predicted="A"),
                 _case("Y", expected="B", predicted="A")],
                {"intent": {"per_label": {"A": {"recall": 1.0}, "B": {"recall": 0.0}}}})
    by = {m.metric: m for m in _compare(a, b).metrics}
    assert by["recall[A]"].low is not None
    assert by["recall[B]"].a is None and by["recall[B]"].b == 0.0


# -- red lines ----------------------------------------------------------------------------------


def test_new_red_lines_are_veto_rows_failed_in_b_where_the_rule_did_not_fail_in_a() -> None:
    a = _record([_case("X", "failed", rules=[_row("BR-1", veto=True)]),
                 _case("Y"), _case("Z")])
    b = _record([_case("X", "failed", rules=[_row("BR-1", veto=True), _row("BR-2", veto=True,
                                                                          evidence="加微信")]),
                 _case("Y", "failed", rules=[_row("BR-9", veto=False)]),
                 _case("Z", "failed", rules=[_row("BR-3", veto=True, turn=1),
                                             _row("BR-3", veto=True, turn=2)]),
                 _case("N", "failed", rules=[_row("BR-1", veto=True)])])
    got = [(r.id, r.rule_id, r.turn, r.evidence, r.only_in_b) for r in _compare(a, b).new_red_lines]
    assert got == [("X", "BR-2", None, "加微信", False), ("Z", "BR-3", 1, "", False),
                   ("N", "BR-1", None, "", True)]


# -- comparability ------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("dataset__sha256", "f" * 64, "dataset differs"),
    ("rules__ledger_sha256", "f" * 64, "rule ledger differs"),
    ("judge__model", "judge-2", "judge model differs"),
    ("judge__rubric_sha256", "f" * 64, "judge rubric differs"),
    ("options__repeat", 3, "repeat count differs"),
])
def test_each_of_dataset_ledger_judge_rubric_repeat_decides(field: str, value: Any,
                                                            reason: str) -> None:
    c = _compare(_record([_case("X")]), _record([_case("X")], **{field: value}))
    assert not c.comparable
    assert [r.split(" (")[0] for r in c.why_not_comparable()] == [reason]
    v = verdict(c, Limits())
    assert (v.result, v.exit) == ("NOT_COMPARABLE", 3)
    assert verdict(c, Limits(allow_incomparable=True)).exit == 0
    assert render_text(c, v, Limits()).count(f"NOT comparable: {reason}") == 1


def test_taxonomy_and_item_set_are_shown_but_do_not_decide() -> None:
    a = _record([_case("X"), _case("Y")])
    b = _record([_case("X")], rules__taxonomy_sha256="f" * 64)
    c = _compare(a, b)
    assert c.comparable
    text = render_text(c, verdict(c, Limits()), Limits())
    assert "different (does not block)" in text and "1 only in A, 0 only in B" in text


def test_a_record_without_repeat_counts_as_repeat_1() -> None:
    b = _record([_case("X")])
    del b["run"]["options"]["repeat"]
    assert _compare(_record([_case("X")]), b).comparable


def test_a_different_dataset_names_the_files_and_the_ids() -> None:
    a = _record([_case("X"), _case("OLD")])
    b = _record([_case("X"), _case("NEW")], dataset={
        "sha256": "e" * 64, "files": [{"path": "cases/a.yaml", "sha256": "0" * 64},
                                      {"path": "cases/b.yaml", "sha256": SHA}]})
    c = _compare(a, b)
    assert (c.dataset.files_changed, c.dataset.files_only_in_b) == (["cases/a.yaml"],
                                                                    ["cases/b.yaml"])
    text = render_text(c, verdict(c, Limits()), Limits())
    assert "case files changed: cases/a.yaml" in text
    assert "item ids only in A: OLD" in text and "item ids only in B: NEW" in text


def test_the_dataset_name_and_version_are_shown_and_a_grown_dataset_said_so() -> None:
    a = _record([_case("X")], dataset={"sha256": SHA, "files": [], "name": "dealer",
                                       "version": "1.1.0", "parent": "1.0.0"})
    b = _record([_case("X"), _case("NEW")], dataset={
        "sha256": "e" * 64, "files": [], "name": "dealer", "version": "1.2.0",
        "parent": "1.1.0"})
    c = _compare(a, b)
    row = next(ch for ch in c.checks if ch.check == "dataset_version")
    assert (row.a, row.b, row.blocking) == ("dealer 1.1.0", "dealer 1.2.0", False)
    text = render_text(c, verdict(c, Limits()), Limits())
    grown = "B's dataset is version 1.2.0 grown from A's (1.1.0)"
    assert "dataset version  dealer 1.1.0  dealer 1.2.0" in text
    assert f"NOT comparable: dataset differs (A aaaaaaaaaaaa, B eeeeeeeeeeee): {grown}" in text
    assert "扩充而来的版本 1.2.0" in render_html(c, verdict(c, Limits()), "zh")
    assert json.loads(json.dumps(to_json(c, verdict(c, Limits()))))["dataset"]["grown"] == [
        "1.1.0", "1.2.0"]
    unrelated = _compare(a, _record([_case("X")], dataset={**b["run"]["dataset"],
                                                           "parent": "0.9"}))
    assert unrelated.dataset.lineage is None


# -- the gate -----------------------------------------------------------------------------------


def _gated(**limits: Any) -> tuple[int, list[str]]:
    a = _record([_case("X"), _case("Y"), _case("Z", "failed")],
                {"success": {"success_rate": _rate(190, 200)}, "judge": {"mean": 4.5}})
    b = _record([_case("X", "failed"), _case("Y"), _case("Z")],
                {"success": {"success_rate": _rate(185, 200)}, "judge": {"mean": 4.0}})
    v = verdict(_compare(a, b), Limits(**limits))
    return v.exit, v.failures


def test_the_gate_counts_regressions_against_the_limit() -> None:
    assert _gated() == (1, ["1 regression(s), allowed 0: X"])
    assert _gated(max_regressions=1) == (0, [])


def test_the_gate_fails_on_a_metric_drop_beyond_its_limit() -> None:
    code, failures = _gated(max_regressions=1, max_drop={"success_rate": 0.02})
    assert code == 1
    assert failures == ["success_rate dropped by 2.5 pp (95.0% → 92.5%), allowed 2.0 pp"]
    assert _gated(max_regressions=1, max_drop={"success_rate": 0.03})[0] == 0
    assert _gated(max_regressions=1, max_drop={"judge_mean": 0.4})[1] == [
        "judge_mean dropped by 0.500 (4.500 → 4.000), allowed 0.400"]


def test_significant_only_ignores_a_drop_whose_interval_holds_0() -> None:
    assert _gated(max_regressions=1, max_drop={"success_rate": 0.02},
                  significant_only=True) == (0, [])
    # a figure has no interval: its drop alone decides
    assert _gated(max_regressions=1, max_drop={"judge_mean": 0.4}, significant_only=True)[0] == 1


def test_a_gated_metric_that_b_no_longer_evaluates_fails() -> None:
    a = _record([_case("X")], {"judge": {"mean": 4.5}})
    b = _record([_case("X")], {"judge": {"mean": None}})
    v = verdict(_compare(a, b), Limits(max_drop={"judge_mean": 0.5}))
    assert v.exit == 1 and v.failures == [
        "judge_mean is not evaluated in B (A: 4.500; --max-drop 0.5)"]


def test_a_new_red_line_failure_fails_the_gate_one_line_each() -> None:
    a = _record([_case("X"), _case("Y", "failed", rules=[_row("BR-3", veto=True)])])
    b = _record([_case("X", "review", rules=[_row("BR-3", veto=True, evidence="加我微信")]),
                 _case("Y", "failed", rules=[_row("BR-3", veto=True)])])
    v = verdict(_compare(a, b), Limits())
    assert (v.exit, v.failures) == (1, ["new red-line failure: BR-3 on X: 加我微信"])


def test_not_comparable_says_what_the_gate_would_say() -> None:
    a = _record([_case("X")])
    b = _record([_case("X", "failed")], judge__model="judge-2")
    c = _compare(a, b)
    v = verdict(c, Limits())
    assert v.exit == 3 and v.failures == ["1 regression(s), allowed 0: X"]
    assert "it would fail:" in render_text(c, v, Limits())
    page = render_html(c, v, "en")
    assert 'data-result="NOT_COMPARABLE"' in page and "the gate would fail on:" in page
    assert verdict(c, Limits(allow_incomparable=True)).exit == 1


# -- the command --------------------------------------------------------------------------------


def test_the_command_accepts_files_run_folders_and_latest(tmp_path: Path) -> None:
    run_dir = tmp_path / "reports" / "20261201-120000"
    run_dir.mkdir(parents=True)
    _write(run_dir / "results.json", _record([_case("X")]))
    os.symlink(run_dir.name, tmp_path / "reports" / "latest")
    pointer = tmp_path / "other" / "latest"  # where symlinks cannot be made
    shutil.copytree(run_dir, tmp_path / "other" / run_dir.name)
    pointer.write_text(run_dir.name + "\n", encoding="utf-8")
    out = io.StringIO()
    assert run(str(run_dir / "results.json"), str(tmp_path / "reports" / "latest"),
               out=out) == 0
    assert run(str(run_dir), str(pointer), out=out) == 0
    assert "Comparable: same dataset" in out.getvalue()


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: str(p / "nope.json"), "nope.json: no such file or folder"),
    (lambda p: _touch(p / "bad.json", "{not json"), "bad.json: not JSON (line 1, column 2"),
    (lambda p: _touch(p / "list.json", "[]"), "list.json: not a results.json of pytest-agenteval"),
    (lambda p: _touch(p / "case.json", '{"run": {}, "cases": [{"id": "X"}]}'),
     "case.json: cases[0] has no 'id' or no 'status'"),
    (str, "no results.json in this folder; give a results.json"),
    (lambda p: (_touch(p / "results.jsonl", "{}\n"), str(p))[1],
     "only results.jsonl: that run did not finish"),
])
def test_a_bad_file_is_a_usage_error_that_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, message: str) -> None:
    good = _write(tmp_path / "good.json", _record([_case("X")]))
    folder = tmp_path / "run"
    folder.mkdir()
    assert run(good, make(folder), out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("agenteval compare: ") and message in err, err


def _touch(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("drop", "message"), [
    ("success_rate", "--max-drop success_rate: expected METRIC=X"),
    ("success_rate=-1", "expected METRIC=X with X a number ≥ 0"),
    ("succes_rate=0.1", "--max-drop succes_rate: no such metric in these runs; known: recall,"),
])
def test_a_bad_max_drop_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         drop: str, message: str) -> None:
    good = _write(tmp_path / "good.json", _record([_case("X")]))
    assert run(good, good, max_drop=[drop], out=io.StringIO()) == 2
    assert message in capsys.readouterr().err


def test_main_runs_compare_and_writes_json_and_html(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    a = _write(tmp_path / "a.json", _record([_case("X", "failed")]))
    b = _write(tmp_path / "b.json", _record([_case("X")]))
    code = main(["compare", a, b, "--json", str(tmp_path / "c.json"), "--html",
                 str(tmp_path / "c.html"), "--max-drop", "success_rate=0.02"])
    assert code == 0
    doc = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert doc["comparable"] is True and doc["gate"] == {
        "result": "PASS", "exit": 0, "failures": [], "not_comparable": []}
    assert [(x["id"], x["change"]) for x in doc["changes"]] == [("X", "fixed")]
    assert '<html lang="en">' in (tmp_path / "c.html").read_text(encoding="utf-8")  # A's language
    assert "Comparison gate: PASS" in capsys.readouterr().out


def test_an_argparse_error_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["compare", "only-one.json"])
    assert exc.value.code == 2


# -- output safety ------------------------------------------------------------------------------

_INJECTED = "<script>alert(1)</script>"


def _hostile() -> tuple[dict[str, Any], dict[str, Any]]:
    a = _record([_case("X", title=f"{_INJECTED} 13812345678")])
    b = _record([_case("X", "failed", title=f"{_INJECTED} 13812345678",
                       rules=[_row("BR-3", veto=True, evidence=f"{_INJECTED} a.person@mail.com")])])
    return a, b


def test_the_html_page_escapes_record_text_and_runs_no_other_script() -> None:
    a, b = _hostile()
    c = _compare(a, b)
    page = render_html(c, verdict(c, Limits()), "zh")
    assert page.count("<script") == 1  # the page's own (empty) script, named in the CSP
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src &#x27;none&#x27;" in page
    assert 'src="http' not in page and 'href="http' not in page
    assert '<html lang="zh-CN">' in page and "两次运行对比" in page


def test_text_from_the_records_is_masked_again_everywhere() -> None:
    a, b = _hostile()
    c = _compare(a, b)
    v = verdict(c, Limits())
    outputs = [render_text(c, v, Limits()), json.dumps(to_json(c, v), ensure_ascii=False),
               render_html(c, v, "en")]
    for text in outputs:
        assert "13812345678" not in text and "a.person@mail.com" not in text
        assert "138****5678" in text


def test_terminal_control_characters_are_escaped() -> None:
    a = _record([_case("X", title="ok")])
    b = _record([_case("X", "failed", title="\x1b[2J=== 99 passed ===\nforged")])
    c = _compare(a, b)
    text = render_text(c, verdict(c, Limits()), Limits())
    assert "\x1b" not in text and "\\x1b[2J" in text and "⏎forged" in text


def test_both_languages_have_the_same_words() -> None:
    for lang, (table, script) in tables().items():
        en, en_script = tables()["en"]
        assert table.keys() == en.keys(), lang
        assert script.keys() == en_script.keys(), lang
    assert any(k.startswith("cmp.gate.") for k in tables()["zh"][0])


# -- end to end: the shipped suite, then the release with defect (a) fixed ----------------------


@pytest.mark.data
def test_the_release_with_defect_a_fixed_shows_exactly_that_fix(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("cases", "rules"):
        shutil.copytree(ROOT / name, pytester.path / name)
    config = (ROOT / "agenteval.yaml").read_text(encoding="utf-8")
    (pytester.path / "agenteval.yaml").write_text(config, encoding="utf-8")
    fixed = config.replace("target:\n", "target:\n  fixed_defects: [a]\n", 1)
    assert fixed != config
    (pytester.path / "fixed.yaml").write_text(fixed, encoding="utf-8")
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    latest = pytester.path / "reports" / "latest"
    pytester.runpytest("cases")  # serial: the suite around it has the cores
    run_a = latest.resolve()
    pytester.runpytest("cases", "--agenteval-config", "fixed.yaml")
    run_b = latest.resolve()
    assert run_a != run_b
    capsys.readouterr()
    html, out_json = pytester.path / "compare.html", pytester.path / "compare.json"
    code = main(["compare", str(run_a), str(latest), "--html", str(html), "--json",
                 str(out_json)])
    text = capsys.readouterr().out
    doc = json.loads(out_json.read_text(encoding="utf-8"))
    assert [(x["id"], x["change"], x["a"], x["b"]) for x in doc["changes"]] == [
        ("NEGATIVE_FEEDBACK-003", "fixed", "failed", "passed")]
    assert doc["only_in_a"] == [] and doc["only_in_b"] == [] and doc["new_red_lines"] == []
    assert code == 0 and doc["comparable"] is True, text
    assert "1 fixed · 0 regressed · 0 other status change(s) · 0 with changed details" in text
    page = html.read_text(encoding="utf-8")
    assert page.count("<script") == 1 and "NEGATIVE_FEEDBACK-003" in page
