"""Adapters: how the agent under test is called (SPEC 5)."""

from __future__ import annotations

from pathlib import Path

from ..model.config import BuiltinTarget, HttpTarget, OpenAIChatTarget, PythonTarget
from .base import Adapter, AgentError, AgentReply, Retrying, TurnRequest

__all__ = ["Adapter", "AgentError", "AgentReply", "TurnRequest", "make_adapter"]


def make_adapter(target: HttpTarget | BuiltinTarget | PythonTarget | OpenAIChatTarget,
                 rootdir: Path, limits: int) -> Adapter:
    """Build the adapter for ``target`` (call on the engine's event loop)."""
    adapter = _make(target, rootdir, limits)
    if target.retries and not isinstance(target, OpenAIChatTarget):  # openai retries itself
        return Retrying(adapter, target.retries, target.retry_backoff_s)
    return adapter


def _make(target: object, rootdir: Path, limits: int) -> Adapter:
    if isinstance(target, HttpTarget):
        from .http import HttpAdapter, make_session

        return HttpAdapter(target, make_session(limits))
    if isinstance(target, BuiltinTarget):
        from .builtin import BuiltinAdapter

        return BuiltinAdapter(target, limits)
    if isinstance(target, PythonTarget):
        from .python import PythonAdapter, import_callable

        return PythonAdapter(target, import_callable(target.callable, rootdir), limits)
    if isinstance(target, OpenAIChatTarget):
        from .openai_chat import OpenAIChatAdapter, make_client

        return OpenAIChatAdapter(target, make_client(target))
    raise TypeError(f"unknown target {target!r}")
