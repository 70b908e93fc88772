"""Every metric of a run, computed by the registered families from the item results.

Every figure is computed from the item results only, so it is the same
whether they came from one process or from xdist workers. A figure with no
defined denominator is ``None`` ("not evaluated"), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..model.results import ItemResult
    from ._family import Folder, RunMetrics

__all__ = ["RunFold", "percentile", "summarize"]


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100), linear between closest ranks; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize(items: Sequence[ItemResult], labels: Sequence[str] | None = None,
              red_lines: Sequence[str] | None = None) -> RunMetrics:
    """Every metric of the run (SPEC 6), one model per registered family.

    Args:
        items: The item results (one per item; one per trial with ``--agenteval-repeat``).
        labels: The taxonomy's labels (``None``: the labels seen in the run).
        red_lines: The gate's red-line rule ids (``None``: every veto rule seen).
    """
    fold = RunFold(labels, red_lines)
    for item in items:
        fold.add(item)
    return fold.metrics()


class RunFold:
    """Every family's folder for one run: :meth:`add` each item result as it arrives, then
    :meth:`metrics` once. The same figures as :func:`summarize` over the same items."""

    def __init__(self, labels: Sequence[str] | None = None,
                 red_lines: Sequence[str] | None = None) -> None:
        from ._family import RunData, load_families

        context = RunData((), labels, red_lines)
        self.folders: dict[str, Folder[Any]] = {
            key: fam.folder(context) for key, fam in load_families().items()}

    def add(self, item: ItemResult) -> None:
        for folder in self.folders.values():
            folder.add(item)

    def metrics(self) -> RunMetrics:
        from ._family import RunMetrics

        return RunMetrics({key: folder.result() for key, folder in self.folders.items()})
