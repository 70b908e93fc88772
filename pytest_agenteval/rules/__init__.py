"""Rule types (L1), the situations that apply ledger rules, and their evaluation."""

from __future__ import annotations

from ._registry import REGISTRY, NoParams, Params, RuleOutcome, RuleType, TurnView, rule
from ._situation import SITUATIONS, situation

__all__ = ["REGISTRY", "SITUATIONS", "NoParams", "Params", "RuleOutcome", "RuleType", "TurnView",
           "rule", "situation"]
