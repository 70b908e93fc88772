"""The adapter registry: one registered factory per ``target.adapter`` kind.

An adapter kind is a name, a pydantic model of its ``target:`` options
(validated when ``agenteval.yaml`` is loaded, so a typo is a located usage
error) and a factory that builds the adapter on the engine's event loop::

    class EchoOptions(agenteval.TargetOptions):
        prefix: str = "echo: "

    @agenteval.adapter("echo", options=EchoOptions)
    class EchoAdapter:
        def __init__(self, target: EchoOptions, context: agenteval.AdapterContext) -> None:
            self.prefix = target.prefix

        async def send(self, request: agenteval.TurnRequest) -> agenteval.AgentReply:
            return agenteval.AgentReply(output=self.prefix + request.input)

        async def aclose(self) -> None: ...

A ``conftest.py`` may also build the adapter for any target through the
``pytest_agenteval_make_adapter`` hook (see :mod:`pytest_agenteval.hookspecs`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..model.config import PreflightError, TargetOptions

if TYPE_CHECKING:
    from .base import Adapter

__all__ = ["ADAPTERS", "AdapterContext", "AdapterType", "PreflightError", "TargetOptions",
           "adapter"]


@dataclass(frozen=True)
class AdapterContext:
    """What a factory gets besides its options."""

    rootdir: Path
    #: conversations this process may have in flight (size connection pools by it)
    concurrency: int


@dataclass(frozen=True)
class AdapterType:
    name: str
    options: type[TargetOptions]
    factory: Callable[[Any, AdapterContext], Adapter]
    doc: str = ""


F = TypeVar("F", bound=Callable[..., Any])


class AdapterRegistry:
    """Name → adapter kind; the built-in kinds are registered before any other."""

    def __init__(self) -> None:
        self._kinds: dict[str, AdapterType] = {}
        self._builtins = False

    def register(self, kind: AdapterType) -> None:
        self._load_builtins()
        self._kinds[kind.name] = kind

    def get(self, name: str) -> AdapterType:
        self._load_builtins()
        try:
            return self._kinds[name]
        except KeyError:
            raise KeyError(f"unknown adapter {name!r}; known adapters: "
                           f"{', '.join(self.names())}") from None

    def names(self) -> list[str]:
        self._load_builtins()
        return sorted(self._kinds)

    def _load_builtins(self) -> None:
        if self._builtins:
            return
        self._builtins = True
        from . import builtins  # noqa: F401  (registers the built-in kinds on import)


ADAPTERS = AdapterRegistry()


def adapter(name: str, options: type[TargetOptions] = TargetOptions) -> Callable[[F], F]:
    """Register ``factory(options, context) -> Adapter`` (often the adapter class) as
    ``target.adapter: name``, with ``options`` as the model of its ``target:`` keys."""

    def decorate(factory: F) -> F:
        ADAPTERS.register(AdapterType(name, options, factory, (factory.__doc__ or "").strip()))
        return factory

    return decorate
