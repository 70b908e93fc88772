"""Verdict counts, the item pass rate, and rule rows per rule id."""

from __future__ import annotations

from collections import Counter

from pydantic import RootModel

from ..model.results import ItemResult
from ._family import Family, Folder, MetricModel, RunData, RunMetrics

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

    def folder(self, run: RunData) -> _CountsFolder:
        return _CountsFolder()

    def summary(self, value: Counts, metrics: RunMetrics) -> list[str]:
        c = value
        return [f"items: {c.total} ({c.cases} cases, {c.scenarios} scenarios)  "
                f"passed {c.passed} · failed {c.failed} · review {c.review} · error {c.error}"]


class _CountsFolder(Folder[Counts]):
    def __init__(self) -> None:
        self.statuses: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()

    def add(self, item: ItemResult) -> None:
        self.statuses[item.status] += 1
        self.kinds[item.kind] += 1

    def result(self) -> Counts:
        counts = self.statuses
        return Counts(total=counts.total(), **{s: counts.get(s, 0) for s in STATUSES},
                      cases=self.kinds.get("case", 0), scenarios=self.kinds.get("scenario", 0))


class ItemPassRate(RootModel[float | None]):
    """``passed / (total − error)``; ``None`` when every item errored."""


class ItemPassRateFamily(Family[ItemPassRate]):
    key = "pass_rate_items"
    model = ItemPassRate

    def folder(self, run: RunData) -> _ItemPassRateFolder:
        return _ItemPassRateFolder()


class _ItemPassRateFolder(Folder[ItemPassRate]):
    def __init__(self) -> None:
        self.evaluated = self.passed = 0

    def add(self, item: ItemResult) -> None:
        if item.status != "error":
            self.evaluated += 1
            self.passed += item.status == "passed"

    def result(self) -> ItemPassRate:
        return ItemPassRate(self.passed / self.evaluated if self.evaluated else None)


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

    def folder(self, run: RunData) -> _RulesFolder:
        return _RulesFolder()

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


class _RulesFolder(Folder[RulesModel]):
    def __init__(self) -> None:
        self.failed: Counter[str] = Counter()
        self.evaluated: Counter[str] = Counter()

    def add(self, item: ItemResult) -> None:
        for _, row in item.rule_rows():
            if row.status in ("not_applicable", "error"):
                continue
            self.evaluated[row.rule_id] += 1
            if row.status == "failed":
                self.failed[row.rule_id] += 1

    def result(self) -> RulesModel:
        return RulesModel(failures_by_rule=dict(self.failed.most_common()),
                          evaluations_by_rule=dict(sorted(self.evaluated.items())))
