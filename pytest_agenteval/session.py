"""The per-process session object: every hook in plugin.py delegates here.

Roles: ``single`` (no xdist) collects, runs and records; a ``worker`` collects
and runs; the ``controller`` only records what the workers report.
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any

import pytest

from .config import ConfigError, LoadedConfig, load_config
from .engine import Engine
from .ledger import LEDGER_NAME, Ledger, load_ledger
from .metrics import summarize
from .metrics.gates import evaluate_gate, exit_status, load_gates, not_configured
from .model import MultiSourceError
from .model.gates import GatesFile
from .privacy import Masker
from .report.record import RunRecorder, dataset_fingerprint, file_sha256
from .scheduling import Mode, Prefetch, mode_for
from .taxonomy import Taxonomy, load_taxonomy
from .yamlio import Location, SourceError, locate

__all__ = ["AgentEvalSession", "get_session", "is_case_nodeid"]

SESSION_KEY = pytest.StashKey["AgentEvalSession"]()
#: ``file.yaml::ID`` (ledger examples are ``rules/business-rules.yaml::BR-003[pass-1]``)
_CASE_NODEID = re.compile(r"^[^:]+\.ya?ml::[A-Za-z0-9][A-Za-z0-9_.\-]*(\[t\d+\])?$")


def get_session(config: pytest.Config) -> AgentEvalSession:
    return config.stash[SESSION_KEY]


def is_case_nodeid(nodeid: str) -> bool:
    return bool(_CASE_NODEID.match(nodeid))


def _role(config: pytest.Config) -> str:
    if hasattr(config, "workerinput"):
        return "worker"
    if config.pluginmanager.hasplugin("dsession") or (
        config.getoption("dist", "no") != "no" and config.getoption("numprocesses", None)
    ):
        return "controller"
    return "single"


class AgentEvalSession:
    """State of one pytest process; created in ``pytest_configure``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rootdir = Path(config.rootpath)
        self.loaded: LoadedConfig = load_config(
            self.rootdir, config.getoption("agenteval_config"),
            config.getoption("agenteval_target"))
        privacy = self.loaded.model.privacy
        self.masker = Masker(privacy.mask, privacy.allow, self.loaded.secrets)
        self.role = _role(config)
        self._ids: dict[str, Location] = {}
        self._taxonomy: Taxonomy | None = None
        self._ledger: Ledger | None = None
        self._engine: Engine | None = None
        self._engine_error: str | None = None
        self.prefetch = self._prefetch()
        self.recorder: RunRecorder | None = None
        if self.role != "worker":
            self.recorder = RunRecorder(self._reports_dir())
        self.expected: list[str] | None = None
        self.records: dict[str, dict[str, Any]] = {}
        self.duplicates: list[str] = []
        self.collection_errors: list[str] = []
        self.lost: dict[str, str] = {}
        self.results_path: Path | None = None
        self.gate: dict[str, Any] = not_configured()
        self.gates: GatesFile | None = None
        self.gates_source: str | None = None
        if self.role != "worker":
            self.gates, self.gates_source = self._load_gates()
        self.repeat = int(config.getoption("agenteval_repeat") or 1)
        if self.repeat < 1:
            raise ConfigError(f"--agenteval-repeat {self.repeat}: give a number of trials ≥ 1")
        self.metrics: dict[str, Any] | None = None
        self.completeness: dict[str, Any] | None = None
        self._t0 = time.perf_counter()

    # -- configuration ---------------------------------------------------

    def _reports_dir(self) -> Path:
        """``--agenteval-reports-dir`` is relative to where pytest was started (like
        ``--junitxml``); ``paths.reports_dir`` of agenteval.yaml to the rootdir."""
        explicit: str | None = self.config.getoption("agenteval_reports_dir")
        if explicit:
            return Path(self.config.invocation_params.dir) / explicit
        path = Path(self.loaded.model.paths.reports_dir)
        return path if path.is_absolute() else self.rootdir / path

    @property
    def rules_dir(self) -> Path:
        path = Path(self.loaded.model.paths.rules_dir)
        return path if path.is_absolute() else self.rootdir / path

    def _load_gates(self) -> tuple[GatesFile | None, str | None]:
        path = self.rules_dir / "gates.yaml"
        if not path.is_file():
            return None, None
        try:
            ids, labels = self.ledger.ids(), list(self.taxonomy.labels)
        except (SourceError, MultiSourceError):
            ids, labels = [], []  # reported where the cases are collected, with their lines
        return load_gates(path, self.rootdir, ids, labels)

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = load_ledger(self.rules_dir / LEDGER_NAME, self.rootdir)
        return self._ledger

    def is_ledger_file(self, path: Path) -> bool:
        return path.resolve() == (self.rules_dir / LEDGER_NAME).resolve()

    @property
    def taxonomy(self) -> Taxonomy:
        if self._taxonomy is None:
            self._taxonomy = load_taxonomy(self.rules_dir / "taxonomy.yaml", self.rootdir)
        return self._taxonomy

    def _concurrency(self) -> int:
        option: int | None = self.config.getoption("agenteval_concurrency")
        total: int = option or self.loaded.target.concurrency
        if self.role == "worker":
            workers = int(self.config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
            return max(1, math.ceil(total / workers))
        return total

    def _prefetch(self) -> Prefetch:
        if self.role != "worker":
            return Prefetch("all")
        wi = self.config.workerinput  # type: ignore[attr-defined]
        mode: Mode = wi.get("agenteval_mode", "none")
        return Prefetch(mode, wi.get("workerid"), int(wi.get("workercount", 1)))

    def worker_mode(self) -> str:
        """The prefetch mode the controller hands to its workers."""
        return mode_for(str(self.config.getoption("dist", "no")),
                        str(self.config.getoption("agenteval_dist")))

    # -- collection --------------------------------------------------------

    def is_case_file(self, path: Path, parent: pytest.Collector) -> bool:
        if path.suffix not in (".yaml", ".yml"):
            return False
        resolved = path.resolve()
        if resolved.is_relative_to(self.rules_dir.resolve()):
            return False  # ledger, taxonomy, gates, rubric: never case files
        if parent.session.isinitpath(path):
            return True
        roots = self.config.getini("agenteval_paths") or ["cases"]
        return any(resolved.is_relative_to((self.rootdir / r).resolve()) for r in roots)

    def claim_ids(self, entries: list[tuple[str, Location]]) -> list[SourceError]:
        """Register ids; an id seen before (in this or another file) is an error."""
        errors = []
        local: dict[str, Location] = {}
        for item_id, loc in entries:
            first = local.get(item_id) or self._ids.get(item_id)
            if first is not None:
                errors.append(SourceError(loc, f"duplicate id {item_id!r}: already used at {first};"
                                          " ids must be unique in the run", "id"))
            else:
                local[item_id] = loc
        if not errors:
            self._ids.update(local)
        return errors

    def collection_finished(self, session: pytest.Session) -> None:
        from .items import CaseItem

        if self.role == "single":
            self.expected = [i.nodeid for i in session.items if isinstance(i, CaseItem)]

    def node_collected(self, ids: list[str]) -> None:
        if self.expected is None:
            self.expected = [i for i in ids if is_case_nodeid(i)]

    # -- running -----------------------------------------------------------

    def engine(self) -> Engine | None:
        if self._engine is None and self._engine_error is None:
            try:
                self._engine = Engine(self.loaded.target, self.rootdir, self.taxonomy,
                                      self._concurrency())
            except Exception as exc:
                self._engine_error = (f"could not start the target adapter: "
                                      f"{type(exc).__name__}: {exc}")
        return self._engine

    def run_item(self, item: Any) -> dict[str, Any]:
        from .items import CaseItem
        from .pipeline import start_failure

        engine = self.engine()
        if engine is None:
            return start_failure(item.plan, self._engine_error or "")
        ahead = self.prefetch.ahead(item.nodeid, item.session.items)
        engine.submit_many((it.nodeid, it.plan) for it in ahead if isinstance(it, CaseItem))
        return engine.result(item.nodeid, item.plan)

    def explain(self, result: dict[str, Any]) -> str:
        from .report.text import explain

        return self.masker.text(explain(result))

    def report_payload(self, item: Any) -> dict[str, Any]:
        """The masked, JSON-native record that travels with the call report."""
        record = dict(item.result)
        record.update(nodeid=item.nodeid, file=item.file, line=item.line)
        if item.trial is not None:
            record.update(trial=item.trial, trials=item.trials)
        payload: dict[str, Any] = self.masker.data(record)  # JSON-native by construction
        return payload

    def close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()

    # -- recording (controller / single) ---------------------------------

    def logreport(self, report: pytest.TestReport) -> None:
        if self.recorder is None or not is_case_nodeid(report.nodeid):
            return
        payload = getattr(report, "agenteval", None)
        if report.when == "call" and isinstance(payload, dict):
            if report.nodeid in self.records:
                self.duplicates.append(report.nodeid)
            self.records[report.nodeid] = payload
            self.recorder.append(payload)
            self.config.hook.pytest_agenteval_case_result(config=self.config, result=payload)
        elif report.failed and report.nodeid not in self.records:
            text = self.masker.text(str(report.longrepr))[:2000]
            if "crashed" in text:
                text += (" — the worker died with this item (or one it was running ahead)"
                         " in flight; the rest of its share was re-run on other workers")
            self.lost[report.nodeid] = f"no result ({report.when}): {text}"

    def finish(self, session: pytest.Session, exitstatus: int = 0) -> None:
        if self.recorder is None or self.config.option.collectonly:
            return
        if not self.records and not self.expected and not self.lost and not self.collection_errors:
            return
        cases = list(self.records.values())
        gates = self.gates
        try:
            labels = list(self.taxonomy.labels) or None
        except (SourceError, MultiSourceError):
            labels = None  # already reported as a collection error, with its line
        self.metrics = summarize(cases, labels, gates.red_lines if gates else None)
        self.completeness = self._completeness(session, exitstatus)
        self.gate = (evaluate_gate(gates, self.gates_source or "", self.metrics, cases,
                                   self.completeness) if gates else not_configured())
        doc = {
            "run": self._run_meta(cases),
            "cases": cases,
            "metrics": self.metrics,
            "gate": self.gate,
            "completeness": self.completeness,
        }
        self.results_path = self.recorder.finish(doc)
        mode = str(self.config.getoption("agenteval_exit"))
        if gates is None:
            mode = "items"  # no gate to decide: the items do
        session.exitstatus = exit_status(mode, int(session.exitstatus), self.gate["result"])

    def _completeness(self, session: pytest.Session, exitstatus: int) -> dict[str, Any]:
        expected = self.expected or []
        missing = [n for n in expected if n not in self.records]
        stopped = bool(session.shouldstop or session.shouldfail
                       or exitstatus == pytest.ExitCode.INTERRUPTED)
        return {
            "expected": len(expected),
            "received": len(self.records),
            "missing": missing,
            "lost": dict(self.lost),
            "duplicates": sorted(set(self.duplicates)),
            "collection_errors": sorted(set(self.collection_errors)),
            "stopped_early": stopped,
            "complete": not missing and not self.duplicates and not self.collection_errors,
        }

    def _run_meta(self, cases: list[dict[str, Any]]) -> dict[str, Any]:
        assert self.recorder is not None
        files = sorted({c["file"] for c in cases} | {n.split("::", 1)[0]
                                                     for n in self.expected or []})
        taxonomy_path = self.rules_dir / "taxonomy.yaml"
        cfg = self.loaded
        meta: dict[str, Any] = self.masker.data(self.recorder.run_metadata(
            rootdir=str(self.rootdir),
            config_file=locate(cfg.path, self.rootdir) if cfg.path else None,
            dataset=dataset_fingerprint(self.rootdir, files),
            target=cfg.describe_target(),
            judge={"configured": False, "model": None, "rubric_sha256": None,
                   "reason": "no judge configured"},
            rules={"taxonomy": locate(taxonomy_path, self.rootdir) if taxonomy_path.is_file()
                   else None, "taxonomy_sha256": file_sha256(taxonomy_path),
                   "ledger_sha256": file_sha256(self.rules_dir / "business-rules.yaml")},
            options={"numprocesses": self.config.getoption("numprocesses", None),
                     "dist": self.config.getoption("dist", "no"),
                     "agenteval_dist": self.config.getoption("agenteval_dist"),
                     "markexpr": self.config.getoption("markexpr", ""),
                     "keyword": self.config.getoption("keyword", ""),
                     "concurrency": self.config.getoption("agenteval_concurrency")
                     or cfg.target.concurrency,
                     "repeat": self.repeat,
                     "exit": self.config.getoption("agenteval_exit")},
            language=cfg.model.language,
            duration_s=round(time.perf_counter() - self._t0, 3),
        ))
        return meta
