"""pytest-agenteval: evaluate AI customer-service agents with pytest.

PYTEST_DONT_REWRITE: the plugin has no test asserts to rewrite (and pytester's
in-process runs would warn that it was imported before rewriting could start).

Public API: the decorator and types needed to write a custom rule type in
``conftest.py``. Everything else is private and may change.
"""

from __future__ import annotations

from .adapters.base import AgentError, AgentReply, TurnRequest
from .rules import NoParams, Params, RuleOutcome, TurnView, rule

__all__ = [
    "AgentError",
    "AgentReply",
    "NoParams",
    "Params",
    "RuleOutcome",
    "TurnRequest",
    "TurnView",
    "__version__",
    "rule",
]

__version__ = "0.1.0"
