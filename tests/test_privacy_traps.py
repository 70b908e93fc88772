"""Masking against texts written to break it (tests/data/privacy_traps_*.yaml).

The texts were written blind, by reviewers who saw only what the masker must hide
(people's phone numbers, identity document numbers, e-mail addresses) and what it must
leave readable (prices, dates, order numbers, VINs, IPs, masked values, @mentions …),
never its patterns. Each entry names every personal datum in its text as written
(``hide``), substrings that must come back unchanged (``keep``), and whether the whole
text must (``unchanged``).

Whether a datum was hidden is judged here without the masker's own reading, from the
datum's digits (Arabic, full-width or Chinese) in the masked text with every separator
taken out:

* a phone number is hidden when neither all its digits but the last four nor all its
  digits but the first three are still there in a row (``138****8000`` keeps 3 + 4 of
  11; a country code kept in front, ``+86``, is no leak);
* an ID number is hidden when no six of its digits between the first three and the last
  four are still there in a row (its date of birth is the secret part); a shorter
  document number, when no five of its digits but the first and last are;
* an e-mail address is hidden when neither it nor its local part followed by any way of
  writing the @ is still there.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from pytest_agenteval.privacy import Masker
from pytest_agenteval.yamlio import loads

DATA = Path(__file__).parent / "data"
FILES = ("privacy_traps_users.yaml", "privacy_traps_systems.yaml", "privacy_traps_intl.yaml",
         "privacy_traps_holdout_a.yaml", "privacy_traps_holdout_b.yaml",
         "privacy_traps_holdout_c.yaml", "privacy_traps_holdout_d.yaml",
         "privacy_traps_holdout_e.yaml", "privacy_traps_holdout_f.yaml",
         "privacy_traps_holdout_g.yaml", "privacy_traps_holdout_h.yaml",
         "privacy_traps_holdout_i.yaml")

_SPOKEN = {"零": "0", "〇": "0", "洞": "0", "一": "1", "幺": "1", "么": "1", "腰": "1",
           "二": "2", "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7",
           "拐": "7", "八": "8", "九": "9", "勾": "9", "叉": "X", "壹": "1", "贰": "2", "貳": "2",
           "叁": "3", "參": "3", "肆": "4", "伍": "5", "陆": "6", "陸": "6", "柒": "7", "捌": "8",
           "玖": "9"}
_SEPARATORS = set(" \t\r\n\u200b\u200c\u200d\u2060\ufeff-–—‐‑.·・/()（）[]【】_,，、")
_AT = r"\s*(?:@|＠|%40|&#64;|\[at\]|\(at\)| at |#|艾特)"


def _stream(text: str) -> str:
    """Digits (and X and *) of ``text`` with separators dropped; anything else a ``|``."""
    out = []
    plain = text.replace("&nbsp;", " ").replace("%20", " ").replace("\\u00a0", " ")
    for written in unicodedata.normalize("NFKC", plain):
        c = _SPOKEN.get(written, written)
        if c.isdigit() or c in "*X":
            out.append(c)
        elif c == "x":
            out.append("X")
        elif c not in _SEPARATORS:
            out.append("|")
    return "".join(out)


def _digits(text: str) -> str:
    return "".join(c for c in _stream(text) if c not in "|*")


def _local(address: str) -> str:
    address = unicodedata.normalize("NFKC", address)
    for at in ("@", "[at]", "(at)", "{at}", " at ", "艾特", "#", " AT ", "[AT]", "&#64;", "%40"):
        if at in address:
            return address.split(at, 1)[0].strip()
    return address


def leaks(kind: str, value: str, masked: str) -> bool:
    """Whether the personal datum ``value`` of ``kind`` can still be read in ``masked``."""
    if kind == "email":
        return value in masked or re.search(re.escape(_local(value)) + _AT, masked,
                                            re.IGNORECASE) is not None
    stream, digits = _stream(masked), _digits(value)
    if kind == "id":
        core = digits[3:-4] if len(digits) >= 15 else digits[1:-1]
        width = 6 if len(digits) >= 15 else 5
        if len(core) < width:
            return digits in stream
        return any(core[i:i + width] in stream for i in range(len(core) - width + 1))
    for code in ("0086", "86"):
        if digits.startswith(code) and len(digits) - len(code) == 11:
            digits = digits[len(code):]
    return digits[:len(digits) - 4] in stream or digits[3:] in stream


def _read(name: str) -> list[dict[str, Any]]:
    path = DATA / name
    entries: list[dict[str, Any]] = loads(path.read_text(encoding="utf-8"), str(path)).data
    return entries


#: what the masker does not read yet (docs/configuration.md#privacy): expected to fail,
#: strictly, so that a fix shows
_LIMIT = pytest.mark.xfail(strict=True, reason="a known limit of masking")
TRAPS = [pytest.param(t, id=t["id"], marks=[_LIMIT] if t.get("known_limit") else [])
         for name in FILES for t in _read(name)]


@pytest.mark.parametrize("trap", TRAPS)
def test_privacy_trap(trap: dict[str, Any]) -> None:
    text = trap["text"]
    masked = Masker().text(text)
    wrong = [f"{h['kind']} {h['value']!r} can still be read" for h in trap.get("hide") or []
             if leaks(h["kind"], str(h["value"]), masked)]
    wrong += [f"{k!r} was changed" for k in trap.get("keep") or [] if str(k) not in masked]
    if trap.get("unchanged") and masked != text:
        wrong.append("the text was changed")
    assert not wrong, f"{trap.get('note')}\n  text:   {text!r}\n  masked: {masked!r}\n  " + \
        "\n  ".join(wrong)


def test_the_trap_files_are_well_formed() -> None:
    """Every datum is quoted from its text, and a text with none is marked unchanged."""
    for param in TRAPS:
        trap = param.values[0]
        assert isinstance(trap, dict)
        for h in trap.get("hide") or []:
            assert h["kind"] in ("phone", "id", "email") and str(h["value"]) in trap["text"], \
                trap["id"]
        if not trap.get("hide"):
            assert trap.get("unchanged") is True, trap["id"]


@pytest.mark.parametrize(("kind", "value", "masked", "leak"), [
    ("phone", "138 0013 8000", "138****8000", False),
    ("phone", "138 0013 8000", "1380013****", True),
    ("phone", "138 0013 8000", "138 - 0013 - 8000", True),
    ("phone", "+86 138 0013 8000", "+86 138****8000", False),
    ("phone", "幺三八零零幺三八零零零", "幺三八****八零零零", False),
    ("phone", "幺三八零零幺三八零零零", "138零零13八000", True),
    ("id", "11010519491231002X", "110***********002X", False),
    ("id", "110105 19491231 002X", "110105 194****1002X", True),
    ("email", "zhang.san@qq.com", "z***@qq.com", False),
    ("email", "zhang.san＠qq.com", "zhang.san＠qq.com", True),
    ("email", "zhang.san at qq dot com", "zhang.san at qq dot com", True),
])
def test_the_judge_of_a_leak(kind: str, value: str, masked: str, leak: bool) -> None:
    """The oracle itself: it sees a leak in every form it must, and none in a masked one."""
    assert leaks(kind, value, masked) is leak
