"""Hard rules and red lines: ledger and veto rule rows across the run."""

from __future__ import annotations

from collections.abc import Sequence

from ..model.results import ItemResult, RuleRow
from ._family import Family, Folder, GateValue, MetricModel, Rate, RunData, RunMetrics, pct, rate

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


class _RedLineFold:
    """One rule id across the run: ``(item id, held)`` per item with a verdict of it."""

    def __init__(self) -> None:
        self.members: list[tuple[str, float]] = []
        self.rows_failed = 0

    def result(self) -> RedLine:
        items_failed = sum(1 for _, ok in self.members if not ok)
        return RedLine(items_evaluated=len(self.members), items_failed=items_failed,
                       rows_failed=self.rows_failed, pass_rate=rate(self.members))


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

    def folder(self, run: RunData) -> _RedLinesFolder:
        return _RedLinesFolder(run.red_lines)

    def summary(self, value: RedLinesModel, metrics: RunMetrics) -> list[str]:
        lines = [f"hard rules (L1): pass rate {pct(value.hard_rule_pass_rate)} over "
                 f"{value.items_with_hard_rules} items"]
        if value.red_lines_failed:
            lines.append("  red lines broken: " + ", ".join(
                f"{rid} ×{value.red_lines[rid].items_failed}" for rid in value.red_lines_failed))
        return lines


class _RedLinesFolder(Folder[RedLinesModel]):
    def __init__(self, red_lines: Sequence[str] | None) -> None:
        self.red_lines = red_lines
        self.wanted = None if red_lines is None else set(red_lines)
        self.members: list[tuple[str, float]] = []
        self.per_id: dict[str, _RedLineFold] = {}
        self.veto_ids: set[str] = set()
        self.failing_veto: set[str] = set()

    def add(self, item: ItemResult) -> None:
        rows = _hard_rows(item)
        failed = any(row.status == "failed" for row in rows)
        if rows and (failed or item.status != "error"):
            self.members.append((item.id, 0.0 if failed else 1.0))
        verdicts: dict[str, list[bool]] = {}  # rule id -> failed?, per row with a verdict
        for _, row in item.rule_rows():
            if row.veto:
                self.veto_ids.add(row.rule_id)
                if row.status == "failed":
                    self.failing_veto.add(item.id)
            # the red lines: the gate's, else the veto rules (kept per id: the others,
            # every case's own rules among them, would each hold a fold for nothing)
            if not (row.veto if self.wanted is None else row.rule_id in self.wanted):
                continue
            if row.status not in _NO_VERDICT:
                verdicts.setdefault(row.rule_id, []).append(row.status == "failed")
        for rule_id, fails in verdicts.items():
            fold = self.per_id.get(rule_id)
            if fold is None:  # (not ``setdefault``: it would build one for every row)
                fold = self.per_id[rule_id] = _RedLineFold()
            n_failed = sum(fails)
            fold.rows_failed += n_failed
            fold.members.append((item.id, 0.0 if n_failed else 1.0))

    def result(self) -> RedLinesModel:
        ids = self.red_lines if self.red_lines is not None else sorted(self.veto_ids)
        per_id = {rid: (self.per_id.get(rid) or _RedLineFold()).result() for rid in ids}
        return RedLinesModel(
            hard_rule_pass_rate=rate(self.members),
            items_with_hard_rules=len(self.members),
            red_lines=per_id,
            red_lines_failed=[rid for rid, row in per_id.items() if row.items_failed],
            items_failing_veto=sorted(self.failing_veto),
        )
