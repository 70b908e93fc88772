"""Aggregation of case results into run metrics (the only place numbers are computed)."""

from __future__ import annotations

from .summary import percentile, summarize

__all__ = ["percentile", "summarize"]
