"""Plain-text renderings: an item's failure explanation and the terminal summary."""

from __future__ import annotations

from typing import Any

__all__ = ["explain", "summary_lines"]

_MARK = {"passed": "✓", "failed": "✗", "not_applicable": "-"}


def _clip(text: str | None, n: int = 160) -> str:
    if text is None:
        return ""
    text = text.replace("\n", "⏎")
    return text if len(text) <= n else text[: n - 1] + "…"


def _rule_lines(rows: list[dict[str, Any]], indent: str) -> list[str]:
    out = []
    for r in rows:
        if r["status"] != "failed":
            continue
        veto = " [veto]" if r.get("veto") else ""
        out.append(f"{indent}✗ {r['rule_id']} ({r['type']}){veto}: {r['reason']}")
        if r.get("evidence"):
            out.append(f"{indent}    evidence: {_clip(r['evidence'])}")
    return out


def _turn_lines(turn: dict[str, Any], indent: str) -> list[str]:
    lines = [f"{indent}user:  {_clip(turn['input'])}"]
    if turn.get("error"):
        err = turn["error"]
        lines.append(f"{indent}agent error ({err['kind']}): {_clip(err['detail'], 300)}")
        return lines
    lines.append(f"{indent}agent: {_clip(turn['reply'])}")
    intent = turn.get("intent") or {}
    if intent.get("correct") is False or intent.get("code_correct") is False:
        lines.append(f"{indent}intent: predicted {intent.get('predicted')} "
                     f"(code {intent.get('code_returned')}), expected {intent.get('expected')}"
                     + (f" / code {intent['code_expected']}" if intent.get("code_expected")
                        is not None else ""))
    logic = turn.get("rule_logic") or {}
    explicit_failed = any(r["status"] == "failed" and r.get("origin") == "case"
                          for r in turn.get("rules", []))
    if logic and (not logic.get("passed", True) or explicit_failed):
        verdict = "" if not logic.get("passed", True) else " — enough, these rules pass"
        lines.append(f"{indent}rules: {logic.get('reason')}{verdict}")
    lines += _rule_lines(turn.get("rules", []), indent)
    return lines


def explain(result: dict[str, Any]) -> str:
    """Why an item failed or errored: rule ids, evidence, intent; no traceback."""
    status = result["status"].upper()
    head = f"{status} {result['kind']} {result['id']}"
    if result.get("title"):
        head += f" — {result['title']}"
    lines = [head]
    if result["kind"] == "case":
        turn = {"input": result["request"]["input"], "reply": result["response"]["output"],
                "error": result.get("error"), "intent": result.get("intent"),
                "rules": result.get("rules", []), "rule_logic": result.get("rule_logic")}
        lines += _turn_lines(turn, "  ")
    else:
        for t in result.get("turns", []):
            if t["status"] in ("failed", "error"):
                lines.append(f"  turn {t['index'] + 1} {t['status'].upper()}:")
                lines += _turn_lines(t, "    ")
        planned, ran = result.get("turns_planned", 0), len(result.get("turns", []))
        if ran < planned:
            lines.append(f"  (stopped after turn {ran} of {planned}: the agent did not answer)")
    return "\n".join(lines)


def _fmt(value: float | None, unit: str = "") -> str:
    return "not evaluated" if value is None else f"{value:.0f}{unit}"


def _pct(rate: Any) -> str:
    value = rate.get("value") if isinstance(rate, dict) else rate
    if value is None:
        return "not evaluated"
    text = f"{value:.1%}"
    if isinstance(rate, dict) and rate.get("low") is not None:
        text += f" [{rate['low']:.0%}–{rate['high']:.0%}]"
    return text


def gate_lines(gate: dict[str, Any]) -> list[str]:
    """The release gate first: its result and why."""
    lines = [f"GATE: {gate['result']}" + (f"  ({gate['source']})" if gate.get("source") else "")]
    lines += [f"  - {reason}" for reason in gate["reasons"][:12]]
    return lines


def _intent_table(intent: dict[str, Any]) -> list[str]:
    if not intent["evaluated"]:
        return ["intent (L2): not evaluated (the agent returned no intent)"]
    lines = [f"intent (L2): {intent['correct']}/{intent['evaluated_turns']} turns correct "
             f"({_pct(intent['accuracy'])}), macro F1 {_pct(intent['macro_f1'])}",
             f"  {'label':<20}{'precision':>15}{'recall':>15}{'F1':>15}{'support':>9}"]
    for label, row in intent["per_label"].items():
        lines.append(f"  {label:<20}{_pct(row['precision']):>15}{_pct(row['recall']):>15}"
                     f"{_pct(row['f1']):>15}{row['support']:>9}")
    return lines


def _layer_lines(metrics: dict[str, Any]) -> list[str]:
    red = metrics["red_lines"]
    lines = [f"hard rules (L1): pass rate {_pct(red['hard_rule_pass_rate'])} over "
             f"{red['items_with_hard_rules']} items"]
    broken = red["red_lines_failed"]
    if broken:
        lines.append("  red lines broken: " + ", ".join(
            f"{rid} ×{red['red_lines'][rid]['items_failed']}" for rid in broken))
    succ = metrics["success"]
    lines.append(f"success: success_rate {_pct(succ['success_rate'])} · pass_rate "
                 f"{_pct(succ['pass_rate'])} ({succ['evaluated']} evaluated, {succ['errors']} "
                 f"errors excluded, {succ['not_evaluated']} not evaluated)")
    judge = metrics["judge"]
    lines.append("judge (L3): " + (judge["reason"] or f"mean {judge['mean']}, availability "
                                   f"{_pct(judge['availability'])}"))
    stab = metrics["stability"]
    if stab["repeated"]:
        ks = " · ".join(f"pass^{row['k']} {_pct(row['value'])}" for row in stab["pass_hat_k"])
        lines.append(f"stability: {ks}; flaky {len(stab['flaky_cases'])} of {stab['cases']}")
    return lines


def summary_lines(metrics: dict[str, Any], completeness: dict[str, Any],
                  results_path: str | None, gate: dict[str, Any] | None = None) -> list[str]:
    """The agenteval block of the terminal summary: the gate first, then the layers."""
    c = metrics["counts"]
    lines = gate_lines(gate) if gate else []
    lines.append(f"items: {c['total']} ({c['cases']} cases, {c['scenarios']} scenarios)  "
                 f"passed {c['passed']} · failed {c['failed']} · review {c['review']} · "
                 f"error {c['error']}")
    lines += _layer_lines(metrics)
    lines += _intent_table(metrics["intent"])
    failures = metrics["rules"]["failures_by_rule"]
    if failures:
        lines.append("failures per rule id:")
        shown = list(failures.items())[:15]
        width = max(len(rid) for rid, _ in shown) + 2
        lines += [f"  {rid:<{width}}{n}" for rid, n in shown]
        if len(failures) > 15:
            lines.append(f"  … and {len(failures) - 15} more rule ids (see results.json)")
    svc = metrics["service"]
    lat = svc["latency_ms"]
    lines.append(f"agent: {svc['agent_calls']} calls, {svc['agent_errors']} errors"
                 + (f" {svc['errors_by_kind']}" if svc["errors_by_kind"] else "")
                 + f"; latency P50 {_fmt(lat['p50'], ' ms')} · P95 {_fmt(lat['p95'], ' ms')}"
                 f" · max {_fmt(lat['max'], ' ms')}")
    if not completeness["complete"]:
        missing = completeness["missing"]
        why = " (run stopped early)" if completeness["stopped_early"] else ""
        lines.append(f"INCOMPLETE: {len(missing)} of {completeness['expected']} selected items"
                     f" have no result{why}:")
        lines += [f"  {n}" + (f" — {completeness['lost'][n][:120]}"
                              if n in completeness["lost"] else "") for n in missing[:20]]
        if completeness["duplicates"]:
            lines.append(f"  reported twice: {', '.join(completeness['duplicates'])}")
    if results_path:
        lines.append(f"run record: {results_path}")
    return lines
