"""Hooks that pytest-agenteval offers to other plugins and to ``conftest.py``."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_agenteval_case_result(config: pytest.Config, result: dict[str, Any]) -> None:
    """Called on the controller (or the single process) for every finished item.

    ``result`` is the masked, JSON-native case record of SPEC 7, as it is
    written to ``results.jsonl``. Use it to stream results elsewhere (a chat
    bot, a dashboard). Do not modify it.
    """
