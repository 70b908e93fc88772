"""Every metric of a run, computed by the registered families from the item results.

Every figure is computed from the item results only, so it is the same
whether they came from one process or from xdist workers. A figure with no
defined denominator is ``None`` ("not evaluated"), never 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model.results import ItemResult
    from ._family import RunMetrics

__all__ = ["percentile", "summarize"]


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
    from ._family import RunData, RunMetrics, load_families

    run = RunData(items, labels, red_lines)
    return RunMetrics({key: fam.compute(run) for key, fam in load_families().items()})
