"""The challenge generators of ``agenteval expand``: one registered function per kind.

A generator takes an item's merged mapping and returns every variant it can make of
it, each changing exactly one challenge factor in one user message (or, for ``noise``,
adding one small-talk exchange before the conversation), in a fixed order. The seed
only picks among them (:func:`choose`), with a random generator of its own per item
and kind, so a variant never depends on the other items of the file or the order the
kinds are asked in.

``wrong_premise`` is made only for a message whose expectation holds a knowledge
point with a figure: the user asserts another figure (the knowledge says 3.37万公里,
the user 5.1万公里), the expectation stays the clean case's, and that knowledge point
is kept with ``usage: correct``: the reply must still give the stored value and so
correct the user. Dropping the point would let a reply that adopts the false figure,
or dodges the question, pass; requiring the false figure to be absent would fail the
reply that quotes it to correct it (不是5.1万公里，是3.37万公里).
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._tables import ASR_HOMOPHONES, COLLOQUIAL, NOISE, SPLIT_AFTER, TYPO

__all__ = ["KINDS", "Candidate", "candidates", "choose"]

Path_ = tuple[str | int, ...]
Generator = Callable[[dict[str, Any]], list["Candidate"]]
_REGISTRY: dict[str, Generator] = {}


@dataclass(frozen=True)
class Candidate:
    """One variant: the whole varied item and what changed (for its title and comment)."""

    data: dict[str, Any]
    note: str


def generator(kind: str) -> Callable[[Generator], Generator]:
    def register(fn: Generator) -> Generator:
        _REGISTRY[kind] = fn
        return fn

    return register


def candidates(kind: str, data: dict[str, Any]) -> list[Candidate]:
    """Every variant of ``kind`` of the item, each once, in a fixed order."""
    seen: set[str] = set()
    out = []
    for cand in _REGISTRY[kind](data):
        key = json.dumps(cand.data, ensure_ascii=False, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(cand)
    return out


def choose(kind: str, data: dict[str, Any], seed: int, key: str, n: int) -> list[Candidate]:
    """Up to ``n`` variants of ``kind``, picked by ``seed`` for the item named ``key``."""
    found = candidates(kind, data)
    rng = random.Random(f"{seed}|{key}|{kind}")
    return rng.sample(found, min(n, len(found)))


# -- where the messages are ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Slot:
    """A user message of an item: the mapping holding its ``input``, its expectation."""

    base: Path_
    expected: Path_
    #: the scenario turn (0-based); ``None`` for a case
    turn: int | None = None

    @property
    def where(self) -> str:
        return "" if self.turn is None else f"第{self.turn + 1}轮 "


def _slots(data: dict[str, Any]) -> list[_Slot]:
    if "turns" in data:
        return [_Slot(("turns", i), ("turns", i, "expected"), i)
                for i, t in enumerate(data.get("turns") or ()) if isinstance(t, dict)]
    return [_Slot(("request",), ("expected",))] if isinstance(data.get("request"), dict) else []


def _get(data: Any, path: Path_) -> Any:
    for part in path:
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and isinstance(part, int) and part < len(data):
            data = data[part]
        else:
            return None
    return data


def _set(data: dict[str, Any], path: Path_, value: Any) -> dict[str, Any]:
    """A deep copy of ``data`` with ``value`` at ``path`` (mappings created on the way)."""
    out = copy.deepcopy(data)
    node: Any = out
    for part in path[:-1]:
        if isinstance(node, dict) and not isinstance(node.get(part), dict | list):
            node[part] = {}
        node = node[part]
    node[path[-1]] = value
    return out


def _task_patterns(data: dict[str, Any]) -> list[re.Pattern[str]]:
    """The regexes of the task's slots and steps that look at the user's messages: a
    variant must not change what they find, or the data would fail, not the agent."""
    task = _get(data, ("outcome", "task")) or {}
    parts = [(p, "user") for p in task.get("slots") or ()]
    parts += [(p, "agent") for p in task.get("steps") or ()]
    return [re.compile(p["match"]) for p, default in parts if isinstance(p, dict)
            and p.get("match") and p.get("source", default) in ("user", "any")]


def _text_variants(data: dict[str, Any], rewrite: Callable[[str], list[tuple[str, str]]]
                   ) -> list[Candidate]:
    """Each rewrite of each message's input (one message changed per variant)."""
    patterns = _task_patterns(data)
    out = []
    for slot in _slots(data):
        text = _get(data, (*slot.base, "input"))
        if not isinstance(text, str):
            continue
        for new, note in rewrite(text):
            if new and new != text and all(bool(p.search(new)) == bool(p.search(text))
                                           for p in patterns):
                out.append(Candidate(_set(data, (*slot.base, "input"), new), slot.where + note))
    return out


def _substitutions(text: str, table: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """One table substitution at one place of ``text``, for each place and each entry."""
    out = []
    for right in sorted(table, key=lambda w: (-len(w), w)):
        for m in re.finditer(re.escape(right), text):
            for wrong in table[right]:
                out.append((text[:m.start()] + wrong + text[m.end():], f"{right}→{wrong}"))
    return out


# -- typo, colloquial -----------------------------------------------------------------------


@generator("typo")
def _typo(data: dict[str, Any]) -> list[Candidate]:
    return _text_variants(data, lambda text: _substitutions(text, TYPO))


@generator("colloquial")
def _colloquial(data: dict[str, Any]) -> list[Candidate]:
    return _text_variants(data, lambda text: _substitutions(text, COLLOQUIAL))


# -- asr --------------------------------------------------------------------------------------

#: punctuation a recogniser does not write; '.' and ':' only where no digit is on both sides
_PUNCT = re.compile(r"[，。！？、；,!?;~～…·“”\"'‘’（）()]+|(?<!\d)[.:：]|[.:：](?!\d)")
_BREAK = re.compile(r"[。！？!?；;，,]+")
_DIGITS = "零一二三四五六七八九"
_NUMBER = re.compile(r"(\d{1,2})[:：](\d{2})|\d+(?:\.\d+)?")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _integer(n: int) -> str:
    """0 … 9999 as read out (一千零一十, 十五, 三百)."""
    if n < 10:
        return _DIGITS[n]
    out, zero, rest = "", False, n
    for value, unit in ((1000, "千"), (100, "百"), (10, "十")):
        digit, rest = divmod(rest, value)
        if digit:
            out += ("零" if zero else "") + ("" if value == 10 and n < 20 else _DIGITS[digit])
            out += unit
            zero = False
        elif out:
            zero = True
    return out + (("零" if zero else "") + _DIGITS[rest] if rest else "")


def _spoken(m: re.Match[str], text: str) -> str:
    """A number as a recogniser writes it: 3万 → 三万, 3.37 → 三点三七, 9:30 → 九点半,
    2021年 → 二零二一年, a phone number digit by digit with 幺 for 1."""
    if m.group(1) is not None:
        hour, minute = int(m.group(1)), int(m.group(2))
        return _integer(hour) + "点" + ("" if minute == 0 else "半" if minute == 30
                                        else _integer(minute) + "分")
    raw = m.group(0)
    if "." in raw:
        whole, frac = raw.split(".")
        return _spoken_int(whole, text, m.end()) + "点" + "".join(_DIGITS[int(d)] for d in frac)
    return _spoken_int(raw, text, m.end())


def _spoken_int(raw: str, text: str, end: int) -> str:
    if len(raw) >= 5 or (len(raw) == 4 and text[end:end + 1] == "年") or raw.startswith("0"):
        digits = "".join(_DIGITS[int(d)] for d in raw)
        return digits.replace("一", "幺") if len(raw) >= 7 else digits
    return _integer(int(raw))


def _asr_rewrites(text: str) -> list[tuple[str, str]]:
    out = _substitutions(text, ASR_HOMOPHONES)
    out.append((_PUNCT.sub("", text), "去掉标点"))
    parts = [p for p in _BREAK.split(text) if p]
    if len(parts) > 1:
        tail = text[len(text.rstrip("。！？!?；;，,")):]
        out.append(("".join(parts) + tail, "合并句子"))
    for word in SPLIT_AFTER:
        for m in re.finditer(re.escape(word), text):
            nxt = text[m.end():m.end() + 1]
            if nxt and not _BREAK.match(nxt) and not nxt.isspace():
                out.append((text[:m.end()] + "。" + text[m.end():], f"断句：{word}。"))
    if _NUMBER.search(text):
        spoken = _NUMBER.sub(lambda m: _spoken(m, text), text)
        first = next(_NUMBER.finditer(text))
        unit = text[first.end():first.end() + 1] if _CJK.match(text[first.end():]) else ""
        shown = (f"：{first.group(0)}{unit}→{_spoken(first, text)}{unit}"
                 if len(first.group(0)) < 7 else "（逐位）")  # never a phone number in a title
        out.append((spoken, f"数字读出{shown}"))
    return out


@generator("asr")
def _asr(data: dict[str, Any]) -> list[Candidate]:
    return _text_variants(data, _asr_rewrites)


# -- noise --------------------------------------------------------------------------------------


def _history_path(data: dict[str, Any]) -> Path_:
    return ("history",) if "turns" in data or "simulate" in data else ("request", "history")


def _with_noise(history: list[Any], user: str, reply: str) -> list[Any]:
    """``history`` with one small-talk exchange before its first user message (at its end
    when it has none), so the turns still alternate and what the case depends on (the
    last reply before the message) stays where it was."""
    at = next((i for i, h in enumerate(history) if isinstance(h, dict)
               and h.get("role") == "user"), len(history))
    pair = [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
    return [*history[:at], *pair, *history[at:]]


@generator("noise")
def _noise(data: dict[str, Any]) -> list[Candidate]:
    path = _history_path(data)
    history = list(_get(data, path) or [])
    return [Candidate(_set(data, path, _with_noise(history, user, reply)), f"前置闲聊「{user}」")
            for user, reply in NOISE]


# -- wrong premise ------------------------------------------------------------------------------

_FIGURE = re.compile(r"\d+(?:\.\d+)?")
_PREMISES = ("{input}？我看页面上写的是{figure}", "不是说{figure}吗？{original}",
             "我听说是{figure}，{input}")


def _number_text(x: float) -> str:
    if x >= 10 or float(x).is_integer():
        return str(round(x))
    return f"{x:.1f}".rstrip("0").rstrip(".")


def false_figures(value: str) -> list[str]:
    """``value`` with its first number changed, a few ways (3.37万公里 → 1.7万公里, …):
    counts, days, hours and years move by one to three, other figures scale."""
    m = _FIGURE.search(value)
    if m is None:
        return []
    x = float(m.group(0))
    small = x.is_integer() and (x <= 31 or 1950 <= x <= 2100)
    alts = [x + 1, x + 2, x - 1, x + 3] if small else [x * 0.5, x * 1.5, x * 2, x * 0.3]
    out: list[str] = []
    for alt in alts:
        text = _number_text(alt)
        figure = value[:m.start()] + text + value[m.end():]
        if alt >= 0 and text != m.group(0) and figure not in out:
            out.append(figure)
    return out


def _premises(data: dict[str, Any], slot: _Slot) -> Iterator[Candidate]:
    text = _get(data, (*slot.base, "input"))
    points = _get(data, (*slot.expected, "knowledge_points")) or []
    if not isinstance(text, str):
        return
    facts = json.dumps(data.get("knowledge") or _get(data, ("request", "knowledge")) or {},
                       ensure_ascii=False)
    stem = text.rstrip("？?。.!！~～ ")
    for j, point in enumerate(points):
        value = point.get("value") if isinstance(point, dict) else None
        if not isinstance(value, str):
            continue
        for figure in (f for f in false_figures(value) if f not in facts):
            kept = [dict(p, usage="correct") if k == j else p for k, p in enumerate(points)]
            varied = _set(data, (*slot.expected, "knowledge_points"), kept)
            for template in _PREMISES:
                new = template.format(input=stem, original=text, figure=figure)
                yield Candidate(_set(varied, (*slot.base, "input"), new),
                                f"{slot.where}{figure}（知识：{value}）")


@generator("wrong_premise")
def _wrong_premise(data: dict[str, Any]) -> list[Candidate]:
    return [c for slot in _slots(data) for c in _premises(data, slot)]


#: the kinds, in the order a file lists them
KINDS: tuple[str, ...] = ("typo", "asr", "colloquial", "noise", "wrong_premise")
