"""The built-in adapter kinds. Their clients are imported when a run builds one, not before."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.config import BuiltinTarget, HttpTarget, OpenAIChatTarget, PythonTarget
from ._registry import AdapterContext, adapter

if TYPE_CHECKING:
    from .base import Adapter

__all__: list[str] = []


@adapter("http", options=HttpTarget)
def _http(target: HttpTarget, context: AdapterContext) -> Adapter:
    """An agent behind an HTTP JSON API: request template in, response map out."""
    from .http import HttpAdapter

    return HttpAdapter(target)


@adapter("builtin", options=BuiltinTarget)
def _builtin(target: BuiltinTarget, context: AdapterContext) -> Adapter:
    """The reference agent that ships with the package, on a loopback port, over real HTTP."""
    from .builtin import BuiltinAdapter

    return BuiltinAdapter(target)


@adapter("python", options=PythonTarget)
def _python(target: PythonTarget, context: AdapterContext) -> Adapter:
    """A sync or async Python callable, imported from the rootdir."""
    from .python import PythonAdapter, import_callable

    return PythonAdapter(target, import_callable(target.callable, context.rootdir),
                         context.concurrency)


@adapter("openai_chat", options=OpenAIChatTarget)
def _openai_chat(target: OpenAIChatTarget, context: AdapterContext) -> Adapter:
    """A system prompt on an OpenAI-compatible chat model."""
    from .openai_chat import OpenAIChatAdapter, make_client

    return OpenAIChatAdapter(target, make_client(target))
