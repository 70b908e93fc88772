"""pytest-agenteval: evaluate AI customer-service agents with pytest.

PYTEST_DONT_REWRITE: the plugin has no test asserts to rewrite (and pytester's
in-process runs would warn that it was imported before rewriting could start).

Public API: what a ``conftest.py`` needs to add a rule type, a situation or an adapter
kind.
Everything else is private and may change. The names are imported when first
used, so that loading the plugin (in every pytest run of every project where
the package is installed) costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adapters import AdapterContext, adapter
    from .adapters._clock import agent_timeout
    from .adapters.base import Adapter, AgentError, AgentReply, TurnRequest
    from .model.config import TargetOptions
    from .rules import NoParams, Params, RuleOutcome, TurnView, rule, situation

__all__ = [
    "Adapter",
    "AdapterContext",
    "AgentError",
    "AgentReply",
    "NoParams",
    "Params",
    "RuleOutcome",
    "TargetOptions",
    "TurnRequest",
    "TurnView",
    "__version__",
    "adapter",
    "agent_timeout",
    "rule",
    "situation",
]

__version__ = "0.1.0"

_HOME = {
    "Adapter": ".adapters.base",
    "AdapterContext": ".adapters",
    "AgentError": ".adapters.base",
    "AgentReply": ".adapters.base",
    "NoParams": ".rules",
    "Params": ".rules",
    "RuleOutcome": ".rules",
    "TargetOptions": ".model.config",
    "TurnRequest": ".adapters.base",
    "TurnView": ".rules",
    "adapter": ".adapters",
    "agent_timeout": ".adapters._clock",
    "rule": ".rules",
    "situation": ".rules",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
