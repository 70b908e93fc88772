"""The project: what a run knows before any agent call.

Configuration, rule ledger, taxonomy, release gate, masker and the id
registry. Shared by the collectors, ``pytest rules/``, the runner, the
recorder and ``agenteval lint``; nothing in it depends on the process's role.
The files under ``rules/`` are read once, when first needed, and a broken one
raises its located error every time it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .config import LoadedConfig, load_config
from .ledger import LEDGER_NAME
from .model.dataset import MANIFEST_NAME
from .privacy import Masker
from .yamlio import Location, SourceError, locate

if TYPE_CHECKING:
    import pytest

    from ._plans import SharedPlans
    from .casefile import LoadedFile
    from .judge.rubric import Rubric
    from .ledger import Ledger
    from .model.config import JudgeConfig
    from .model.dataset import DatasetManifest
    from .model.gates import GatesFile
    from .plan import ItemPlan
    from .taxonomy import Taxonomy

__all__ = ["LOAD_ITEM", "IdRegistry", "Project", "load_manifest"]

T = TypeVar("T")

#: The name of the item that stands for a case file that could not be loaded.
LOAD_ITEM = "[load]"
#: the judge's rubric under the rules folder (unless ``judge.rubric`` names another)
RUBRIC_NAME = "judge-rubric.yaml"


class IdRegistry:
    """Item ids must be unique in the run; the registry names both places of a duplicate."""

    def __init__(self) -> None:
        self._ids: dict[str, Location] = {}

    def claim(self, entries: Iterable[tuple[str, Location]]) -> list[SourceError]:
        """Register the ids of one file; an id seen before (here or elsewhere) is an error."""
        errors = []
        local: dict[str, Location] = {}
        for item_id, loc in entries:
            first = local.get(item_id) or self._ids.get(item_id)
            if first is not None:
                errors.append(SourceError(loc, f"duplicate id {item_id!r}: already used at "
                                          f"{first}; ids must be unique in the run", "id"))
            else:
                local[item_id] = loc
        if not errors:
            self._ids.update(local)
        return errors


class Project:
    """One evaluation project: ``agenteval.yaml``, ``rules/`` and where the case files are."""

    def __init__(self, rootdir: Path, loaded: LoadedConfig, case_roots: Sequence[Path] = (),
                 explicit: Iterable[Path] = (), repeat: int = 1) -> None:
        self.rootdir = rootdir
        self.config = loaded
        privacy = loaded.model.privacy
        self.masker = Masker(privacy.mask, privacy.allow, loaded.secrets)
        self.rules_dir = self._under_root(loaded.model.paths.rules_dir)
        self.case_roots = resolved_case_roots(rootdir, case_roots)
        self.explicit = frozenset(p.resolve() for p in explicit)
        self.repeat = repeat
        self.ids = IdRegistry()
        #: an xdist worker's compiled case files shared with the other workers (see _plans)
        self.shared_plans: SharedPlans | None = None
        self._loaded: dict[str, Any] = {}
        self._case_files: dict[str, bool] = {}

    @classmethod
    def from_pytest(cls, config: pytest.Config) -> Project:
        """The project of a pytest run; raises ``ConfigError`` naming file, line and field."""
        from .config import ConfigError

        rootdir = Path(config.rootpath)
        loaded = load_config(rootdir, config.getoption("agenteval_config"),
                             config.getoption("agenteval_target"))
        repeat = int(config.getoption("agenteval_repeat") or 1)
        if repeat < 1:
            raise ConfigError(f"--agenteval-repeat {repeat}: give a number of trials ≥ 1")
        roots = [Path(p) for p in config.getini("agenteval_paths")]
        return cls(rootdir, loaded, roots, _explicit_files(config), repeat)

    def _under_root(self, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else self.rootdir / p

    @property
    def reports_dir(self) -> Path:
        return self._under_root(self.config.model.paths.reports_dir)

    # -- the files under rules/ ------------------------------------------------------------

    def _once(self, key: str, load: Callable[[], T]) -> T:
        """``load()`` the first time; its value, or its error again, every later time."""
        if key not in self._loaded:
            try:
                self._loaded[key] = (True, load())
            except Exception as exc:
                self._loaded[key] = (False, exc)
        ok, value = self._loaded[key]
        if not ok:
            raise value
        result: T = value
        return result

    @property
    def ledger(self) -> Ledger:
        from .ledger import load_ledger

        return self._once("ledger", lambda: load_ledger(self.rules_dir / LEDGER_NAME,
                                                        self.rootdir, self.labels()))

    @property
    def taxonomy(self) -> Taxonomy:
        from .taxonomy import load_taxonomy

        return self._once("taxonomy", lambda: load_taxonomy(self.rules_dir / "taxonomy.yaml",
                                                            self.rootdir))

    @property
    def gates(self) -> tuple[GatesFile | None, str | None]:
        """The release gate and its file, red lines and labels checked against the rules."""
        from .metrics.gates import load_gates
        from .model import MultiSourceError

        def load() -> tuple[GatesFile | None, str | None]:
            try:
                ids, labels = self.ledger.ids(), list(self.taxonomy.labels)
            except (SourceError, MultiSourceError):
                ids, labels = [], []  # reported where the cases are collected, with their lines
            return load_gates(self.rules_dir / "gates.yaml", self.rootdir, ids, labels)

        return self._once("gates", load)

    @property
    def judge_config(self) -> JudgeConfig | None:
        """The judge's settings, ``None`` when no judge is configured (no ``judge.model``)."""
        judge = self.config.model.judge
        return judge if judge is not None and judge.configured else None

    @property
    def simulator_config(self) -> JudgeConfig | None:
        """The simulated user's settings (the judge's where ``simulator:`` says nothing);
        ``None`` when neither names a model."""
        return self.config.model.simulator.resolved(self.config.model.judge)

    @property
    def rubric(self) -> Rubric:
        """The judge's rubric (``judge.rubric`` under the rules folder, else the default)."""
        from .judge.rubric import load_rubric

        cfg = self.config.model.judge
        name = cfg.rubric if cfg is not None else RUBRIC_NAME

        def load() -> Rubric:
            path = self._under(self.rules_dir, name)
            if name != RUBRIC_NAME and not path.is_file():  # a named rubric must exist
                raise SourceError(self.config.at("judge", "rubric"), f"no rubric at "
                                  f"{locate(path, self.rootdir)}; fix the path, or remove "
                                  "judge.rubric to use rules/judge-rubric.yaml", "judge.rubric")
            return load_rubric(path, self.rootdir)

        return self._once("rubric", load)

    @staticmethod
    def _under(base: Path, path: str) -> Path:
        p = Path(path)
        return p if p.is_absolute() else base / p

    @property
    def manifest(self) -> tuple[DatasetManifest | None, str | None]:
        """The dataset's manifest (``dataset.yaml`` in the first case root that has one) and
        its file; ``(None, None)`` without one. A broken one raises ``ConfigError``."""

        def load() -> tuple[DatasetManifest | None, str | None]:
            for root in self.case_roots:
                path = root / MANIFEST_NAME
                if path.is_file():
                    return load_manifest(path, self.rootdir), locate(path, self.rootdir)
            return None, None

        return self._once("manifest", load)

    def rule_titles(self) -> dict[str, str]:
        """Each ledger rule's title by its id (none when the ledger cannot be loaded)."""
        try:
            return {r.spec.id: r.spec.title for r in self.ledger.rules}
        except Exception:  # a broken ledger is reported where it is loaded
            return {}

    def labels(self) -> list[str] | None:
        """The taxonomy's labels, or ``None`` when there is none (or it is broken)."""
        from .model import MultiSourceError

        try:
            return list(self.taxonomy.labels) or None
        except (SourceError, MultiSourceError):
            return None  # already reported as a located error where the cases are collected

    # -- which files are case files --------------------------------------------------------

    def is_ledger_file(self, path: Path) -> bool:
        return Path(path).resolve() == (self.rules_dir / LEDGER_NAME).resolve()

    def is_case_path(self, path: Path) -> bool:
        """The collector's rule: a YAML file under ``agenteval_paths`` or named on the command
        line, never one under the rules folder."""
        if path.suffix not in (".yaml", ".yml"):
            return False
        resolved = path.resolve()
        if resolved.is_relative_to(self.rules_dir.resolve()):
            return False  # ledger, taxonomy, gates, rubric: never case files
        if path.name == MANIFEST_NAME and resolved.parent in self.case_roots:
            return False  # the dataset's manifest
        return resolved in self.explicit or any(resolved.is_relative_to(r)
                                                for r in self.case_roots)

    def is_case_nodeid(self, nodeid: str) -> bool:
        """Whether ``nodeid`` is a case or scenario item (by the collector's own rule)."""
        file, _, name = nodeid.partition("::")
        if not name or name == LOAD_ITEM or "::" in name:
            return False
        known = self._case_files.get(file)
        if known is None:
            known = self._case_files[file] = self.is_case_path(self.rootdir / file)
        return known

    # -- loading case files ----------------------------------------------------------------

    def load_case_file(self, path: Path) -> list[tuple[ItemPlan, Location]]:
        """Every item of a case file with its location, against the ledger and the taxonomy.

        Raises:
            SourceError, MultiSourceError: every defect of the file, located.
        """
        from .casefile import load_case_file

        taxonomy = self.taxonomy  # a broken taxonomy or ledger is this file's error too
        labels = taxonomy.labels if taxonomy.source is not None else None
        name = locate(path, self.rootdir)
        if self.shared_plans is not None:  # the ledger is compiled only to compile a file:
            # a worker that loads every file another compiled (against the same ledger
            # bytes, which are in the key) never compiles it
            return self.shared_plans.get(
                path, name, lambda: load_case_file(path, name, self.ledger, labels))
        return load_case_file(path, name, self.ledger, labels)

    def share_plans(self, folder: Path) -> None:
        """Share compiled case files with the run's other xdist workers through ``folder``
        (the controller's link folder), keyed on what compiling depends on."""
        from . import __version__
        from ._plans import SharedPlans, context
        from .report.record import file_sha256

        key = context(__version__, str(self.rootdir), file_sha256(self.rules_dir / LEDGER_NAME),
                      file_sha256(self.rules_dir / "taxonomy.yaml"))
        try:
            self.shared_plans = SharedPlans(folder, key)
        except OSError:
            self.shared_plans = None

    def load_case_items(self, path: Path) -> LoadedFile:
        """As :meth:`load_case_file`, with the document and each item's model kept."""
        from .casefile import load_case_items

        taxonomy = self.taxonomy
        labels = taxonomy.labels if taxonomy.source is not None else None
        return load_case_items(path, locate(path, self.rootdir), self.ledger, labels)


def load_manifest(path: Path, rootdir: Path | None = None) -> DatasetManifest:
    """Load a ``dataset.yaml``; raise ``ConfigError`` naming file, line and field."""
    from .config import ConfigError
    from .model import MultiSourceError, validate_at
    from .model.dataset import DatasetManifest
    from .yamlio import load_yaml

    try:
        doc = load_yaml(path, locate(path, rootdir) if rootdir else str(path))
        return validate_at(DatasetManifest, doc.data or {}, doc)
    except (SourceError, MultiSourceError) as exc:
        raise ConfigError(str(exc)) from None


def resolved_case_roots(rootdir: Path, configured: Sequence[Path]) -> tuple[Path, ...]:
    """The case folders: ``agenteval_paths``, else ``cases`` in the rootdir, resolved."""
    return tuple(p.resolve() for p in (configured or [rootdir / "cases"]))


def _explicit_files(config: pytest.Config) -> list[Path]:
    """The files named on the command line (``pytest cases/a.yaml::ID`` names cases/a.yaml)."""
    base = Path(config.invocation_params.dir)
    out = []
    for arg in config.args:
        path = base / str(arg).split("::", 1)[0]
        if path.suffix in (".yaml", ".yml"):
            out.append(path)
    return out

