"""Unicode-aware text helpers shared by the rule types."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["clauses", "compile_any", "fold_pattern", "leaves", "negated", "normalize",
           "number_spans", "numbers", "prepare_numbers", "sentences"]

_REGEX_META = frozenset("()[]{}?*+.^$|\\")

_SENTENCE_END = re.compile(r"[。！？!?；;\n]+")
_ONLY_PUNCT = re.compile(r"^[\s\W_]*$")


def normalize(text: str, ignore_case: bool = False) -> str:
    """NFKC (full-width digits, letters and punctuation to their plain forms)."""
    out = unicodedata.normalize("NFKC", text)
    return out.casefold() if ignore_case else out


def fold_pattern(pattern: str) -> str:
    """NFKC-fold a regex pattern, except full-width characters that would become syntax.

    ``您好！`` becomes ``您好!`` and ``[，]`` becomes ``[,]``, but ``（`` and ``？`` stay
    literal full-width characters instead of turning into a group or a quantifier.
    """
    out = []
    for ch in pattern:
        folded = unicodedata.normalize("NFKC", ch)
        if folded == ch:
            out.append(ch)
        elif folded in _REGEX_META:
            out.append(ch)  # （ ？ ［ stay literal full-width characters
        else:  # escaped: a folded ～ is "\~", never a set operation inside [...]
            out.append("".join(c if c.isalnum() else re.escape(c) for c in folded))
    return "".join(out)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: 。！？!?；; and newlines end a sentence."""
    parts = _SENTENCE_END.split(text)
    return [p.strip() for p in parts if not _ONLY_PUNCT.match(p)]


_CLAUSE_END = re.compile(r"[。！？!?；;\n，,、：:…]+")
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(万|千)?")
_UNIT = {"万": 10_000.0, "千": 1_000.0, None: 1.0}
_NEGATION = re.compile(r"(不|没|无法|别|未|暂不|不能|不方便|不支持|不提供|不用|没有|无需|无须|不必|"
                       r"不敢|没办法|没法)(方便|能|可以|会|需要|必|用)?(再)?"
                       r"(加|用|给|提供|走|通过|留|添加|向您|跟您)?[^，,。！？!?；;]{0,4}$")


def clauses(text: str) -> list[str]:
    """Clauses of ``text``: sentences further cut at commas, colons and ellipses."""
    return [c.strip() for c in _CLAUSE_END.split(normalize(text)) if c.strip()]


def compile_any(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive regex for a list of patterns (None for an empty list).

    Cached: rules call it on every turn with the same vocabularies.
    """
    return _compile_any(tuple(patterns))


@functools.lru_cache(maxsize=512)
def _compile_any(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fold_pattern(p)})" for p in patterns), re.IGNORECASE)


def negated(text: str, start: int, window: int = 8) -> bool:
    """True when a negation ends right before ``start`` (「不方便加微信」, 「无法承诺」)."""
    return bool(_NEGATION.search(text[max(0, start - window):start]))


_DATE_DOT = re.compile(r"(?<![\d.])((?:19|20)\d{2})\.(\d{1,2})(?![\d.])")
_SHORT_YEAR = re.compile(r"(?<![\d.])(\d{2})(?=年)")
_CLOCK = re.compile(r"(?<![\d.])([01]?\d|2[0-3]):([0-5]\d)(?!\d)")


def numbers(text: str) -> list[tuple[str, float]]:
    """Every number in ``text`` with its value: 3.37万 → 33700, 33,700 → 33700, ８ → 8.

    A year and month written 2021.06 are two numbers (2021, 6), a two-digit
    year before 年 (21年) is 2021, and a clock time 9:00 is 9点 (9:30 is 9点30分).
    """
    return [(raw, value) for _, _, raw, value in number_spans(prepare_numbers(text))]


def prepare_numbers(text: str) -> str:
    """``text`` as :func:`number_spans` reads it (NFKC, 2021.06 → 2021-06, 21年 → 2021年)."""
    text = _DATE_DOT.sub(r"\1-\2", normalize(text))
    text = _CLOCK.sub(lambda m: f"{int(m.group(1))}点" + (f"{int(m.group(2))}分"
                                                        if m.group(2) != "00" else ""), text)
    return _SHORT_YEAR.sub(lambda m: str(2000 + int(m.group(1))), text)


def number_spans(prepared: str) -> list[tuple[int, int, str, float]]:
    """(start, end, raw, value) of every number in a :func:`prepare_numbers` text."""
    out = []
    for m in _NUMBER.finditer(prepared):
        whole = m.group(1).replace(",", "") + (m.group(2) or "")
        out.append((m.start(), m.end(), m.group(0).strip(), float(whole) * _UNIT[m.group(3)]))
    return out


def leaves(value: object) -> list[str]:
    """Every scalar of a JSON-like value, as text (for finding facts in knowledge)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in leaves(v)]
    return [] if value is None else [str(value)]
