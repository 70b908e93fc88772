"""The turn model of the reference agent: intent codes, the ``Reply`` and ``_Turn`` types,
every reply text and the phone invitation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["INTENT_CODES", "Reply"]

INTENT_CODES: dict[str, int] = {
    "VEHICLE_INFO": 1,
    "STORE_INFO": 2,
    "APPOINTMENT": 3,
    "PRICE_NEGOTIATION": 4,
    "WECHAT_REQUEST": 5,
    "NEGATIVE_FEEDBACK": 6,
    "OTHER_VEHICLE": 7,
    "OFF_TOPIC": 8,
    "PHONE_PROVIDED": 9,
    "END_CONVERSATION": 10,
}


@dataclass(frozen=True)
class Reply:
    """One agent turn: the text and the intent the agent recognised."""

    reply: str
    intent_code: int
    intent_name: str


@dataclass(frozen=True)
class _Turn:
    """The current message, normalised, with what the history tells us."""

    text: str
    knowledge: dict[str, Any] | None
    history: list[dict[str, str]]
    phone_given: bool
    refused: bool
    #: deliberate defects switched off (``target.fixed_defects``): a "next release"
    fixed: frozenset[str] = frozenset()

    def defect(self, name: str) -> bool:
        """Whether deliberate defect ``name`` (a–d) is on for this turn."""
        return name not in self.fixed

    @property
    def may_ask(self) -> bool:
        return not self.phone_given and not self.refused


# Every reply text in one place; "ask" is the phone invitation, "given" what
# replaces it once the user left a number (empty: nothing).
_T = {
    "phone": "收到，感谢您的信任！号码仅在您授权后用于店家联系您，销售会尽快与您联系，请留意来电。",
    "complaint": "非常抱歉给您带来不好的体验！您反映的问题我已经记录，会安排专人尽快跟进处理。",
    "complaint.wechat": "您可以加我们微信，方便随时沟通。",
    "complaint.again": "再次向您道歉，您的问题已经转给专人，会尽快给您处理结果。",
    "privacy": "抱歉，其他客户的信息不能提供。我主要帮您看车，这台车有什么想了解的随时问我。",
    "end": "好的，您有需要再联系。",
    "refusal": "好的，不留也没关系，您有需要再联系。",
    "wechat": "抱歉，这边不方便提供微信。",
    "wechat.ask": "您留个手机号，店家会直接联系您，沟通更方便。",
    "wechat.given": "店家会直接联系您。",
    "wechat.refused": "有问题可以直接在这里问我。",
    "other": "其他车型我这边没有资料，我让店家根据您的需求为您推荐合适的车源。",
    "other.ask": "留个手机号，店家挑好车源后第一时间联系您。",
    "other.given": "店家挑好后会第一时间联系您。",
    "promise": "最低给您8.5万，保证这个价。",
    "promise.ask": "留个手机号，销售马上联系您。",
    "price": "具体价格以店家核算为准，我让销售为您核算一下。",
    "offer": "您给的价格我这边没法直接答应，具体以店家核算为准，我让销售为您核算一下。",
    "finance": "首付、分期和置换方案要销售根据您的情况核算，我这边没法直接给方案。",
    "fees": "过户费、服务费这些费用以店家核算为准，我让销售为您算清楚。",
    "price.ask": "留个手机号，店家核算后第一时间告诉您。",
    "price.given": "核算好后会第一时间联系您。",
    "price.ask_again": "麻烦再留一下您的手机号，店家核算后第一时间告诉您。",
    "appointment": "看车、试驾的时间需要门店来安排，我这边没法直接帮您定时间。",
    "appointment.ask": "留个手机号，门店安排好后第一时间联系您确认。",
    "appointment.given": "门店安排好后会第一时间联系您确认。",
    "store.ask": "留个手机号，店家可以提前为您安排接待。",
    "vehicle.ask": "留个手机号，店家可以第一时间为您详细介绍。",
    "confirm.ask": "留个手机号，店家确认后第一时间告诉您。",
    "confirm.given": "店家确认后会第一时间联系您。",
    "vehicle.unknown": "这台车的具体情况需要让店家确认后告诉您。",
    "vehicle.intro": "这台车是{}，里程、上牌时间、车况都可以问我。",
    "vehicle.stale": "刚才说过，表显里程{}。",
    "off_topic": "这个我不太了解哈～我主要帮您看车，这台车有什么想了解的随时问我。",
    "identity": "我是门店的在线助手，主要帮您看车，这台车有什么想了解的随时问我。",
    "greeting": "您好，我主要帮您了解这台车，有什么想问的随时问我。",
}


def _reply(text: str, label: str) -> Reply:
    return Reply(reply=text, intent_code=INTENT_CODES[label], intent_name=label)


def _invite(turn: _Turn, key: str) -> str:
    """The phone invitation ``key.ask``, or ``key.given`` once a number was left."""
    if turn.may_ask:
        return _T[f"{key}.ask"]
    return _T.get(f"{key}.given", "") if turn.phone_given else ""
