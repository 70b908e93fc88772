"""Customer-service rule types: hand-offs, contact requests, channels, promises, order, closing.

These match *trigger + object + action* combinations inside one clause, not
whole-sentence whitelists: 「店家细说」「让销售为您核算」「负责人核实」「门店安排」
are all a hand-off (a party, then an action within a few characters), while a
bare 「确认」 is not. A contact request needs a request verb *and* a contact
object (「留个手机号」「您的电话是多少」), so 「手机号已收到」 and
「有需要再联系」 are not requests. A channel after a negation
(「不方便加微信」) is not an offer. Every failure quotes the phrase that
decided it. Every vocabulary is a param with a Chinese customer-service
default, so another business adjusts words, not code.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import clauses, compile_any, negated, normalize

__all__ = [
    "CONTACT_REQUEST",
    "PARTIES",
    "PARTY_ACTIONS",
    "find_contact_request",
    "find_party_action",
]

PARTIES = ("店家", "门店", "店里", "销售", "顾问", "客服", "专人", "负责人", "工作人员", "同事",
           "经理", "人工", "专员", "师傅", "商家")
PARTY_ACTIONS = ("确认", "核实", "核算", "安排", "联系", "对接", "跟进", "细说", "介绍", "回复",
                 "处理", "解答", "报价", "沟通", "说明", "答复", "告知", "回电", "致电")
CONTACT_REQUEST = (
    r"(留|提供|告诉|发|填|登记|输入|报)(一?下|个|下|一个)?(下)?(您|你)?(的)?"
    r"(手机|电话|联系方式|号码|联系电话)",
    r"给(我|我们)(留|发|报)(一?下|个)?(您|你)?(的)?(手机|电话|联系方式|号码)",
    r"(手机|电话|联系方式|号码)(号|号码)?(是)?多少",
    r"方便.{0,6}(留|给|提供|告诉).{0,4}(手机|电话|联系方式|号码)",
)
MARKETING = ("优惠", "活动", "推荐", "新到", "新车源", "看看(其他|别的)", "限时", "折扣", "福利",
             "特价", "下单", "抢购", "名额")
COMMIT = (r"保证", r"一定", r"肯定", r"承诺", r"绝对", r"放心",
          r"没问题", r"包(您|你)?(满意|过户|退)", r"可以(给|做到|便宜|优惠|减|打)",
          r"给(您|你)(便宜|优惠|打折|减)", r"最低(给|可以|能)?(您|你)?\d", r"就按.{0,6}(价|算)",
          r"说定了", r"随时(都)?可以")
SAFE = (r"以.{0,8}为准", r"(不|无法|没法|不好)(能)?(保证|承诺)", r"(店家|销售|门店|负责人|专人)"
        r".{0,6}(确认|核实|核算|安排|对接|细说)")
TOPICS: dict[str, tuple[str, ...]] = {
    "price": ("价格", "价钱", "价位", "报价", "多少钱", "便宜", "优惠", "折扣", "打折", "最低",
              "底价", "(这个|此|该)价", r"\d+(\.\d+)?万"),
    "stock": ("库存", "现车", "现货", "还在", "卖掉", "在售", "没卖"),
    "condition": ("车况", "事故", "泡水", "火烧", "调表", "毛病"),
    "slot": ("试驾", "看车", "预约", "到店", "时间"),
}


def find_party_action(text: str, parties: tuple[str, ...] | list[str],
                      actions: tuple[str, ...] | list[str], window: int = 8) -> str | None:
    """The first 「party … action」 phrase (action within ``window`` chars) in one clause."""
    p_re, a_re = compile_any(list(parties)), compile_any(list(actions))
    if p_re is None or a_re is None:
        return None
    for clause in clauses(text):
        for p in p_re.finditer(clause):
            a = a_re.search(clause, p.end(), min(len(clause), p.end() + window + 2))
            if a is not None and not negated(clause, p.start()):
                return clause[p.start():a.end()]
    return None


def find_contact_request(text: str, patterns: tuple[str, ...] | list[str]) -> str | None:
    """The first contact-request phrase of ``text`` (not after a negation)."""
    regex = compile_any(list(patterns))
    if regex is None:
        return None
    for clause in clauses(text):
        for m in regex.finditer(clause):
            if not negated(clause, m.start()):
                return m.group(0)
    return None


_REFUSED_AFTER = re.compile(r"\s*(不方便|不行|不可以|不能|暂不|没法|无法)")


def _user_text(turn: TurnView) -> str:
    said = [h["content"] for h in turn.history if h.get("role") == "user"]
    return "\n".join([*said, turn.input])


class _Compiles(Params):
    @field_validator("*", mode="after")
    @classmethod
    def _patterns_compile(cls, v: object) -> object:
        items = v.values() if isinstance(v, dict) else [v]
        for item in items:
            if isinstance(item, list | tuple) and all(isinstance(x, str) for x in item):
                try:
                    compile_any(list(item))
                except re.error as exc:
                    raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v


class Handoff(_Compiles):
    parties: tuple[str, ...] = PARTIES
    actions: tuple[str, ...] = PARTY_ACTIONS
    window: int = Field(default=8, ge=1, le=40)


@rule("handoff", params=Handoff)
def handoff(p: Handoff, turn: TurnView) -> RuleOutcome:
    """The reply hands the matter to a named party with an action (「让店家确认」).

    Passes when one clause has a ``parties`` term followed, within ``window``
    characters, by an ``actions`` term, not after a negation. A bare action
    (「确认一下」) or a bare party is not a hand-off.
    """
    hit = find_party_action(turn.reply, p.parties, p.actions, p.window)
    if hit:
        return RuleOutcome.passed("hands over to a party with an action", hit)
    return RuleOutcome.failed("no hand-off: no party followed by an action", turn.reply)


class ContactPatterns(_Compiles):
    patterns: tuple[str, ...] = CONTACT_REQUEST


@rule("asks_for_contact", params=ContactPatterns)
def asks_for_contact(p: ContactPatterns, turn: TurnView) -> RuleOutcome:
    """The reply asks for the user's contact (a request verb and a contact object).

    「留个手机号」「方便留下您的电话吗」「您的手机号是多少」 pass;
    「手机号已收到」「店家会电话联系您」 do not.
    """
    hit = find_contact_request(turn.reply, p.patterns)
    if hit:
        return RuleOutcome.passed("asks for the contact", hit)
    return RuleOutcome.failed("does not ask for the contact", turn.reply)


@rule("no_contact_request", params=ContactPatterns)
def no_contact_request(p: ContactPatterns, turn: TurnView) -> RuleOutcome:
    """The reply does not ask for the contact again (after the user gave it or refused).

    The same detection as ``asks_for_contact``, reversed: 「号码已收到，店家会联系您」
    passes, 「麻烦再留一下您的手机号」 fails with that phrase as evidence.
    """
    hit = find_contact_request(turn.reply, p.patterns)
    if hit:
        return RuleOutcome.failed("asks for the contact again", hit)
    return RuleOutcome.passed("no contact request")


class ChannelNotOffered(_Compiles):
    channels: tuple[str, ...] = ("微信", "vx", "加V", "wx", "QQ", "企业微信")
    unless_user_mentions: bool = True


@rule("channel_not_offered", params=ChannelNotOffered)
def channel_not_offered(p: ChannelNotOffered, turn: TurnView) -> RuleOutcome:
    """The reply does not propose one of ``channels`` (case-insensitive).

    A channel after a negation (「不方便加微信」「暂不支持微信」) or refused right
    after (「加微信不方便」) is not an offer.
    With ``unless_user_mentions`` the rule is not applicable when the user
    named one of the channels in this turn or earlier.
    """
    regex = compile_any(list(p.channels))
    assert regex is not None
    if p.unless_user_mentions and regex.search(normalize(_user_text(turn))):
        return RuleOutcome.not_applicable("the user mentioned the channel")
    text = normalize(turn.reply)
    for m in regex.finditer(text):
        if not negated(text, m.start()) and not _REFUSED_AFTER.match(text, m.end()):
            start = max(0, m.start() - 6)
            return RuleOutcome.failed(f"offers the channel {m.group(0)!r}",
                                      text[start:m.end() + 6])
    return RuleOutcome.passed("no channel offered")


class NoCommitment(_Compiles):
    topics: dict[str, tuple[str, ...]] = Field(default_factory=lambda: dict(TOPICS))
    commit_patterns: tuple[str, ...] = COMMIT
    safe_patterns: tuple[str, ...] = SAFE


@rule("no_commitment", params=NoCommitment)
def no_commitment(p: NoCommitment, turn: TurnView) -> RuleOutcome:
    """The reply makes no promise on real-time topics (price, stock, condition, slots).

    A clause fails when it names a topic *and* a commitment
    (「最低给您8.5万」「保证这个价」「现车一定有」), unless the same clause is
    safe: a hand-off or a disclaimer (「以店家核算为准」「无法保证」). The
    evidence is the clause and the topic it promised on.
    """
    commit, safe = compile_any(list(p.commit_patterns)), compile_any(list(p.safe_patterns))
    topics = {name: compile_any(list(pats)) for name, pats in p.topics.items()}
    for clause in clauses(turn.reply):
        c = commit.search(clause) if commit else None
        if c is None or negated(clause, c.start()) or (safe and safe.search(clause)):
            continue
        for name, regex in topics.items():
            if regex is not None and regex.search(clause):
                return RuleOutcome.failed(f"promises on {name}: {c.group(0)!r}", clause)
    return RuleOutcome.passed("no promise on a real-time topic")


class StatesValue(_Compiles):
    parties: tuple[str, ...] = PARTIES
    actions: tuple[str, ...] = PARTY_ACTIONS
    items: tuple[str, ...] = ("最新(报价|价格)", "优惠", "车况报告", "检测报告",
                              "具体(年份|配置|信息|价格)", "看车时间", "到店", "底价",
                              "详细(资料|信息)", "第一时间", "回电")


@rule("states_value", params=StatesValue)
def states_value(p: StatesValue, turn: TurnView) -> RuleOutcome:
    """The reply says what the user gets by leaving contact.

    Passes on a concrete ``items`` term (「具体年份」「最新报价」) or a
    party + action (「店家核算后告诉您」); a bare 「确认」 states nothing.
    """
    items = compile_any(list(p.items))
    m = items.search(normalize(turn.reply)) if items else None
    if m:
        return RuleOutcome.passed("states a concrete item", m.group(0))
    hit = find_party_action(turn.reply, p.parties, p.actions)
    if hit:
        return RuleOutcome.passed("states who does what", hit)
    return RuleOutcome.failed("does not say what leaving contact brings", turn.reply)


class Order(_Compiles):
    first: tuple[str, ...] = Field(min_length=1)
    then: tuple[str, ...] = Field(min_length=1)


@rule("order", params=Order)
def order(p: Order, turn: TurnView) -> RuleOutcome:
    """A ``first`` phrase appears before any ``then`` phrase (an apology before the lead move).

    Not applicable when no ``then`` phrase appears; failed when one appears
    with no ``first`` phrase before it.
    """
    text = normalize(turn.reply)
    first, then = compile_any(list(p.first)), compile_any(list(p.then))
    assert first is not None and then is not None
    t = then.search(text)
    if t is None:
        return RuleOutcome.not_applicable("no 'then' phrase in the reply")
    f = first.search(text)
    if f is None or f.start() > t.start():
        return RuleOutcome.failed(f"{t.group(0)!r} comes before any of {list(p.first)}",
                                  text[: t.end()])
    return RuleOutcome.passed("in order", text[f.start(): t.end()])


class EndsPolitely(_Compiles):
    forbidden: tuple[str, ...] = MARKETING
    contact_patterns: tuple[str, ...] = CONTACT_REQUEST


@rule("ends_politely", params=EndsPolitely)
def ends_politely(p: EndsPolitely, turn: TurnView) -> RuleOutcome:
    """After the user ends or refuses: no marketing, no contact request, no new offer.

    A passive close such as 「好的，您有需要再联系」 passes; 「再给您推荐一台」
    or 「留个电话吧」 fail with that phrase.
    """
    hit = find_contact_request(turn.reply, p.contact_patterns)
    if hit:
        return RuleOutcome.failed("asks for contact after the user ended", hit)
    regex = compile_any(list(p.forbidden))
    m = regex.search(normalize(turn.reply)) if regex else None
    if m:
        return RuleOutcome.failed("keeps marketing after the user ended", m.group(0))
    return RuleOutcome.passed("closes without marketing")
