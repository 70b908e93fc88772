"""Unicode-aware text helpers shared by the rule types."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize", "sentences"]

_SENTENCE_END = re.compile(r"[。！？!?；;\n]+")
_ONLY_PUNCT = re.compile(r"^[\s\W_]*$")


def normalize(text: str, ignore_case: bool = False) -> str:
    """NFKC (full-width digits, letters and punctuation to their plain forms)."""
    out = unicodedata.normalize("NFKC", text)
    return out.casefold() if ignore_case else out


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: 。！？!?；; and newlines end a sentence."""
    parts = _SENTENCE_END.split(text)
    return [p.strip() for p in parts if not _ONLY_PUNCT.match(p)]
