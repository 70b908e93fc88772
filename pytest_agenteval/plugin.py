"""pytest hooks. Each one is a few lines that delegate to :class:`AgentEvalSession`."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from .session import SESSION_KEY, AgentEvalSession, get_session

_MARKERS = (
    "P0: priority 0 — red-line behaviour (select with -m P0)",
    "P1: priority 1 — core behaviour",
    "P2: priority 2 — everything else",
    "behavior(label): the expected behaviour label of a case or scenario turn; "
    "select with -m \"behavior(label='PHONE_PROVIDED')\"",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agenteval", "agent evaluation (pytest-agenteval)")
    group.addoption("--agenteval-config", metavar="PATH", default=None,
                    help="agenteval.yaml to use (default: the one in the rootdir).")
    group.addoption("--agenteval-target", metavar="URL", default=None,
                    help="override the target URL of an http or builtin target.")
    group.addoption("--agenteval-reports-dir", metavar="DIR", default=None,
                    help="where reports/<timestamp>/ go (default: paths.reports_dir).")
    group.addoption("--agenteval-concurrency", metavar="N", type=int, default=None,
                    help="conversations in flight across all workers (default: "
                    "target.concurrency).")
    group.addoption("--agenteval-repeat", metavar="N", type=int, default=1,
                    help="run every case and scenario N times, each a separate conversation "
                    "(items ID[t1]..ID[tN]); reports pass^k, flaky cases, consistency.")
    group.addoption("--agenteval-exit", choices=("items", "gate"), default="items",
                    help="'items' (default): exit 1 when an item failed or errored, or the "
                    "gate is BLOCK; 'gate': only the release gate decides (BLOCK → 1).")
    group.addoption("--agenteval-dist", choices=("owned", "off"), default="owned",
                    help="under -n with --dist load: 'owned' gives each worker a fixed share "
                    "of the items so it can run them ahead (default); 'off' keeps xdist's "
                    "own scheduler and runs items as they arrive.")
    parser.addini("agenteval_paths", type="paths",
                  help="folders (relative to the rootdir) whose YAML files are case files.",
                  default=[])


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    for line in _MARKERS:
        config.addinivalue_line("markers", line)
    from .config import ConfigError

    try:
        session = config.stash[SESSION_KEY] = AgentEvalSession(config)
    except ConfigError as exc:
        raise pytest.UsageError(f"agenteval: {exc}") from None
    config.pluginmanager.register(_Reports(session), "agenteval-reports")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    from .items import CaseFile, LedgerFile

    session = get_session(parent.config)
    if session.is_ledger_file(file_path):
        return LedgerFile.from_parent(parent, path=file_path)
    if session.is_case_file(file_path, parent):
        return CaseFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    get_session(session.config).collection_finished(session)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    report = yield
    from .items import CaseItem

    if isinstance(item, CaseItem) and call.when == "call" and item.result is not None:
        payload = get_session(item.config).report_payload(item)
        report.agenteval = payload  # type: ignore[attr-defined]  # travels through xdist
        props = _junit_properties(payload)
        report.user_properties += props
        item.user_properties += props  # junitxml reads them from the teardown report
    return report


def _junit_properties(payload: dict[str, Any]) -> list[tuple[str, str]]:
    failed = [r["rule_id"] for r in payload.get("rules", []) if r["status"] == "failed"]
    intent = payload.get("intent") or {}
    props = [("agenteval_verdict", payload["status"]),
             ("agenteval_latency_ms", f"{payload['latency_ms']:.1f}"),
             ("agenteval_failed_rules", ",".join(failed))]
    if intent:
        props += [("agenteval_intent_expected", str(intent.get("expected") or "")),
                  ("agenteval_intent_predicted", str(intent.get("predicted") or ""))]
    if payload.get("error"):
        props.append(("agenteval_error_kind", payload["error"]["kind"]))
    return props


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    payload = getattr(report, "agenteval", None)
    if report.when != "call" or not isinstance(payload, dict):
        return None
    if payload["status"] == "review":
        return "review", "R", ("REVIEW", {"yellow": True})
    if payload["status"] == "error":
        return "error", "E", ("ERROR", {"blue": True})
    return None


class _Reports:
    """``pytest_runtest_logreport`` has no config argument: this object carries it."""

    def __init__(self, session: AgentEvalSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.session.logreport(report)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A broken case file must not cost the other files their run (SPEC 3):
        # pytest would otherwise stop after collection ("Interrupted: 1 error").
        if report.failed and report.nodeid.endswith((".yaml", ".yml")):
            self.session.config.option.continue_on_collection_errors = True
            self.session.collection_errors.append(report.nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    agenteval = get_session(session.config)
    agenteval.close_engine()
    agenteval.finish(session, exitstatus)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    from .report.text import summary_lines

    s = get_session(config)
    if s.metrics is None or s.completeness is None:
        return
    terminalreporter.write_sep("=", "agenteval summary")
    path = str(s.results_path) if s.results_path else None
    for line in summary_lines(s.metrics, s.completeness, path, s.gate):
        terminalreporter.write_line(line)


def pytest_unconfigure(config: pytest.Config) -> None:
    if SESSION_KEY in config.stash:
        config.stash[SESSION_KEY].close_engine()


# -- xdist (optional hooks: only called when pytest-xdist is active) ---------


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") == "load" and config.getoption("agenteval_dist") == "owned":
        from .scheduling import make_owned_scheduler

        return make_owned_scheduler(config, log)
    return None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    node.workerinput["agenteval_mode"] = get_session(node.config).worker_mode()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    get_session(node.config).node_collected(list(ids))
