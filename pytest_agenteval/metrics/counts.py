"""Verdict counts, the item pass rate, and rule rows per rule id."""

from __future__ import annotations

from collections import Counter

from pydantic import RootModel

from ._family import Family, MetricModel, RunData, RunMetrics

__all__ = ["Counts", "CountsFamily", "ItemPassRateFamily", "RulesFamily", "RulesModel"]

STATUSES: tuple[str, ...] = ("passed", "failed", "review", "error")


class Counts(MetricModel):
    total: int
    passed: int
    failed: int
    review: int
    error: int
    cases: int
    scenarios: int


class CountsFamily(Family[Counts]):
    """Records per verdict and per kind (one record per item, or per trial)."""

    key = "counts"
    model = Counts
    order = 10

    def compute(self, run: RunData) -> Counts:
        counts: Counter[str] = Counter(i.status for i in run.items)
        kinds = Counter(i.kind for i in run.items)
        return Counts(total=len(run.items), **{s: counts.get(s, 0) for s in STATUSES},
                      cases=kinds.get("case", 0), scenarios=kinds.get("scenario", 0))

    def summary(self, value: Counts, metrics: RunMetrics) -> list[str]:
        c = value
        return [f"items: {c.total} ({c.cases} cases, {c.scenarios} scenarios)  "
                f"passed {c.passed} · failed {c.failed} · review {c.review} · error {c.error}"]


class ItemPassRate(RootModel[float | None]):
    """``passed / (total − error)``; ``None`` when every item errored."""


class ItemPassRateFamily(Family[ItemPassRate]):
    key = "pass_rate_items"
    model = ItemPassRate

    def compute(self, run: RunData) -> ItemPassRate:
        evaluated = [i for i in run.items if i.status != "error"]
        passed = sum(1 for i in evaluated if i.status == "passed")
        return ItemPassRate(passed / len(evaluated) if evaluated else None)


class RulesModel(MetricModel):
    failures_by_rule: dict[str, int]
    evaluations_by_rule: dict[str, int]


class RulesFamily(Family[RulesModel]):
    """Rule rows per rule id: how often each was evaluated and failed.

    A row counts as evaluated unless it is ``not_applicable`` or ``error`` (its
    rule type raised: no verdict). ``failures_by_rule`` is ordered by count.
    """

    key = "rules"
    model = RulesModel
    order = 70

    def compute(self, run: RunData) -> RulesModel:
        failed: Counter[str] = Counter()
        evaluated: Counter[str] = Counter()
        for item in run.items:
            for _, row in item.rule_rows():
                if row.status in ("not_applicable", "error"):
                    continue
                evaluated[row.rule_id] += 1
                if row.status == "failed":
                    failed[row.rule_id] += 1
        return RulesModel(failures_by_rule=dict(failed.most_common()),
                          evaluations_by_rule=dict(sorted(evaluated.items())))

    def summary(self, value: RulesModel, metrics: RunMetrics) -> list[str]:
        failures = value.failures_by_rule
        if not failures:
            return []
        shown = list(failures.items())[:15]
        width = max(len(rid) for rid, _ in shown) + 2
        lines = ["failures per rule id:", *(f"  {rid:<{width}}{n}" for rid, n in shown)]
        if len(failures) > 15:
            lines.append(f"  … and {len(failures) - 15} more rule ids (see results.json)")
        return lines
