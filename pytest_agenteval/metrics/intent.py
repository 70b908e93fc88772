"""L2 as a metric family: per-label precision/recall/F1, averages, confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._family import Family, Folder, GateValue, MetricModel, RunData, RunMetrics, pct
from .classification import intent_metrics, intent_pairs

if TYPE_CHECKING:
    from ..model.gates import GateMetric
    from ..model.results import ItemResult

__all__ = ["Confusion", "IntentFamily", "IntentModel", "LabelScores"]


class LabelScores(MetricModel):
    precision: float | None
    recall: float | None
    f1: float | None
    support: int


class Confusion(MetricModel):
    """Rows are expected labels, columns predicted labels (UNKNOWN last when predicted)."""

    labels: list[str]
    matrix: list[list[int]]


class IntentModel(MetricModel):
    """See :func:`~.classification.intent_metrics` for every formula."""

    evaluated: int
    labels: list[str]
    per_label: dict[str, LabelScores]
    macro_precision: float | None
    macro_recall: float | None
    macro_f1: float | None
    micro_precision: float | None
    micro_recall: float | None
    micro_f1: float | None
    accuracy: float | None
    unknown_predictions: int
    confusion: Confusion
    evaluated_turns: int
    correct: int


def _label_value(m: IntentModel, g: GateMetric) -> float | None:
    row = m.per_label.get(g.label or "")
    value = None if row is None else getattr(row, g.metric)
    return None if value is None else float(value)


class IntentFamily(Family[IntentModel]):
    key = "intent"
    model = IntentModel
    order = 60
    gate = (
        GateValue("precision", _label_value, needs="label"),
        GateValue("recall", _label_value, needs="label"),
        GateValue("f1", _label_value, needs="label"),
        GateValue("support", _label_value, needs="label"),
        GateValue("macro_f1", lambda m, g: m.macro_f1),
        GateValue("micro_f1", lambda m, g: m.micro_f1),
        GateValue("accuracy", lambda m, g: m.accuracy),
    )

    def folder(self, run: RunData) -> _IntentFolder:
        return _IntentFolder(run.labels)

    def summary(self, value: IntentModel, metrics: RunMetrics) -> list[str]:
        if not value.evaluated:
            return ["intent (L2): not evaluated (the agent returned no intent)"]
        lines = [f"intent (L2): {value.correct}/{value.evaluated_turns} turns correct "
                 f"({pct(value.accuracy)}), macro F1 {pct(value.macro_f1)}",
                 f"  {'label':<20}{'precision':>15}{'recall':>15}{'F1':>15}{'support':>9}"]
        for label, row in value.per_label.items():
            lines.append(f"  {label:<20}{pct(row.precision):>15}{pct(row.recall):>15}"
                         f"{pct(row.f1):>15}{row.support:>9}")
        return lines


class _IntentFolder(Folder[IntentModel]):
    def __init__(self, labels: Sequence[str] | None) -> None:
        self.labels = labels
        self.pairs: list[tuple[str, str]] = []

    def add(self, item: ItemResult) -> None:
        self.pairs += intent_pairs((item,))

    def result(self) -> IntentModel:
        pairs = self.pairs
        correct = sum(1 for e, p in pairs if e == p)
        return IntentModel(**intent_metrics(pairs, self.labels), evaluated_turns=len(pairs),
                           correct=correct)
