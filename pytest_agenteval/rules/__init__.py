"""Rule types (L1) and their evaluation."""

from __future__ import annotations

from ._registry import REGISTRY, NoParams, Params, RuleOutcome, RuleType, TurnView, rule

__all__ = ["REGISTRY", "NoParams", "Params", "RuleOutcome", "RuleType", "TurnView", "rule"]
