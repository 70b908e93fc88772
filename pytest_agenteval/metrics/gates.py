"""The release gate: PASS, PASS_WITH_RISK, BLOCK or EXPLORATORY, with the reasons.

Decided in this order:

1. **BLOCK** when the run is incomplete (a selected item has no result: a
   crashed worker, an interrupted run, a case file that could not be loaded)
   — an incomplete run proves nothing.
2. **BLOCK** when the run proves too little, whatever else holds (fail-safe):
   nothing was evaluated (every item an ERROR, or no item); more than
   ``max_error_rate`` of the items are ERRORs (default 5%); a red line was
   evaluated 0 times; a gated metric is not evaluated while some items are
   ERRORs (the errors may be why). EXPLORATORY data included.
3. With ``formal_requires_reviewed`` and any selected item still a
   ``candidate``: **EXPLORATORY** — the verdict the data would get is given in
   the reasons, and the gate does not block.
4. **BLOCK** when a red-line rule failed even once, or a metric is outside its
   bounds.
5. **PASS_WITH_RISK** when a gated metric could not be evaluated by design
   (no judge, no support for a label, and no item is an ERROR), or items are
   flaky across repeat trials.
6. **PASS** otherwise.

A subset run (``-k``, ``-m``, ``--lf``, node ids) says so in its reasons: its
gate covers the selected items only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..model.gates import GateCheck, GateMetric, GateResult, GatesFile, RedLineCheck
from ..model.results import Completeness, ItemResult
from ._family import RunMetrics

__all__ = ["GateEvidence", "evaluate_gate", "exit_status", "load_gates", "not_configured",
           "skipped_part"]


class GateEvidence:
    """What the gate reads of the items, folded one at a time: counts, ids, and the
    verdicts of the red lines' rows."""

    def __init__(self, red_lines: Iterable[str] = ()) -> None:
        self.total = self.errors = 0
        self.ids: set[str] = set()
        self.candidates: set[str] = set()
        #: per red-line id: (item id, row status) of every row of it
        self.rows: dict[str, list[tuple[str, str]]] = {rid: [] for rid in red_lines}

    @classmethod
    def of(cls, items: Iterable[ItemResult], red_lines: Iterable[str] = ()) -> GateEvidence:
        evidence = cls(red_lines)
        for item in items:
            evidence.add(item)
        return evidence

    def add(self, item: ItemResult) -> None:
        self.total += 1
        self.errors += item.status == "error"
        self.ids.add(item.id)
        if item.review_status != "reviewed":
            self.candidates.add(item.id)
        if self.rows:
            for _, row in item.rule_rows():
                rows = self.rows.get(row.rule_id)
                if rows is not None:
                    rows.append((item.id, row.status))


def _metric_check(m: GateMetric, metrics: RunMetrics) -> GateCheck:
    value = metrics.gate_value(m)
    bound = " and ".join(x for x in (f"≥ {m.min:g}" if m.min is not None else "",
                                     f"≤ {m.max:g}" if m.max is not None else "") if x)
    if value is None:
        return GateCheck(check=m.name, status="not_evaluated", value=None, bound=bound,
                         reason=f"{m.name} is not evaluated in this run (required {bound})")
    ok = (m.min is None or value >= m.min) and (m.max is None or value <= m.max)
    return GateCheck(check=m.name, status="passed" if ok else "failed", value=value,
                     bound=bound, reason=f"{m.name} = {value:.4g} (required {bound})")


def _red_line_check(rule_id: str, rows: Sequence[tuple[str, str]]) -> RedLineCheck:
    failed = sorted({cid for cid, status in rows if status == "failed"})
    evaluated = sum(1 for _, status in rows if status not in ("not_applicable", "error"))
    if failed:
        reason = f"red line {rule_id} failed in {len(failed)} item(s): {', '.join(failed[:10])}"
    elif not evaluated:  # a red line nobody checked holds nothing
        reason = (f"red line {rule_id} was evaluated 0 times: no turn of the run is one it "
                  "applies to (or every such turn was an ERROR)")
    else:
        reason = f"red line {rule_id} held ({evaluated} checks)"
    return RedLineCheck(check=f"red_line[{rule_id}]",
                        status="failed" if failed or not evaluated else "passed",
                        value=len(failed), bound="= 0", reason=reason, items=failed,
                        evaluations=evaluated)


def _evidence_checks(gates: GatesFile, seen: GateEvidence) -> list[GateCheck]:
    """The fail-safe: a run must have evaluated enough to decide anything."""
    errors, total = seen.errors, seen.total
    evaluated = total - errors
    checks = [GateCheck(
        check="evaluated", status="passed" if evaluated else "failed", value=evaluated,
        bound="≥ 1",
        reason=(f"{evaluated} of {total} items evaluated" if evaluated else
                f"nothing was evaluated: {errors} of {total} items are ERRORs" if total else
                "nothing was evaluated: no item ran"))]
    if total:
        rate = errors / total
        ok = rate <= gates.max_error_rate
        checks.append(GateCheck(
            check="error_rate", status="passed" if ok else "failed", value=rate,
            bound=f"≤ {gates.max_error_rate:g}",
            reason=f"error rate {rate:.1%} ({errors} of {total} items are ERRORs; required "
                   f"≤ {gates.max_error_rate:.1%}, max_error_rate in gates.yaml)"))
    return checks


def skipped_part(skipped: int) -> str:
    """The part of a subset's description that names the items pytest skipped (none: "")."""
    return f"{skipped} item(s) skipped" if skipped else ""


def not_configured() -> GateResult:
    return GateResult(result="NOT_CONFIGURED",
                      reasons=["no release gate: rules/gates.yaml is absent"])


def _incomplete(completeness: Completeness) -> list[str]:
    missing, broken = completeness.missing, completeness.collection_errors
    heads = [f"incomplete run: {len(missing)} selected item(s) have no result: "
             + ", ".join(missing[:10])] if missing else []
    heads += [f"incomplete run: {len(broken)} case file(s) could not be loaded: "
              + ", ".join(broken[:10])] if broken else []
    if completeness.missing_shards:
        heads.append("incomplete run: no record of shard(s) "
                     + ", ".join(str(i) for i in completeness.missing_shards)
                     + " (agenteval merge): their items are not in this run")
    if completeness.merge_conflicts:
        heads.append("incomplete run: the merged records are not the shards of one run "
                     f"(merged with --force): {completeness.merge_conflicts[0]}")
    if completeness.duplicates:
        heads.append("incomplete run: items reported twice: "
                     + ", ".join(completeness.duplicates[:10]))
    return heads


def evaluate_gate(gates: GatesFile, source: str, metrics: RunMetrics,
                  items: Sequence[ItemResult] | GateEvidence, completeness: Completeness,
                  subset: str | None = None) -> GateResult:
    """The gate result for a finished run (see the module docstring for the order).

    ``items`` are the item results, or what a :class:`GateEvidence` folded of them with
    the gate's red lines. ``subset`` names how the run was narrowed (``-k PHONE``), if it
    was.
    """
    from .stability import StabilityFamily

    seen = items if isinstance(items, GateEvidence) else GateEvidence.of(items, gates.red_lines)
    evidence = _evidence_checks(gates, seen)
    red = [_red_line_check(rid, seen.rows.get(rid, [])) for rid in gates.red_lines]
    gated = [_metric_check(m, metrics) for m in gates.metrics]
    errors = seen.errors
    emptied: list[GateCheck] = []  # not evaluated, with errors in the run: maybe because of them
    if errors:
        emptied = [c.model_copy(update={"status": "failed", "reason": c.reason + f"; {errors} "
                                        "item(s) are ERRORs, which may be why"})
                   for c in gated if c.status == "not_evaluated"]
        gated = [c for c in gated if c.status != "not_evaluated"] + emptied
    checks: list[RedLineCheck | GateCheck] = [*red, *gated, *evidence]
    unchecked = [c for c in red if not c.evaluations and not c.items]
    fail_safe_checks: list[GateCheck] = [*(c for c in evidence if c.status == "failed"),
                                         *unchecked, *emptied]
    blocking = [c.reason for c in fail_safe_checks]
    fail_safe = {id(c) for c in fail_safe_checks}
    failed = [c.reason for c in checks if c.status == "failed" and id(c) not in fail_safe]
    unknown = [c.reason for c in checks if c.status == "not_evaluated"]
    flaky = metrics[StabilityFamily].flaky_cases
    risks = unknown + ([f"{len(flaky)} flaky case(s) across repeat trials"] if flaky else [])
    scope = [f"subset run ({subset}): the gate covers the selected items only"] if subset else []
    if not completeness.complete:
        return GateResult(result="BLOCK",
                          reasons=[*_incomplete(completeness), *blocking, *failed, *scope],
                          checks=checks, source=source)
    if blocking:  # the fail-safe: too little evidence, whatever else holds
        return GateResult(result="BLOCK", reasons=[*blocking, *failed, *scope], checks=checks,
                          source=source)
    candidates = seen.candidates
    verdict = "BLOCK" if failed else ("PASS_WITH_RISK" if risks else "PASS")
    if gates.formal_requires_reviewed and candidates:
        head = (f"exploratory: {len(candidates)} of {len(seen.ids)} items are "
                f"candidates (formal_requires_reviewed); on reviewed data this run would be "
                f"{verdict}")
        return GateResult(result="EXPLORATORY", reasons=[head, *failed, *risks, *scope],
                          checks=checks, source=source)
    reasons = (failed + risks if verdict != "PASS" else
               ["every red line held and every gated metric is within bounds"])
    return GateResult(result=verdict, reasons=[*reasons, *scope], checks=checks, source=source)


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
