"""Where a pytest run keeps the plugin's objects (``config.stash``), and typed getters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .project import Project
    from .runner import Runner

__all__ = ["PROJECT", "RUNNER", "WIRE", "get_project", "get_runner"]

PROJECT = pytest.StashKey["Project"]()
RUNNER = pytest.StashKey["Runner"]()
#: the report attribute an item's result travels under from an xdist worker, as JSON text
WIRE = "agenteval_json"


def get_project(config: pytest.Config) -> Project:
    return config.stash[PROJECT]


def get_runner(config: pytest.Config) -> Runner:
    return config.stash[RUNNER]
