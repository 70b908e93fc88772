"""Hard rules and red lines: ledger and veto rule rows across the run."""

from __future__ import annotations

from ..model.results import ItemResult, RuleRow
from ._family import Family, GateValue, MetricModel, Rate, RunData, RunMetrics, pct, rate

__all__ = ["RedLine", "RedLinesFamily", "RedLinesModel"]

_NO_VERDICT = ("not_applicable", "error")


class RedLine(MetricModel):
    items_evaluated: int
    items_failed: int
    rows_failed: int
    pass_rate: Rate


class RedLinesModel(MetricModel):
    hard_rule_pass_rate: Rate
    items_with_hard_rules: int
    red_lines: dict[str, RedLine]
    red_lines_failed: list[str]
    items_failing_veto: list[str]


def _hard_rows(item: ItemResult) -> list[RuleRow]:
    return [row for _, row in item.rule_rows()
            if (row.origin == "ledger" or row.veto) and row.status not in _NO_VERDICT]


def _red_line(items: list[ItemResult] | tuple[ItemResult, ...], rule_id: str) -> RedLine:
    members: list[tuple[str, float]] = []
    rows_failed = 0
    for item in items:
        rows = [row for _, row in item.rule_rows()
                if row.rule_id == rule_id and row.status not in _NO_VERDICT]
        failed = sum(1 for row in rows if row.status == "failed")
        rows_failed += failed
        if rows:
            members.append((item.id, 0.0 if failed else 1.0))
    items_failed = sum(1 for _, ok in members if not ok)
    return RedLine(items_evaluated=len(members), items_failed=items_failed,
                   rows_failed=rows_failed, pass_rate=rate(members))


class RedLinesFamily(Family[RedLinesModel]):
    """Hard rules: ledger and veto rule rows (``origin == "ledger"`` or ``veto``).

    - ``hard_rule_pass_rate = items with no failed hard row / items with ≥1 evaluated
      hard row``; an item with a failed hard row counts as a failure whatever its
      status (a red line broken before an agent error is still broken), one without
      counts as a pass only if it is evaluated;
    - per red-line id (the gate's ``red_lines``, or every veto rule seen when the run
      has no gate): ``items_failed`` (items with ≥1 failed row of that id),
      ``items_evaluated`` (items with ≥1 evaluated row), ``rows_failed`` (turns) and
      ``pass_rate = 1 − items_failed / items_evaluated``;
    - ``items_failing_veto``: ids of items with a failed ``veto`` row.

    A row whose rule type raised (``error``) is no verdict: it is in no count.
    """

    key = "red_lines"
    model = RedLinesModel
    order = 20
    gate = (GateValue("hard_rule_pass_rate", lambda m, g: m.hard_rule_pass_rate),)

    def compute(self, run: RunData) -> RedLinesModel:
        items = list(run.items)
        members: list[tuple[str, float]] = []
        for item in items:
            rows = _hard_rows(item)
            failed = any(row.status == "failed" for row in rows)
            if rows and (failed or item.status != "error"):
                members.append((item.id, 0.0 if failed else 1.0))
        ids = run.red_lines
        if ids is None:
            ids = sorted({row.rule_id for i in items for _, row in i.rule_rows() if row.veto})
        per_id = {rid: _red_line(items, rid) for rid in ids}
        return RedLinesModel(
            hard_rule_pass_rate=rate(members),
            items_with_hard_rules=len(members),
            red_lines=per_id,
            red_lines_failed=[rid for rid, row in per_id.items() if row.items_failed],
            items_failing_veto=sorted({i.id for i in items for _, row in i.rule_rows()
                                       if row.veto and row.status == "failed"}),
        )

    def summary(self, value: RedLinesModel, metrics: RunMetrics) -> list[str]:
        lines = [f"hard rules (L1): pass rate {pct(value.hard_rule_pass_rate)} over "
                 f"{value.items_with_hard_rules} items"]
        if value.red_lines_failed:
            lines.append("  red lines broken: " + ", ".join(
                f"{rid} ×{value.red_lines[rid].items_failed}" for rid in value.red_lines_failed))
        return lines
