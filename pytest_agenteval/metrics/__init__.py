"""Aggregation of item results into run metrics (the only place numbers are computed)."""

from __future__ import annotations

from ._family import Family, Folder, GateValue, RunData, RunMetrics, register
from .summary import RunFold, percentile, summarize

__all__ = ["Family", "Folder", "GateValue", "RunData", "RunFold", "RunMetrics", "percentile",
           "register", "summarize"]
