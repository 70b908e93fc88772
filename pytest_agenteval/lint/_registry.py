"""Findings, what a check sees, and the registry of checks.

A check is a small function registered with :func:`check` for one scope:

* ``item`` — one case or scenario (:class:`ItemView`), e.g. its knowledge points;
* ``file`` — one case file (:class:`LintFile`), e.g. its text for personal data;
* ``dataset`` — every file linted together (:class:`Dataset`), e.g. pairs and the mix.

It returns (or yields) :class:`Finding` objects: file, line, field, message, fix and
whether it is an ``error`` (fails lint) or a ``warning`` (listed apart).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from ..model import field_name
from ..model.cases import Case, Expected
from ..yamlio import Location

if TYPE_CHECKING:
    from ..casefile import LoadedFile, LoadedItem
    from ..model.dataset import DatasetManifest
    from ..plan import TurnPlan
    from ..project import Project
    from ..yamlio import YamlDoc

__all__ = ["CHECKS", "Dataset", "Finding", "ItemView", "LintFile", "ManifestRef", "Scope",
           "Severity", "TurnRef", "check"]

Severity = Literal["error", "warning"]
Scope = Literal["item", "file", "dataset"]
_Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    """One defect: where (file, line, field), what, how to fix it, and how bad."""

    location: Location
    field: str
    message: str
    fix: str = ""
    severity: Severity = "error"
    check: str = ""

    def __str__(self) -> str:
        where = f"{self.location}" + (f" [{self.field}]" if self.field else "")
        text = f"{where}: {self.message}" + (f"; {self.fix}" if self.fix else "")
        return f"warning: {text}" if self.severity == "warning" else text


@dataclass(frozen=True)
class LintFile:
    """A case file that loaded: its path, its document and items, its text, its project."""

    path: Path
    loaded: LoadedFile
    text: str
    project: Project

    @property
    def doc(self) -> YamlDoc:
        return self.loaded.doc

    def finding(self, path: _Path, message: str, fix: str = "",
                severity: Severity = "error") -> Finding:
        """A finding at ``path`` of this file (its line and its field name)."""
        return Finding(self.doc.at(path), field_name(path), message, fix, severity)


@dataclass(frozen=True)
class TurnRef:
    """One expectation of an item: its path in the item, its compiled turn."""

    path: _Path
    turn: TurnPlan

    @property
    def expected(self) -> Expected:
        return self.turn.expected


@dataclass(frozen=True)
class ItemView:
    """One case or scenario, as an item check sees it."""

    file: LintFile
    item: LoadedItem

    @property
    def project(self) -> Project:
        return self.file.project

    def path(self, *parts: str | int) -> _Path:
        """The path of ``parts`` in the file (``cases[3].expected…``)."""
        return (*self.item.where, *parts)

    def finding(self, parts: _Path, message: str, fix: str = "",
                severity: Severity = "error") -> Finding:
        return self.file.finding(self.path(*parts), message, fix, severity)

    def turns(self) -> list[TurnRef]:
        """Every expectation: a case's own, each scripted turn's, a simulated scenario's."""
        model, plan = self.item.model, self.item.plan
        if isinstance(model, Case):
            return [TurnRef((), plan.turns[0])]
        if model.simulate is not None:
            return [TurnRef(("simulate",), plan.turns[0])]
        return [TurnRef(("turns", i), t) for i, t in enumerate(plan.turns)]


@dataclass(frozen=True)
class ManifestRef:
    """The dataset's manifest, its file and document (for the lines of ``mix``)."""

    model: DatasetManifest
    path: Path
    doc: YamlDoc


@dataclass(frozen=True)
class Dataset:
    """Every file linted together, the project, and the manifest when there is one."""

    project: Project
    files: list[LintFile]
    manifest: ManifestRef | None = None
    #: why the declared mix is not compared (``None``: it is, or there is no manifest)
    partial: str | None = None
    #: the files of the manifest (resolved), when there is one
    members: frozenset[Path] = frozenset()

    def items(self) -> Iterator[tuple[LintFile, LoadedItem]]:
        for f in self.files:
            for item in f.loaded.items:
                yield f, item

    def dataset_items(self) -> list[LoadedItem]:
        """The items of the files that belong to the manifest's dataset."""
        return [item for f in self.files if f.path.resolve() in self.members
                for item in f.loaded.items]


Check = Callable[..., Iterable[Finding]]
C = TypeVar("C", bound=Check)


@dataclass
class _Checks:
    """The registered checks of each scope, by name, in registration order."""

    scopes: dict[Scope, dict[str, Check]] = field(
        default_factory=lambda: {"item": {}, "file": {}, "dataset": {}})

    def __call__(self, name: str, scope: Scope = "item") -> Callable[[C], C]:
        def register(fn: C) -> C:
            if any(name in checks for checks in self.scopes.values()):
                raise ValueError(f"a lint check named {name!r} is already registered")
            self.scopes[scope][name] = fn
            return fn

        return register

    def run(self, scope: Scope, subject: object) -> list[Finding]:
        """Every check of ``scope`` on ``subject``, each finding named by its check."""
        from dataclasses import replace

        return [replace(f, check=name) for name, fn in self.scopes[scope].items()
                for f in fn(subject)]


#: the registry; ``@check("name", scope)`` registers a check
CHECKS = _Checks()
check = CHECKS
