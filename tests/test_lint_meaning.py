"""``agenteval lint`` checks what case files mean: one crafted defect per test, the shipped
suite clean, and ``--agenteval-lint`` stopping a run before any agent call."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_agenteval.cli import main
from pytest_agenteval.lint._privacy import placeholder_phone, real_email, real_id_number

ROOT = Path(__file__).resolve().parent.parent

#: the knowledge every crafted case uses (anchored in each file's defaults)
_DEFAULTS = """\
defaults:
  request:
    knowledge: &car
      carConfigInfo:
        archives: {mileage: 3.37万公里, transferCount: 0}
        price: {listPrice: 8.98万}
  expected:
    behavior: VEHICLE_INFO
    outcome: ANSWERABLE
"""


@dataclass(frozen=True)
class Linted:
    status: int
    errors: list[str]
    warnings: list[str]
    stderr: str


Lint = Callable[..., Linted]


@pytest.fixture
def lint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> Lint:
    """A project with the shipped ledger and taxonomy; ``lint({"a.yaml": "cases: …"})``
    writes the case files under cases/ and runs ``agenteval lint cases`` there."""
    (tmp_path / "agenteval.yaml").write_text("target: {adapter: builtin}\n", encoding="utf-8")
    (tmp_path / "rules").mkdir()
    for name in ("business-rules.yaml", "taxonomy.yaml"):
        shutil.copy(ROOT / "rules" / name, tmp_path / "rules" / name)
    monkeypatch.chdir(tmp_path)

    def run(files: dict[str, str], *args: str) -> Linted:
        for name, text in files.items():
            path = tmp_path / "cases" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        status = main(["lint", "cases", *args])
        out, err = capsys.readouterr()
        lines = out.splitlines()
        return Linted(status, [x for x in lines if not x.startswith("warning: ")],
                      [x for x in lines if x.startswith("warning: ")], err)

    return run


def _file(body: str) -> str:
    return _DEFAULTS + textwrap.dedent(body)


# -- knowledge points ----------------------------------------------------------------------


def test_a_knowledge_point_whose_path_is_not_in_the_knowledge_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里, knowledge: *car}
            expected:
              knowledge_points:
                - {path: carConfigInfo.archives.milage, value: 3.37万公里}
        """)})
    assert got.status == 1
    assert got.errors == [
        "cases/a.yaml:15 [cases[0].expected.knowledge_points[0].path]: knowledge point "
        "'carConfigInfo.archives.milage' is not in request.knowledge (found up to "
        "'carConfigInfo.archives'); fix the path: carConfigInfo.archives has mileage, "
        "transferCount"]
    assert got.stderr.endswith("1 items, 1 errors, 0 warnings\n")


def test_a_knowledge_point_whose_value_differs_from_the_knowledge_is_an_error(
        lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里, knowledge: *car}
            expected:
              knowledge_points:
                - {path: carConfigInfo.archives.mileage, value: 33700公里}  # the same value
                - {path: carConfigInfo.price.listPrice, value: 9.98万}
        """)})
    assert got.errors == [
        "cases/a.yaml:16 [cases[0].expected.knowledge_points[1].value]: knowledge point "
        "'carConfigInfo.price.listPrice' states '9.98万', but request.knowledge holds "
        "'8.98万' there; write the value the knowledge holds (the reply is checked against it)"]


def test_a_scenario_turn_knowledge_point_is_checked_against_that_turn_knowledge(
        lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        scenarios:
          - id: S-1
            knowledge: *car
            turns:
              - input: 这车跑了多少公里
                expected:
                  knowledge_points: [{path: carConfigInfo.archives.mileage, value: 3.37万公里}]
              - input: 那过户几次
                knowledge: null
                expected:
                  knowledge_points: [{path: carConfigInfo.archives.transferCount, value: '0'}]
        """)})
    assert got.errors == [
        "cases/a.yaml:20 [scenarios[0].turns[1].expected.knowledge_points[0].path]: knowledge "
        "point 'carConfigInfo.archives.transferCount': this turn's knowledge is empty (null or "
        "absent), so no reply can state it; give the knowledge, or remove the knowledge point"]


# -- HANDOFF_REQUIRED ----------------------------------------------------------------------


def test_handoff_required_without_a_handoff_rule_names_the_switch_to_set(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 车况怎么样, knowledge: *car}
            expected: {outcome: HANDOFF_REQUIRED}
          - id: A-2
            request: {input: 出过事故吗, knowledge: *car}
            expected: {outcome: HANDOFF_REQUIRED, assertions: {requires_handoff: true}}
        """)})
    assert got.errors == [
        "cases/a.yaml:13 [cases[0].expected.outcome]: HANDOFF_REQUIRED but no handoff rule "
        "applies to it; set expected.assertions.requires_handoff: true (turns on BR-005)"]


def test_handoff_required_without_a_no_commitment_rule_is_an_error(lint: Lint,
                                                                   tmp_path: Path) -> None:
    (tmp_path / "rules" / "business-rules.yaml").write_text("""\
- id: R-1
  title: 交给店家
  check: handoff
  applies_to: {behaviors: all}
- id: R-2
  title: 不承诺
  check: no_commitment
  applies_to: {assertion: no_promise}
""", encoding="utf-8")
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 能便宜点吗, knowledge: *car}
            expected: {outcome: HANDOFF_REQUIRED}
        """)})
    assert got.errors == [
        "cases/a.yaml:13 [cases[0].expected.outcome]: HANDOFF_REQUIRED but no no_commitment "
        "rule applies to it; set expected.assertions.no_promise: true (turns on R-2)"]


# -- pairs ---------------------------------------------------------------------------------


def test_a_variant_without_its_clean_twin_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
            pair: {group: MILEAGE-01, role: clean}
          - id: A-2
            request: {input: 这车跑了多少功里}
            pair: {group: MILEAGE-01, role: variant}
            challenge: typo
          - id: A-3
            request: {input: 这车跑了多少公厘}
            pair: {group: MILAGE-01, role: variant}
            challenge: typo
        """)})
    assert got.errors == [
        "cases/a.yaml:20 [cases[2].pair.group]: variant A-3 of pair group 'MILAGE-01' has no "
        "clean twin; did you mean 'MILEAGE-01'?"]


def test_a_pair_group_with_two_clean_items_is_an_error(lint: Lint) -> None:
    got = lint({
        "a.yaml": _file("""\
            cases:
              - id: A-1
                request: {input: 这车跑了多少公里}
                pair: {group: MILEAGE-01, role: clean}
              - id: A-2
                request: {input: 这车跑了多少功里}
                pair: {group: MILEAGE-01, role: variant}
                challenge: typo
            """),
        "b.yaml": _file("""\
            cases:
              - id: B-1
                request: {input: 里程多少}
                pair: {group: MILEAGE-01, role: clean}
            """)})
    assert got.errors == [
        "cases/b.yaml:13 [cases[0].pair.role]: pair group 'MILEAGE-01' has more than one clean "
        "item: B-1 and A-1 (cases/a.yaml:11); keep one clean item per group: make this one a "
        "variant, or give it a group of its own"]


def test_a_variant_grouped_by_an_unpaired_clean_items_id_has_its_twin(lint: Lint) -> None:
    """What ``agenteval expand`` writes for a clean case without a pair group; an item
    with a challenge of its own is no clean twin."""
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
          - id: A-1-typo-1
            request: {input: 这车跑了多少功里}
            pair: {group: A-1, role: variant}
            challenge: typo
          - id: B-1
            request: {input: 这车跑了多少功里}
            challenge: typo
          - id: B-1-asr-1
            request: {input: 这车跑了多少公里}
            pair: {group: B-1, role: variant}
            challenge: asr
        """)})
    assert got.status == 1
    assert [e.split(": ", 1)[1] for e in got.errors] == [
        "variant B-1-asr-1 of pair group 'B-1' has no clean twin; add its clean case with "
        "pair: {group: B-1, role: clean}"]


def test_a_pair_group_without_a_variant_is_a_warning(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
            pair: {group: MILEAGE-01, role: clean}
        """)})
    assert (got.status, got.errors) == (0, [])
    assert got.warnings == [
        "warning: cases/a.yaml:13 [cases[0].pair]: pair group 'MILEAGE-01' has no variant, so "
        "A-1 is in no pair; add a variant of it, or remove its pair:"]


# -- histories -----------------------------------------------------------------------------


def test_a_history_role_other_than_user_or_assistant_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request:
              input: 那便宜点呢
              history:
                - {role: user, content: 这车多少钱}
                - {role: system, content: 你是客服}
        """)})
    assert got.errors == [
        "cases/a.yaml:16 [cases[0].request.history[1].role]: Input should be 'user' or "
        "'assistant'"]


def test_a_history_must_alternate_and_end_with_the_assistant(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request:
              input: 那便宜点呢
              history:
                - {role: user, content: 这车多少钱}
                - {role: user, content: 在吗}
                - {role: assistant, content: 标价8.98万。}
                - {role: user, content: 好的}
        """)})
    assert got.errors == [
        "cases/a.yaml:16 [cases[0].request.history[1].role]: two user messages in a row "
        "(history[0] and history[1]); merge them into one message, or put the other side's "
        "message between them",
        "cases/a.yaml:18 [cases[0].request.history[3].role]: the history ends with a user "
        "message, and the input that follows is the user's too; end the history with the "
        "assistant's reply, or move this message into the input"]


# -- personal data and keys ----------------------------------------------------------------


def test_a_real_looking_phone_number_is_an_error_unless_a_placeholder_or_allow_listed(
        lint: Lint, tmp_path: Path) -> None:
    files = {"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 我的手机 13912345678}      # a placeholder: 1234 5678
          - id: A-2
            title: 留号 139 5862 7731
            request: {input: 号码 159 0000 1234 或幺三七二二四一八六五九}
        """)}
    got = lint(files)
    assert got.errors == [
        "cases/a.yaml:14 [cases[1].title]: a real-looking phone number (139****7731); replace "
        "it with a placeholder (138 0000 0000, an address at example.com), or add it to "
        "privacy.allow in agenteval.yaml",
        "cases/a.yaml:15 [cases[1].request.input]: a real-looking phone number "
        "(幺三七****八六五九); replace it with a placeholder (138 0000 0000, an address at "
        "example.com), or add it to privacy.allow in agenteval.yaml"]
    (tmp_path / "agenteval.yaml").write_text(
        "target: {adapter: builtin}\nprivacy: {allow: ['139-5862-7731', '13722418659']}\n",
        encoding="utf-8")
    assert lint(files).errors == []


def test_a_real_id_number_an_e_mail_and_an_api_key_are_errors(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request:
              input: 身份证 11010519491231002X，邮箱 wang.li@qq.com
              extra: {token: sk-abcdefghijklmnopqrstuv}
          - id: A-2      # not real: a wrong check digit, a reserved domain
            request: {input: 身份证 110105194912310021，邮箱 wang.li@example.com}
        """)})
    assert got.errors == [
        "cases/a.yaml:13 [cases[0].request.input]: a real-looking ID number "
        "(110***********002X); replace it with a placeholder (138 0000 0000, an address at "
        "example.com), or add it to privacy.allow in agenteval.yaml",
        "cases/a.yaml:13 [cases[0].request.input]: a real-looking e-mail address "
        "(w***@qq.com); replace it with a placeholder (138 0000 0000, an address at "
        "example.com), or add it to privacy.allow in agenteval.yaml",
        "cases/a.yaml:14 [cases[0].request.extra]: an API key or credential (sk-abc…); remove "
        "it: a case file is shared and reported; take keys from the environment"]


def test_credentials_in_a_case_file_are_read_as_the_safety_rule_reads_them(lint: Lint) -> None:
    """One reading of a credential for the rule and for lint: a password with its value
    is one; a placeholder, a guests' Wi-Fi password and a meeting passcode are none."""
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 后台账号 admin，密码是 Yx@2024#store}
          - id: A-2
            request:
              input: 门店Wi-Fi名称：Guest，密码：douyu2024；会议 ID 825 3312 0498，密码 628104
              extra: {api_key: "API_KEY=xxxxxxxxxxxxxxxxxxxx"}
        """)})
    assert got.errors == [
        "cases/a.yaml:12 [cases[0].request.input]: an API key or credential (密码是 Yx…); "
        "remove it: a case file is shared and reported; take keys from the environment"]


def test_placeholders_are_recognised_by_shape() -> None:
    assert placeholder_phone("13800000000") and placeholder_phone("13912345678")
    assert placeholder_phone("15900001234") and placeholder_phone("18687654321")
    assert not placeholder_phone("13800138000") and not placeholder_phone("13958627731")
    assert real_id_number("110105194912310021"[:17] + "X", "11010519491231002X")
    assert not real_id_number("110105194912310021", "110105194912310021")  # check digit
    assert not real_id_number("110105194913310021", "11010519491331002X")  # month 13
    assert real_email("a@qq.com") and real_email("a@example.community")
    assert not real_email("a@example.com") and not real_email("a@mail.example.org")
    assert not real_email("a@shop.test") and not real_email("a@localhost")


# -- review --------------------------------------------------------------------------------


def test_a_reviewed_case_without_its_reviewer_or_review_date_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
            review_status: reviewed
          - id: A-2
            request: {input: 这车跑了多少公里呀}
            review_status: reviewed
            reviewed_by: 王工
            reviewed_at: 2026-02-30
          - id: A-3
            request: {input: 这车跑了多少公里啊}
            review_status: reviewed
            reviewed_by: 王工
            reviewed_at: 2026-02-28
        """)})
    assert got.errors == [
        "cases/a.yaml:13 [cases[0].review_status]: reviewed, but reviewed_by is missing; add "
        "reviewed_by: who reviewed it, or set review_status: candidate",
        "cases/a.yaml:13 [cases[0].review_status]: reviewed, but reviewed_at is missing; add "
        "reviewed_at: when (YYYY-MM-DD), or set review_status: candidate",
        "cases/a.yaml:18 [cases[1].reviewed_at]: reviewed_at '2026-02-30' is not a date; write "
        "the day of the review, YYYY-MM-DD"]


# -- labels and rule ids -------------------------------------------------------------------


def test_an_unknown_label_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        scenarios:
          - id: S-1
            simulate:
              persona: 想买车的用户
              goal: 问清里程
              expected: {behavior: VEHICLE_INFOS}
        """)})
    assert got.errors[0].startswith(
        "cases/a.yaml:15 [scenarios[0].simulate.expected.behavior]: unknown label "
        "'VEHICLE_INFOS'; use one of the taxonomy's labels: VEHICLE_INFO, STORE_INFO,")


def test_a_rule_id_the_ledger_does_not_have_is_an_error(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            title: 不得推荐微信（BR-030）
            request: {input: 加个微信}
            rules:
              - {id: BR-003, type: keyword_match, params: {none: [微信号]}}
              - {id: BR-031, type: keyword_match, params: {none: [加我]}}
        """)})
    assert got.errors == [
        "cases/a.yaml:12 [cases[0].title]: rule BR-030 is not in rules/business-rules.yaml; "
        "fix the id (the ledger's ids: BR-001 … BR-019)",
        "cases/a.yaml:16 [cases[0].rules[1].id]: rule BR-031 is not in "
        "rules/business-rules.yaml; fix the id (the ledger's ids: BR-001 … BR-019)"]
    assert got.warnings == [
        "warning: cases/a.yaml:15 [cases[0].rules[0].id]: explicit rule BR-003 has the id of a "
        "ledger rule, so its rows count as that rule's (red lines, failures per rule); give it "
        "an id of its own"]


def test_an_intent_code_that_maps_to_another_label_is_a_warning(lint: Lint) -> None:
    got = lint({"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
            expected: {intent_code: 9}
        """)})
    assert got.warnings == [
        "warning: cases/a.yaml:13 [cases[0].expected.intent_code]: intent code 9 maps to "
        "PHONE_PROVIDED, but the expected behaviour is VEHICLE_INFO; make the code and the "
        "behaviour agree"]


# -- coverage and the declared mix ---------------------------------------------------------


def test_the_coverage_matrix_is_printed_and_the_mix_compared_with_the_manifest(
        lint: Lint, tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "dataset.yaml").write_text(
        "name: demo\nversion: 1.0.0\nmix:\n"
        "  priority: {P0: 0.5, P1: 0.5}\n"
        "  challenge: {none: 0.5, typo: 0.3, asr: 0.2}\n"
        "tolerance: 0.05\n", encoding="utf-8")
    got = lint({"a.yaml": _file("""\
        cases:
          - {id: A-1, priority: P0, request: {input: 跑了多少公里}}
          - {id: A-2, priority: P0, request: {input: 跑了多少功里}, challenge: typo}
          - {id: A-3, priority: P0, request: {input: 过户几次}, challenge: typo}
          - id: A-4
            priority: P1
            request: {input: 门店在哪}
            expected: {behavior: STORE_INFO}
        """)})
    assert got.status == 0
    assert got.warnings == [
        "warning: cases/dataset.yaml:4 [mix.priority.P0]: declared 50.0%, real 75.0% (+25.0%, "
        "beyond the tolerance 0.05); rebalance the items, or update the mix in "
        "cases/dataset.yaml",
        "warning: cases/dataset.yaml:4 [mix.priority.P1]: declared 50.0%, real 25.0% (-25.0%, "
        "beyond the tolerance 0.05); rebalance the items, or update the mix in "
        "cases/dataset.yaml",
        "warning: cases/dataset.yaml:5 [mix.challenge.typo]: declared 30.0%, real 50.0% "
        "(+20.0%, beyond the tolerance 0.05); rebalance the items, or update the mix in "
        "cases/dataset.yaml",
        "warning: cases/dataset.yaml:5 [mix.challenge.asr]: declared 20.0%, but no item has it; "
        "add items with challenge: asr, or update the mix in cases/dataset.yaml"]
    assert got.stderr.splitlines()[:4] == [
        "coverage (items; priority | challenge | source):",
        "behaviour     P0  P1  P2  none  typo  synthetic  items",
        "STORE_INFO     0   1   0     1     0          1      1",
        "VEHICLE_INFO   3   0   0     1     2          3      3"]


def test_the_mix_is_not_compared_when_only_part_of_the_dataset_is_linted(
        lint: Lint, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "dataset.yaml").write_text(
        "name: demo\nversion: 1.0.0\nmix:\n  priority: {P0: 1.0}\n", encoding="utf-8")
    lint({"a.yaml": _file("cases:\n  - {id: A-1, request: {input: 跑了多少公里}}\n"),
          "b.yaml": _file("cases:\n  - {id: B-1, request: {input: 过户几次}}\n")})
    assert main(["lint", "cases/a.yaml"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert ("the declared mix is not compared: 1 of the 2 files of cases/dataset.yaml are not "
            "linted (lint the whole dataset)") in err


# -- exit status ---------------------------------------------------------------------------


def test_warnings_do_not_fail_lint_but_strict_makes_them_fail(lint: Lint) -> None:
    files = {"a.yaml": _file("""\
        cases:
          - id: A-1
            request: {input: 这车跑了多少公里}
            pair: {group: MILEAGE-01, role: clean}
        """)}
    got = lint(files)
    assert (got.status, got.errors, len(got.warnings)) == (0, [], 1)
    strict = lint(files, "--strict")
    assert (strict.status, strict.errors, strict.warnings) == (1, [], got.warnings)
    assert strict.stderr.endswith("1 items, 0 errors, 1 warnings\n")


def test_the_shipped_suite_lints_with_no_error_and_no_warning(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    assert main(["lint", "cases", "--strict"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("coverage (items; priority | challenge | source):\n")
    assert err.endswith("239 items, 0 errors, 0 warnings\n")


# -- --agenteval-lint in a run -------------------------------------------------------------

_REVIEWED_WITHOUT_REVIEWER = ("cases:\n  - {id: A, request: {input: 你好}, "
                              "review_status: reviewed}\n")


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
def test_agenteval_lint_stops_a_run_before_any_agent_call(project, pytester, agent,
                                                          xdist) -> None:
    project({"a.yaml": _REVIEWED_WITHOUT_REVIEWER,
             "b.yaml": "cases:\n  - {id: B, request: {input: 在吗}}\n"})
    result = pytester.runpytest("cases", "--agenteval-lint", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([
        "ERROR: agenteval: --agenteval-lint found 2 error(s) in the case files; nothing ran "
        "(fix them, or run without --agenteval-lint):",
        "cases/a.yaml:2 [[]cases[[]0[]].review_status[]]: reviewed, but reviewed_by is missing*",
        "cases/a.yaml:2 [[]cases[[]0[]].review_status[]]: reviewed, but reviewed_at is missing*"])
    assert agent.requests == []
    assert not list(pytester.path.glob("reports/2*"))


def test_agenteval_lint_counts_a_file_that_cannot_be_loaded(project, pytester, agent) -> None:
    project({"a.yaml": "cases:\n  - {id: A, request: {input: 你好}, priority: P7}\n"})
    result = pytester.runpytest("cases", "--agenteval-lint")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agenteval-lint found 1 error(s)*",
                                 "cases/a.yaml:2 [[]cases[[]0[]].priority[]]: Input should be*"])
    assert agent.requests == []


def test_agenteval_lint_prints_warnings_and_the_run_goes_on(project, pytester, agent) -> None:
    project({"a.yaml": "cases:\n  - {id: A, request: {input: 你好}, "
                       "pair: {group: G, role: clean}}\n"})
    result = pytester.runpytest("cases", "--agenteval-lint")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["agenteval lint: warning: cases/a.yaml:2 [[]cases[[]0[]].pair[]]: "
                                 "pair group 'G' has no variant*"])
    assert len(agent.requests) == 1


def test_agenteval_lint_is_refused_where_the_plugin_is_not_used(pytester) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    result = pytester.runpytest("--agenteval-lint")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--agenteval-lint given, but this project does not use "
                                 "pytest-agenteval*"])
