"""Installed in a project that does not use it, the plugin does nothing at all."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PLAIN = """\
import time

import pytest


@pytest.mark.parametrize("i", range(8))
def test_x(i):
    if i % 2 == 0:
        time.sleep(0.05)
"""

REPORT_PLUGINS = """\
import sys


def pytest_sessionfinish(session):
    ours = sorted(m for m in sys.modules if m.startswith(("pytest_agenteval", "pydantic")))
    print("AGENTEVAL-MODULES", ours)
    pm = session.config.pluginmanager
    names = [n for n in ("agenteval-runner", "agenteval-recorder", "agenteval-collection",
                         "agenteval-dispatch") if pm.get_plugin(n) is not None]
    markers = [m for m in session.config.getini("markers") if m.startswith(("P0", "behavior"))]
    print("AGENTEVAL-OBJECTS", names, markers)
"""


@pytest.fixture
def plain(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")
    pytester.makepyfile(test_plain=PLAIN)
    pytester.makeconftest(REPORT_PLUGINS)
    cases = pytester.mkdir("cases")  # a YAML folder of another tool's: not ours
    cases.joinpath("compose.yaml").write_text("services: {web: {image: nginx}}\n")
    return pytester


@pytest.mark.parametrize("flag", [[], ["-p", "no:agenteval"]])
def test_a_plain_project_keeps_xdists_own_scheduler_and_no_object_of_ours(plain, flag) -> None:
    result = plain.runpytest_subprocess("-n", "2", "-v", "-s", *flag)
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["scheduling tests via LoadScheduling"])


def test_a_plain_project_registers_nothing_and_collects_no_yaml(plain) -> None:
    result = plain.runpytest_subprocess("-s", "cases", "test_plain.py")
    result.assert_outcomes(passed=8)
    assert "AGENTEVAL-OBJECTS [] []" in result.stdout.str()
    # configured and run, the plugin loaded nothing beyond its entry point and hook specs
    assert ("AGENTEVAL-MODULES ['pytest_agenteval', 'pytest_agenteval.hookspecs', "
            "'pytest_agenteval.plugin']") in result.stdout.str()
    assert not (plain.path / "reports").exists()


def test_a_collection_import_error_still_interrupts_a_plain_project(plain) -> None:
    plain.makepyfile(test_broken="import no_such_module_anywhere\n")
    result = plain.runpytest()
    result.stdout.fnmatch_lines(["*Interrupted: 1 error during collection*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_an_option_of_ours_in_a_plain_project_is_a_usage_error(plain) -> None:
    result = plain.runpytest("--agenteval-repeat", "3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agenteval-repeat given, but this project does not use "
                                 "pytest-agenteval*"])


def test_an_active_project_registers_its_objects(plain) -> None:
    plain.path.joinpath("agenteval.yaml").write_text("target: {adapter: builtin}\n")
    plain.makeini("[pytest]\naddopts = -p no:benchmark\nagenteval_paths = specs\n")
    result = plain.runpytest("-s", "test_plain.py")
    line = next(x for x in result.outlines if "AGENTEVAL-OBJECTS" in x)
    assert "['agenteval-runner', 'agenteval-recorder', 'agenteval-collection']" in line
    assert "'P0: priority 0" in line and "'behavior(label)" in line


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    # pytest imports the entry point in every run of every project: it must cost nothing
    before = _modules_after("import pytest")
    after = _modules_after("import pytest, pytest_agenteval.plugin")
    added = after - before
    assert added <= {"pytest_agenteval", "pytest_agenteval.plugin"}, sorted(added)


RECORD_MODULES = """\
import json
import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    heavy = [m for m in ("sklearn", "numpy", "openai", "jsonschema") if m in sys.modules]
    (session.config.rootpath / "modules.json").write_text(json.dumps(heavy))
"""


def test_a_run_without_intent_expectations_loads_no_heavy_library(standalone, pytester,
                                                                  agent) -> None:
    standalone(f"target: {{adapter: http, url: '{agent.url}'}}\n",
               {"a.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"
                          "scenarios:\n  - {id: S, turns: [{input: 一}, {input: 二}]}\n"})
    pytester.makeconftest(RECORD_MODULES)
    pytester.runpytest_subprocess("cases").assert_outcomes(passed=2)
    assert json.loads((pytester.path / "modules.json").read_text()) == []


FREEZE_PROBE = """\
import gc


def test_frozen():
    print("FROZEN", gc.get_freeze_count() > 0)
    print("ROOMIER", gc.get_threshold()[0] > 700)
"""


@pytest.mark.parametrize("with_cases", [True, False])
def test_collected_objects_leave_the_garbage_collector_only_in_a_run_with_cases(
        standalone, pytester, agent, with_cases) -> None:
    """A process that evaluates cases freezes what collection built (full collections then
    walk only what the run makes); a run of plain tests keeps Python's own collector as it
    is, and so does a run with cases and tests as far as its threshold goes (a run of
    cases alone collects its youngest generation less often: test_memory.py)."""
    standalone(f"target: {{adapter: http, url: '{agent.url}'}}\n",
               {"a.yaml": "cases:\n  - {id: A, request: {input: 你好}}\n"})
    pytester.makepyfile(test_probe=FREEZE_PROBE)
    args = ["cases", "test_probe.py"] if with_cases else ["test_probe.py"]
    result = pytester.runpytest_subprocess("-s", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(passed=2 if with_cases else 1)
    # the probe is a Python test: a run with one keeps Python's own threshold
    result.stdout.fnmatch_lines([f"*FROZEN {with_cases}*", "*ROOMIER False*"])
