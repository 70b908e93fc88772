"""Case files as pytest collectors, cases and scenarios as pytest items.

A case file that cannot be loaded (bad YAML, an unknown field, an unknown
label, a duplicate id, a broken ledger or taxonomy) collects as one item,
``<file>::[load]``, that reports ERROR with every located defect, the way
pytest-mypy reports a file: the other files run, and no pytest option is
changed for it.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._stash import get_project, get_runner
from .model import MultiSourceError
from .project import LOAD_ITEM
from .yamlio import SourceError, locate

if TYPE_CHECKING:
    from .ledger import LedgerRule
    from .model.ledger import Example
    from .model.results import ItemResult
    from .plan import ItemPlan
    from .project import Project

__all__ = ["CaseFile", "CaseItem", "CaseVerdict", "Collection", "ExampleItem", "LedgerFile",
           "LoadErrorItem"]


class CaseVerdict(Exception):
    """Raised by :meth:`CaseItem.runtest` when the verdict is failed or error."""

    def __init__(self, status: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def _listing(errors: list[SourceError]) -> str:
    head = f"{len(errors)} error(s) in this file; none of its items ran:" if len(errors) > 1 else ""
    body = "\n".join(f"  {e}" if head else str(e) for e in errors)
    return f"{head}\n{body}" if head else body


def _located(exc: SourceError | MultiSourceError) -> str:
    return str(exc) if isinstance(exc, SourceError) else _listing(exc.errors)


class _VerdictItem(pytest.Item):
    """An item whose failure is a verdict with evidence, not a Python traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, CaseVerdict):
            return excinfo.value.text
        # a fault of ours, not a verdict: the short traceback, never its locals (`-l` would
        # print the plan, the reply, the adapter's headers), masked and terminal-safe
        from .report.text import safe

        text = str(excinfo.getrepr(style="short", showlocals=False, funcargs=False))
        masker = get_project(self.config).masker
        return "\n".join(safe(masker.text(line)) for line in text.splitlines())


class LoadErrorItem(_VerdictItem):
    """A case or ledger file that could not be loaded: ERROR with every located defect."""

    def __init__(self, *, message: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.message = message

    def runtest(self) -> None:
        raise CaseVerdict("error", self.message)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"could not load {locate(self.path, self.config.rootpath)}"


class CaseFile(pytest.File):
    """A YAML file of cases and scenarios."""

    @functools.cached_property
    def relfspath(self) -> str:
        """Its path as pytest's item locations give it (relative to the rootdir)."""
        return self.session._node_location_to_relpath(Path(os.path.abspath(self.path)))

    def collect(self) -> Iterator[pytest.Item]:
        project = get_project(self.config)
        try:
            entries = project.load_case_file(Path(self.path))
        except (SourceError, MultiSourceError) as exc:
            yield LoadErrorItem.from_parent(self, name=LOAD_ITEM, message=_located(exc))
            return
        errors = project.ids.claim([(plan.id, loc) for plan, loc in entries])
        if errors:
            yield LoadErrorItem.from_parent(self, name=LOAD_ITEM, message=_listing(errors))
            return
        name = locate(self.path, self.config.rootpath)
        trials = project.repeat
        for plan, loc in entries:
            for trial in range(trials):
                item_name = plan.id if trials == 1 else f"{plan.id}[t{trial + 1}]"
                yield CaseItem.from_parent(self, name=item_name, plan=plan, line=loc.line,
                                           file=name, trial=trial if trials > 1 else None,
                                           trials=trials)


@functools.lru_cache(maxsize=256)
def _mark(name: str, label: str | None) -> pytest.MarkDecorator:
    """One mark object per priority or behaviour, shared by the items that carry it
    (building pytest's marks was a tenth of collecting 10,000 cases)."""
    mark: pytest.MarkDecorator = getattr(pytest.mark, name)
    return mark if label is None else mark(label=label)


class CaseItem(_VerdictItem):
    """One case or one scenario: one conversation with the agent."""

    def __init__(self, *, plan: ItemPlan, line: int | None, file: str,
                 trial: int | None = None, trials: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.line = line
        self.file = file
        self.trial = trial  # 0-based, None without --agenteval-repeat
        self.trials = trials
        #: the masked, JSON-native result that travels with the call report
        self.payload: dict[str, Any] | None = None
        #: the payload typed, when masking changed nothing (:meth:`Masker.result_typed`), and
        #: a copy of the payload that tells the recorder whether anyone changed it on its way
        self.typed: ItemResult | None = None
        self.sent: dict[str, Any] | None = None
        meta = plan.meta
        self.add_marker(_mark(meta["priority"], None))
        for label in meta["behaviors"]:
            self.add_marker(_mark("behavior", label))
        challenge = meta["challenge"] if meta["challenge"] != "none" else None
        keywords = [*meta["behaviors"], meta["test_family"], challenge, *meta["tags"]]
        self.extra_keyword_matches.update(k for k in keywords if k)

    @property
    def ihook(self) -> Any:
        """pytest's hooks for this item, but its setup, call and teardown without pytest's
        output and log capture (see :class:`_PhaseHooks`)."""
        return _phase_hooks(self)

    def runtest(self) -> None:
        from .model.results import ItemResult
        from .report.text import explain

        runner = get_runner(self.config)
        result = runner.run(self)
        masker = get_project(self.config).masker
        if runner.role == "single":  # the recorder folds the typed result in this process
            self.payload, self.typed, self.sent = masker.result_typed(result, **self.identity())
        else:  # a worker's results are read back from their JSON on the controller
            self.payload = masker.result(result, **self.identity())
        if result.status in ("failed", "error"):
            shown = (self.typed if self.typed is not None  # the masked result, then cut
                     else ItemResult.model_validate(self.payload))
            verdict = CaseVerdict(result.status, explain(shown))
            # the traceback keeps this frame, and pytest's exception info is in a reference
            # cycle with it: the results go now, not at the next full garbage collection
            del result, shown
            raise verdict

    def identity(self) -> dict[str, Any]:
        """Where a result comes from: node id, file, line, trial."""
        trials = self.trials if self.trial is not None else None
        return {"nodeid": self.nodeid, "file": self.file, "line": self.line,
                "trial": self.trial, "trials": trials}

    @functools.cached_property
    def location(self) -> tuple[str, int | None, str]:
        """pytest's ``(relfspath, lineno, testname)``, the relative path found once per
        file and not once per item (an absolute path and its lookup, for each of 10,000)."""
        if not isinstance(self.parent, CaseFile):
            return pytest.Item.location.func(self)  # type: ignore[attr-defined,no-any-return]
        _, line, name = self.reportinfo()
        return self.parent.relfspath, line, name

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = None if self.line is None else self.line - 1
        title = self.plan.meta.get("title") or ""
        if title:  # pytest shows it as the head of the failure: masked, no control character
            from .report.text import safe

            title = safe(get_project(self.config).masker.text(title))
        return self.path, line, f"{self.plan.kind} {self.name}" + (f": {title}" if title else "")


#: pytest's plugins whose part in an item's setup, call and teardown a case item goes without
_UNCAPTURED = ("capturemanager", "logging-plugin")
_PHASES = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
_PHASE_HOOKS = pytest.StashKey[dict[Path, "_PhaseHooks"]]()


class _PhaseHooks:
    """A case item's hooks: pytest's for its file, except that its setup, call and teardown
    run without pytest's output capture and log capture.

    Around each of the three phases of every item those two swap the process's output
    files and logging handlers in and out, and read what was written in between: about a
    millisecond of CPU per item on a 2-core machine, a fifth of what a case costs, where
    the process is CPU-bound (each swap was a system call that handed the interpreter to
    the engine's thread and back). A case item's phases hold none of its work, which is a
    conversation on the engine's loop, running ahead while earlier items wait for theirs:
    what they would capture belongs to no item (and was never captured at other times). So
    what the engine, an adapter or a conftest hook prints or logs goes where the process's
    output and logs go between items; pytest's ``log_cli`` and ``log_file`` still get every
    record. Every other plugin's phase hooks run as for any item (skip and xfail marks,
    unraisable exceptions, the setup state), and so does everything else of pytest's
    protocol (reports, warnings, ``--pdb``).
    """

    def __init__(self, item: pytest.Item) -> None:
        self._hooks = item.session.gethookproxy(item.path)
        pm = item.config.pluginmanager
        without = {pm.getplugin(name) for name in _UNCAPTURED} - {None}
        for name in _PHASES:
            kept = {impl.plugin for impl in getattr(self._hooks, name).get_hookimpls()}
            # the plugins the file's own hooks leave out (conftests of other folders), too
            drop = [impl.plugin for impl in getattr(pm.hook, name).get_hookimpls()
                    if impl.plugin not in kept or impl.plugin in without]
            setattr(self, name, pm.subset_hook_caller(name, drop))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._hooks, name)


def _phase_hooks(item: pytest.Item) -> _PhaseHooks:
    hooks = item.session.stash.setdefault(_PHASE_HOOKS, {})
    found = hooks.get(item.path)
    if found is None:
        found = hooks[item.path] = _PhaseHooks(item)
    return found


class LedgerFile(pytest.File):
    """``rules/business-rules.yaml``: every example of every rule is an item.

    A rule that misjudges one of its own examples fails here, before it can
    misjudge a run (``pytest rules/``).
    """

    def collect(self) -> Iterator[pytest.Item]:
        try:
            ledger = get_project(self.config).ledger
        except (SourceError, MultiSourceError) as exc:
            yield LoadErrorItem.from_parent(self, name=LOAD_ITEM, message=_located(exc))
            return
        for rule in ledger.rules:
            for kind, examples in (("pass", rule.spec.examples.pass_),
                                   ("fail", rule.spec.examples.fail)):
                for n, example in enumerate(examples, start=1):
                    yield ExampleItem.from_parent(self, name=f"{rule.spec.id}[{kind}-{n}]",
                                                  rule=rule, kind=kind, example=example)


class ExampleItem(_VerdictItem):
    """One ledger example: the rule must pass it (``pass``) or fail it (``fail``).

    A rule type that raises on its own example fails here with the traceback.
    """

    def __init__(self, *, rule: LedgerRule, kind: str, example: Example, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rule = rule
        self.kind = kind
        self.example = example
        self.add_marker(rule.spec.priority)
        if example.boundary:
            self.extra_keyword_matches.add("boundary")

    def runtest(self) -> None:
        from .ledger import example_view

        bound = self.rule.bind(self.example.assertions)
        view = example_view(self.example)
        if self.kind == "fail" and bound.when and bound.trigger(view) is None:
            names = ", ".join(s.type.name for s in bound.when)
            raise CaseVerdict("failed", self._explain(
                bound.rule_type.name, "not applicable",
                f"the situation ({names}) does not arise in this example, so the rule would "
                "never see it in a run; add the context that raises it, or set the "
                "rule's assertion switch in the example's assertions", ""))
        project = get_project(self.config)
        if bound.rule_type.is_async and project.judge_config is not None:
            row = asyncio.run(_with_judge(project, bound, view))
        else:
            row = bound.evaluate(view)
        if row.status == "not_applicable" and row.reason.startswith("not evaluated"):
            pytest.skip(f"{self.rule.spec.id}: {row.reason}")  # a judge-based rule, no judge
        wrong = row.status == "failed" if self.kind == "pass" else row.status != "failed"
        if wrong:
            raise CaseVerdict("failed", self._explain(row.type, row.status, row.reason,
                                                      row.evidence))

    def _explain(self, rtype: str, status: str, reason: str, evidence: str) -> str:
        ex = self.example
        edge = f" (boundary: {ex.note})" if ex.boundary else (f" ({ex.note})" if ex.note else "")
        return "\n".join([
            f"{self.rule.spec.id} ({rtype}) misjudges its {self.kind} example{edge}",
            f"  user:  {ex.input}",
            f"  reply: {ex.reply}",
            f"  rule said {status}: {reason}",
            *([f"  evidence: {evidence}"] if evidence else []),
        ])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.rule.location.line
        return self.path, None if line is None else line - 1, f"ledger example {self.name}"


async def _with_judge(project: Project, bound: Any, view: Any) -> Any:
    """A ledger example of a judge-based rule type, judged by the configured judge."""
    import dataclasses

    from .judge import Judge

    cfg = project.judge_config
    assert cfg is not None
    judge = Judge.from_config(cfg, project.rubric, project.taxonomy, project.rootdir)
    try:
        return bound.row(await bound.rule_type.aevaluate(
            bound.params, dataclasses.replace(view, judge=judge)), view)
    finally:
        await judge.aclose()


class Collection:
    """Collection hooks, registered where items are collected (single process, workers)."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.broken: list[LoadErrorItem] = []

    @pytest.hookimpl(wrapper=True)
    def pytest_collection(self, session: pytest.Session) -> Generator[None, object, object]:
        """The cyclic collector paused while the session collects: 10,000 cases make
        millions of long-lived objects (models, plans, items), and the collector's passes
        over them as they grow took a third of collecting; what collection leaves is frozen
        once it is done (``runner._freeze_once``)."""
        from ._gc import paused

        with paused():
            return (yield)

    def pytest_collect_file(self, file_path: Path,
                            parent: pytest.Collector) -> pytest.Collector | None:
        if self.project.is_ledger_file(file_path):
            return LedgerFile.from_parent(parent, path=file_path)
        if self.project.is_case_path(file_path):
            return CaseFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> Generator[None]:
        """A file that could not be loaded stays selected whatever ``-k``/``-m`` say: it may
        hold exactly the items they would select, and the run must say it is incomplete."""
        broken = [(i, item) for i, item in enumerate(items) if isinstance(item, LoadErrorItem)]
        self.broken = [item for _, item in broken]
        yield
        kept = set(map(id, items))
        for i, item in broken:
            if id(item) not in kept:
                items.insert(min(i, len(items)), item)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.broken and session.config.option.collectonly and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # --collect-only checks files too

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Under ``--collect-only`` nothing runs: say here which files could not be loaded."""
        if not self.broken or not terminalreporter.config.option.collectonly:
            return
        terminalreporter.write_sep("=", "agenteval: case files that could not be loaded",
                                   red=True)
        for item in self.broken:
            terminalreporter.write_line(item.message)
