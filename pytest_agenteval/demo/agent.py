"""Reference agent: a used-car dealer's IM lead-capture chatbot.

A deterministic, rule-based stand-in for a production customer-service bot,
used by the example suite in ``cases/`` and the ``builtin`` target. It
classifies the user's message with keyword / regex rules into one of the ten
behaviour labels of ``rules/taxonomy.yaml``, answers in Chinese and, where
the business strategy asks for it, steers the user to leave a mobile number.

Public API::

    respond(message, history, knowledge) -> Reply(reply, intent_code, intent_name)

``history`` holds the earlier turns, oldest first, as
``{"role": "user" | "assistant", "content": str}``. ``knowledge`` holds the
facts about the current vehicle and store for this turn, or ``None``::

    carConfigInfo:
      title: 2021款 大众朗逸 1.5L 自动舒适版
      archives: {mileage: 3.37万公里, firstRegDate: 2021-06,
                 transferCount: 0, color: 白色, gearbox: 自动}
      price: {listPrice: 8.98万}           # may be missing
    storeInfo: {name: 诚信二手车, address: 上海市闵行区七莘路1888号,
                openHours: 9:00-18:00}

Any key may be missing or ``null``; a missing fact is never invented, the
reply says the store will confirm it instead. Facts the knowledge never holds
(condition, accidents, paperwork, maintenance, stock, warranty, parking …)
always go to the store.

Rules, first match wins: a mobile number (PHONE_PROVIDED, 9); a complaint or
a follow-up to one (NEGATIVE_FEEDBACK, 6); a request for another customer's
personal data (OFF_TOPIC, 8, refused); a goodbye (END_CONVERSATION, 10);
WeChat (WECHAT_REQUEST, 5); another model, brand, body type or budget
(OTHER_VEHICLE, 7); price bargaining, a counter-offer, financing, trade-in or
fees (PRICE_NEGOTIATION, 4); viewing / test drive (APPOINTMENT, 3); store
address / hours / name / parking (STORE_INFO, 2); a question about this car
(VEHICLE_INFO, 1); a refusal to leave contact with no other question
(END_CONVERSATION, 10); small talk, a question about the bot itself or an
injection attempt (OFF_TOPIC, 8); anything else mentioning 车 or 介绍 gets a short intro of this car
(VEHICLE_INFO, 1), the rest a greeting (OFF_TOPIC, 8). An instruction hidden
in a message ("忽略之前的规则…") is ignored: the business question in it
is answered by its own rule, the rest is small talk.

Matching runs on NFKC-normalised, lower-cased text with the spaces between
Chinese characters removed and common typos / ASR confusions fixed (功里,
过护, 上排, 威信, 试架, 本驰 …). A mobile number is ``1[3-9]`` plus nine
digits; full-width digits, spoken Chinese digits (幺三八…), a ``+86`` prefix
and spaces or dashes inside are allowed. Once the user has given a number in
any earlier user turn, or refused to give one, the agent does not ask for it
again. A follow-up question right after a complaint reply ("什么时候给我答复")
stays with the complaint. Replies have at most three sentences.

Deliberate defects
------------------
The agent is wrong on purpose in five rare, reproducible places, so that the
example suite shows what a failing red line and a missed intent look like:

(a) A complaint whose message contains ``投诉`` (e.g. "服务太差了，我要投诉")
    gets the apology and then proposes WeChat: "您可以加我们微信，方便随时
    沟通。" (the NEGATIVE_FEEDBACK strategy forbids other channels; BR-003).
(b) After a mobile number was given (anywhere in the history), a price
    question containing ``便宜`` or ``优惠`` (e.g. "还能再便宜点吗") asks for
    the phone number again (BR-009).
(c) A message containing ``最低多少`` (e.g. "这车最低多少") gets a price
    promise: "最低给您8.5万，保证这个价。" (BR-004, and BR-006: 8.5万 is in no
    knowledge).
(d) When this turn's knowledge has no mileage, a mileage question that points
    back (``刚才`` / ``刚刚`` / ``之前``, e.g. "刚才说的里程是多少来着")
    repeats the mileage of the agent's own earlier reply ("刚才说过，表显里程
    3.37万公里。") instead of handing it to the store: a stale fact after the
    knowledge was withdrawn (BR-016, and BR-005: no hand-off).
(e) A mobile number glued to its country code with no separator
    (``+8613812345678``, ``008613812345678``) is not recognised: the message
    falls through to the greeting (OFF_TOPIC, intent 8) instead of
    PHONE_PROVIDED, intent 9 (BR-010; a missed intent in L2). With a space or
    dash after ``+86`` the number is found.

One more gap is not deliberate but kept, because only a rule across turns
sees it:

(f) A complaint inside a business question (e.g. "你们这价格也太坑了，能便宜点
    吗") is answered as the question, with the usual phone invitation and no
    apology anywhere in the dialog (BR-018, a dialog_order rule).

The example suite triggers them in NEGATIVE_FEEDBACK-003 (a),
PRICE_NEGOTIATION-004 (b), PRICE_NEGOTIATION-003 (c), the scenario
FLOW-KNOWLEDGE-003 (d), PHONE_PROVIDED-014 (e) and the scenario
FLOW-CROSS-001 (f, at its second turn), all tagged ``known_defect``; those six
items are expected to fail, every other item to pass.

``fixed`` (``target.fixed_defects`` of a ``builtin`` target) switches (a)–(d)
off: the same agent, one release later, for trying ``agenteval compare``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._handlers import (
    _fallback,
    _on_appointment,
    _on_complaint,
    _on_end,
    _on_off_topic,
    _on_other_vehicle,
    _on_phone,
    _on_price,
    _on_privacy,
    _on_refusal,
    _on_store,
    _on_vehicle,
    _on_wechat,
)
from ._text import _REFUSE, _has_phone, _normalise, _user_turns
from ._turn import INTENT_CODES, Reply, _Turn

__all__ = ["INTENT_CODES", "Reply", "respond"]

# Reply is defined in ._turn; this module stays its public home (docs, pickles, help()).
Reply.__module__ = __name__


_Handler = Callable[[_Turn], Reply | None]
_HANDLERS: tuple[_Handler, ...] = (
    _on_phone,
    _on_complaint,
    _on_privacy,
    _on_end,
    _on_wechat,
    _on_other_vehicle,
    _on_price,
    _on_appointment,
    _on_store,
    _on_vehicle,
    _on_refusal,
    _on_off_topic,
)


def respond(message: str, history: list[dict[str, str]], knowledge: dict[str, Any] | None,
            fixed: frozenset[str] = frozenset()) -> Reply:
    """Answer one user message.

    Args:
        message: the user's current message.
        history: earlier turns, oldest first, ``{"role", "content"}`` each.
        knowledge: facts about the current vehicle and store, or None.
        fixed: deliberate defects switched off (``{"a"}``: the next release fixed (a)).

    Returns:
        The reply text with the recognised intent code and label name.
    """
    users = _user_turns(history)
    text = _normalise(message)
    turn = _Turn(
        text=text,
        knowledge=knowledge,
        history=history,
        phone_given=any(_has_phone(u) for u in users),
        refused=any(_REFUSE.search(t) for t in (text, *map(_normalise, users))),
        fixed=fixed,
    )
    for handler in _HANDLERS:
        result = handler(turn)
        if result is not None:
            return result
    return _fallback(turn)
