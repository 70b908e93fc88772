from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy  # noqa: F401  (see below)
import pytest
import sklearn.metrics  # noqa: F401

from agents import FakeAgent

# In-process pytester runs drop the modules they imported when they end; numpy's C
# core cannot be loaded twice in one process, so the metrics' numpy and scikit-learn
# are imported here, before any run, and stay.

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture
def agent() -> Iterator[FakeAgent]:
    with FakeAgent() as a:
        yield a


@pytest.fixture
def standalone(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Lay out an evaluation project with its own ``agenteval.yaml``; returns its root.

    ``standalone("target: {adapter: builtin}\n", {"a.yaml": "cases: ..."})``
    """

    def make(config: str, cases: dict[str, str], ini: str = "") -> Path:
        # pytest-benchmark (if installed) warns under xdist; the warning would be an error here
        pytester.makeini(f"[pytest]\nagenteval_paths = cases\n"
                         f"addopts = -p no:benchmark --agenteval-workers=asked\n{ini}")
        pytester.path.joinpath("agenteval.yaml").write_text(config, encoding="utf-8")
        for name, text in cases.items():
            path = pytester.path / "cases" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        return pytester.path

    return make


@pytest.fixture
def project(standalone: Callable[..., Path], pytester: pytest.Pytester,
            agent: FakeAgent) -> Callable[..., Path]:
    """Lay out an evaluation project pointing at the fake agent; returns its root.

    ``project(cases={"a.yaml": "..."}, target="  retries: 2\n")`` — ``target`` is
    extra YAML appended under ``target:`` (indented by the caller).
    """

    def make(cases: dict[str, str], target: str = "", ini: str = "",
             taxonomy: bool = False) -> Path:
        standalone(f"target:\n  adapter: http\n  url: {agent.url}\n  timeout_s: 1.5\n{target}",
                   cases, ini)
        if taxonomy:
            rules = pytester.path / "rules"
            rules.mkdir(exist_ok=True)
            rules.joinpath("taxonomy.yaml").write_text(
                (PROJECT / "rules" / "taxonomy.yaml").read_text(encoding="utf-8"),
                encoding="utf-8")
        return pytester.path

    return make


@pytest.fixture(autouse=True)
def _registry_restored() -> Iterator[None]:
    """In-process pytester runs import their conftest.py here: undo what it registers
    (rule types, adapter kinds, metric families)."""
    from pytest_agenteval.adapters import ADAPTERS
    from pytest_agenteval.metrics._family import FAMILIES, load_families
    from pytest_agenteval.rules import REGISTRY, SITUATIONS

    REGISTRY.names()  # built-ins loaded before the snapshot
    SITUATIONS.names()
    ADAPTERS.names()
    load_families()
    kept = (REGISTRY._types, SITUATIONS._types, ADAPTERS._kinds, FAMILIES)
    saved = tuple(dict(k) for k in kept)
    yield
    for registry, before in zip(kept, saved, strict=True):
        registry.clear()
        registry.update(before)


# -- screenshots of the browser tests (tests/browser.py), named at the end of the run --------

_SCREENSHOTS: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _SCREENSHOTS.extend(str(v) for k, v in report.user_properties if k == "screenshot")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _SCREENSHOTS:
        terminalreporter.write_sep("-", "screenshots")
        for path in _SCREENSHOTS:
            terminalreporter.write_line(path)


@dataclass(frozen=True)
class ShippedRun:
    """One run of the shipped example suite (the README's main job) with every artefact."""

    root: Path
    run_dir: Path
    stdout: str

    def artefacts(self) -> list[Path]:
        return [*sorted(self.run_dir.iterdir()), self.root / "run.html", self.root / "junit.xml"]


@pytest.fixture(scope="session")
def shipped_run(tmp_path_factory: pytest.TempPathFactory) -> ShippedRun:
    """``pytest cases/ -n 2 --html … --junitxml …`` on a copy of the shipped suite, once."""
    root = tmp_path_factory.mktemp("shipped")
    for name in ("cases", "rules"):
        shutil.copytree(PROJECT / name, root / name)
    shutil.copy(PROJECT / "agenteval.yaml", root / "agenteval.yaml")
    (root / "pytest.ini").write_text("[pytest]\nagenteval_paths = cases\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "cases", "-n", "2", "--agenteval-workers=asked",
         "-p", "no:benchmark",
         "--html=run.html", "--self-contained-html", "--junitxml=junit.xml"],
        cwd=root, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = next((root / "reports").glob("2*"))
    return ShippedRun(root, run_dir, done.stdout + done.stderr)
