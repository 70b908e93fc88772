"""Unicode-aware text helpers shared by the rule types."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["fold_pattern", "normalize", "sentences"]

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
        out.append(ch if folded in _REGEX_META and folded != ch else folded)
    return "".join(out)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: 。！？!?；; and newlines end a sentence."""
    parts = _SENTENCE_END.split(text)
    return [p.strip() for p in parts if not _ONLY_PUNCT.match(p)]
