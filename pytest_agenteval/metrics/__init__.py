"""Aggregation of item results into run metrics (the only place numbers are computed)."""

from __future__ import annotations

from ._family import Family, GateValue, RunData, RunMetrics, register
from .summary import percentile, summarize

__all__ = ["Family", "GateValue", "RunData", "RunMetrics", "percentile", "register", "summarize"]
