"""L2 intent metrics: per-label precision/recall/F1, averages, confusion matrix (SPEC 6).

A value with no defined denominator (a label nobody expected, a label never
predicted) is ``None`` ("not evaluated"), never 0 and never NaN. Every value
is JSON-native. scikit-learn is imported inside the function that uses it, so
importing this module costs nothing at ``pytest --help``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.results import ItemResult

__all__ = ["UNKNOWN", "intent_metrics", "intent_pairs"]

#: The prediction for a returned code or name that maps to no label (SPEC 4).
UNKNOWN = "UNKNOWN"


def intent_pairs(items: Iterable[ItemResult]) -> list[tuple[str, str]]:
    """``(expected, predicted)`` of every turn where L2 was evaluated with an expectation.

    Every turn of every item counts (a case is one turn). Turns without an
    expected label or without a prediction (the API returned no intent, or the
    agent did not answer) are left out, and so are turns whose verdict is
    ``error`` (a rule type raised: the turn is outside the business metrics).
    """
    return [(turn.intent.expected, turn.intent.predicted)
            for item in items for turn in item.turns
            if turn.status != "error" and turn.intent.expected is not None
            and turn.intent.predicted is not None]


def _scored_labels(pairs: Sequence[tuple[str, str]], taxonomy: Sequence[str]) -> list[str]:
    """Taxonomy order first, then other seen labels sorted; UNKNOWN only if expected."""
    seen = {e for e, _ in pairs} | {p for _, p in pairs if p != UNKNOWN}
    return list(dict.fromkeys(taxonomy)) + sorted(seen - set(taxonomy))


def _none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def _sklearn_prfs(pairs: Sequence[tuple[str, str]], labels: list[str],
                  average: str | None) -> tuple[Any, Any, Any, Any]:
    import numpy as np
    from sklearn.metrics import precision_recall_fscore_support

    expected = [e for e, _ in pairs]
    predicted = [p for _, p in pairs]
    result: tuple[Any, Any, Any, Any] = precision_recall_fscore_support(
        expected, predicted, labels=labels, average=average, zero_division=np.nan)
    return result


def _per_label(pairs: Sequence[tuple[str, str]], labels: list[str]) -> dict[str, dict[str, Any]]:
    support = Counter(e for e, _ in pairs)
    if not pairs or not labels:
        return {lab: {"precision": None, "recall": None, "f1": None, "support": 0}
                for lab in labels}
    precision, recall, f1, _ = _sklearn_prfs(pairs, labels, None)
    return {lab: {"precision": _none(precision[i]), "recall": _none(recall[i]),
                  "f1": _none(f1[i]), "support": support[lab]}
            for i, lab in enumerate(labels)}


def _mean_defined(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def _micro(pairs: Sequence[tuple[str, str]], labels: list[str]) -> dict[str, float | None]:
    if not pairs or not labels:
        return {"precision": None, "recall": None, "f1": None}
    precision, recall, f1, _ = _sklearn_prfs(pairs, labels, "micro")
    return {"precision": _none(precision), "recall": _none(recall), "f1": _none(f1)}


def _confusion(pairs: Sequence[tuple[str, str]], labels: list[str]) -> dict[str, Any]:
    axis = labels + ([UNKNOWN] if UNKNOWN not in labels
                     and any(p == UNKNOWN for _, p in pairs) else [])
    index = {lab: i for i, lab in enumerate(axis)}
    matrix = [[0] * len(axis) for _ in axis]
    for expected, predicted in pairs:
        matrix[index[expected]][index[predicted]] += 1
    return {"labels": axis, "matrix": matrix}


def intent_metrics(pairs: Sequence[tuple[str, str]],
                   labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Classification metrics of L2 over ``(expected, predicted)`` turn pairs.

    Scored labels L = the taxonomy ``labels`` (in their order) ∪ the labels seen,
    where the prediction ``UNKNOWN`` is a scored label only when it is in the
    taxonomy or expected somewhere. Otherwise UNKNOWN is a wrong answer that
    costs the expected label its recall, and shows as a confusion-matrix
    column, but is not a class of its own (it would add an F1 of 0 to the macro
    mean for a class nobody asked for). With tp, fp, fn counted per label:

    - ``precision = tp / (tp + fp)``, ``recall = tp / (tp + fn)``,
      ``f1 = 2·tp / (2·tp + fp + fn)``, ``support = tp + fn``; a 0/0 is ``None``
      (scikit-learn ``precision_recall_fscore_support``, ``zero_division=nan``);
    - ``macro_f1`` (and ``macro_precision``, ``macro_recall``) = mean of the
      per-label values over the labels where the value is defined, ``None`` if none;
    - ``micro_precision = Σtp / Σ(tp + fp)``, ``micro_recall = Σtp / Σ(tp + fn)``,
      ``micro_f1 = 2·Σtp / (2·Σtp + Σfp + Σfn)``, sums over L (so predictions of an
      unscored UNKNOWN lower micro recall, not micro precision);
    - ``accuracy = |{expected = predicted}| / evaluated``.

    Never raises on empty input, a single label, or labels without support or predictions.

    Args:
        pairs: One ``(expected, predicted)`` per evaluated turn; predicted may be UNKNOWN.
        labels: The taxonomy's labels, or ``None`` to use only the labels seen.

    Returns:
        ``{"evaluated", "labels", "per_label": {label: {precision, recall, f1,
        support}}, "macro_precision", "macro_recall", "macro_f1", "micro_precision",
        "micro_recall", "micro_f1", "accuracy", "unknown_predictions",
        "confusion": {"labels", "matrix"}}``; confusion rows are expected labels,
        columns predicted labels.
    """
    scored = _scored_labels(pairs, labels or [])
    per_label = _per_label(pairs, scored)
    micro = _micro(pairs, scored)
    correct = sum(1 for e, p in pairs if e == p)
    return {
        "evaluated": len(pairs),
        "labels": scored,
        "per_label": per_label,
        **{f"macro_{m}": _mean_defined(row[m] for row in per_label.values())
           for m in ("precision", "recall", "f1")},
        **{f"micro_{m}": value for m, value in micro.items()},
        "accuracy": correct / len(pairs) if pairs else None,
        "unknown_predictions": sum(1 for _, p in pairs if p == UNKNOWN),
        "confusion": _confusion(pairs, scored),
    }
