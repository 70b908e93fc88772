"""Collection: case files become items; errors name file, line and field."""

from __future__ import annotations

import pytest

from agents import read_record

TWO_CASES = """\
defaults:
  priority: P1
  test_family: CORE
  request:
    knowledge: &car {carConfigInfo: {archives: {mileage: 3.37万公里}}}
cases:
  - id: VEHICLE_INFO-001
    title: 询问里程
    request: {input: 这车跑了多少公里}
    expected: {behavior: VEHICLE_INFO}
    tags: [smoke]
  - id: PHONE_PROVIDED-001
    priority: P0
    challenge: colloquial
    request: {input: 13800000000}
    expected: {behavior: PHONE_PROVIDED}
scenarios:
  - id: FLOW-LEAD-001
    priority: P0
    test_family: MULTI_TURN
    knowledge: *car
    turns:
      - input: 这车多少钱
        expected: {behavior: VEHICLE_INFO}
      - input: 13800000000
        expected: {behavior: PHONE_PROVIDED}
"""


def test_node_ids_end_in_the_case_id(project, pytester: pytest.Pytester) -> None:
    project({"single/a.yaml": TWO_CASES})
    result = pytester.runpytest("cases", "--collect-only", "-q")
    result.stdout.fnmatch_lines([
        "cases/single/a.yaml::VEHICLE_INFO-001",
        "cases/single/a.yaml::PHONE_PROVIDED-001",
        "cases/single/a.yaml::FLOW-LEAD-001",
        "3 tests collected*",
    ])


@pytest.mark.parametrize(("args", "selected"), [
    (["-m", "P0"], ["PHONE_PROVIDED-001", "FLOW-LEAD-001"]),
    (["-m", "P1"], ["VEHICLE_INFO-001"]),
    (["-m", "behavior(label='PHONE_PROVIDED')"], ["PHONE_PROVIDED-001", "FLOW-LEAD-001"]),
    (["-k", "PHONE_PROVIDED"], ["PHONE_PROVIDED-001", "FLOW-LEAD-001"]),
    (["-k", "MULTI_TURN"], ["FLOW-LEAD-001"]),
    (["-k", "colloquial"], ["PHONE_PROVIDED-001"]),
    (["-k", "smoke"], ["VEHICLE_INFO-001"]),
    (["-k", "CORE and not P0"], ["VEHICLE_INFO-001"]),
])
def test_markers_and_keywords_select_exactly(project, pytester: pytest.Pytester,
                                             args: list[str], selected: list[str]) -> None:
    project({"single/a.yaml": TWO_CASES})
    result = pytester.runpytest("cases", "--collect-only", "-q", *args)
    got = [line.rsplit("::", 1)[1] for line in result.outlines if line.startswith("cases/")]
    assert got == selected


def test_a_malformed_file_is_one_error_and_the_rest_run(project, pytester) -> None:
    project({"good.yaml": TWO_CASES, "bad.yaml": "cases:\n  - id: X-1\n    request: {input: [\n"})
    result = pytester.runpytest("cases", "-p", "no:cacheprovider", "-v")
    result.stdout.fnmatch_lines(["cases/bad.yaml::[[]load[]] ERROR*",
                                 "*could not load cases/bad.yaml*",
                                 "cases/bad.yaml:4: invalid YAML*"])
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 3 and outcomes["errors"] == 1
    assert result.ret == 1
    assert "Interrupted" not in result.stdout.str()


def test_a_broken_file_stays_selected_whatever_k_and_m_say(project, pytester) -> None:
    # the broken file may hold exactly the items -k selects: the run must say so
    project({"good.yaml": TWO_CASES, "bad.yaml": "cases:\n  - id: X-1\n    request: {input: [\n"})
    result = pytester.runpytest("cases", "-p", "no:cacheprovider", "-k", "VEHICLE_INFO",
                                "-m", "P1")
    result.stdout.fnmatch_lines(["*invalid YAML*"])
    assert result.parseoutcomes()["errors"] == 1
    record = read_record(pytester.path)
    assert record["completeness"]["collection_errors"] == ["cases/bad.yaml"]
    assert record["completeness"]["complete"] is False


def test_an_import_error_in_a_test_module_still_interrupts(project, pytester) -> None:
    # a broken case file changes no pytest option: an ordinary collection error still stops
    project({"bad.yaml": "cases: [\n"})
    pytester.makepyfile(test_mod="import no_such_module_here\n\ndef test_x(): pass\n")
    result = pytester.runpytest("cases", "test_mod.py", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(["*ERROR collecting test_mod.py*",
                                 "*Interrupted: 1 error during collection*"])
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_an_unknown_label_is_an_error_of_its_line(project, pytester) -> None:
    project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: hi}
            expected: {behavior: VEHICLE_INFO}
          - id: A-2
            request: {input: hi}
            expected: {behavior: VEHICLE_INFOO}
        scenarios:
          - id: S-1
            turns:
              - {input: hi, expected: {behavior: PHONE_PROVIDED}}
              - {input: ho, expected: {behavior: PHONE_PROVIDE}}
        """}, taxonomy=True)
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines([
        "*2 error(s) in this file*",
        "*cases/a.yaml:7 [[]cases[[]1[]].expected.behavior[]]: unknown label 'VEHICLE_INFOO';"
        " the taxonomy's labels are: VEHICLE_INFO, *",
        "*cases/a.yaml:12 [[]scenarios[[]0[]].turns[[]1[]].expected.behavior[]]: unknown label "
        "'PHONE_PROVIDE'*",
    ])
    assert result.parseoutcomes() == {"errors": 1}


def test_unknown_field_names_file_line_and_field(project, pytester) -> None:
    project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: hi}
          - id: A-2
            request: {input: hi}
            expected: {behaviour: VEHICLE_INFO}
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*cases/a.yaml:6 [[]cases[[]1[]].expected.behaviour[]]: "
                                 "unknown field*"])


def test_every_error_of_a_file_is_listed(project, pytester) -> None:
    project({"a.yaml": """\
        cases:
          - id: A-1
            priority: P9
            request: {input: hi}
          - id: A-2
            request: {input: hi}
            rules: [{type: no_such_rule}]
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines([
        "*2 error(s) in this file*",
        "*cases/a.yaml:3 [[]cases[[]0[]].priority[]]*P0*",
        "*cases/a.yaml:7 [[]cases[[]1[]].rules[[]0[]].type[]]: unknown rule type 'no_such_rule';"
        " known types: *keyword_match*",
    ])


def test_bad_rule_params_fail_at_collection(project, pytester) -> None:
    project({"a.yaml": """\
        cases:
          - id: A-1
            request: {input: hi}
            rules:
              - {type: regex, params: {pattern: "([", must_match: true}}
              - {type: max_sentences, params: {count: 2}}
        """})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*cases/a.yaml:5*params*not a valid regular expression*",
                                 "*cases/a.yaml:6*params.count: unknown param*its params: n*"])


def test_duplicate_id_across_files_names_both_places(project, pytester) -> None:
    case = "cases:\n  - id: SAME-1\n    request: {input: hi}\n"
    project({"a.yaml": case, "b.yaml": "cases:\n  - id: OTHER\n    request: {input: x}\n"
             "  - id: SAME-1\n    request: {input: hi}\n"})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*cases/b.yaml:4 [[]id[]]: duplicate id 'SAME-1': "
                                 "already used at cases/a.yaml:2*"])


def test_text_fields_keep_the_scalar_as_written(project, pytester, agent) -> None:
    project({"a.yaml": """\
        cases:
          - id: T-1
            request: {input: 13800000000}
          - id: T-2
            request: {input: 0138-1234}
          - id: T-3
            request: {input: 2021-06-01, history: [{role: user, content: 007}]}
          - id: T-4
            request: {input: no}
        """})
    pytester.runpytest("cases").assert_outcomes(passed=4)
    sent = {r["case_id"]: r for r in agent.requests}
    assert sent["T-1"]["input"] == "13800000000"
    assert sent["T-2"]["input"] == "0138-1234"
    assert sent["T-3"]["input"] == "2021-06-01"
    assert sent["T-3"]["history"] == [{"role": "user", "content": "007"}]
    assert sent["T-4"]["input"] == "no"


def test_defaults_merge_deeply_and_anchors_work(project, pytester, agent) -> None:
    project({"a.yaml": """\
        defaults:
          request:
            knowledge: {a: 1, nested: {x: 1, y: 2}}
            extra: {channel: im}
        cases:
          - id: D-1
            request: {input: hi, knowledge: {nested: {y: 3}}}
        """})
    pytester.runpytest("cases").assert_outcomes(passed=1)
    (sent,) = agent.requests
    assert sent["knowledge"] == {"a": 1, "nested": {"x": 1, "y": 3}}
    assert sent["extra"] == {"channel": "im"}


def test_yaml_outside_agenteval_paths_is_not_collected(project, pytester) -> None:
    project({"a.yaml": TWO_CASES})
    pytester.makefile(".yaml", **{"docker-compose": "services: {web: {image: x}}"})
    (pytester.path / ".ci").mkdir()
    (pytester.path / ".ci" / "pipeline.yml").write_text("jobs: []\n")
    result = pytester.runpytest("--collect-only", "-q")
    assert "3 tests collected" in result.stdout.str()


def test_an_empty_or_foreign_file_in_cases_is_an_error(project, pytester) -> None:
    project({"a.yaml": TWO_CASES, "empty.yaml": "", "list.yaml": "- 1\n- 2\n"})
    result = pytester.runpytest("cases", "--collect-only", "-q")
    result.stdout.fnmatch_lines(["*agenteval: case files that could not be loaded*",
                                 "*cases/empty.yaml*empty file*",
                                 "*cases/list.yaml*top level must be a mapping*"])
    assert result.ret == 1


def test_defaults_go_to_the_items_that_have_the_field(project, pytester, agent) -> None:
    project({"a.yaml": """\
        defaults:
          priority: P0
          knowledge: {k: scenario}
          request: {knowledge: {k: case}}
        cases:
          - {id: C-1, request: {input: 一}}
        scenarios:
          - id: S-1
            turns: [{input: 二}]
        """})
    result = pytester.runpytest("cases", "-m", "P0")
    result.assert_outcomes(passed=2)
    sent = {r["case_id"]: r["knowledge"] for r in agent.requests}
    assert sent == {"C-1": {"k": "case"}, "S-1": {"k": "scenario"}}


def test_an_unknown_default_is_an_error_at_its_line(project, pytester) -> None:
    project({"a.yaml": "defaults:\n  prority: P0\ncases:\n  - {id: C-1, request: {input: x}}\n"})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*cases/a.yaml:2 [[]defaults.prority[]]: not a field of a case"
                                 " or a scenario*"])


def test_k_none_does_not_select_every_case_without_a_challenge(project, pytester) -> None:
    project({"single/a.yaml": TWO_CASES})
    result = pytester.runpytest("cases", "--collect-only", "-q", "-k", "none")
    assert "no tests collected" in result.stdout.str() or "0 selected" in result.stdout.str()


def test_a_broken_taxonomy_is_a_located_collection_error(project, pytester) -> None:
    project({"a.yaml": TWO_CASES})
    (pytester.path / "rules").mkdir()
    (pytester.path / "rules" / "taxonomy.yaml").write_text(
        "labels:\n  A: {codes: [1]}\n  B: {codes: [1]}\n")
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*rules/taxonomy.yaml:3 [[]labels.B.codes[]]: code 1 already "
                                 "maps to A*"])
    assert "could not start the target adapter" not in result.stdout.str()


def test_a_conftest_rule_type_replaces_a_builtin_of_the_same_name(project, pytester) -> None:
    pytester.makeconftest("""
        import pytest_agenteval as ae

        @ae.rule("max_chars", params=ae.NoParams)
        def strict(p, turn):
            return ae.RuleOutcome.failed("house rule: never long enough", turn.reply)
    """)
    project({"a.yaml": "cases:\n  - id: C-1\n    request: {input: x}\n"
                       "    rules: [{type: max_chars}]\n"})
    result = pytester.runpytest("cases")
    result.stdout.fnmatch_lines(["*house rule: never long enough*"])


def test_a_run_whose_only_defect_is_a_broken_file_says_so_in_one_line(project, pytester) -> None:
    project({"a.yaml": TWO_CASES, "bad.yaml": "cases: [\n"})
    result = pytester.runpytest("cases")
    out = result.stdout.str()
    assert "have no result" not in out  # it said "0 of 3 selected items have no result:"
    result.stdout.fnmatch_lines(["INCOMPLETE: 1 case file(s) could not be loaded: cases/bad.yaml"])


GC_SEEN = """\
import gc

SEEN = []

def pytest_itemcollected(item):
    SEEN.append(gc.isenabled())

def pytest_sessionfinish(session):
    with open("gc.txt", "w") as f:
        f.write(f"{sorted(set(SEEN))} {gc.isenabled()}")
"""


def test_the_collector_is_paused_while_cases_are_collected_and_restored(project,
                                                                          pytester) -> None:
    project({"a.yaml": "cases:\n  - {id: G-1, request: {input: 你好}}\n"
                       "  - {id: G-2, request: {input: 你好}}\n"})
    pytester.makeconftest(GC_SEEN)
    pytester.runpytest("cases", "--collect-only", "-q")
    assert (pytester.path / "gc.txt").read_text() == "[False] True"


_LOCATIONS = '''
import json
import pytest

def pytest_collection_finish(session):
    rows = [[list(item.location), list(pytest.Item.location.func(item))]
            for item in session.items]
    with open(session.config.rootpath / "locations.json", "w") as f:
        json.dump(rows, f)
'''


def test_an_items_location_is_pytests_own(project, pytester: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A case item's location (the relative path found once per file) is what pytest's
    own would be: in a nested folder, with a title, and run from another directory."""
    import json

    root = project({"single/a.yaml": TWO_CASES, "b.yaml": "cases:\n  - {id: B-1, request: "
                                                        "{input: 你好}}\n"})
    (root / "conftest.py").write_text(_LOCATIONS, encoding="utf-8")
    monkeypatch.chdir(root / "cases" / "single")
    result = pytester.runpytest_subprocess("--collect-only", "-q", f"--rootdir={root}",
                                           str(root / "cases"), "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    rows = json.loads((root / "locations.json").read_text())
    assert len(rows) == 4
    assert all(ours == pytests for ours, pytests in rows), rows
    assert {tuple(ours[:2]) for ours, _ in rows} == {
        ("cases/b.yaml", 1), ("cases/single/a.yaml", 6), ("cases/single/a.yaml", 11),
        ("cases/single/a.yaml", 17)}
