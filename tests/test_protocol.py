"""pytest's protocol for a case item: its setup, call and teardown run without pytest's
output and log capture (``items._PhaseHooks``), and with every other plugin's phase hooks.
"""

from __future__ import annotations

import re

import pytest

CASES = """\
cases:
  - {id: C-OK, request: {input: 你好}, rules: [{type: keyword_match, params: {all: [你好]}}]}
  - {id: C-FAIL, request: {input: 你好}, rules: [{type: keyword_match, params: {all: [再见]}}]}
"""

LOUD = """\
import logging


def pytest_runtest_call(item):  # inside every wrapper of the call: capture's too
    print(f"PRINTED-IN-CALL {item.name}")
    logging.getLogger("loud").warning("LOGGED-IN-CALL %s", item.name)
"""

PLAIN = """\
def test_plain():
    assert False
"""


def _section(out: str, name: str) -> str:
    """The failure section of ``name`` in pytest's output (its header to the next one)."""
    found = re.search(rf"^_+ [^\n]*{re.escape(name)}[^\n]* _+$(.*?)(?=^_+ |^=+ )", out, re.M | re.S)
    assert found, f"no failure section for {name}:\n{out}"
    return found.group(1)


def test_a_case_items_phases_are_not_captured_and_a_python_tests_are(project,
                                                                     pytester) -> None:
    project({"a.yaml": CASES})
    pytester.makeconftest(LOUD)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_subprocess("cases", "test_plain.py", "-p", "no:cacheprovider",
                                           "-o", "log_file=run.log",
                                           "-o", "log_file_level=WARNING")
    result.assert_outcomes(passed=1, failed=2)
    out = result.stdout.str()
    # a Python test's output and logs are its own, and pytest shows them with its failure
    plain = _section(out, "test_plain")
    assert "Captured stdout call" in plain and "PRINTED-IN-CALL test_plain" in plain
    assert "Captured log call" in plain and "LOGGED-IN-CALL test_plain" in plain
    # a case item's call holds none of its conversation: what is printed or logged then
    # goes where the process's output and logs go between items
    case = _section(out, "C-FAIL")
    assert "Captured" not in case and "PRINTED-IN-CALL" not in case
    assert "PRINTED-IN-CALL C-FAIL" in out and "PRINTED-IN-CALL C-OK" in out
    logged = (pytester.path / "run.log").read_text(encoding="utf-8")  # pytest's log file
    assert all(f"LOGGED-IN-CALL {name}" in logged for name in ("C-OK", "C-FAIL", "test_plain"))


MARKS = """\
import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name == "C-FAIL":
            item.add_marker(pytest.mark.xfail(reason="known"))
        elif item.name == "C-SKIP":
            item.add_marker(pytest.mark.skip(reason="not today"))
        elif item.name == "C-STRICT":
            item.add_marker(pytest.mark.xfail(reason="fixed?", strict=True))
"""


@pytest.mark.parametrize("dist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_skip_and_xfail_marks_still_decide_a_case_items_outcome(project, pytester,
                                                                dist) -> None:
    project({"a.yaml": CASES + """\
  - {id: C-SKIP, request: {input: 你好}}
  - {id: C-STRICT, request: {input: 你好}}
"""})
    pytester.makeconftest(MARKS)
    result = pytester.runpytest("cases", "-p", "no:cacheprovider", "-rsxX", *dist)
    result.assert_outcomes(passed=1, xfailed=1, skipped=1, failed=1)
    result.stdout.fnmatch_lines_random(["*SKIP*not today*", "*XFAIL*C-FAIL*known*",
                                        "*[[]XPASS(strict)[]] fixed?*"])


FOLDER = """\
def pytest_runtest_setup(item):
    raise RuntimeError(f"folder a's own hook, on {item.name}")
"""

ONE = "cases:\n  - {{id: {id}, request: {{input: 你好}}}}\n"


def test_a_folders_conftest_hooks_its_own_case_items_only(project, pytester) -> None:
    project({"a/x.yaml": ONE.format(id="A-1"), "b/y.yaml": ONE.format(id="B-1")})
    pytester.path.joinpath("cases", "a", "conftest.py").write_text(FOLDER, encoding="utf-8")
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of case A-1*", "*folder a's own hook, on A-1*"])


REWRITE = """\
import pytest

pytest.register_assert_rewrite("pytest_agenteval")  # what pytest does for a plugin's wheel
"""

LOADERS = """\
import sys

from _pytest.assertion.rewrite import AssertionRewritingHook


def test_the_plugins_modules_were_imported_from_their_bytecode():
    ours = {n: m for n, m in sys.modules.items() if n.startswith("pytest_agenteval.")}
    assert {"pytest_agenteval.engine", "pytest_agenteval.recorder"} <= set(ours)
    rewritten = sorted(n for n, m in ours.items()
                       if isinstance(getattr(m, "__loader__", None), AssertionRewritingHook))
    assert rewritten == []
"""


def test_the_plugins_modules_are_not_assertion_rewritten(project, pytester) -> None:
    """pytest marks every module of a plugin's package for assertion rewriting, and caches
    the rewritten code only where it may write bytecode: with PYTHONDONTWRITEBYTECODE or a
    read-only site-packages every process compiled the plugin again. Its modules load
    the ordinary way (``plugin._OrdinaryImport``); a test file is still rewritten."""
    project({"a.yaml": CASES})
    pytester.makeconftest(REWRITE)
    pytester.makepyfile(test_loaders=LOADERS, test_plain=PLAIN)
    result = pytester.runpytest_subprocess("cases", "test_loaders.py", "test_plain.py",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*def test_plain():*", "*assert False*"])
    assert "already imported" not in result.stdout.str() + result.stderr.str()
