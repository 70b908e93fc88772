"""The release gate: PASS, PASS_WITH_RISK, BLOCK or EXPLORATORY, with the reasons.

Decided in this order:

1. **BLOCK** when the run is incomplete (a selected item has no result: a
   crashed worker, an interrupted run) — an incomplete run proves nothing.
2. With ``formal_requires_reviewed`` and any selected item still a
   ``candidate``: **EXPLORATORY** — the verdict the data would get is given in
   the reasons, and the gate does not block.
3. **BLOCK** when a red-line rule failed even once, or a metric is outside its
   bounds.
4. **PASS_WITH_RISK** when a gated metric could not be evaluated (``None``: no
   judge, no support for a label), or items are flaky across repeat trials.
5. **PASS** otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..model.gates import GateMetric, GatesFile

__all__ = ["evaluate_gate", "exit_status", "load_gates", "metric_value", "not_configured"]


def _value(x: Any) -> float | None:
    if isinstance(x, dict):
        x = x.get("value")
    return None if x is None else float(x)


def metric_value(m: GateMetric, metrics: dict[str, Any]) -> float | None:
    """The value of one gated metric in the run's metrics (None = not evaluated)."""
    intent, svc = metrics["intent"], metrics["service"]
    if m.label is not None:
        row = intent["per_label"].get(m.label)
        return None if row is None else _value(row.get(m.metric))
    if m.k is not None:
        table = {row["k"]: row["value"] for row in metrics["stability"].get("pass_hat_k", [])}
        return _value(table.get(m.k))
    where = {
        "macro_f1": lambda: intent["macro_f1"], "micro_f1": lambda: intent["micro_f1"],
        "accuracy": lambda: intent["accuracy"],
        "hard_rule_pass_rate": lambda: metrics["red_lines"]["hard_rule_pass_rate"],
        "success_rate": lambda: metrics["success"]["success_rate"],
        "pass_rate": lambda: metrics["success"]["pass_rate"],
        "judge_availability": lambda: metrics["judge"]["availability"],
        "judge_mean": lambda: metrics["judge"]["mean"],
        "judge_review_rate": lambda: metrics["judge"]["review_rate"],
        "fact_risk_rate": lambda: metrics["judge"]["fact_risk_rate"],
        "knowledge_coverage": lambda: metrics["knowledge"]["required_coverage"],
        "pair_consistency": lambda: metrics["robustness"]["pair_consistency"],
        "safety_pass_rate": lambda: metrics["safety"]["pass_rate"],
        "agent_error_rate": lambda: svc["agent_error_rate"],
        "latency_p50_ms": lambda: svc["latency_ms"]["p50"],
        "latency_p95_ms": lambda: svc["latency_ms"]["p95"],
        "repeat_consistency": lambda: metrics["stability"].get("repeat_consistency"),
    }
    return _value(where[m.metric]())


def _metric_check(m: GateMetric, metrics: dict[str, Any]) -> dict[str, Any]:
    value = metric_value(m, metrics)
    bound = " and ".join(x for x in (f"≥ {m.min:g}" if m.min is not None else "",
                                     f"≤ {m.max:g}" if m.max is not None else "") if x)
    if value is None:
        return {"check": m.name, "status": "not_evaluated", "value": None, "bound": bound,
                "reason": f"{m.name} is not evaluated in this run (required {bound})"}
    ok = (m.min is None or value >= m.min) and (m.max is None or value <= m.max)
    return {"check": m.name, "status": "passed" if ok else "failed", "value": value,
            "bound": bound, "reason": f"{m.name} = {value:.4g} (required {bound})"}


def _red_line_check(rule_id: str, cases: Sequence[dict[str, Any]]) -> dict[str, Any]:
    failed = sorted({c["id"] for c in cases for r in c.get("rules") or []
                     if r["rule_id"] == rule_id and r["status"] == "failed"})
    evaluated = sum(1 for c in cases for r in c.get("rules") or []
                    if r["rule_id"] == rule_id and r["status"] != "not_applicable")
    reason = (f"red line {rule_id} failed in {len(failed)} item(s): {', '.join(failed[:10])}"
              if failed else f"red line {rule_id} held ({evaluated} checks)")
    return {"check": f"red_line[{rule_id}]", "status": "failed" if failed else "passed",
            "value": len(failed), "bound": "= 0", "reason": reason, "items": failed}


def not_configured() -> dict[str, Any]:
    return {"result": "NOT_CONFIGURED", "reasons": ["no release gate: rules/gates.yaml is absent"],
            "checks": [], "source": None}


def evaluate_gate(gates: GatesFile, source: str, metrics: dict[str, Any],
                  cases: Sequence[dict[str, Any]], completeness: dict[str, Any]) -> dict[str, Any]:
    """The gate result for a finished run (see the module docstring for the order)."""
    checks = [_red_line_check(rid, cases) for rid in gates.red_lines]
    checks += [_metric_check(m, metrics) for m in gates.metrics]
    failed = [c["reason"] for c in checks if c["status"] == "failed"]
    unknown = [c["reason"] for c in checks if c["status"] == "not_evaluated"]
    flaky = metrics.get("stability", {}).get("flaky_cases") or []
    risks = unknown + ([f"{len(flaky)} flaky case(s) across repeat trials"] if flaky else [])
    if not completeness.get("complete", True):
        missing = completeness.get("missing", [])
        broken = completeness.get("collection_errors", [])
        heads = [f"incomplete run: {len(missing)} selected item(s) have no result: "
                 + ", ".join(missing[:10])] if missing else []
        heads += [f"incomplete run: {len(broken)} case file(s) could not be loaded: "
                  + ", ".join(broken[:10])] if broken else []
        if completeness.get("duplicates"):
            heads.append("incomplete run: items reported twice: "
                         + ", ".join(completeness["duplicates"][:10]))
        reasons = [*heads, *failed]
        return _result("BLOCK", reasons, checks, source)
    candidates = sorted({c["id"] for c in cases if c.get("review_status") != "reviewed"})
    verdict = "BLOCK" if failed else ("PASS_WITH_RISK" if risks else "PASS")
    if gates.formal_requires_reviewed and candidates:
        head = (f"exploratory: {len(candidates)} of {len({c['id'] for c in cases})} items are "
                f"candidates (formal_requires_reviewed); on reviewed data this run would be "
                f"{verdict}")
        return _result("EXPLORATORY", [head, *failed, *risks], checks, source)
    return _result(verdict, failed + risks if verdict != "PASS" else
                   ["every red line held and every gated metric is within bounds"],
                   checks, source)


def _result(result: str, reasons: list[str], checks: list[dict[str, Any]],
            source: str) -> dict[str, Any]:
    return {"result": result, "reasons": reasons, "checks": checks, "source": source}


def load_gates(path: Path, rootdir: Path, rule_ids: Sequence[str] = (),
               labels: Sequence[str] = ()) -> tuple[GatesFile | None, str | None]:
    """Load ``rules/gates.yaml``; raise ``ConfigError`` naming file, line and field.

    A red line that is no rule of the ledger, or a label that is not in the
    taxonomy, is an error (when there is a ledger / a taxonomy to check against):
    a misspelt id would otherwise "hold" forever.
    """
    from ..config import ConfigError
    from ..model import MultiSourceError, validate_at
    from ..yamlio import SourceError, load_yaml, locate

    if not path.is_file():
        return None, None
    try:
        doc = load_yaml(path, locate(path, rootdir))
        gates = validate_at(GatesFile, doc.data or {}, doc)
        for i, rid in enumerate(gates.red_lines):
            if rule_ids and rid not in rule_ids:
                raise SourceError(doc.at(("red_lines", i)), f"{rid} is no rule of the ledger; "
                                  f"known: {', '.join(rule_ids)}", f"red_lines[{i}]")
        for i, m in enumerate(gates.metrics):
            if labels and m.label is not None and m.label not in labels:
                raise SourceError(doc.at(("metrics", i, "label")), f"{m.label} is not a label of "
                                  f"the taxonomy; known: {', '.join(labels)}",
                                  f"metrics[{i}].label")
        return gates, doc.file
    except (SourceError, MultiSourceError) as exc:
        raise ConfigError(str(exc)) from None


def exit_status(mode: str, status: int, gate: str) -> int:
    """pytest's exit status after the gate (``--agenteval-exit``).

    ``items`` (default): pytest's own status, made 1 when the gate is BLOCK.
    ``gate``: the gate decides — 1 on BLOCK, 0 on any other result even when
    items failed; interruptions, usage and internal errors keep their status.
    """
    blocked = gate == "BLOCK"
    if mode == "gate":
        if status in (0, 1):
            return 1 if blocked else 0
        return status
    return 1 if blocked and status == 0 else status
