"""The rules of the reference agent: one ``_on_*`` handler per behaviour (first match
wins, in the order of ``agent._HANDLERS``) and the fallback."""

from __future__ import annotations

from ._knowledge import (
    _MILEAGE,
    _STORE_ADDRESS,
    _STORE_FIELDS,
    _VEHICLE_FIELDS,
    _answer,
    _facts,
    _lookup,
)
from ._text import (
    _APPOINTMENT,
    _BACK_REF,
    _COMPLAINT_REPLY,
    _END,
    _FEES,
    _FINANCE,
    _FOLLOW_UP,
    _IDENTITY,
    _INJECTION,
    _INTRO,
    _NEGATIVE,
    _OFF_TOPIC,
    _OFFER,
    _OTHER_GENERIC,
    _OTHER_NAMES,
    _PRICE,
    _PRICE_CHEAPER,
    _PRICE_PROMISE_TRIGGER,
    _PRIVACY,
    _REFUSE,
    _STALE_MILEAGE,
    _VIEWING_CORE,
    _WECHAT,
    _has_phone,
    _last_reply,
    _normalise,
    _user_turns,
)
from ._turn import _T, Reply, _invite, _reply, _Turn


def _on_phone(turn: _Turn) -> Reply | None:
    return _reply(_T["phone"], "PHONE_PROVIDED") if _has_phone(turn.text) else None


def _follows_complaint(turn: _Turn) -> bool:
    """A follow-up question right after a complaint (the user's or the agent's last turn)."""
    if not _FOLLOW_UP.search(turn.text):
        return False
    users = _user_turns(turn.history)
    last_user_complained = bool(users) and bool(_NEGATIVE.search(_normalise(users[-1])))
    return last_user_complained or bool(_COMPLAINT_REPLY.search(_last_reply(turn.history)))


def _on_complaint(turn: _Turn) -> Reply | None:
    if not _NEGATIVE.search(turn.text):
        if _follows_complaint(turn):
            return _reply(_T["complaint.again"], "NEGATIVE_FEEDBACK")
        return None
    text = _T["complaint"]
    if "投诉" in turn.text and turn.defect("a"):  # deliberate defect (a)
        text += _T["complaint.wechat"]
    return _reply(text, "NEGATIVE_FEEDBACK")


def _on_privacy(turn: _Turn) -> Reply | None:
    return _reply(_T["privacy"], "OFF_TOPIC") if _PRIVACY.search(turn.text) else None


def _on_end(turn: _Turn) -> Reply | None:
    return _reply(_T["end"], "END_CONVERSATION") if _END.search(turn.text) else None


def _on_wechat(turn: _Turn) -> Reply | None:
    if not _WECHAT.search(turn.text):
        return None
    tail = _invite(turn, "wechat") or _T["wechat.refused"]
    return _reply(_T["wechat"] + tail, "WECHAT_REQUEST")


def _on_other_vehicle(turn: _Turn) -> Reply | None:
    title = _normalise(_lookup(turn.knowledge, ("carConfigInfo", "title")) or "")
    names = [m.group() for m in _OTHER_NAMES.finditer(turn.text)]
    if not _OTHER_GENERIC.search(turn.text) and all(n in title for n in names):
        return None
    return _reply(_T["other"] + _invite(turn, "other"), "OTHER_VEHICLE")


def _on_price(turn: _Turn) -> Reply | None:
    if _PRICE_PROMISE_TRIGGER in turn.text and turn.defect("c"):  # deliberate defect (c)
        return _reply(_T["promise"] + _invite(turn, "promise"), "PRICE_NEGOTIATION")
    if _FINANCE.search(turn.text):
        return _reply(_T["finance"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if _FEES.search(turn.text):
        return _reply(_T["fees"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if _OFFER.search(turn.text):
        return _reply(_T["offer"] + _invite(turn, "price"), "PRICE_NEGOTIATION")
    if not _PRICE.search(turn.text):
        return None
    # deliberate defect (b)
    if turn.phone_given and _PRICE_CHEAPER.search(turn.text) and turn.defect("b"):
        return _reply(_T["price"] + _T["price.ask_again"], "PRICE_NEGOTIATION")
    return _reply(_T["price"] + _invite(turn, "price"), "PRICE_NEGOTIATION")


def _on_appointment(turn: _Turn) -> Reply | None:
    if not _APPOINTMENT.search(turn.text):
        return None
    if _STORE_ADDRESS.search(turn.text) and not _VIEWING_CORE.search(turn.text):
        return None  # "去店里看怎么走" asks the way, not for a slot
    return _reply(_T["appointment"] + _invite(turn, "appointment"), "APPOINTMENT")


def _on_store(turn: _Turn) -> Reply | None:
    facts = _facts(turn, _STORE_FIELDS)
    if facts is None:
        return None
    invite = _invite(turn, "confirm" if facts[1] else "store")
    return _reply(_answer(*facts, subject="门店") + invite, "STORE_INFO")


def _stale_mileage(turn: _Turn) -> str | None:
    """Deliberate defect (d): the mileage of an earlier reply, once the knowledge has none."""
    if not turn.defect("d"):
        return None
    if _lookup(turn.knowledge, _MILEAGE.path) is not None or not _BACK_REF.search(turn.text):
        return None
    if not _MILEAGE.pattern.search(turn.text):
        return None
    for said in reversed(turn.history):
        found = _STALE_MILEAGE.search(said.get("content", ""))
        if said.get("role") == "assistant" and found:
            return found.group(1)
    return None


def _on_vehicle(turn: _Turn) -> Reply | None:
    stale = _stale_mileage(turn)
    if stale is not None:  # deliberate defect (d)
        return _reply(_T["vehicle.stale"].format(stale) + _invite(turn, "vehicle"),
                      "VEHICLE_INFO")
    facts = _facts(turn, _VEHICLE_FIELDS)
    if facts is None:
        return None
    invite = _invite(turn, "confirm" if facts[1] else "vehicle")
    return _reply(_answer(*facts, subject="车源") + invite, "VEHICLE_INFO")


def _on_refusal(turn: _Turn) -> Reply | None:
    return _reply(_T["refusal"], "END_CONVERSATION") if _REFUSE.search(turn.text) else None


def _on_off_topic(turn: _Turn) -> Reply | None:
    if not _OFF_TOPIC.search(turn.text):
        return None
    key = "identity" if _IDENTITY.search(turn.text) and not _INJECTION.search(turn.text) else (
        "off_topic")
    return _reply(_T[key], "OFF_TOPIC")


def _fallback(turn: _Turn) -> Reply:
    if not _INTRO.search(turn.text):
        return _reply(_T["greeting"], "OFF_TOPIC")
    title = _lookup(turn.knowledge, ("carConfigInfo", "title"))
    if title is None:
        return _reply(_T["vehicle.unknown"] + _invite(turn, "confirm"), "VEHICLE_INFO")
    return _reply(_T["vehicle.intro"].format(title) + _invite(turn, "vehicle"), "VEHICLE_INFO")
