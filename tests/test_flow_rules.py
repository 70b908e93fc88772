"""Conversation-level rule types (dialog_order, not_after) against replies written to break
them: other phrasings, the obligation's start, negations, the user lifting a ban."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agenteval.rules import REGISTRY
from pytest_agenteval.rules._registry import TurnView

APOLOGY = ["抱歉", "对不起", "不好意思", "给您带来不便"]
LEAD = ["留.{0,4}(手机|电话)", "手机号", "加.{0,2}微信"]
ORDER = {"since_user": ["投诉", "太差", "坑", "失望"], "first": APOLOGY, "then": LEAD}
NO_PUSH = {"trigger": ["(别|不要|不用)(再)?(给我)?推荐"], "forbidden": ["推荐", "类似的车"],
           "lifted_by": ["有没有.{0,8}车"]}


def _check(rule: str, params: dict[str, Any], reply: str, user: str,
           history: list[tuple[str, str]] = ()) -> str:  # type: ignore[assignment]
    rt = REGISTRY.get(rule)
    view = TurnView(input=user, reply=reply,
                    history=[{"role": r, "content": c} for r, c in history])
    return rt.evaluate(rt.parse(params), view).status


COMPLAINED = [("user", "你们服务太差了"), ("assistant", "已记录，会安排专人跟进。")]
APOLOGISED = [("user", "你们服务太差了"), ("assistant", "非常抱歉，已记录。")]


@pytest.mark.parametrize(("reply", "user", "history", "status"), [
    ("留个手机号吧", "多少钱", COMPLAINED, "failed"),                 # no apology in the dialog
    ("方便留个电话吗", "还在吗", COMPLAINED, "failed"),               # another phrasing
    ("加个微信聊吧", "嗯", COMPLAINED, "failed"),
    ("留个手机号吧", "多少钱", APOLOGISED, "passed"),                 # apologised before
    ("不好意思让您久等，留个电话吧", "多少钱", COMPLAINED, "passed"),  # earlier in this reply
    ("留个电话吧，给您带来不便了", "多少钱", COMPLAINED, "failed"),   # after the move
    ("留个手机号吧", "多少钱", [], "not_applicable"),                  # nobody complained
    ("标价8.98万", "多少钱", COMPLAINED, "not_applicable"),            # no lead move
    ("不会再让您留手机号了", "别问了", COMPLAINED, "not_applicable"),  # a negated move
    ("留个手机号，店家核算", "你们这价格太坑了，能便宜吗", [], "failed"),  # complaint this turn
])
def test_dialog_order(reply: str, user: str, history: list[tuple[str, str]],
                      status: str) -> None:
    assert _check("dialog_order", ORDER, reply, user, history) == status


BANNED = [("user", "别再推荐了，就看这台"), ("assistant", "好的。")]


@pytest.mark.parametrize(("reply", "user", "history", "status"), [
    ("店里还有一台类似的车，要看看吗", "过户几次", BANNED, "failed"),
    ("给您推荐一台更便宜的", "嗯", BANNED, "failed"),
    ("过户0次", "过户几次", BANNED, "passed"),
    ("好的，不会再给您推荐了", "好", BANNED, "passed"),                 # negated
    ("给您推荐一台更便宜的", "那有没有便宜点的车", BANNED, "not_applicable"),  # lifted
    ("给您推荐一台更便宜的", "嗯", [], "not_applicable"),                # never banned
    ("最近有类似的车降价", "不用推荐", [], "failed"),                    # banned this turn
])
def test_not_after(reply: str, user: str, history: list[tuple[str, str]],
                   status: str) -> None:
    assert _check("not_after", NO_PUSH, reply, user, history) == status


#: after the agent booked the test drive, it does not offer to book again unless the user
#: asks to change it
NO_REBOOK = {"trigger": ["已为您(预约|安排)"], "trigger_by": "agent", "forbidden": ["预约"],
             "lifted_by": ["改(约|时间)|换个时间"]}
BOOKED = [("user", "想周六试驾"), ("assistant", "已为您预约周六上午试驾。")]


@pytest.mark.parametrize(("reply", "user", "history", "status"), [
    ("我再帮您预约一次试驾吧", "车况怎么样", BOOKED, "failed"),
    ("车况良好，无事故", "车况怎么样", BOOKED, "passed"),
    ("好的，为您预约周日上午", "能改时间到周日吗", BOOKED, "not_applicable"),  # lifted
    ("好的，为您预约周日上午", "周日呢", [*BOOKED, ("user", "我想改约"), ("assistant", "好的")],
     "not_applicable"),                                                    # lifted earlier
    ("要不要帮您预约试驾", "改时间吧", [("user", "想试驾")], "not_applicable"),  # no trigger
    ("要不要帮您预约试驾", "已为您预约", [], "not_applicable"),          # the user said it
])
def test_not_after_an_agent_trigger(reply: str, user: str, history: list[tuple[str, str]],
                                    status: str) -> None:
    assert _check("not_after", NO_REBOOK, reply, user, history) == status


def test_a_ban_the_agent_triggered_is_lifted_in_a_ledger(pytester: pytest.Pytester) -> None:
    """As a ledger writes it: the boundary example (the user asks to change the booking)
    passes, the plain re-offer fails."""
    pytester.makeini("[pytest]\naddopts = -p no:benchmark\n")
    pytester.path.joinpath("agenteval.yaml").write_text("target: {adapter: builtin}\n")
    pytester.mkdir("rules").joinpath("business-rules.yaml").write_text("""\
- id: BR-950
  title: 预约成功后不再重复邀约（跨轮，客服触发）
  check: not_after
  params:
    trigger: ['已为您(预约|安排)']
    trigger_by: agent
    forbidden: [预约]
    lifted_by: ['改(约|时间)|换个时间']
  applies_to: {behaviors: all}
  examples:
    pass:
      - input: 车况怎么样
        history:
          - {role: user, content: 想周六试驾}
          - {role: assistant, content: 已为您预约周六上午试驾。}
        reply: 车况良好，无事故。
      - input: 能改时间到周日吗
        history:
          - {role: user, content: 想周六试驾}
          - {role: assistant, content: 已为您预约周六上午试驾。}
        reply: 好的，为您预约周日上午。
        boundary: true
        note: 用户自己要改约，禁令解除
    fail:
      - input: 车况怎么样
        history:
          - {role: user, content: 想周六试驾}
          - {role: assistant, content: 已为您预约周六上午试驾。}
        reply: 车况良好。我再帮您预约一次试驾吧。
""", encoding="utf-8")
    result = pytester.runpytest("rules", "-v")
    result.assert_outcomes(passed=3)
