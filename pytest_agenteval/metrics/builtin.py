"""The built-in metric families, registered in the order ``results.json`` lists them."""

from __future__ import annotations

from typing import Any

from ._family import Family, register
from .counts import CountsFamily, ItemPassRateFamily, RulesFamily
from .flows import FlowsFamily
from .intent import IntentFamily
from .judge import JudgeFamily, KnowledgeFamily
from .redlines import RedLinesFamily
from .robustness import RobustnessFamily, SafetyFamily
from .service import ServiceFamily
from .stability import StabilityFamily
from .success import OutcomeClassesFamily, ScopeFamily, SuccessFamily

__all__: list[str] = []

_BUILTIN: tuple[Family[Any], ...] = (
    CountsFamily(), ItemPassRateFamily(), RulesFamily(), IntentFamily(), RedLinesFamily(),
    SuccessFamily(), FlowsFamily(), OutcomeClassesFamily(), ScopeFamily(), KnowledgeFamily(),
    RobustnessFamily(), SafetyFamily(), JudgeFamily(), StabilityFamily(), ServiceFamily())
for _family in _BUILTIN:
    register(_family)
