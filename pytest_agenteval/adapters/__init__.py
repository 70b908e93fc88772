"""Adapters: how the agent under test is called (SPEC 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._registry import ADAPTERS, AdapterContext, AdapterType, adapter
from .base import Adapter, AgentError, AgentReply, Retrying, TurnRequest

if TYPE_CHECKING:
    from ..model.config import TargetOptions

__all__ = ["ADAPTERS", "Adapter", "AdapterContext", "AdapterType", "AgentError", "AgentReply",
           "TurnRequest", "adapter", "build_adapter"]


def build_adapter(target: TargetOptions, context: AdapterContext,
                  made: Adapter | None = None) -> Adapter:
    """The adapter for ``target`` (call on the engine's event loop).

    ``made`` is an adapter a ``pytest_agenteval_make_adapter`` hook built; without
    one the registered kind builds it. Retries are added unless the adapter's own
    client retries (``retries_in_client``).
    """
    built = made if made is not None else ADAPTERS.get(target.adapter).factory(target, context)
    if target.retries and not target.retries_in_client:
        return Retrying(built, target.retries, target.retry_backoff_s)
    return built
