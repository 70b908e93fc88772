"""Customer-service and knowledge rule types, with the false-positive traps."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agenteval.rules import REGISTRY, TurnView


def check(name: str, reply: str, params: dict[str, Any] | None = None, **turn: Any):
    rt = REGISTRY.get(name)
    return rt.check(rt.parse(params or {}), TurnView(input=turn.pop("input", "你好"),
                                                     reply=reply, **turn))


@pytest.mark.parametrize("reply", ["店家细说", "具体让销售核算一下", "稍后销售对接您",
                                   "这个需要负责人核实", "门店安排好后通知您", "让销售为您核算"])
def test_handoff_accepts_party_plus_action(reply: str) -> None:
    out = check("handoff", reply)
    assert out.status == "passed" and out.evidence


@pytest.mark.parametrize(("reply", "evidence"), [
    ("留个电话，验光师会致电跟您约验光时间", "验光师会致电"),
    ("这个让美容师看看", "让美容师"),  # the verb before a trade's role is not part of it
    ("这事让王经理定", "让王经理"),
    ("您留个电话，店家算好后把最低价告诉您", "店家算好后把最低价告诉您"),
])
def test_handoff_parties_of_any_trade(reply: str, evidence: str) -> None:
    out = check("handoff", reply)
    assert (out.status, out.evidence) == ("passed", evidence)


@pytest.mark.parametrize("reply", ["我确认一下", "您好，店家在上海", "这个不需要店家确认",
                                   "核实后告诉您"])
def test_handoff_rejects_bare_action_bare_party_and_negation(reply: str) -> None:
    assert check("handoff", reply).status == "failed"


@pytest.mark.parametrize(("reply", "evidence"), [
    ("方便留个手机号吗？", "方便留个手机"),
    ("您的电话是多少", "电话是多少"),
    ("麻烦再留一下您的手机号，店家核算后第一时间告诉您", "留一下您的手机号"),
    ("方便的话给我们留个联系方式", "方便的话给我们留个联系方式"),
])
def test_contact_requests_are_found(reply: str, evidence: str) -> None:
    assert check("asks_for_contact", reply).evidence == evidence
    out = check("no_contact_request", reply)
    assert (out.status, out.evidence) == ("failed", evidence)


@pytest.mark.parametrize("reply", ["手机号已收到，店家会电话联系您", "好的，您有需要再联系",
                                   "不用再留手机号了，我们已经记下", "请留意来电",
                                   "店家会给您打电话"])
def test_mentions_of_a_phone_are_not_requests(reply: str) -> None:
    assert check("no_contact_request", reply).status == "passed"
    assert check("asks_for_contact", reply).status == "failed"


def test_channel_offers_and_the_traps() -> None:
    assert check("channel_not_offered", "您可以加我们微信").status == "failed"
    assert check("channel_not_offered", "加个VX吧").status == "failed"
    assert check("channel_not_offered", "不方便加微信，留个手机号吧").status == "passed"
    assert check("channel_not_offered", "我们暂不支持微信沟通").status == "passed"
    assert check("channel_not_offered", "加微信不方便，留手机号吧").status == "passed"
    mentioned = check("channel_not_offered", "好的加微信", input="能加微信吗")
    assert mentioned.status == "not_applicable"
    earlier = check("channel_not_offered", "好的加微信", input="好",
                    history=[{"role": "user", "content": "有vx吗"}])
    assert earlier.status == "not_applicable"
    strict = check("channel_not_offered", "好的加微信", {"unless_user_mentions": False},
                   input="能加微信吗")
    assert strict.status == "failed"


@pytest.mark.parametrize("reply", ["最低给您8.5万，保证这个价", "这台车保证没有事故",
                                   "现车一定有，随时可以来", "明天下午试驾肯定没问题"])
def test_promises_on_real_time_topics_fail(reply: str) -> None:
    out = check("no_commitment", reply)
    assert out.status == "failed" and out.evidence


@pytest.mark.parametrize("reply", ["价格以店家核算为准", "车况无法保证，以检测报告为准",
                                   "优惠让销售为您核算一下", "我一定帮您转达给店家",
                                   "这台车3.37万公里"])
def test_disclaimers_handoffs_and_facts_are_not_promises(reply: str) -> None:
    assert check("no_commitment", reply).status == "passed"


def test_states_value() -> None:
    assert check("states_value", "具体年份让店家确认").evidence == "具体年份"
    assert check("states_value", "留个电话，销售核算后告诉您").status == "passed"
    assert check("states_value", "确认一下").status == "failed"


def test_order_first_before_then() -> None:
    params = {"first": ["抱歉"], "then": ["手机号", "优惠"]}
    assert check("order", "非常抱歉，留个手机号吧", params).status == "passed"
    assert check("order", "留个手机号吧，抱歉", params).status == "failed"
    assert check("order", "留个手机号吧", params).status == "failed"
    assert check("order", "非常抱歉给您添麻烦了", params).status == "not_applicable"


def test_ends_politely() -> None:
    assert check("ends_politely", "好的，您有需要再联系").status == "passed"
    assert check("ends_politely", "好的，再见，祝您生活愉快").status == "passed"
    assert check("ends_politely", "好的，最近有优惠活动哦").evidence == "优惠"
    assert check("ends_politely", "好的，留个电话吧").evidence == "留个电话"


KNOWLEDGE = {"carConfigInfo": {"archives": {"mileage": "3.37万公里", "firstRegDate": "2021-06",
                                            "transferCount": 0},
                               "price": {"listPrice": "8.98万"}}}


@pytest.mark.parametrize(("reply", "value"), [
    ("这台车跑了33700公里", "3.37万公里"), ("跑了33,700公里", "3.37万公里"),
    ("2021年6月上牌", "2021-06"), ("白色的车", "白色"), ("ＷＥＹ品牌", "wey"),
])
def test_knowledge_points_by_value(reply: str, value: str) -> None:
    out = check("knowledge_points", reply, knowledge_points=[{"path": "x", "value": value}])
    assert out.status == "passed"


def test_knowledge_points_missing_and_not_applicable() -> None:
    points = [{"path": "a", "value": "3.37万公里"}, {"path": "b", "value": "2021-06"}]
    out = check("knowledge_points", "2021年6月上牌", knowledge_points=points)
    assert out.status == "failed" and out.score == 0.5 and "a=3.37万公里" in out.reason
    assert check("knowledge_points", "x").status == "not_applicable"


def test_grounded_numbers() -> None:
    def grounded(reply: str, **kw: Any) -> str:
        return check("grounded_numbers", reply, knowledge=KNOWLEDGE, **kw).status

    assert grounded("跑了3.37万公里，标价8.98万") == "passed"
    assert grounded("跑了33700公里") == "passed"
    assert grounded("跑了3万多公里，24小时内回复您") == "passed"
    assert grounded("最低8.5万") == "failed"
    assert grounded("您的号码13800000000已记录", input="13800000000") == "passed"
    history = [{"role": "assistant", "content": "标价8.98万"}]
    no_knowledge = check("grounded_numbers", "标价8.98万", {"sources": ["knowledge", "input"]},
                         history=history)
    assert (no_knowledge.status, no_knowledge.evidence) == ("failed", "8.98万")
    assert check("grounded_numbers", "标价8.98万", history=history).status == "passed"


@pytest.mark.parametrize("text, numbers", [
    ("三万三千七百公里", [33700.0]), ("八万五就能开走", [85000.0]), ("三千五", [3500.0]),
    ("两万零五百", [20500.0]), ("十一月到店", [11.0]), ("3.37w公里", [33700.0]),
    ("晚上6点关门", [18.0]), ("下午3点半", [15.0, 30.0]), ("早上9点开门", [9.0]),
    # no numbers: 「十分」 (very), 「万一」 (in case), 「千万」 (by all means), a lone 「一次」
    ("十分感谢，万一有变千万别急，一次说清", []), ("两把钥匙", []),
    ("支持5W快充", [5.0]), ("标价8.98W。", [89800.0]),
    # tens before a measure word; not a range (「七八个」), nor 「十分钟」's lone 十
    ("精修三十张，送五十寸相框", [30.0, 50.0]), ("九十九元", [99.0]), ("七八个人", []),
    ("二十四小时营业", [24.0]),
])
def test_numbers_in_words(text: str, numbers: list[float]) -> None:
    from pytest_agenteval.rules._text import numbers as read
    assert [v for _, v in read(text)] == numbers


def test_knowledge_not_used() -> None:
    assert check("knowledge_not_used", "那台车让店家帮您查", knowledge=KNOWLEDGE).status == (
        "passed")
    out = check("knowledge_not_used", "那台车跑了3.37万公里", knowledge=KNOWLEDGE)
    assert (out.status, out.evidence) == ("failed", "3.37万公里")
    assert check("knowledge_not_used", "营业到18:00，0次过户", knowledge=KNOWLEDGE).status == (
        "passed")
    assert check("knowledge_not_used", "x").status == "not_applicable"
    # an approximation with its unit is this car's fact; with another unit, or a year, not
    out = check("knowledge_not_used", "那台大概三万多公里吧", knowledge=KNOWLEDGE)
    assert out.status == "failed"
    assert check("knowledge_not_used", "那台大概三万多块吧", knowledge=KNOWLEDGE).status == (
        "passed")
    assert check("knowledge_not_used", "那台大概三万多公里吧", knowledge=KNOWLEDGE,
                 params={"tolerance": 0}).status == "passed"


def test_bad_patterns_fail_at_parse() -> None:
    with pytest.raises(ValueError, match="not a valid regular expression"):
        REGISTRY.get("channel_not_offered").parse({"channels": ["(微信"]})
    with pytest.raises(ValueError, match="first"):
        REGISTRY.get("order").parse({"then": ["x"]})


def test_folded_texts_are_kept_only_when_short() -> None:
    """A turn's reply is folded once for all its rules; a long text is folded each time,
    so the cache never holds more than its size times KEEP_CHARS characters."""
    from pytest_agenteval.rules import _text

    short = "請留下您的手機號碼，萬分感謝" + "x" * 7  # unique to this test
    before = _text._fold_kept.cache_info()
    assert _text.normalize(short) == "请留下您的手机号码,万分感谢" + "x" * 7
    assert _text.normalize(short) is _text.normalize(short)
    after = _text._fold_kept.cache_info()
    assert (after.misses, after.hits) == (before.misses + 1, before.hits + 2)
    long = "還" * (_text.KEEP_CHARS + 1)
    assert _text.normalize(long) == "还" * (_text.KEEP_CHARS + 1)
    assert _text._fold_kept.cache_info().currsize == after.currsize


def test_order_takes_the_shared_contact_request() -> None:
    """``contact_request: true`` orders a contact request as every contact rule finds it."""
    params = {"first": ["抱歉"], "contact_request": True}
    assert check("order", "怎么联系您比较方便？抱歉。", params).status == "failed"
    assert check("order", "Please leave your phone number. Sorry.",
                 {"first": ["sorry"], "contact_request": True}).status == "failed"
    assert check("order", "抱歉！您的手机号已收到。", params).status == "not_applicable"
    assert check("order", "抱歉，怎么联系您比较方便？", params).status == "passed"
    with pytest.raises(ValueError, match="no move to order"):
        REGISTRY.get("order").parse({"first": ["抱歉"]})


def test_not_after_stops_name_without_saying() -> None:
    params = {"trigger": ["别推荐"], "forbidden": ["活动"], "stops": ["停掉了"]}
    history = [{"role": "user", "content": "别推荐了"}, {"role": "assistant", "content": "好的"}]
    said = "已帮您停掉了所有活动推荐。"  # (「已帮您关闭活动推荐」 is a negation itself)
    assert check("not_after", said, params, history=history).status == "passed"
    assert check("not_after", said, {**params, "stops": []}, history=history).status == "failed"


def test_knowledge_not_used_title_names_this_item() -> None:
    knowledge = {"car": {"title": "2021款 大众朗逸", "price": "8.98万"}}
    params = {"paths": ["car"], "title": "car.title"}
    labelled = "思域查不到。您可以看看这台朗逸，标价8.98万。"
    assert check("knowledge_not_used", labelled, params, input="思域多少钱",
                 knowledge=knowledge).status == "passed"
    assert check("knowledge_not_used", labelled, {"paths": ["car"]}, input="思域多少钱",
                 knowledge=knowledge).status == "failed"
    # the user named the model too (another 朗逸): the name tells nothing apart
    assert check("knowledge_not_used", "那台朗逸标价8.98万。", params, input="2019款朗逸多少钱",
                 knowledge=knowledge).status == "failed"


# --- a vocabulary's first-characters filter -------------------------------------------------


@pytest.mark.parametrize("pattern, starts", [
    ("保证|一定", {"保", "一"}),
    ("(?<!会)不会(再)?(变|涨)", {"不"}),
    (r"\d+万", set("0123456789")),
    ("(您|你)?留", {"您", "你", "留"}),
    ("ok", {"o", "O"}),
])
def test_the_characters_a_match_starts_with(pattern: str, starts: set[str]) -> None:
    from pytest_agenteval.rules._text import _starts

    got = _starts(pattern)
    assert got is not None and starts <= set(got)
    assert all(c.isdecimal() for c in set(got) - starts) or not (set(got) - starts - {
        c.upper() for c in starts} - {c.lower() for c in starts})


@pytest.mark.parametrize("pattern", ["a?", r"\w+", "[^a]", ".x", "(?:x|)", "(a)*b?"])
def test_no_filter_where_a_match_can_start_anywhere(pattern: str) -> None:
    from pytest_agenteval.rules._text import _starts

    assert _starts(pattern) is None


def test_every_vocabulary_finds_the_same_with_its_filter() -> None:
    """Every vocabulary of the rule types and of the shipped ledger finds, with its
    first-characters filter, exactly what it finds without it, in every trap text."""
    import re
    from pathlib import Path

    from pytest_agenteval.rules import _dialog, _judged, _knowledge, _situation
    from pytest_agenteval.rules._text import compile_any, fold_pattern, normalize
    from pytest_agenteval.yamlio import load_yaml

    root = Path(__file__).resolve().parent.parent
    texts: set[str] = set()
    for path in sorted((root / "tests" / "data").glob("*traps*.yaml")):
        for entry in load_yaml(path).data:
            for key in ("reply", "input", "text"):
                if isinstance(entry.get(key), str):
                    texts.add(normalize(entry[key]))
    vocabularies: list[tuple[str, ...]] = []
    for module in (_dialog, _judged, _knowledge, _situation):
        vocabularies += [v for v in vars(module).values()
                         if isinstance(v, tuple) and v and all(isinstance(p, str) for p in v)]
    vocabularies += [tuple(v) for v in _dialog.TOPICS.values()]
    ledger = load_yaml(root / "rules" / "business-rules.yaml").data
    for rule in ledger if isinstance(ledger, list) else ledger["rules"]:
        for value in (rule.get("params") or {}).values():
            if isinstance(value, list) and value and all(isinstance(p, str) for p in value):
                vocabularies.append(tuple(value))
    sample = sorted(texts)[::6]  # a sixth of them: a few hundred texts of every kind
    filtered = 0
    for vocabulary in dict.fromkeys(vocabularies):  # each once
        try:
            plain = re.compile("|".join(f"(?:{fold_pattern(p)})" for p in vocabulary),
                               re.IGNORECASE)
        except re.error:  # not a vocabulary (a list of whole regexes with flags of their own)
            continue
        fast = compile_any(vocabulary)
        assert fast is not None
        filtered += fast.pattern.startswith("(?=[")
        for text in sample:
            assert ([m.span() for m in fast.finditer(text)]
                    == [m.span() for m in plain.finditer(text)]), (vocabulary[:3], text)
    assert filtered >= 10  # the filter is in use, not silently off


@pytest.mark.parametrize("name", ["_SELF_SERVED", "_DISCLAIMED", "_PRECONDITION"])
def test_a_clause_pattern_tried_at_clause_starts_finds_what_a_full_search_does(
        name: str) -> None:
    """A pattern that takes a whole clause is tried only where a clause starts (and after
    its own end): it substitutes exactly what the same pattern tried everywhere does, in
    every trap text and in texts made to need the positions it skips."""
    import re
    from pathlib import Path

    from pytest_agenteval.rules import _dialog
    from pytest_agenteval.rules._text import normalize
    from pytest_agenteval.yamlio import load_yaml

    fast = getattr(_dialog, name)
    start = fast.pattern.index(")") + 1  # the lookbehind it starts with
    assert fast.pattern.startswith("(?<![^")
    everywhere = re.compile(fast.pattern[start:], fast.flags)
    root = Path(__file__).resolve().parent.parent
    texts = {"分期方案需要店家确认～还要核实一下，价格以店家核算为准",
             "需要确认~需要核实~好的", "可以在官网下载，也可以去公众号查看\n最终以到店为准。",
             "您说了不算吗？我也不确定；报价单要店家核算"}
    for path in sorted((root / "tests" / "data").glob("*traps*.yaml")):
        for entry in load_yaml(path).data:
            texts.update(normalize(entry[k]) for k in ("reply", "text")
                         if isinstance(entry.get(k), str))
    changed = 0
    for text in texts:
        want = everywhere.sub("，", text)
        assert fast.sub("，", text) == want, text
        changed += want != text
    assert changed >= 3  # the texts exercise the pattern, not only its misses
