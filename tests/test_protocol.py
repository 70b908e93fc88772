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


SEEN = """\
import json
import os

SEEN = []


def pytest_runtest_logstart(nodeid, location):
    SEEN.append(["start", nodeid, list(location)])


def pytest_runtest_logreport(report):
    SEEN.append(["report", type(report).__name__, sorted(vars(report)), report.nodeid,
                 report.when, report.outcome,
                 str(report.longrepr).splitlines()[0] if report.longrepr else None,
                 sorted(report.keywords),
                 [list(p) for p in report.user_properties if p[0] != "agenteval_latency_ms"],
                 list(report.location), report.sections, report.duration >= 0,
                 current if "a.yaml" in (current := os.environ.get("PYTEST_CURRENT_TEST", ""))
                 else None])  # (in-process, the outer test's is there)


def pytest_runtest_logfinish(nodeid, location):
    SEEN.append(["finish", nodeid])


def pytest_sessionfinish(session):
    from _pytest.tmpdir import tmppath_result_key  # each phase the makereport hook saw

    with open("seen.json", "w", encoding="utf-8") as f:
        json.dump(SEEN, f)
    with open("made.json", "w", encoding="utf-8") as f:
        json.dump([sorted(i.stash.get(tmppath_result_key, {})) for i in session.items], f)
"""

#: a phase hook of a conftest's: pytest's own protocol runs every item
PHASE_HOOK = "\n\ndef pytest_runtest_teardown(item):\n    pass\n"
#: a conftest's makereport: every report of a case item is made by the hook
MAKE = """

def pytest_runtest_makereport(item, call):
    SEEN.append(["make", item.nodeid, call.when, call.excinfo is not None])
"""

THREE = CASES + "  - {id: C-ERR, request: {input: __500__}}\n"  # the agent fails: ERROR


def _seen(pytester: pytest.Pytester, conftest: str,
          *args: str) -> tuple[list[list[object]], list[list[str]]]:
    """What the hooks saw, and for each item the phases whose report the makereport hook
    made."""
    import json

    pytester.makeconftest(conftest)
    pytester.runpytest("cases", "-p", "no:cacheprovider", "--junitxml=j.xml", *args)
    seen: list[list[object]] = json.loads((pytester.path / "seen.json").read_text("utf-8"))
    return seen, json.loads((pytester.path / "made.json").read_text("utf-8"))


@pytest.mark.parametrize("stop", [[], ["-x"]], ids=["all", "exitfirst"])
@pytest.mark.parametrize("make", ["", MAKE], ids=["reports-made-here", "reports-by-the-hook"])
def test_a_case_item_reports_as_under_pytests_protocol_without_its_phase_hooks(
        project, pytester, stop, make) -> None:
    """In a run of case items alone, with no phase hook beyond pytest's own, a case item
    runs without the phase hooks (``_protocol``): the same hooks see the same reports in
    the same order as under pytest's protocol, which runs once a conftest has a phase
    hook; its passed setup and teardown reports are made without the makereport hook
    unless a conftest implements it. Only ``PYTEST_CURRENT_TEST`` is not set."""
    project({"a.yaml": THREE})
    lean, made_lean = _seen(pytester, SEEN + make, *stop)
    full, made_full = _seen(pytester, SEEN + make + PHASE_HOOK, *stop)
    phases = ["call", "setup", "teardown"]
    ran = 2 if stop else 3
    assert made_full[:ran] == [phases] * ran
    assert made_lean[:ran] == [phases if make else ["call"]] * ran
    current = [(row[4], row[-1]) for row in full if row[0] == "report"]
    assert ("call", "cases/a.yaml::C-OK (call)") in current  # pytest's protocol ran here
    assert all(row[-1] is None for row in lean if row[0] == "report")  # and not there
    strip = [[*row[:-1]] if row[0] == "report" else row for row in lean]
    assert strip == [[*row[:-1]] if row[0] == "report" else row for row in full]
    assert [row[2] for row in lean if row[0] == "make"] == (
        [] if not make else [w for _ in range(2 if stop else 3)
                             for w in ("setup", "call", "teardown")])
    outcomes = [(row[3].split("::")[1], row[4], row[5]) for row in lean if row[0] == "report"]
    if stop:
        assert [o for o in outcomes if o[1] == "call"] == [("C-OK", "call", "passed"),
                                                           ("C-FAIL", "call", "failed")]
    else:
        assert outcomes == [(n, w, "failed" if n != "C-OK" and w == "call" else "passed")
                            for n in ("C-OK", "C-FAIL", "C-ERR")
                            for w in ("setup", "call", "teardown")]


PROTOCOL = """\
RAN = []


def pytest_runtest_protocol(item, nextitem):  # another protocol, as pytest-rerunfailures'
    RAN.append(item.name)


def pytest_sessionfinish(session):
    with open("protocol.txt", "w", encoding="utf-8") as f:
        f.write(" ".join(sorted(RAN)))
"""


def test_another_plugins_protocol_still_sees_every_case_item(project, pytester) -> None:
    project({"a.yaml": CASES})
    pytester.makeconftest(PROTOCOL)
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    assert (pytester.path / "protocol.txt").read_text("utf-8") == "C-FAIL C-OK"
