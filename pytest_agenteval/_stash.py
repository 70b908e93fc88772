"""Where a pytest run keeps the plugin's objects (``config.stash``), and typed getters."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._sizing import Fit
    from .project import Project
    from .runner import Runner

__all__ = ["FIT", "PROJECT", "RUNNER", "WIRE", "Slimmer", "get_project", "get_runner"]

PROJECT = pytest.StashKey["Project"]()
RUNNER = pytest.StashKey["Runner"]()
#: how ``-n`` was sized for a run of case items, when it was (see _sizing)
FIT: pytest.StashKey[Fit] = pytest.StashKey()
#: the report attribute an item's result travels under from an xdist worker, as JSON text
WIRE = "agenteval_json"


class Slimmer:
    """Keeps only the status of the result a call report carries once every plugin has
    seen it: pytest's terminal holds every report until the end, and 10,000 whole results
    held there cost memory and the garbage collector's walks. The call report is slimmed
    after its item's teardown report has been logged (pytest-html renders an item's row
    then, from the call report); the summary's verbose word asks only the status."""

    def __init__(self) -> None:
        self.pending: dict[str, pytest.TestReport] = {}

    def logged(self, report: pytest.TestReport) -> None:
        """After every ``pytest_runtest_logreport`` of ``report``."""
        if report.when == "call" and isinstance(getattr(report, "agenteval", None), dict):
            self.pending[report.nodeid] = report
        elif report.when == "teardown":
            call = self.pending.pop(report.nodeid, None)
            if call is not None:
                call.agenteval = {"status": call.agenteval.get("status")}  # type: ignore[attr-defined]
                call.__dict__.pop("_agenteval_text", None)  # a worker's result as it came
                call.__dict__.pop("_agenteval_item", None)  # the typed result, in-process


def get_project(config: pytest.Config) -> Project:
    return config.stash[PROJECT]


def get_runner(config: pytest.Config) -> Runner:
    return config.stash[RUNNER]
