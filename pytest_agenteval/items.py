"""Case files as pytest collectors, cases and scenarios as pytest items."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .model import MultiSourceError, field_name, validate_at
from .model.cases import Case, CaseFileModel, Scenario
from .plan import ItemPlan, RuleBindError, compile_case, compile_scenario
from .yamlio import Location, SourceError, YamlDoc, load_yaml, locate

__all__ = ["CaseFile", "CaseItem", "CaseVerdict", "deep_merge"]

_SCENARIO_FIELDS = frozenset(Scenario.model_fields)


class CaseVerdict(Exception):
    """Raised by :meth:`CaseItem.runtest` when the verdict is failed or error."""

    def __init__(self, status: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.text = text


def deep_merge(base: Any, override: Any) -> Any:
    """``override`` on top of ``base``: mappings merge key by key, anything else replaces."""
    if isinstance(base, dict) and isinstance(override, dict):
        out = dict(base)
        for key, value in override.items():
            out[key] = deep_merge(base[key], value) if key in base else copy.deepcopy(value)
        return out
    return copy.deepcopy(override)


class CaseFile(pytest.File):
    """A YAML file of cases and scenarios. Any defect is one collection error listing all."""

    def collect(self) -> Iterator[CaseItem]:
        from .session import get_session

        session = get_session(self.config)
        name = locate(self.path, self.config.rootpath)
        try:
            entries = list(self._entries(load_yaml(Path(self.path), name)))
        except SourceError as exc:
            raise self.CollectError(str(exc)) from None
        except MultiSourceError as exc:
            raise self.CollectError(_listing(exc.errors)) from None
        errors = session.claim_ids([(plan.id, loc) for plan, loc in entries])
        if errors:
            raise self.CollectError(_listing(errors))
        for plan, loc in entries:
            yield CaseItem.from_parent(self, name=plan.id, plan=plan, line=loc.line)

    def _entries(self, doc: YamlDoc) -> Iterator[tuple[ItemPlan, Location]]:
        if doc.data is None:
            raise SourceError(doc.at(()), "empty file; add 'cases:' or 'scenarios:'")
        if not isinstance(doc.data, dict):
            raise SourceError(doc.at(()), "the top level must be a mapping with 'cases:' "
                              "and/or 'scenarios:'")
        top = validate_at(CaseFileModel, doc.data, doc)
        if not top.cases and not top.scenarios:
            raise SourceError(doc.at(()), "no 'cases:' or 'scenarios:' in this file")
        errors: list[SourceError] = []
        out: list[tuple[ItemPlan, Location]] = []
        scenario_defaults = {k: v for k, v in top.defaults.items() if k in _SCENARIO_FIELDS}
        for section, model, defaults in (("cases", Case, top.defaults),
                                         ("scenarios", Scenario, scenario_defaults)):
            for i, raw in enumerate(getattr(top, section)):
                try:
                    out.append(self._one(doc, (section, i), model, deep_merge(defaults, raw)))
                except MultiSourceError as exc:
                    errors += exc.errors
                except SourceError as exc:
                    errors.append(exc)
        if errors:
            raise MultiSourceError(errors)
        yield from out

    @staticmethod
    def _one(doc: YamlDoc, where: tuple[str, int], model: type[Case] | type[Scenario],
             data: dict[str, Any]) -> tuple[ItemPlan, Location]:
        item = validate_at(model, data, doc, where)
        try:
            plan = compile_case(item) if isinstance(item, Case) else compile_scenario(item)
        except RuleBindError as exc:
            raise MultiSourceError([
                SourceError(doc.at((*where, *path)), msg, field_name((*where, *path)))
                for path, msg in exc.problems]) from None
        return plan, doc.at(where)


def _listing(errors: list[SourceError]) -> str:
    head = f"{len(errors)} error(s) in this file; none of its items ran:" if len(errors) > 1 else ""
    body = "\n".join(f"  {e}" if head else str(e) for e in errors)
    return f"{head}\n{body}" if head else body


class CaseItem(pytest.Item):
    """One case or one scenario: one conversation with the agent."""

    def __init__(self, *, plan: ItemPlan, line: int | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.plan = plan
        self.line = line
        self.result: dict[str, Any] | None = None
        meta = plan.meta
        self.add_marker(meta["priority"])
        for label in meta["behaviors"]:
            self.add_marker(pytest.mark.behavior(label=label))
        keywords = [*meta["behaviors"], meta["test_family"], meta["challenge"], *meta["tags"]]
        self.extra_keyword_matches.update(k for k in keywords if k)

    def runtest(self) -> None:
        from .session import get_session

        self.result = get_session(self.config).run_item(self)
        status = self.result["status"]
        if status in ("failed", "error"):
            raise CaseVerdict(status, get_session(self.config).explain(self.result))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, CaseVerdict):
            return excinfo.value.text
        return str(super().repr_failure(excinfo, style=style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = None if self.line is None else self.line - 1
        title = self.plan.meta.get("title") or ""
        return self.path, line, f"{self.plan.kind} {self.name}" + (f": {title}" if title else "")
