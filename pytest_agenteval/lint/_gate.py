"""``--agenteval-lint``: the lint of the run's case files, before any agent call.

Registered by the plugin on the process that decides before the first call (the single
process, or the xdist controller when the first worker has collected). Errors stop the
run as one usage error (exit 4) that lists them; warnings are printed and the run goes
on. The case files are those of the collected items (a file that could not be loaded
included), so a ``-k`` that selects none of a file's items leaves the file out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..project import Project

__all__ = ["LintGate"]


class LintGate:
    """The hooks of ``--agenteval-lint`` (single process or xdist controller)."""

    def __init__(self, project: Project, role: str) -> None:
        self.project = project
        self.role = role
        self.done = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.role == "single":
            self.check(session.config, [item.nodeid for item in session.items])

    @pytest.hookimpl(tryfirst=True, optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if not self.done:
            self.check(node.config, ids)

    def files(self, nodeids: Sequence[str]) -> list[Path]:
        """The case files of ``nodeids``, in collection order."""
        paths = dict.fromkeys(self.project.rootdir / n.partition("::")[0] for n in nodeids)
        return [p for p in paths if self.project.is_case_path(p)]

    def check(self, config: pytest.Config, nodeids: Sequence[str]) -> None:
        """Lint the case files of ``nodeids``: print the warnings, stop on errors."""
        from ..config import ConfigError
        from . import find_manifest, lint_files

        self.done = True
        try:
            manifest = find_manifest(self.project)
        except ConfigError as exc:
            raise pytest.UsageError(f"agenteval: --agenteval-lint: {exc}") from None
        report = lint_files(self.project, self.files(nodeids), manifest)
        writer = config.pluginmanager.get_plugin("terminalreporter")
        for line in report.warnings:
            if writer is not None:
                writer.write_line(f"agenteval lint: {line}")
        if report.errors:
            listing = "\n".join(report.errors)
            raise pytest.UsageError(
                f"agenteval: --agenteval-lint found {len(report.errors)} error(s) in the case "
                f"files; nothing ran (fix them, or run without --agenteval-lint):\n{listing}")
