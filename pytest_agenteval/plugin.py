"""pytest hooks: options, and — in a project that uses the plugin — the objects of each role.

The plugin is installed everywhere its package is, so it is inert unless the
project uses it (:func:`is_active`): no scheduler, no collector, no
option changed, nothing loaded. When active, it registers the objects the
process's role needs, whose methods are the hooks:

* single process (no xdist): :class:`~.items.Collection`, :class:`~.runner.Runner`
  and :class:`~.recorder.Recorder`;
* xdist worker: ``Collection`` and ``Runner`` (workers never record);
* xdist controller: ``Recorder`` and :class:`Dispatch` (the controller never
  collects or runs).

This module imports nothing of the plugin at import time, so ``pytest --help``
costs the same with and without it.
"""

from __future__ import annotations

import importlib.machinery
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

__all__ = ["Dispatch", "is_active"]


class _OrdinaryImport:
    """Imports the plugin's own modules the ordinary way, ahead of pytest's assertion
    rewriting (a ``sys.meta_path`` finder for ``pytest_agenteval.*`` only).

    pytest rewrites the asserts of every module of a package that provides a plugin,
    and caches the rewritten code only where it may write bytecode: with
    ``PYTHONDONTWRITEBYTECODE=1`` (usual in containers) or a read-only site-packages,
    every pytest process — every xdist worker — parsed and compiled the plugin's
    modules again instead of loading the ``.pyc`` files pip wrote (0.45 s of CPU a
    process in a wheel install). The plugin has no test asserts to rewrite: its asserts
    are invariants. Its package and this module are imported before this finder
    exists; they carry ``PYTEST_DONT_REWRITE`` or are small.
    """

    @staticmethod
    def find_spec(name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not name.startswith("pytest_agenteval.") or path is None:
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)


if not any(getattr(f, "__module__", None) == __name__ for f in sys.meta_path):  # once, even
    sys.meta_path.insert(0, _OrdinaryImport)  # when this module is imported again (pytester)

_MARKERS = (
    "P0: priority 0 — red-line behaviour (select with -m P0)",
    "P1: priority 1 — core behaviour",
    "P2: priority 2 — everything else",
    "behavior(label): the expected behaviour label of a case or scenario turn; "
    "select with -m \"behavior(label='PHONE_PROVIDED')\"",
)
#: options that mean nothing when the plugin is inactive (given anyway: a usage error)
_OWN_OPTIONS = ("agenteval_target", "agenteval_reports_dir", "agenteval_concurrency",
                "agenteval_shard", "agenteval_lint", "agenteval_workers")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval", "agent evaluation (pytest-agenteval)")
    group.addoption("--agenteval-config", metavar="PATH", default=None,
                    help="agenteval.yaml to use (default: the one in the rootdir); "
                    "turns the plugin on in any project.")
    group.addoption("--agenteval-target", metavar="URL", default=None,
                    help="override the target URL of an http or builtin target.")
    group.addoption("--agenteval-reports-dir", metavar="DIR", default=None,
                    help="where reports/<timestamp>/ go (default: paths.reports_dir).")
    group.addoption("--agenteval-concurrency", metavar="N", type=int, default=None,
                    help="conversations in flight across all workers (default: "
                    "target.concurrency).")
    group.addoption("--agenteval-no-cache", action="store_true", default=False,
                    help="bypass the judge's cache (judge.cache): every judged turn is asked "
                    "again and nothing is stored.")
    group.addoption("--agenteval-repeat", metavar="N", type=int, default=1,
                    help="run every case and scenario N times, each a separate conversation "
                    "(items ID[t1]..ID[tN]); reports pass^k, flaky cases, consistency.")
    group.addoption("--agenteval-exit", choices=("items", "gate"), default="items",
                    help="'items' (default): exit 1 when an item failed or errored, or the "
                    "gate is BLOCK; 'gate': only the release gate decides (BLOCK → 1).")
    group.addoption("--agenteval-dist", choices=("owned", "off"), default="owned",
                    help="under -n with --dist load: 'owned' gives each worker a fixed share "
                    "of the case items so it can run them ahead (default); 'off' keeps "
                    "xdist's own scheduler and runs items as they arrive.")
    group.addoption("--agenteval-workers", choices=("fit", "asked"), default=None,
                    help="under -n, for a run of case items only: 'fit' (default) starts at most "
                    "one xdist worker per usable CPU beyond the controller's, and none (one "
                    "process) when that leaves fewer than two; 'asked' starts what -n asks for.")
    group.addoption("--agenteval-shard", metavar="I/N", type=_shard, default=None,
                    help="run only shard I of N (1 ≤ I ≤ N) of the case and scenario items, "
                    "balanced by expected turns; the same on every machine. Combine the N run "
                    "records with 'agenteval merge'.")
    group.addoption("--agenteval-lint", action="store_true", default=None,
                    help="before any agent call, lint the collected case files as "
                    "'agenteval lint' does: an error stops the run (usage error, exit 4) "
                    "and lists them; warnings are printed.")
    group.addoption("--agenteval-lang", choices=("zh", "en"), default=None,
                    help="language of report.html and of the pytest-html and compare pages "
                    "(default: language: in agenteval.yaml, else zh).")
    parser.addini("agenteval_paths", type="paths",
                  help="folders (relative to the rootdir) whose YAML files are case files; "
                  "setting it turns the plugin on.", default=[])


def _shard(text: str) -> Any:
    """``--agenteval-shard``'s value: an invalid one is argparse's usage error, which names
    the option."""
    import argparse

    from .shard import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Any:
    """Before xdist reads ``-n``: a run of case items gets the workers that can add CPU
    (see :mod:`._sizing`)."""
    if is_active(config):
        from ._sizing import fit_workers
        from ._stash import FIT

        fit = fit_workers(config)
        if fit is not None:
            config.stash[FIT] = fit
    return (yield)


def pytest_report_header(config: pytest.Config) -> str | None:
    if not is_active(config):
        return None
    from ._stash import FIT

    fit = config.stash.get(FIT, None)
    return fit.line() if fit is not None else None


def is_active(config: pytest.Config) -> bool:
    """The plugin works only in a project that uses it, and is inert everywhere else.

    Active when the rootdir has an ``agenteval.yaml``, ``--agenteval-config`` is
    given, or the ini key ``agenteval_paths`` is set. Decided here, importing
    nothing: this runs in every pytest run of every project where it is installed.
    """
    if config.getoption("agenteval_config", None):
        return True
    if (Path(config.rootpath) / "agenteval.yaml").is_file():
        return True
    return bool(config.getini("agenteval_paths"))


def pytest_configure(config: pytest.Config) -> None:
    if not is_active(config):
        _refuse_stray_options(config)
        return
    _activate(config)


def _refuse_stray_options(config: pytest.Config) -> None:
    given = [name for name in _OWN_OPTIONS if config.getoption(name, None) is not None]
    if config.getoption("agenteval_repeat", 1) != 1:
        given.append("agenteval_repeat")
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise pytest.UsageError(
            f"agenteval: {flags} given, but this project does not use pytest-agenteval: add "
            "agenteval.yaml to the rootdir, set agenteval_paths, or give --agenteval-config")


def _role(config: pytest.Config) -> str:
    if hasattr(config, "workerinput"):
        return "worker"
    if config.pluginmanager.hasplugin("dsession") or (
        config.getoption("dist", "no") != "no"
        # -n N, or --tx alone (remote workers: --tx socket=… --dist load)
        and (config.getoption("numprocesses", None) or config.getoption("tx", None))
    ):
        return "controller"
    return "single"


def _activate(config: pytest.Config) -> None:
    from ._stash import PROJECT
    from .config import ConfigError
    from .project import Project

    role = _role(config)
    try:
        project = config.stash[PROJECT] = Project.from_pytest(config)
        if role != "worker":
            _ = project.gates  # decided before any run: a bad gate file is a usage error
    except ConfigError as exc:
        raise pytest.UsageError(f"agenteval: {exc}") from None
    if role == "worker":
        _share_plans(config, project)
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    plugins = _running(project, config, role) if role != "controller" else []
    if role != "worker":
        from .recorder import Recorder

        recorder = Recorder(project, config, role)
        plugins.append((recorder, "agenteval-recorder"))
        from .report.pytest_html import HtmlHooks, wants_extras

        if wants_extras(config):
            plugins.append((HtmlHooks(recorder), "agenteval-pytest-html"))
    if role == "controller":
        plugins.append((Dispatch(project), "agenteval-dispatch"))
    if role != "worker" and config.getoption("agenteval_lint"):
        from .lint._gate import LintGate

        plugins.append((LintGate(project, role), "agenteval-lint"))
    for plugin, name in plugins:
        config.pluginmanager.register(plugin, name)
    _spare_the_collector(config)


def _running(project: Any, config: pytest.Config, role: str) -> list[tuple[object, str]]:
    """The objects of a process that collects and runs items (single, worker)."""
    from ._stash import RUNNER
    from .items import Collection
    from .runner import Runner, WorkerSlimmer

    runner = config.stash[RUNNER] = Runner(project, config, role)
    plugins: list[tuple[object, str]] = [(Collection(project), "agenteval-collection"),
                                         (runner, "agenteval-runner")]
    if role == "worker":
        plugins.append((WorkerSlimmer(), "agenteval-worker-slimmer"))
    shard = config.getoption("agenteval_shard", None)
    if shard is not None:
        from .shard import Sharding

        plugins.append((Sharding(shard), "agenteval-shard"))
    return plugins


def _spare_the_collector(config: pytest.Config) -> None:
    """The cyclic garbage collector's passes at the end walk only what they must."""
    from ._gc import spare_the_exit

    if _Settle.applies():
        config.pluginmanager.register(_Settle(), "agenteval-settle")
    spare_the_exit()


def _share_plans(config: pytest.Config, project: Any) -> None:
    """A worker compiles a case file only when no other worker has (see _plans)."""
    from ._workers import WORKERINPUT_KEY

    folder = config.workerinput.get(WORKERINPUT_KEY)  # type: ignore[attr-defined]
    if folder and Path(folder).is_dir():  # not on another host
        project.share_plans(Path(folder))


class _Settle:
    """The run's garbage collected once, and what is left frozen, before pytest's own two
    collections at unconfigure (which report the unraisable exceptions of the tests'
    garbage): those then walk only what is made after it.

    At 10,000 cases each of them walked some 200,000 objects still alive (pytest's
    reports, above all), 0.15 s a pass on the way to the exit. This collection runs first
    (``tryfirst``), with pytest's hook for unraisable exceptions and the warning filters
    still in place, so whatever it frees is reported as pytest would report it. Only in
    a process whose objects nobody froze before this run (not in a second in-process
    pytester run) and not in development mode (see :func:`._gc.spare_the_exit`).
    """

    @staticmethod
    def applies() -> bool:
        import gc
        import sys

        return gc.get_freeze_count() == 0 and not sys.flags.dev_mode

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        import gc

        if gc.isenabled():
            gc.collect()
            gc.freeze()


class Dispatch:
    """xdist controller hooks: the scheduler, and the prefetch mode each worker gets."""

    def __init__(self, project: Any) -> None:
        self.project = project
        self.link: Any = None  # the folder the workers watch (see _workers), once xdist runs

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist") == "load" and config.getoption("agenteval_dist") == "owned":
            from .scheduling import make_scheduler

            return make_scheduler(config, log, self.project.is_case_nodeid)
        return None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        from .scheduling import mode_for

        node.workerinput["agenteval_mode"] = mode_for(
            str(node.config.getoption("dist", "no")),
            str(node.config.getoption("agenteval_dist")))
        if self.link is None:
            from ._workers import ControllerLink

            self.link = ControllerLink()
        from ._workers import ROOTDIR_KEY, WORKERINPUT_KEY

        node.workerinput[WORKERINPUT_KEY] = str(self.link.dir)
        node.workerinput[ROOTDIR_KEY] = str(node.config.rootpath)

    def pytest_keyboard_interrupt(self) -> None:
        """Ctrl-C on the controller alone: the workers stop calling the agent too."""
        if self.link is not None:
            self.link.stop()

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        from .shard import take_worker_output

        take_worker_output(node.config, node)  # run.shard, as the workers selected it
        if error is not None and self.link is not None:
            self.link.crashed()  # from now on, no worker re-sends what the dead one sent

    def pytest_unconfigure(self) -> None:
        if self.link is not None:
            self.link.close()
