"""Running every check on a set of case files: the report ``agenteval lint`` prints and
``--agenteval-lint`` gates a run on."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import MultiSourceError
from ..yamlio import SourceError, load_yaml, locate
from ._coverage import matrix
from ._registry import CHECKS, Dataset, Finding, ItemView, LintFile, ManifestRef

if TYPE_CHECKING:
    from ..project import Project

__all__ = ["LintReport", "find_manifest", "lint_files"]


@dataclass
class LintReport:
    """What lint found: errors and warnings (one line each), the coverage matrix, notes."""

    items: int = 0
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    matrix: str = ""
    notes: list[str] = field(default_factory=list)

    def exit_status(self, strict: bool = False) -> int:
        """1 on any error (or, with ``strict``, any warning), else 0."""
        return 1 if self.errors or (strict and self.warnings) else 0

    def summary(self) -> str:
        return f"{self.items} items, {len(self.errors)} errors, {len(self.warnings)} warnings"


def find_manifest(project: Project, folders: Iterable[Path] = ()) -> ManifestRef | None:
    """The manifest of the first of ``folders`` (then of the project's case roots) that has
    a ``dataset.yaml``. Raises ``ConfigError`` for a broken one."""
    from ..model.dataset import MANIFEST_NAME
    from ..project import load_manifest

    for folder in [*folders, *project.case_roots]:
        path = folder / MANIFEST_NAME
        if path.is_file():
            model = load_manifest(path, project.rootdir)
            return ManifestRef(model, path, load_yaml(path, locate(path, project.rootdir)))
    return None


def _load(project: Project, paths: Sequence[Path],
          report: LintReport) -> list[tuple[LintFile | None, list[SourceError]]]:
    """Each file loaded (or its located errors), ids claimed across the files."""
    from ..project import IdRegistry

    ids = IdRegistry()  # lint's own: a run's collection has claimed the project's already
    out: list[tuple[LintFile | None, list[SourceError]]] = []
    for path in paths:
        try:
            loaded = project.load_case_items(path)
        except SourceError as exc:
            out.append((None, [exc]))
            continue
        except MultiSourceError as exc:
            out.append((None, exc.errors))
            continue
        clashes = ids.claim([(i.plan.id, i.location) for i in loaded.items])
        report.items += len(loaded.items) - len(clashes)
        text = path.read_text(encoding="utf-8-sig")
        out.append((LintFile(path, loaded, text, project), clashes))
    return out


def _members(manifest: ManifestRef | None, files: list[LintFile]
             ) -> tuple[frozenset[Path], str | None]:
    if manifest is None:
        return frozenset(), None
    members = frozenset(p.resolve() for p in manifest.model.case_files(manifest.path.parent))
    linted = {f.path.resolve() for f in files}
    missing = len(members - linted)
    if missing:
        return members, (f"the declared mix is not compared: {missing} of the "
                         f"{len(members)} files of {manifest.doc.file} are not linted "
                         "(lint the whole dataset)")
    return members, None


def _file_findings(f: LintFile) -> list[Finding]:
    found = CHECKS.run("file", f)
    for item in f.loaded.items:
        found += CHECKS.run("item", ItemView(f, item))
    return found


def _in_order(entries: list[Finding | SourceError], paths: Sequence[Path],
              project: Project) -> list[Finding | SourceError]:
    """By file (in the order linted, the manifest last), then by line."""
    rank = {locate(p, project.rootdir): n for n, p in enumerate(paths)}
    return sorted(entries, key=lambda e: (rank.get(e.location.file, len(rank)),
                                          e.location.line or 0))


def lint_files(project: Project, paths: Sequence[Path],
               manifest: ManifestRef | None = None) -> LintReport:
    """Load ``paths`` as case files and run every registered check on them."""
    report = LintReport()
    entries: list[Finding | SourceError] = []
    files: list[LintFile] = []
    for f, errors in _load(project, paths, report):
        entries += errors
        if f is not None:
            files.append(f)
            entries += _file_findings(f)
    members, partial = _members(manifest, files)
    dataset = Dataset(project, files, manifest, partial, members)
    entries += CHECKS.run("dataset", dataset)
    for entry in _in_order(entries, paths, project):
        is_warning = isinstance(entry, Finding) and entry.severity == "warning"
        (report.warnings if is_warning else report.errors).append(str(entry))
    report.matrix = matrix([item for _, item in dataset.items()])
    report.notes = [partial] if partial else []
    return report
