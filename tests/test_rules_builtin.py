"""Unit tests of the built-in rule types, the registry and rule combination (rules/)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pytest_agenteval
from pytest_agenteval.model.results import RuleRow
from pytest_agenteval.rules import REGISTRY, RuleOutcome, TurnView
from pytest_agenteval.rules.evaluate import RuleCrash, bind, combine

BUILTINS = ["intent_code", "json_schema", "keyword_match", "max_chars", "max_sentences",
            "regex", "response_time"]


def check(name: str, params: dict[str, Any], reply: str = "", **turn: Any) -> RuleOutcome:
    rt = REGISTRY.get(name)
    return rt.check(rt.parse(params), TurnView(input=turn.pop("input", "问"), reply=reply, **turn))


def parse_error(name: str, params: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as info:
        REGISTRY.get(name).parse(params)
    return str(info.value)


@pytest.mark.parametrize("params, reply, status, score", [
    ({"any": ["万公里", "公里"]}, "跑了3万公里", "passed", 1.0),
    ({"any": ["微信", "电话"]}, "您好", "failed", 0.0),
    ({"all": ["店家", "确认"]}, "请店家确认", "passed", 1.0),
    ({"all": ["店家", "确认", "安排"]}, "请店家确认", "failed", 2 / 3),
    ({"none": ["微信", "vx"]}, "留个手机号吧", "passed", 1.0),
    ({"none": ["微信", "vx"]}, "加我微信", "failed", 0.5),
    ({"any": ["a", "b"], "all": ["c", "d"], "none": ["e", "f"]}, "a c e", "failed", 3 / 5),
    ({"any": ["x"], "all": ["c"], "none": ["e"]}, "c", "failed", 2 / 3),
])
def test_keyword_match_status_and_score(params: dict[str, Any], reply: str, status: str,
                                        score: float) -> None:
    out = check("keyword_match", params, reply)
    assert out.status == status
    assert out.score == pytest.approx(score)


def test_keyword_match_reasons_and_evidence() -> None:
    out = check("keyword_match", {"all": ["店家"], "none": ["微信", "加V"]}, "加V聊，微信也行")
    assert out.reason == "missing [店家]; forbidden [微信 | 加V] found"
    assert out.evidence == "微信, 加V"
    assert check("keyword_match", {"any": ["电话"]}, "好的").reason == "none of [电话] found"
    ok = check("keyword_match", {"any": ["微信", "电话"], "all": ["店"]}, "店里电话")
    assert (ok.status, ok.evidence) == ("passed", "电话, 店")


def test_keyword_match_case() -> None:
    assert check("keyword_match", {"any": ["VIP"]}, "尊贵的vip").status == "failed"
    assert check("keyword_match", {"any": ["VIP"], "ignore_case": True},
                 "尊贵的vip").status == "passed"
    assert check("keyword_match", {"none": ["wechat"], "ignore_case": True},
                 "add me on WeChat").evidence == "wechat"


@pytest.mark.parametrize("term, reply", [("VIP", "ＶＩＰ客户"), ("3.37万", "３.３７万公里"),
                                         ("１３８", "138")])
def test_keyword_match_full_width_letters_and_digits(term: str, reply: str) -> None:
    assert check("keyword_match", {"all": [term]}, reply).status == "passed"


@pytest.mark.parametrize("reply, said", [
    ("非常抱歉让您久等了", True),
    ("没什么需要道歉的，车况就是这样", False),          # negated
    ("我这边为什么要说抱歉呢？", False),              # rhetorical
    ("您说“连句对不起都没有”，我记下了", False),       # quoted, not said
    ("您说的“服务差”我们认，真的非常抱歉", True),      # said outside the quote
    ("不如先说声抱歉：给您添麻烦了", True),            # 「不如」 negates nothing
])
def test_keyword_match_said(reply: str, said: bool) -> None:
    params = {"any": ["抱歉", "对不起", "道歉", "给您添麻烦"], "said": True}
    assert (check("keyword_match", params, reply).status == "passed") is said
    # without ``said`` a term counts wherever it stands
    assert check("keyword_match", {"any": ["抱歉", "对不起", "道歉"]}, reply).status == "passed"


def test_keyword_match_needs_some_terms() -> None:
    assert "give at least one of any, all, none" in parse_error("keyword_match", {})


def test_regex_must_match() -> None:
    out = check("regex", {"pattern": r"1[3-9]\d{9}"}, "请拨打13800000000")
    assert (out.status, out.evidence) == ("passed", "13800000000")
    miss = check("regex", {"pattern": r"1[3-9]\d{9}"}, "请留电话")
    assert (miss.status, miss.evidence) == ("failed", "请留电话")
    assert "not found" in miss.reason


def test_regex_must_not_match_and_full_width_digits() -> None:
    out = check("regex", {"pattern": "微信|vx", "must_match": False}, "加vx")
    assert (out.status, out.evidence) == ("failed", "vx")
    assert check("regex", {"pattern": "微信", "must_match": False}, "好").status == "passed"
    digits = check("regex", {"pattern": r"\d{3}"}, "编号１２３")
    assert (digits.status, digits.evidence) == ("passed", "１２３")


def test_regex_invalid_pattern_rejected_at_parse() -> None:
    msg = parse_error("regex", {"pattern": "([unclosed"})
    assert msg.startswith("rule type 'regex': params.pattern: ")
    assert "not a valid regular expression" in msg


@pytest.mark.parametrize("pattern, reply", [("您好！", "您好!"), ("[，]", "好,的"),
                                            ("价格?", "价格？")])
def test_regex_punctuation_matches_either_width(pattern: str, reply: str) -> None:
    assert check("regex", {"pattern": pattern}, reply).status == "passed"


@pytest.mark.parametrize("pattern, reply, status", [
    ("价格（元）", "价格（元）", "passed"),
    ("价格？", "价格", "failed"),
    ("［限时］", "限", "failed"),
    ("（", "（", "passed"),
])
def test_regex_full_width_metacharacters_stay_literal(pattern: str, reply: str,
                                                     status: str) -> None:
    assert check("regex", {"pattern": pattern}, reply).status == status


@pytest.mark.parametrize("reply, count", [
    ("您好。请问有什么可以帮您？", 2),
    ("您好。", 1),
    ("您好", 1),
    ("", 0),
    ("。。。", 0),
    ("真的吗？！", 1),
    ("Hi! How are you? Fine; thanks", 4),
    ("第一句；第二句;第三句", 3),
    ("一\n二\n\n三", 3),
    ("好的……那我们再看看吧。", 1),
    ("好的...稍等。请留电话！", 2),
    ("价格3.5万.", 1),
])
def test_max_sentences_counting(reply: str, count: int) -> None:
    out = check("max_sentences", {"n": 2}, reply)
    assert out.reason == f"{count} sentences (max 2)"
    assert out.status == ("passed" if count <= 2 else "failed")


def test_max_sentences_evidence_and_score() -> None:
    out = check("max_sentences", {"n": 1}, "您好！请问要看车吗？ 留个电话。")
    assert out.evidence == "您好 | 请问要看车吗 | 留个电话"
    assert out.score == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match=r"params\.n"):
        REGISTRY.get("max_sentences").parse({"n": 0})


@pytest.mark.parametrize("reply, n, status", [
    ("一二三四五", 5, "passed"),
    ("一二三四五六", 5, "failed"),
    ("  一二三  ", 3, "passed"),
    ("ＡＢＣ", 3, "passed"),
])
def test_max_chars(reply: str, n: int, status: str) -> None:
    assert check("max_chars", {"n": n}, reply).status == status
    long = check("max_chars", {"n": 3}, "一二三四五六")
    assert (long.reason, long.score) == ("6 characters (max 3)", 0.5)


def test_max_chars_counts_ellipsis_as_written() -> None:
    assert check("max_chars", {"n": 4}, "好的……").reason == "4 characters (max 4)"


@pytest.mark.parametrize("latency, status, score", [
    (100.0, "passed", 1.0),
    (200.0, "passed", 1.0),
    (400.0, "failed", 0.5),
    (800.0, "failed", 0.25),
    (0.0, "passed", 1.0),
])
def test_response_time(latency: float, status: str, score: float) -> None:
    out = check("response_time", {"max_ms": 200}, latency_ms=latency)
    assert (out.status, out.score) == (status, score)
    assert out.evidence == f"{latency:.0f} ms"
    na = check("response_time", {"max_ms": 200})  # no latency measured
    assert (na.status, na.score) == ("not_applicable", None)


# --- json_schema ----------------------------------------------------------------------------

SCHEMA = {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}


def test_json_schema_valid_and_invalid() -> None:
    assert check("json_schema", {"schema": SCHEMA}, '{"a": 1}').status == "passed"
    bad = check("json_schema", {"schema": SCHEMA}, '{"a": "x"}')
    assert bad.status == "failed"
    assert bad.reason == "1 schema violation(s); first at a: 'x' is not of type 'integer'"
    assert bad.evidence == '"x"'
    missing = check("json_schema", {"schema": SCHEMA}, "{}")
    assert "first at (root): 'a' is a required property" in missing.reason


def test_json_schema_not_json() -> None:
    out = check("json_schema", {"schema": SCHEMA}, "好的，{a: 1}")
    assert out.status == "failed"
    assert out.reason.startswith("the reply is not JSON")
    assert out.evidence == "好的，{a: 1}"


def test_json_schema_invalid_schema_rejected_at_parse() -> None:
    msg = parse_error("json_schema", {"schema": {"type": "nope"}})
    assert msg.startswith("rule type 'json_schema': params.schema: ")
    assert "not a valid JSON schema" in msg


@pytest.mark.parametrize("params, code, name, status", [
    ({"code": 9}, 9, None, "passed"),
    ({"code": 9}, "9", None, "passed"),
    ({"code": "9"}, 9, None, "passed"),
    ({"code": 9}, 10, None, "failed"),
    ({"name": "留资"}, None, "留资", "passed"),
    ({"name": "留资"}, 9, "咨询", "failed"),
])
def test_intent_code(params: dict[str, Any], code: Any, name: Any, status: str) -> None:
    out = check("intent_code", params, intent_code=code, intent_name=name)
    assert out.status == status


def test_intent_code_api_returned_none_fails() -> None:
    out = check("intent_code", {"code": 9})
    assert (out.status, out.reason) == ("failed", "expected intent code 9, the API returned none")
    by_name = check("intent_code", {"name": "留资"}, intent_code=9)
    assert by_name.status == "failed"
    assert "the API returned none" in by_name.reason


@pytest.mark.parametrize("params", [{}, {"code": 9, "name": "留资"}])
def test_intent_code_needs_exactly_one(params: dict[str, Any]) -> None:
    assert "give exactly one of code, name" in parse_error("intent_code", params)


def test_registry_knows_the_builtins() -> None:
    assert set(BUILTINS) <= set(REGISTRY.names())


def test_unknown_type_lists_known_names() -> None:
    with pytest.raises(KeyError) as info:
        REGISTRY.get("keywords_match")
    msg = info.value.args[0]
    assert msg.startswith("unknown rule type 'keywords_match'; known types: ")
    assert all(name in msg for name in BUILTINS)


def test_unknown_param_is_named() -> None:
    msg = parse_error("keyword_match", {"any": ["a"], "anny": ["b"]})
    assert msg == ("rule type 'keyword_match': params.anny: unknown param "
                   "(its params: any, all, none, ignore_case, said)")


def test_bind_validates() -> None:
    with pytest.raises(KeyError):
        bind("nope", {}, "R1")
    with pytest.raises(ValueError, match=r"params\.n"):
        bind("max_chars", {"n": "many"}, "R1")
    bound = bind("max_chars", {"n": 2}, "BR-9", weight=2.0, veto=True, origin="ledger")
    row = bound.evaluate(TurnView(input="", reply="一二三"))
    assert row.model_dump() == {"rule_id": "BR-9", "type": "max_chars", "status": "failed",
                                "reason": "3 characters (max 2)", "evidence": "一二三",
                                "score": pytest.approx(2 / 3), "weight": 2.0, "veto": True,
                                "layer": "L1", "origin": "ledger", "trigger": ""}


class Polite(pytest_agenteval.Params):
    words: tuple[str, ...] = ("您",)


@pytest.fixture
def custom_rules() -> Iterator[None]:
    yield
    for name in ("t_uses_polite_form", "t_crashes", "t_async"):
        REGISTRY._types.pop(name, None)  # no public unregister; keep the registry clean


@pytest.mark.usefixtures("custom_rules")
def test_custom_rule_registered_with_decorator() -> None:
    @pytest_agenteval.rule("t_uses_polite_form", params=Polite)
    def uses_polite(p: Polite, turn: TurnView) -> RuleOutcome:
        hit = next((w for w in p.words if w in turn.reply), None)
        return RuleOutcome.decide(hit is not None, "polite form", hit or "")

    assert "t_uses_polite_form" in REGISTRY.names()
    assert check("t_uses_polite_form", {}, "您好").status == "passed"
    assert check("t_uses_polite_form", {"words": ["请"]}, "你好").status == "failed"
    assert "params.word: unknown param" in parse_error("t_uses_polite_form", {"word": []})


@pytest.mark.usefixtures("custom_rules")
def test_rule_that_raises_gives_an_error_row_with_the_users_traceback() -> None:
    @pytest_agenteval.rule("t_crashes")
    def crashes(p: pytest_agenteval.NoParams, turn: TurnView) -> RuleOutcome:
        raise ZeroDivisionError("boom")

    crash = asyncio.run(bind("t_crashes", {}, "X-1").aevaluate(TurnView(input="a", reply="b")))
    assert isinstance(crash, RuleCrash)
    row = crash.row
    assert (row.rule_id, row.type, row.status, row.score) == ("X-1", "t_crashes", "error", None)
    assert row.reason.startswith("rule type 't_crashes' raised ZeroDivisionError: boom at ")
    assert row.reason.endswith(f"test_rules_builtin.py:{_line_of('raise ZeroDivisionError')}")
    assert 'raise ZeroDivisionError("boom")' in crash.traceback
    assert "evaluate.py" not in crash.traceback and "_registry.py" not in crash.traceback
    # outside the engine (ledger examples) the exception propagates, for pytest to show
    with pytest.raises(ZeroDivisionError):
        bind("t_crashes", {}, "X-1").evaluate(TurnView(input="a", reply="b"))


@pytest.mark.usefixtures("custom_rules")
def test_an_async_rule_type_is_awaited() -> None:
    @pytest_agenteval.rule("t_async")
    async def slow(p: pytest_agenteval.NoParams, turn: TurnView) -> RuleOutcome:
        await asyncio.sleep(0)
        return RuleOutcome.decide("您" in turn.reply, "polite form")

    bound = bind("t_async", {}, "A-1")
    assert bound.rule_type.is_async
    row = asyncio.run(bound.aevaluate(TurnView(input="a", reply="您好")))
    assert isinstance(row, RuleRow) and row.status == "passed"
    assert bound.evaluate(TurnView(input="a", reply="你好")).status == "failed"


@pytest.mark.usefixtures("custom_rules")
def test_a_rule_type_that_returns_no_outcome_is_a_crash() -> None:
    @pytest_agenteval.rule("t_crashes")
    def sloppy(p: pytest_agenteval.NoParams, turn: TurnView) -> RuleOutcome:
        return True  # type: ignore[return-value]

    crash = asyncio.run(bind("t_crashes", {}, "X-1").aevaluate(TurnView(input="a", reply="b")))
    assert isinstance(crash, RuleCrash)
    assert "returned bool, not a RuleOutcome" in crash.row.reason


def _line_of(text: str) -> int:
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line and "_line_of" not in line)


def _row(status: str, score: float | None = None, weight: float = 1.0) -> RuleRow:
    if score is None and status != "not_applicable":
        score = 1.0 if status == "passed" else 0.0
    return RuleRow(rule_id="R", type="t", status=status, score=score,  # type: ignore[arg-type]
                   weight=weight)


def test_combine_all() -> None:
    res = combine([_row("passed"), _row("failed"), _row("passed")], "all", 0.7)
    assert (res.passed, res.score) == (False, pytest.approx(2 / 3))
    assert res.reason == "all: 2 of 3 rules passed"
    assert combine([_row("passed"), _row("passed")], "all", 0.7).passed is True


def test_combine_any() -> None:
    res = combine([_row("failed"), _row("passed"), _row("failed"), _row("failed")], "any", 0.7)
    assert (res.passed, res.score, res.reason) == (True, 0.25, "any: 1 of 4 rules passed")
    assert combine([_row("failed")], "any", 0.7).passed is False


def test_combine_weighted_with_threshold() -> None:
    rows = [_row("passed", weight=3), _row("failed", weight=1)]
    assert combine(rows, "weighted", 0.75).passed is True
    res = combine(rows, "weighted", 0.8)
    assert (res.passed, res.score) == (False, 0.75)
    assert res.reason == "weighted score 0.75 (threshold 0.8)"
    partial = [_row("failed", score=0.5, weight=1), _row("passed", weight=1)]
    assert combine(partial, "weighted", 0.7).score == 0.75  # partial scores count


def test_combine_ignores_not_applicable() -> None:
    rows = [_row("not_applicable"), _row("passed"), _row("not_applicable", weight=10)]
    assert combine(rows, "all", 0.7).score == 1.0
    assert combine(rows, "weighted", 0.9).passed is True
    only_na = combine([_row("not_applicable")], "all", 0.7)
    assert (only_na.passed, only_na.score) == (True, None)
    assert combine([], "any", 0.7).reason == "no applicable explicit rule"
