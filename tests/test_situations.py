"""Ledger rules that apply where their situation arises, not where a case remembers a switch."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from pytest_agenteval.ledger import load_ledger
from pytest_agenteval.model.cases import Expected
from pytest_agenteval.rules import SITUATIONS, TurnView
from pytest_agenteval.rules._situation import bind_situations
from pytest_agenteval.yamlio import SourceError

from agents import by_id, read_record

ROOT = Path(__file__).resolve().parent.parent
CAR = {"carConfigInfo": {"archives": {"mileage": "3.37万公里"}, "price": {"listPrice": "8.98万"}}}
ACCORD = {"carConfigInfo": {"archives": {"mileage": "5.62万公里"},
                             "price": {"listPrice": "13.8万"}}}


def observe(name: str, **view: object) -> str | None:
    (bound,) = bind_situations([name])
    return bound.observe(TurnView(**{"input": "", "reply": "", **view}))  # type: ignore[arg-type]


@pytest.mark.parametrize("view, expected", [
    ({"reply": "标价8.98万。留个手机号，店家核算后联系您。"}, "留个手机号"),
    ({"reply": "手机号已收到，店家会电话联系您。"}, None),
    ({"reply": "不用再留手机号了。"}, None),
])
def test_reply_asks_for_contact(view: dict[str, object], expected: str | None) -> None:
    assert observe("reply_asks_for_contact", **view) == expected


@pytest.mark.parametrize("view, expected", [
    ({"input": "我的号码 138 0000 0000"}, "138 0000 0000"),
    ({"input": "好的", "history": [{"role": "user", "content": "１３９１２３４５６７８"}]},
     "13912345678"),
    ({"input": "一三八一二三四五六七八"}, "一三八一二三四五六七八"),
    ({"input": "8.98万能卖吗"}, None),
    ({"input": "1380000000"}, None),  # ten digits: not a number one can call
    ({"input": "你们电话多少", "history": [{"role": "assistant", "content": "13800000000"}]},
     None),  # the bot's own words are not the user's contact
])
def test_user_gave_contact(view: dict[str, object], expected: str | None) -> None:
    assert observe("user_gave_contact", **view) == expected


@pytest.mark.parametrize("view, expected", [
    # a scenario: earlier turns' knowledge known
    ({"knowledge": None, "earlier_knowledge": (CAR,)},
     "carConfigInfo.archives.mileage: 3.37万公里 → null"),
    # the car was switched two turns ago: the first car's facts are still stale
    ({"knowledge": ACCORD, "earlier_knowledge": (CAR, ACCORD)},
     "carConfigInfo.archives.mileage: 3.37万公里 → 5.62万公里"),
    ({"knowledge": ACCORD, "earlier_knowledge": (CAR,)},
     "carConfigInfo.archives.mileage: 3.37万公里 → 5.62万公里"),
    ({"knowledge": CAR, "earlier_knowledge": (None,)}, None),  # knowledge added, not lost
    ({"knowledge": CAR, "earlier_knowledge": (CAR,)}, None),
    # a single case: earlier knowledge unknown, the history has a reply
    ({"knowledge": None, "history": [{"role": "assistant", "content": "标价8.98万"}]},
     "knowledge: null after an earlier reply"),
    ({"knowledge": {"carConfigInfo": {"price": None}},
      "history": [{"role": "assistant", "content": "标价8.98万"}]},
     "carConfigInfo.price: null after an earlier reply"),
    ({"knowledge": None}, None),  # no earlier reply: nothing could be stale
])
def test_knowledge_changed(view: dict[str, object], expected: str | None) -> None:
    assert observe("knowledge_changed", **view) == expected


def test_the_latest_earlier_knowledge_is_named_first() -> None:
    assert observe("knowledge_changed", knowledge=None, earlier_knowledge=(CAR, ACCORD)) == \
        "carConfigInfo.archives.mileage: 5.62万公里 → null"


@pytest.mark.parametrize("text, expected", [
    ("不用了，谢谢", "不用了"), ("好的，再见", "再见"), ("我不想留电话", "不想留"),
    ("不用了吗？", None), ("我算了一下，还是贵", None), ("188 0000 0000", None),
    ("这车多少钱", None),
])
def test_user_ended(text: str, expected: str | None) -> None:
    assert observe("user_ended", input=text) == expected


def test_situation_params_are_validated_and_named() -> None:
    with pytest.raises(KeyError, match="unknown situation 'reply_asks'; known situations: "):
        bind_situations(["reply_asks"])
    with pytest.raises(ValueError, match=r"situation 'user_gave_contact': params\.pattern: "
                       r"unknown param \(its params: patterns\)"):
        bind_situations([{"user_gave_contact": {"pattern": ["x"]}}])
    (bound,) = bind_situations([{"user_gave_contact": {"patterns": [r"[\w.]+@[\w.]+"]}}])
    assert bound.observe(TurnView(input="a.b@example.com", reply="")) == "a.b@example.com"


def _ledger(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "rules" / "business-rules.yaml"
    path.parent.mkdir()
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_ledger(path, tmp_path)


def test_an_unknown_situation_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError) as info:
        _ledger(tmp_path, """\
            - id: R-1
              title: t
              check: no_contact_request
              applies_to: {when: user_gave_contct}
            """)
    assert info.value.location.line == 4
    assert "unknown situation 'user_gave_contct'" in str(info.value)


def test_a_switch_forces_a_situated_rule_on_and_false_opts_out(tmp_path: Path) -> None:
    ledger = _ledger(tmp_path, """\
        - id: R-1
          title: t
          check: no_contact_request
          applies_to: {when: user_gave_contact, assertion: no_phone_request}
        """)
    (situated,) = ledger.for_turn(Expected())
    assert [s.type.name for s in situated.when] == ["user_gave_contact"]
    (forced,) = ledger.for_turn(Expected(assertions={"no_phone_request": True}))
    assert forced.when == ()
    assert ledger.for_turn(Expected(assertions={"no_phone_request": False})) == ()


def test_a_fail_example_whose_situation_never_arises_is_caught(tmp_path: Path,
                                                               pytester: pytest.Pytester
                                                               ) -> None:
    """Otherwise the example "proves" a verdict the rule never gives in a run."""
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")
    pytester.path.joinpath("agenteval.yaml").write_text("target: {adapter: builtin}\n")
    rules = pytester.mkdir("rules")
    rules.joinpath("business-rules.yaml").write_text(textwrap.dedent("""\
        - id: R-1
          title: t
          check: no_contact_request
          applies_to: {when: user_gave_contact}
          examples:
            fail:
              - {input: 什么时候联系我, reply: 留个手机号吧}
        """), encoding="utf-8")
    result = pytester.runpytest("rules")
    result.stdout.fnmatch_lines(["*the situation (user_gave_contact) does not arise in this "
                                 "example, so the rule would never see it in a run*"])
    assert result.ret == 1


BOT = '''\
REPLIES = {
    "这车多少钱": "留个手机号，店家联系您。",
    "能便宜点吗": "这台车标价8.98万。方便留个电话吗？",
    "13800000000": "收到，感谢您的信任！",
    "还能便宜吗": "标价8.98万。麻烦再留一下您的手机号。",
    "跑了多少公里": "表显里程3.37万公里。",
}


def reply(turn):
    return {"output": REPLIES.get(turn["input"], "好的")}
'''

CASES = """\
cases:
  - id: ASKS-FIRST
    request: {input: 这车多少钱}
    expected: {behavior: PRICE_NEGOTIATION}
  - id: NO-VALUE
    request: {input: 能便宜点吗, knowledge: {carConfigInfo: {price: {listPrice: 8.98万}}}}
    expected: {behavior: PRICE_NEGOTIATION}
  - id: OPTED-OUT
    request: {input: 这车多少钱}
    expected:
      behavior: PRICE_NEGOTIATION
      assertions: {requires_phone_guidance: false}
scenarios:
  - id: AFTER-PHONE
    knowledge: {carConfigInfo: {price: {listPrice: 8.98万}}}
    turns:
      - input: 13800000000
        expected: {behavior: PHONE_PROVIDED}
      - input: 还能便宜吗
        knowledge: null
        expected: {behavior: PRICE_NEGOTIATION}
"""


def test_a_case_without_switches_gets_the_situated_rules(pytester: pytest.Pytester) -> None:
    """BR-001, BR-009, BR-012 and BR-016 of the shipped ledger, on replies that break them,
    with no ``assertions:`` switch anywhere; ``false`` opts a case out."""
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n", encoding="utf-8")
    pytester.path.joinpath("bot.py").write_text(BOT, encoding="utf-8")
    shutil.copytree(ROOT / "rules", pytester.path / "rules")
    pytester.mkdir("cases").joinpath("a.yaml").write_text(CASES, encoding="utf-8")
    pytester.runpytest("cases", "-p", "no:cacheprovider")
    cases = by_id(read_record(pytester.path))

    def rows(case_id: str, turn: int = 0) -> dict[str, tuple[str, str]]:
        t = cases[case_id]["turns"][turn]
        return {r["rule_id"]: (r["status"], r["trigger"]) for r in t["rules"]
                if r["rule_id"] in ("BR-001", "BR-009", "BR-012", "BR-016")}

    assert rows("ASKS-FIRST") == {
        "BR-001": ("failed", "reply_asks_for_contact: 留个手机号"),
        "BR-012": ("passed", "reply_asks_for_contact: 留个手机号")}
    assert rows("NO-VALUE") == {
        "BR-001": ("passed", "reply_asks_for_contact: 方便留个电话"),
        "BR-012": ("failed", "reply_asks_for_contact: 方便留个电话")}
    assert rows("OPTED-OUT") == {"BR-012": ("passed", "reply_asks_for_contact: 留个手机号")}
    assert cases["OPTED-OUT"]["status"] == "passed"
    # the number is masked in the record, the trigger's quote too
    assert rows("AFTER-PHONE", 0) == {"BR-009": ("passed", "user_gave_contact: 138****0000")}
    assert rows("AFTER-PHONE", 1) == {
        "BR-001": ("passed", "reply_asks_for_contact: 留一下您的手机号"),
        "BR-009": ("failed", "user_gave_contact: 138****0000"),
        "BR-012": ("failed", "reply_asks_for_contact: 留一下您的手机号"),
        "BR-016": ("failed", "knowledge_changed: carConfigInfo.price.listPrice: 8.98万 → null")}
    assert cases["AFTER-PHONE"]["status"] == "failed"
    assert "turn 2: red line BR-009 failed" in cases["AFTER-PHONE"]["failure_reasons"]


def test_a_situation_of_your_own(pytester: pytest.Pytester) -> None:
    """Registered in conftest.py with ``@agenteval.situation``, named in a ledger's ``when``."""
    pytester.makeini("[pytest]\nagenteval_paths = cases\n"
                     "addopts = -p no:benchmark --agenteval-workers=asked\n")
    pytester.path.joinpath("agenteval.yaml").write_text(
        "target: {adapter: python, callable: 'bot:reply'}\n", encoding="utf-8")
    pytester.path.joinpath("bot.py").write_text(
        "def reply(turn):\n    return {'output': '可以贷款，首付两成。'}\n", encoding="utf-8")
    pytester.makeconftest("""
        import pytest_agenteval as agenteval

        @agenteval.situation("user_mentions_loan")
        def user_mentions_loan(p, turn):
            return "贷款" if "贷款" in turn.input else None
    """)
    rules = pytester.mkdir("rules")
    rules.joinpath("business-rules.yaml").write_text(textwrap.dedent("""\
        - id: LOAN-1
          title: 谈贷款必须交给金融专员
          check: keyword_match
          params: {any: [金融专员]}
          applies_to: {when: user_mentions_loan}
        """), encoding="utf-8")
    pytester.mkdir("cases").joinpath("a.yaml").write_text(
        "cases:\n  - {id: LOAN, request: {input: 能贷款吗}}\n"
        "  - {id: OTHER, request: {input: 几点开门}}\n", encoding="utf-8")
    result = pytester.runpytest("cases", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    cases = by_id(read_record(pytester.path))
    (row,) = cases["LOAN"]["turns"][0]["rules"]
    assert (row["rule_id"], row["status"], row["trigger"]) == (
        "LOAN-1", "failed", "user_mentions_loan: 贷款")
    assert cases["OTHER"]["turns"][0]["rules"] == []
    assert SITUATIONS.names().count("user_mentions_loan") == 1
