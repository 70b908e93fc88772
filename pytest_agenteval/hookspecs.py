"""Hooks that pytest-agenteval offers to other plugins and to ``conftest.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .adapters import Adapter, AdapterContext
    from .model.config import TargetOptions
    from .model.results import ItemResult


def pytest_agenteval_case_result(config: pytest.Config, result: dict[str, Any],
                                 item: ItemResult) -> None:
    """Called on the controller (or the single process) for every finished item.

    ``result`` is the masked, JSON-native case record of SPEC 7, as it is
    written to ``results.jsonl``; ``item`` is the same result as a typed
    :class:`~pytest_agenteval.model.results.ItemResult`. Use them to stream
    results elsewhere (a chat bot, a dashboard). Do not modify them.
    """


@pytest.hookspec(firstresult=True)
def pytest_agenteval_make_adapter(config: pytest.Config, target: TargetOptions,
                                  context: AdapterContext) -> Adapter | None:
    """Build the adapter that calls the agent, or return ``None`` to let the registry do it.

    Called once per process that runs items (the single process or each xdist
    worker), on the engine's event loop, before the first agent call. ``target``
    is the validated ``target:`` section of agenteval.yaml (an instance of the
    options model of its ``adapter`` kind); ``context`` holds the rootdir and how
    many conversations this process may have in flight. Return an object with
    ``async send(TurnRequest) -> AgentReply`` and ``async aclose()``; raise
    :class:`~pytest_agenteval.AgentError` from ``send`` for an agent failure.

    Use it to wrap or replace the adapter of a registered kind (sign requests,
    replay recorded replies); to add a kind of your own with its own options,
    register it with :func:`pytest_agenteval.adapter`.
    """
