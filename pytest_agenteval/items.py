"""Case files as pytest collectors, cases and scenarios as pytest items."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .casefile import load_case_file
from .model import MultiSourceError
from .plan import ItemPlan
from .yamlio import SourceError, locate

__all__ = ["CaseFile", "CaseItem", "CaseVerdict"]


class CaseVerdict(Exception):
    """Raised by :meth:`CaseItem.runtest` when the verdict is failed or error."""

    def __init__(self, status: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


class CaseFile(pytest.File):
    """A YAML file of cases and scenarios. Any defect is one collection error listing all."""

    def collect(self) -> Iterator[CaseItem]:
        from .session import get_session

        session = get_session(self.config)
        name = locate(self.path, self.config.rootpath)
        try:
            _ = session.taxonomy  # a broken taxonomy or ledger is a located collection error
            entries = load_case_file(Path(self.path), name, session.ledger)
        except SourceError as exc:
            raise self.CollectError(str(exc)) from None
        except MultiSourceError as exc:
            raise self.CollectError(_listing(exc.errors)) from None
        errors = session.claim_ids([(plan.id, loc) for plan, loc in entries])
        if errors:
            raise self.CollectError(_listing(errors))
        trials = session.repeat
        for plan, loc in entries:
            for trial in range(trials):
                item_name = plan.id if trials == 1 else f"{plan.id}[t{trial + 1}]"
                yield CaseItem.from_parent(self, name=item_name, plan=plan, line=loc.line,
                                           file=name, trial=trial if trials > 1 else None,
                                           trials=trials)



def _listing(errors: list[SourceError]) -> str:
    head = f"{len(errors)} error(s) in this file; none of its items ran:" if len(errors) > 1 else ""
    body = "\n".join(f"  {e}" if head else str(e) for e in errors)
    return f"{head}\n{body}" if head else body


class _VerdictItem(pytest.Item):
    """An item whose failure is a verdict with evidence, not a Python traceback."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, CaseVerdict):
            return excinfo.value.text
        return str(super().repr_failure(excinfo, style=style))


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
        self.result: dict[str, Any] | None = None
        meta = plan.meta
        self.add_marker(meta["priority"])
        for label in meta["behaviors"]:
            self.add_marker(pytest.mark.behavior(label=label))
        challenge = meta["challenge"] if meta["challenge"] != "none" else None
        keywords = [*meta["behaviors"], meta["test_family"], challenge, *meta["tags"]]
        self.extra_keyword_matches.update(k for k in keywords if k)

    def runtest(self) -> None:
        from .session import get_session

        self.result = get_session(self.config).run_item(self)
        status = self.result["status"]
        if status in ("failed", "error"):
            shown = self.result if self.trial is None else {
                **self.result, "id": f"{self.result['id']}[t{self.trial + 1}]"}
            raise CaseVerdict(status, get_session(self.config).explain(shown))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = None if self.line is None else self.line - 1
        title = self.plan.meta.get("title") or ""
        return self.path, line, f"{self.plan.kind} {self.name}" + (f": {title}" if title else "")


class LedgerFile(pytest.File):
    """``rules/business-rules.yaml``: every example of every rule is an item.

    A rule that misjudges one of its own examples fails here, before it can
    misjudge a run (``pytest rules/``).
    """

    def collect(self) -> Iterator[ExampleItem]:
        from .ledger import load_ledger
        from .model import MultiSourceError

        try:
            ledger = load_ledger(Path(self.path), self.config.rootpath)
        except SourceError as exc:
            raise self.CollectError(str(exc)) from None
        except MultiSourceError as exc:
            raise self.CollectError(_listing(exc.errors)) from None
        for rule in ledger.rules:
            for kind, examples in (("pass", rule.spec.examples.pass_),
                                   ("fail", rule.spec.examples.fail)):
                for n, example in enumerate(examples, start=1):
                    yield ExampleItem.from_parent(self, name=f"{rule.spec.id}[{kind}-{n}]",
                                                  rule=rule, kind=kind, example=example)


class ExampleItem(_VerdictItem):
    """One ledger example: the rule must pass it (``pass``) or fail it (``fail``)."""

    def __init__(self, *, rule: Any, kind: str, example: Any, **kwargs: Any) -> None:
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
        row = bound.run(example_view(self.example))
        wrong = row["status"] == "failed" if self.kind == "pass" else row["status"] != "failed"
        if wrong:
            raise CaseVerdict("failed", self._explain(row))

    def _explain(self, row: dict[str, Any]) -> str:
        ex = self.example
        edge = f" (boundary: {ex.note})" if ex.boundary else (f" ({ex.note})" if ex.note else "")
        return "\n".join([
            f"{self.rule.spec.id} ({row['type']}) misjudges its {self.kind} example{edge}",
            f"  user:  {ex.input}",
            f"  reply: {ex.reply}",
            f"  rule said {row['status']}: {row['reason']}",
            *([f"  evidence: {row['evidence']}"] if row["evidence"] else []),
        ])

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.rule.location.line
        return self.path, None if line is None else line - 1, f"ledger example {self.name}"
