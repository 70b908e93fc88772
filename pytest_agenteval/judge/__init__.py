"""L3: the structured LLM judge (rubric, client, cache) and the judge-based rule types."""

from __future__ import annotations

from .rubric import DIMENSIONS, Rubric, default_rubric, load_rubric
from .service import Judge, TurnContext

__all__ = ["DIMENSIONS", "Judge", "Rubric", "TurnContext", "default_rubric", "load_rubric"]
