"""The runner: where items run (the single process, or an xdist worker).

It owns the engine (started on the first case item) and the prefetch policy,
and attaches each item's masked result to its call report, so it reaches the
recorder the same way with and without xdist.
"""

from __future__ import annotations

import gc
import math
import re
import sys
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from . import _protocol
from ._stash import WIRE, Slimmer
from ._workers import ROOTDIR_KEY, WORKERINPUT_KEY, BlindLink, WorkerLink
from .items import CaseFile, CaseItem, LoadErrorItem
from .scheduling import Mode, Prefetch

if TYPE_CHECKING:
    from .adapters import Adapter
    from .engine import Budget, Engine
    from .judge import Judge
    from .model.results import AgentError, ItemResult
    from .project import Project
    from .simulator import Simulator
    from .yamlio import SourceError

__all__ = ["Runner", "WorkerSlimmer", "junit_properties", "preflight"]


def preflight(project: Project, nodeids: Sequence[str] = ()) -> None:
    """Stop with one usage error before any agent call when every call would fail (the
    target's, the judge's or the simulator's, or the judge's rubric is broken), or when
    a simulated scenario among ``nodeids`` (the run's case and scenario items) has no
    model to play its user. The same in the single process and on the xdist controller."""
    from .model import MultiSourceError
    from .yamlio import SourceError

    errors = project.config.preflight(project.rootdir)
    if errors:
        lines = "\n".join(str(e) for e in errors)
        raise pytest.UsageError(f"agenteval: {_whom(errors)} cannot be called:\n{lines}")
    models = [c for c in (project.judge_config, project.simulator_config) if c is not None]
    if models:
        from .judge.http import base_url, through_proxy

        if any(through_proxy(base_url(c.base_url)) for c in models):
            _client_importable()
    if project.judge_config is not None:
        try:
            _ = project.rubric
        except (SourceError, MultiSourceError) as exc:
            raise pytest.UsageError(f"agenteval: the judge's rubric cannot be used:\n{exc}") \
                from None
    simulated = _simulated(project, nodeids) if project.simulator_config is None else []
    if simulated:
        raise pytest.UsageError(
            f"agenteval: {len(simulated)} simulated scenario(s) (e.g. {simulated[0]}) need a "
            "model to play the user: add judge: or simulator: (model, base_url, api_key_env) "
            "to agenteval.yaml")


def _client_importable() -> None:
    """The judge's and the simulator's client through a proxy (the ``aiohttp`` package) can
    be imported: a broken installation is one usage error, not an ERROR blamed on each
    item. (Without a proxy they speak through the plugin's own HTTP/1.1 client.)"""
    try:
        import aiohttp  # noqa: F401
    except Exception as exc:
        raise pytest.UsageError(
            f"agenteval: the judge cannot be called: the aiohttp package cannot be imported "
            f"({type(exc).__name__}: {exc}); reinstall it (pip install --force-reinstall "
            "aiohttp) or remove judge: and simulator: from agenteval.yaml") from None


def _whom(errors: Sequence[SourceError]) -> str:
    """Who cannot be called, from the sections of the errors' fields: ``the target``,
    ``the judge and the simulator`` …"""
    sections = dict.fromkeys((e.field or "target").split(".", 1)[0] for e in errors)
    return " and ".join(f"the {name}" for name in sections)


_TRIAL = re.compile(r"\[t\d+\]$")


def _simulated(project: Project, nodeids: Sequence[str]) -> list[str]:
    """The simulated scenarios among ``nodeids``. Their case files are read again (the
    xdist controller has no items): only those that mention ``simulate``, and a file that
    cannot be loaded is its own item's error."""
    from .model import MultiSourceError
    from .yamlio import SourceError

    by_file: dict[str, list[str]] = {}
    for nodeid in nodeids:
        file, _, name = nodeid.partition("::")
        by_file.setdefault(file, []).append(name)
    out = []
    for file, names in by_file.items():
        path = project.rootdir / file
        try:
            if "simulate" not in path.read_text(encoding="utf-8"):
                continue
            ids = {plan.id for plan, _ in project.load_case_file(path) if plan.simulate}
        except (OSError, UnicodeDecodeError, SourceError, MultiSourceError):
            continue
        out += [f"{file}::{n}" for n in names if _TRIAL.sub("", n) in ids]
    return out


#: results between two freezes of what a run keeps (see :meth:`Runner.run`)
FREEZE_EVERY = 256


def _freeze_once(cases: list[CaseItem]) -> bool:
    """Exempt what exists once the items are collected from the cyclic garbage collector.

    That is the interpreter's and pytest's objects, pydantic's compiled validators and
    every item's plan: alive until the process ends, and costly to walk (about 1.5 µs an
    object). Every full collection after it — during the run, pytest's at the end, the
    interpreter's at exit — walks only what the run made: a 1000-case run takes about a
    second less CPU. Once per process, so that in-process pytester runs do not each pin
    the objects of the previous one (nor undo a freeze of someone else's).

    The items' instance dicts are made first: Python makes an object's ``__dict__`` only
    when it is asked for, which a cached property (pytest's ``location`` of an item) does,
    after the freeze otherwise — a dict an item for every full collection to walk. What
    the run makes of a plan for each result (a turn's expectation, the initial history)
    is not kept on the plan: it goes with the result.

    Whether it froze: this process then also freezes what the run keeps as it goes
    (:meth:`Runner.run`).
    """
    if gc.get_freeze_count() == 0:
        for item in cases:
            vars(item)
        gc.freeze()
        return True
    return False


class Runner:
    """Runs case items on the engine; one per process that runs items."""

    def __init__(self, project: Project, config: pytest.Config, role: str) -> None:
        self.project = project
        self.config = config
        self.role = role
        self.prefetch = self._prefetch()
        self._engine: Engine | None = None
        self._engine_error: AgentError | None = None
        self._cases: list[CaseItem] | None = None
        #: this process froze what collection built (then also what the run keeps, and the
        #: collector's youngest generation has more room while items run: what it was)
        self._froze = False
        self._threshold: tuple[int, int, int] | None = None
        #: how case items run without pytest's phase hooks (:mod:`._protocol`), if they may
        self._lean: _protocol.Protocol | None = None
        self._ran = 0
        self.link = self._link()
        from .report.pytest_html import wants_extras

        #: pytest-html is writing a report: each item carries its evidence as an extra
        self.extras = wants_extras(config)
        #: a JUnit XML file is written (``--junitxml``; workers have the option too): each
        #: item carries its layers as properties, which nothing else reads
        self.junit = bool(config.getoption("xmlpath", None))

    def _link(self) -> WorkerLink | None:
        """An xdist worker's link to its controller (stop and crash notices, sent journal)."""
        if self.role != "worker":
            return None
        wi = self.config.workerinput  # type: ignore[attr-defined]
        folder = wi.get(WORKERINPUT_KEY)
        if not folder:
            return None
        try:
            return WorkerLink(folder, str(wi.get("workerid", "gw?")))
        except OSError:  # the controller's folder is gone, or on another host (--tx socket=)
            if self.prefetch.mode != "owned":
                return None
            return BlindLink(str(wi.get("workerid", "gw?")), self.prefetch.workers,
                             lambda: self._cases or [])

    def _prefetch(self) -> Prefetch:
        if self.role != "worker":
            return Prefetch("all")
        wi = self.config.workerinput  # type: ignore[attr-defined]
        mode: Mode = wi.get("agenteval_mode", "none")
        return Prefetch(mode, wi.get("workerid"), int(wi.get("workercount", 1)))

    def concurrency(self) -> int:
        option: int | None = self.config.getoption("agenteval_concurrency")
        return self._shared(option or self.project.config.target.concurrency)

    def _shared(self, total: int) -> int:
        """This process's share of a run's concurrency (the target's, ``judge.concurrency``,
        ``simulator.concurrency``): all of it, or a worker's part of it under xdist."""
        if self.role != "worker":
            return total
        workers = int(self.config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
        return max(1, math.ceil(total / workers))

    # -- hooks -------------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._cases = [i for i in session.items if isinstance(i, CaseItem)]
        if self._cases and not self.config.option.collectonly:
            if self.role == "single":
                preflight(self.project, [i.nodeid for i in self._cases])
            self._froze = _freeze_once(self._cases)
            if self._froze and len(self._cases) == len(session.items):  # cases alone: no
                from ._gc import roomier  # test of the user's runs with another threshold

                self._threshold = roomier()
            if len(self._cases) == len(session.items):
                self._lean = _protocol.eligible(session, self)
            if self.link is not None:
                self.link.on_stop = self._halt
                self.link.watch()
            if self.prefetch.mode == "owned" and len(self._cases) == len(session.items):
                self._start_owned()

    def _start_owned(self) -> None:
        """A worker under the owned scheduling starts its own share now, while the other
        workers are still starting and collecting: the controller sends it exactly these
        once every worker has collected the same items. Only for a collection of case items
        alone (it is the same on every worker: nothing else can make xdist abort the run
        over a different collection), in the controller's own checkout, and only when none
        of the controller's checks before the first call would stop the run: its preflight
        and its reports folder (then it says so), and no ``--agenteval-lint``."""
        from .recorder import check_reports_dir

        wi = self.config.workerinput  # type: ignore[attr-defined]
        if wi.get(ROOTDIR_KEY) != str(self.config.rootpath) \
                or self.config.getoption("agenteval_lint"):
            return
        try:
            preflight(self.project, [i.nodeid for i in self._cases or ()])
            check_reports_dir(self.config, self.project)
        except pytest.UsageError:
            return  # the controller says so
        engine = self.engine()
        if engine is not None:
            engine.submit_many((it.nodeid, it.plan, it.trial or 0)
                               for it in self.prefetch.owned(self._cases or []))
            engine.step()  # the first requests go out now

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item,
                                nextitem: pytest.Item | None) -> bool | None:
        """A case item's protocol without pytest's phase hooks, where nothing could tell
        (:mod:`._protocol`)."""
        if self._lean is not None and isinstance(item, CaseItem) \
                and not _protocol.marked(item):
            return self._lean.run(item, nextitem)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport,
                                                                            pytest.TestReport]:
        report = yield
        if call.when != "call":
            return report
        if isinstance(item, CaseItem) and item.payload is not None:
            payload, item.payload = item.payload, None  # the report carries it from here
            report.agenteval = payload  # type: ignore[attr-defined]  # travels through xdist
            if item.typed is not None:  # the recorder's, in-process (items.py: never on a
                # worker), with a copy of the payload as it left here: a plugin that changes
                # the payload on its way makes the recorder read the payload instead
                report._agenteval_item = (item.typed, item.sent)  # type: ignore[attr-defined]
            item.typed = item.sent = None
            if self.junit:
                props = junit_properties(payload)
                report.user_properties += props
                item.user_properties += props  # junitxml reads them from the teardown report
            if self.extras:
                self._add_extra(report, payload)
        elif isinstance(item, LoadErrorItem) and isinstance(item.parent, CaseFile):
            # a case file whose items are missing from the run (a broken ledger file is
            # its own item's error, and every case file reports the ledger's defects too)
            report.agenteval_unloadable = item.nodeid.split("::", 1)[0]  # type: ignore[attr-defined]
        return report

    @staticmethod
    def _add_extra(report: pytest.TestReport, payload: dict[str, Any]) -> None:
        from pytest_html import extras

        from .report.pytest_html import item_extra

        report.extras = [*getattr(report, "extras", []),  # type: ignore[attr-defined]
                         extras.html(item_extra(payload))]

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, report: Any) -> Generator[None, Any, Any]:
        """On a worker, the result travels to the controller as one JSON string: execnet's
        serializer is pure Python and walks every node (about 0.1 ms a result each way),
        pydantic's JSON encoder a small part of that (the recorder parses it back)."""
        from .report.record import json_line

        data = yield
        if isinstance(data, dict):
            data.pop("_agenteval_item", None)  # a Python object (pytest-reportlog's JSON too)
        if self.role == "worker" and isinstance(data, dict):
            payload = data.pop("agenteval", None)
            if isinstance(payload, dict):
                data[WIRE] = json_line(payload).decode()
        return data

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self) -> None:
        """Ctrl-C: no conversation starts from now on (what is in flight is cancelled when
        the session finishes; a loaded machine takes a while to get there)."""
        self._halt()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.close()

    def pytest_unconfigure(self) -> None:
        self.close()

    # -- running -----------------------------------------------------------------------------

    def engine(self) -> Engine | None:
        if self._engine is None and self._engine_error is None:
            from .engine import Engine, StartError
            from .model.results import AgentError

            judge = self.project.judge_config
            try:
                self._engine = Engine(self._make_adapter, self.project.taxonomy,
                                      self.concurrency(), self._budget(), self.link,
                                      self._make_judge if judge is not None else None,
                                      self._make_simulator)
            except StartError as exc:  # the agent's side, or ours (the judge, the simulator)
                kind = {"the judge": "judge", "the simulated user": "simulator"}.get(exc.what,
                                                                                     "connection")
                self._engine_error = AgentError(kind=kind, detail=str(exc))
            except Exception as exc:
                self._engine_error = AgentError(
                    kind="connection",
                    detail=f"could not start the target adapter: {type(exc).__name__}: {exc}")
        return self._engine

    def _budget(self) -> Budget:
        """An item's time: the agent's call of each turn with its retries; the judge's asks
        of a turn (L3 and a judge-based rule or two), of a task, and the simulator's, each
        with its re-asks and retries."""
        from .engine import Budget

        target = self.project.config.target
        per_turn = target.timeout_s * (target.retries + 1) + 8.0 * target.retries + 30.0
        judge, simulator = self.project.judge_config, self.project.simulator_config
        task = judge.ask_budget_s if judge is not None else 0.0
        return Budget(per_turn + 2 * task, simulator.ask_budget_s if simulator else 0.0, task)

    def _halt(self) -> None:
        engine = self._engine
        if engine is not None:
            engine.halt()

    def _make_adapter(self) -> Adapter:
        """Build the adapter on the engine's loop: a conftest hook first, else the registry."""
        from .adapters import AdapterContext, build_adapter

        context = AdapterContext(self.project.rootdir, self.concurrency())
        made = self.config.hook.pytest_agenteval_make_adapter(
            config=self.config, target=self.project.config.target, context=context)
        return build_adapter(self.project.config.target, context, made)

    def _make_judge(self) -> Judge | None:
        """The judge, built on the engine's loop (``None`` when none is configured)."""
        cfg = self.project.judge_config
        if cfg is None:
            return None
        from .judge import Judge

        cfg = cfg.model_copy(update={"concurrency": self._shared(cfg.concurrency)})
        return Judge.from_config(cfg, self.project.rubric, self.project.taxonomy,
                                 self.project.rootdir,
                                 use_cache=not self.config.getoption("agenteval_no_cache"))

    def _make_simulator(self) -> Simulator | None:
        """The simulated user of ``simulate:`` scenarios (``None`` without a model for it)."""
        cfg = self.project.simulator_config
        if cfg is None:
            return None
        from .simulator import Simulator

        return Simulator(cfg.model_copy(update={"concurrency": self._shared(cfg.concurrency)}))

    def run(self, item: CaseItem) -> ItemResult:
        """Run (or wait for) ``item``'s conversation; submit what may run ahead first.

        Every :data:`FREEZE_EVERY` results, in the process that froze what collection
        built, what is alive is frozen too: above all pytest's reports, which it keeps till
        the end, and which every collection of the older generations walked again (0.07 ms
        of CPU a case at 10,000 cases; 0.01 ms with the freezes). A freeze is a splice of
        lists, no walk. Its cost: cycles alive at a freeze that become garbage later (a few
        conversations in flight) are never collected, a few hundred objects in a
        10,000-case run.
        """
        from .pipeline import start_failure

        engine = self.engine()
        if engine is None:
            assert self._engine_error is not None
            return start_failure(item.plan, self._engine_error,
                                 self.project.judge_config is not None)
        cases = self._cases if self._cases is not None else [item]
        ahead = self.prefetch.ahead(item.nodeid, cases)
        engine.submit_many((it.nodeid, it.plan, it.trial or 0) for it in ahead)
        result = engine.result(item.nodeid, item.plan, item.trial or 0)
        self._ran += 1
        if self._froze and self._ran % FREEZE_EVERY == 0:
            gc.freeze()
        return result

    def close(self) -> None:
        """Stop the engine; never raises (a session must finish and write its record)."""
        from ._gc import restore

        restore(self._threshold)
        self._threshold = None
        engine, self._engine = self._engine, None
        try:
            if engine is not None:
                engine.close()
        except Exception as exc:  # closing the agent's client must not cost the run record
            sys.stderr.write(f"agenteval: closing the adapter failed: {type(exc).__name__}: "
                             f"{exc}\n")
        finally:
            if self.link is not None:
                self.link.close()


class WorkerSlimmer:
    """On a worker, once xdist has sent an item's reports, its result is let go (registered
    on workers only: a wrapper of every report costs elsewhere and does nothing)."""

    def __init__(self) -> None:
        self._slimmer = Slimmer()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None]:
        try:
            yield
        finally:
            self._slimmer.logged(report)


def junit_properties(payload: dict[str, Any]) -> list[tuple[str, str]]:
    """Per-item properties (``user_properties``, so JUnit's): every layer — verdict, kind,
    behaviour, priority, trial, latency, failed rule ids, intent expected and predicted (per
    turn for a scenario, ``|``-separated), judge verdict and scores, task success level,
    completion and parts, termination, error kind."""
    turns = payload["turns"]
    failed = list(dict.fromkeys(row["rule_id"] for t in turns for row in t["rules"]
                                if row["status"] == "failed"))
    latency = sum(t["latency_ms"] for t in turns)
    props = [("agenteval_verdict", payload["status"]), ("agenteval_kind", payload["kind"]),
             ("agenteval_behavior", ",".join(payload.get("behaviors") or ())),
             ("agenteval_priority", str(payload.get("priority") or "")),
             ("agenteval_latency_ms", f"{latency:.1f}"),
             ("agenteval_failed_rules", ",".join(failed))]
    if payload.get("trial") is not None:
        # 1-based, as in the node id ``ID[t2]``
        props.append(("agenteval_trial", f"{payload['trial'] + 1}/{payload.get('trials')}"))
    intents = [t["intent"] for t in turns]
    props += [("agenteval_intent_expected", "|".join(str(i["expected"] or "") for i in intents)),
              ("agenteval_intent_predicted",
               "|".join(str(i["predicted"] or "") for i in intents))]
    judge = payload.get("judge") or {}
    props.append(("agenteval_judge", str(judge.get("status", "not_evaluated"))))
    if judge.get("scores"):
        props.append(("agenteval_judge_scores", ",".join(
            f"{d}={'null' if s is None else s}" for d, s in judge["scores"].items())))
    elif judge.get("reason_code"):
        props.append(("agenteval_judge_reason", str(judge["reason_code"])))
    task = payload.get("task") or {}
    if task.get("success_level"):
        props.append(("agenteval_success_level", str(task["success_level"])))
    if task.get("completion_rate") is not None:
        props.append(("agenteval_completion_rate", f"{task['completion_rate']:.4g}"))
    if task.get("parts"):
        props.append(("agenteval_task_parts", ",".join(
            f"{p['name']}={p['status']}" for p in task["parts"])))
    props.append(("agenteval_termination", str(payload.get("termination", "completed"))))
    error = next((t["error"] for t in turns if t["error"]), None)
    if error:
        props.append(("agenteval_error_kind", error["kind"]))
    return props
