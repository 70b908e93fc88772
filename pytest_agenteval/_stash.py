"""Where a pytest run keeps the plugin's objects (``config.stash``), and typed getters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .project import Project
    from .runner import Runner

__all__ = ["PROJECT", "RUNNER", "get_project", "get_runner"]

PROJECT = pytest.StashKey["Project"]()
RUNNER = pytest.StashKey["Runner"]()


def get_project(config: pytest.Config) -> Project:
    return config.stash[PROJECT]


def get_runner(config: pytest.Config) -> Runner:
    return config.stash[RUNNER]
