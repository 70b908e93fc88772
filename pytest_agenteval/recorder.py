"""The recorder: where results are gathered (the single process, or the xdist controller).

It receives every item's result with pytest's own reports, writes
``results.jsonl`` and folds the metrics as they arrive, checks completeness
against the items collected, and at the end finishes the metrics, decides the
gate, writes ``results.json`` and prints the summary. Nothing of an item is
held but its line's place in ``results.jsonl``, what the metrics keep of it
and its entry in the report's digest.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._stash import WIRE, Slimmer
from .model.results import Completeness, ItemResult
from .privacy import clip

if TYPE_CHECKING:
    from .metrics import RunMetrics
    from .model.gates import GateResult
    from .project import Project
    from .report.digest import Digest
    from .report.record import RunRecorder

__all__ = ["Recorder", "check_reports_dir", "reports_dir"]


class Recorder:
    """Gathers results and writes the run record; one per run (never on a worker)."""

    def __init__(self, project: Project, config: pytest.Config, role: str) -> None:
        self.project = project
        self.config = config
        self.role = role
        self.expected: list[str] | None = None
        #: where each item's record starts in results.jsonl (its first, if it came twice)
        self.lines: dict[str, int] = {}
        self._fold: _Fold | None = None
        self.duplicates: list[str] = []
        self.unloadable: list[str] = []
        self.lost: dict[str, str] = {}
        #: items pytest skipped before they produced a result → why (masked)
        self.skipped: dict[str, str] = {}
        self.metrics: RunMetrics | None = None
        self.completeness: Completeness | None = None
        self.gate: GateResult | None = None
        self.results_path: str | None = None
        self.report_path: str | None = None
        #: results.json but its cases, once the run is over (pytest-html's summary reads it)
        self.document: dict[str, Any] | None = None
        self._writer: RunRecorder | None = None
        self._digest: Digest | None = None
        self._slimmer = Slimmer()
        self._t0 = time.perf_counter()

    @property
    def writer(self) -> RunRecorder:
        if self._writer is None:
            from .report.record import RunRecorder

            self._writer = RunRecorder(reports_dir(self.config, self.project))
        return self._writer

    @property
    def digest(self) -> Digest:
        """The cases as report.html carries them, folded as they arrive."""
        if self._digest is None:
            from .report.digest import Digest

            self._digest = Digest()
        return self._digest

    @property
    def lang(self) -> str:
        """The reports' language: ``--agenteval-lang``, else ``language:`` of agenteval.yaml."""
        return str(self.config.getoption("agenteval_lang", None)
                   or self.project.config.model.language)

    # -- what was collected ------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.role == "single":
            expected = [i.nodeid for i in session.items if self.project.is_case_nodeid(i.nodeid)]
            if expected and not self.config.option.collectonly:
                check_reports_dir(self.config, self.project)
            self.expected = expected  # (a run stopped before any call records nothing)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        if self.expected is None:
            expected = [i for i in ids if self.project.is_case_nodeid(i)]
            if expected:
                from .runner import preflight

                preflight(self.project, expected)  # before the first item is sent to a worker
                check_reports_dir(self.config, self.project)
            self.expected = expected  # (a run stopped by the preflight records nothing)

    # -- what was run ------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, data: Any) -> Generator[None, Any, Any]:
        """A worker's result arrives as JSON text (see ``Runner.pytest_report_to_serializable``)."""
        report = yield
        wire = getattr(report, WIRE, None)
        if isinstance(wire, str):
            from .report.record import json_value

            delattr(report, WIRE)
            report.agenteval = json_value(wire)
            report._agenteval_text = wire  # kept as it came (see _record)
        return report

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None]:
        self._logreport(report)
        try:
            yield
        finally:
            self._slimmer.logged(report)  # recorded, and every other plugin has seen it

    def _logreport(self, report: pytest.TestReport) -> None:
        unloadable = getattr(report, "agenteval_unloadable", None)
        if report.when == "call" and isinstance(unloadable, str):
            self.unloadable.append(unloadable)
            return
        if not self.project.is_case_nodeid(report.nodeid):
            return
        payload = getattr(report, "agenteval", None)
        if report.when == "call" and isinstance(payload, dict):
            self._record(report.nodeid, payload, getattr(report, "_agenteval_text", None),
                         getattr(report, "_agenteval_item", None))
        elif report.failed and report.nodeid not in self.lines:
            text = clip(self.project.masker.text(str(report.longrepr)), 2000)
            if "crashed" in text:
                text += (" — the worker died with this item (or one it was running ahead)"
                         " in flight; the rest of its share was re-run on other workers")
            self.lost[report.nodeid] = f"no result ({report.when}): {text}"
        elif report.skipped and report.nodeid not in self.lines:
            self.skipped.setdefault(report.nodeid, self._skip_reason(report))

    def _skip_reason(self, report: pytest.TestReport) -> str:
        """Why pytest skipped an item, as it says it (``-rs``), masked and cut."""
        xfail = getattr(report, "wasxfail", None)
        if isinstance(xfail, str):
            text = f"xfail: {xfail.removeprefix('[NOTRUN] ')}"
        elif isinstance(report.longrepr, (tuple, list)) and len(report.longrepr) == 3:
            text = str(report.longrepr[2]).removeprefix("Skipped: ")
        else:
            text = str(report.longrepr or "")
        return clip(self.project.masker.text(text or "skipped"), 300)

    def _record(self, nodeid: str, payload: dict[str, Any], text: str | None = None,
                typed: tuple[ItemResult, dict[str, Any]] | None = None) -> None:
        """One item's result, as it came with its report (masked JSON): write, fold, tell.

        It is validated into an :class:`ItemResult` (from ``text``, the JSON it came
        in from a worker, when there is one; not at all when ``typed`` holds the payload
        typed already and the payload still equals the copy made with it, as without xdist
        when masking changed nothing and no plugin changed the payload), folded into the
        metrics and the gate's evidence, given to the ``pytest_agenteval_case_result`` hook,
        and let go. An item reported twice (the run is then incomplete) counts once, as it first
        came.
        """
        from pydantic import ValidationError

        from .report.record import case_record

        try:
            if typed is not None and payload == typed[1]:  # as sent: no plugin changed it
                item = typed[0]
            else:
                item = (ItemResult.model_validate_json(text) if text is not None
                        else ItemResult.model_validate(payload))
            record = case_record(payload)
        except (ValidationError, KeyError, TypeError, IndexError) as exc:
            # not a result this version wrote (a plugin changed it on the way): this item
            # is lost, not the run
            why = clip(self.project.masker.text(str(exc)), 300)
            self.lost[nodeid] = (f"no result (record): its result could not be read "
                                 f"({type(exc).__name__}: {why})")
            return
        start = self.writer.append(record)  # every report, as it came
        if nodeid in self.lines:
            self.duplicates.append(nodeid)
            return
        # named before it is folded: a Ctrl-C from here on still finds its record at the end
        # (a Ctrl-C amid the fold leaves that one item counted by some families only: the
        # run is then incomplete and its gate blocks)
        self.lines[nodeid] = start
        self.fold.add(item)
        self.digest.add(record)
        hook = self.config.hook.pytest_agenteval_case_result
        if hook.get_hookimpls():
            hook(config=self.config, result=record, item=item)

    @property
    def fold(self) -> _Fold:
        if self._fold is None:
            self._fold = _Fold(self.project)
        return self._fold

    def pytest_report_teststatus(self, report: pytest.TestReport,
                                 config: pytest.Config) -> tuple[str, str, Any] | None:
        if report.when != "call":
            return None
        if getattr(report, "agenteval_unloadable", None):
            return "error", "E", ("ERROR", {"blue": True})
        payload = getattr(report, "agenteval", None)
        if not isinstance(payload, dict):
            return None
        if payload["status"] == "review":
            return "review", "R", ("REVIEW", {"yellow": True})
        if payload["status"] == "error":
            return "error", "E", ("ERROR", {"blue": True})
        return None

    # -- the end of the run --------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.config.option.collectonly:
            return
        if not self.lines and not self.expected and not self.lost and not self.unloadable:
            return
        self._finish(session, exitstatus)

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        from ._gc import paused

        with paused():  # the metrics, the record and the report: no cycle among them
            self._finish_run(session, exitstatus)

    def _finish_run(self, session: pytest.Session, exitstatus: int) -> None:
        from .metrics.gates import evaluate_gate, exit_status, not_configured

        fold = self.fold
        gates, source = self.project.gates
        self.metrics = fold.run.metrics()
        self.completeness = self._completeness(session, exitstatus)
        self.gate = (evaluate_gate(gates, source or "", self.metrics, fold.gate,
                                   self.completeness, self._subset())
                     if gates else not_configured())
        self._junit_gate()
        doc = self.document = self._document(fold)
        self.results_path = str(self.writer.finish(doc, self.lines.values()))
        self._write_report(doc)
        self._fold = None  # what the metrics kept: not needed again (the summary reads them)
        mode = str(self.config.getoption("agenteval_exit"))
        if gates is None:
            mode = "items"  # no gate to decide: the items do
        session.exitstatus = exit_status(mode, int(session.exitstatus), self.gate.result)

    def _subset(self) -> str | None:
        """How the selection was narrowed, if it was: ``-k``, ``-m``, ``--lf``, node ids,
        items that pytest skipped."""
        from .metrics.gates import skipped_part

        get = self.config.getoption
        parts = [f"-k {get('keyword', '')}" if get("keyword", "") else "",
                 f"-m {get('markexpr', '')}" if get("markexpr", "") else "",
                 "--lf" if get("lf", False) else "",
                 "--deselect" if get("deselect", None) else "",
                 f"--agenteval-shard {get('agenteval_shard')}" if get("agenteval_shard") else "",
                 "node ids" if any("::" in str(a) for a in self.config.args) else "",
                 skipped_part(len(self.completeness.skipped) if self.completeness else 0)]
        named = [p for p in parts if p]
        return self.project.masker.text(", ".join(named)) if named else None

    def _junit_gate(self) -> None:
        """The gate's result and reasons as JUnit suite properties (``--junitxml``)."""
        try:
            from _pytest.junitxml import xml_key
        except ImportError:  # pragma: no cover - pytest moved it
            return
        xml = self.config.stash.get(xml_key, None)
        if xml is None or self.gate is None:
            return
        xml.add_global_property("agenteval_gate", self.gate.result)
        for reason in self.gate.reasons:
            xml.add_global_property("agenteval_gate_reason", self.project.masker.text(reason))

    def _document(self, fold: _Fold) -> dict[str, Any]:
        """``results.json`` but its ``cases`` (the records, as written to results.jsonl)."""
        assert self.metrics is not None and self.completeness is not None
        assert self.gate is not None
        return {
            "run": self._run_meta(fold.files),
            "cases": None,
            "metrics": self.metrics.to_json(),
            "review_queue": fold.review,
            "gate": self.gate.model_dump(mode="json"),
            "completeness": self.completeness.model_dump(mode="json"),
        }

    def _write_report(self, doc: dict[str, Any]) -> None:
        """``report.html`` beside results.json; a report that cannot be made is said on
        stderr and costs nothing else (the record is written)."""
        from .report.html import write_report

        run_dir = self.writer.run_dir
        if run_dir is None:
            return
        path = run_dir / "report.html"
        try:
            digest = self.digest
            if len(digest.cases) != len(self.lines):  # a Ctrl-C fell between the two
                from .report.digest import Digest
                from .report.record import json_value

                digest = Digest()
                for line in self.writer.lines(self.lines.values()):
                    digest.add(json_value(line))
            write_report(path, doc, digest, self.lang, self.project.rule_titles())
        except Exception as exc:  # a report is a view: never worth the run's exit status
            sys.stderr.write(f"agenteval: report.html could not be written "
                             f"({type(exc).__name__}: {clip(str(exc), 300)})\n")
            return
        self.report_path = str(path)

    def _completeness(self, session: pytest.Session, exitstatus: int) -> Completeness:
        expected = self.expected or []
        missing = [n for n in expected if n not in self.lines and n not in self.skipped]
        stopped = bool(session.shouldstop or session.shouldfail
                       or exitstatus == pytest.ExitCode.INTERRUPTED)
        return Completeness(
            expected=len(expected), received=len(self.lines), missing=missing,
            lost=dict(self.lost), skipped={n: self.skipped[n] for n in expected
                                           if n in self.skipped and n not in self.lines},
            duplicates=sorted(set(self.duplicates)),
            collection_errors=sorted(set(self.unloadable)), stopped_early=stopped,
            complete=not missing and not self.duplicates and not self.unloadable)

    def _run_meta(self, seen: set[str]) -> dict[str, Any]:
        from .report.record import file_sha256
        from .yamlio import locate

        project, cfg = self.project, self.project.config
        files = sorted(seen | {n.split("::", 1)[0] for n in self.expected or []})
        taxonomy_path = project.rules_dir / "taxonomy.yaml"
        meta: dict[str, Any] = project.masker.data(self.writer.run_metadata(
            rootdir=str(project.rootdir),
            config_file=locate(cfg.path, project.rootdir) if cfg.path else None,
            dataset=self._dataset(files),
            target=cfg.describe_target(),
            judge=self._judge_info(),
            rules={"taxonomy": locate(taxonomy_path, project.rootdir)
                   if taxonomy_path.is_file() else None,
                   "taxonomy_sha256": file_sha256(taxonomy_path),
                   "ledger_sha256": file_sha256(project.rules_dir / "business-rules.yaml")},
            options=self._options(),
            language=cfg.model.language,
            duration_s=round(time.perf_counter() - self._t0, 3),
        ))
        from .shard import run_meta

        shard = run_meta(self.config, len(self.expected or []))
        if shard is not None:  # --agenteval-shard: which share of the collection this is
            meta["shard"] = shard
        return meta

    def _dataset(self, files: list[str]) -> dict[str, Any]:
        """The case files and their hashes, with the manifest's name and version (SPEC 7)."""
        from .config import ConfigError
        from .report.record import dataset_fingerprint

        out = dataset_fingerprint(self.project.rootdir, files)
        try:
            manifest, source = self.project.manifest
        except ConfigError:  # reported by agenteval lint; the record still has the hashes
            manifest, source = None, None
        out.update(name=manifest.name if manifest else None,
                   version=manifest.version if manifest else None,
                   parent=manifest.parent if manifest else None, manifest=source)
        return out

    def _judge_info(self) -> dict[str, Any]:
        """The judge as the run record shows it: model, endpoint, rubric and its hash."""
        from .model.config import strip_credentials

        cfg = self.project.judge_config
        if cfg is None:
            return {"configured": False, "model": None, "rubric_sha256": None,
                    "reason": "no judge configured", "reason_code": "no_judge"}
        try:
            rubric = self.project.rubric
            source, sha = rubric.source or "(built-in default)", rubric.sha256
        except Exception:  # reported by the preflight; the record still says what was asked
            source, sha = None, None
        return {"configured": True, "model": cfg.model,
                "base_url": strip_credentials(cfg.base_url or "") or None,
                "temperature": cfg.temperature, "output_mode": cfg.output_mode,
                "max_contract_retries": cfg.max_contract_retries,
                "concurrency": cfg.concurrency, "rubric": source, "rubric_sha256": sha,
                "cache": None if self.config.getoption("agenteval_no_cache") else cfg.cache,
                "reason": None, "reason_code": None}

    def _options(self) -> dict[str, Any]:
        from ._stash import FIT

        get = self.config.getoption
        fit = self.config.stash.get(FIT, None)
        return {"numprocesses": get("numprocesses", None), "dist": get("dist", "no"),
                "numprocesses_asked": fit.asked if fit is not None else None,
                "workers": get("agenteval_workers") or "fit",
                "agenteval_dist": get("agenteval_dist"), "markexpr": get("markexpr", ""),
                "keyword": get("keyword", ""),
                "concurrency": get("agenteval_concurrency")
                or self.project.config.target.concurrency,
                "repeat": self.project.repeat, "exit": get("agenteval_exit")}

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from .report.text import summary_lines

        if self.metrics is None or self.completeness is None:
            return
        terminalreporter.write_sep("=", "agenteval summary")
        for line in summary_lines(self.metrics, self.completeness, self.results_path,
                                  self.gate):
            terminalreporter.write_line(line)
        if self.report_path:
            terminalreporter.write_line(f"report: {self.report_path}")


def reports_dir(config: pytest.Config, project: Project) -> Path:
    """Where run folders go: ``--agenteval-reports-dir`` is relative to where pytest was
    started (like ``--junitxml``); ``paths.reports_dir`` of agenteval.yaml to the rootdir."""
    explicit: str | None = config.getoption("agenteval_reports_dir")
    if explicit:
        return Path(config.invocation_params.dir) / explicit
    return project.reports_dir


def check_reports_dir(config: pytest.Config, project: Project) -> None:
    """A reports folder that cannot be written is a usage error before any agent call
    (not an INTERNALERROR after the first item, with the calls already paid for)."""
    import tempfile

    folder = reports_dir(config, project)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise pytest.UsageError(
            f"agenteval: the reports folder {folder} cannot be written "
            f"({exc.strerror or type(exc).__name__}); fix its permissions, or give "
            "--agenteval-reports-dir or paths.reports_dir") from None


class _Fold:
    """What the end of the run needs of the results, folded as they arrive: the metrics,
    the gate's evidence, the review queue and the case files."""

    def __init__(self, project: Project) -> None:
        from .metrics.gates import GateEvidence
        from .metrics.summary import RunFold

        gates, _ = project.gates
        red_lines = gates.red_lines if gates else None
        self.run: RunFold = RunFold(project.labels(), red_lines)
        self.gate: GateEvidence = GateEvidence(red_lines or ())
        self.review: list[dict[str, Any]] = []
        self.files: set[str] = set()

    def add(self, item: ItemResult) -> None:
        from .metrics.judge import review_entries

        self.run.add(item)
        self.gate.add(item)
        self.review += review_entries(item)
        self.files.add(item.file)
