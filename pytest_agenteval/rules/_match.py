"""Text-matching rule types: ``keyword_match`` and ``regex``."""

from __future__ import annotations

import re

from pydantic import field_validator, model_validator

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import fold_pattern, normalize, said_at

__all__ = ["KeywordMatch", "Regex"]


class KeywordMatch(Params):
    any: tuple[str, ...] = ()
    all: tuple[str, ...] = ()
    none: tuple[str, ...] = ()
    ignore_case: bool = False
    #: ``any`` and ``all`` terms count only where the reply says them: not after a negation
    #: (「没什么需要道歉的」) and not inside a quotation (「您说“连句对不起都没有”」)
    said: bool = False

    @model_validator(mode="after")
    def _some_terms(self) -> KeywordMatch:
        if not (self.any or self.all or self.none):
            raise ValueError("give at least one of any, all, none")
        return self


@rule("keyword_match", params=KeywordMatch)
def keyword_match(p: KeywordMatch, turn: TurnView) -> RuleOutcome:
    """The reply contains one of ``any``, all of ``all`` and none of ``none``.

    Matching is on NFKC-normalised text (full-width letters and digits match
    their plain forms), case-insensitive with ``ignore_case``. With ``said``, an
    ``any`` or ``all`` term counts only where the reply says it: not after a
    negation (「没什么需要道歉的」「为什么要说抱歉」) and not inside a quotation
    (「您说“连句对不起都没有”」). The score is the share of satisfied constraints
    (the ``any`` list counts as one).
    """
    text = normalize(turn.reply, p.ignore_case)

    def found(term: str, said: bool = False) -> bool:
        term = normalize(term, p.ignore_case)
        if not said:
            return term in text
        return any(said_at(text, m.start()) for m in re.finditer(re.escape(term), text))

    hits_any = [t for t in p.any if found(t, p.said)]
    missing_all = [t for t in p.all if not found(t, p.said)]
    forbidden = [t for t in p.none if found(t)]
    total = (1 if p.any else 0) + len(p.all) + len(p.none)
    satisfied = (1 if p.any and hits_any else 0) + len(p.all) - len(missing_all)
    satisfied += len(p.none) - len(forbidden)
    problems = []
    if p.any and not hits_any:
        problems.append(f"none of [{' | '.join(p.any)}] found")
    if missing_all:
        problems.append(f"missing [{' | '.join(missing_all)}]")
    if forbidden:
        problems.append(f"forbidden [{' | '.join(forbidden)}] found")
    score = satisfied / total
    if problems:
        return RuleOutcome.failed("; ".join(problems), ", ".join(forbidden) or turn.reply, score)
    return RuleOutcome.passed("keywords satisfied", ", ".join([*hits_any, *p.all]), score)


class Regex(Params):
    pattern: str
    must_match: bool = True
    ignore_case: bool = False

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            re.compile(v)
            re.compile(fold_pattern(v))
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        return v


@rule("regex", params=Regex)
def regex(p: Regex, turn: TurnView) -> RuleOutcome:
    """The pattern is found in the reply (or, with ``must_match: false``, is not).

    The pattern is searched as written in the reply as written, then in
    folded form (NFKC: full-width letters, digits and punctuation to plain
    ones) in the folded reply, so ``您好！`` matches ``您好!`` and ``\\d`` matches
    full-width digits. Full-width characters that would fold into regex
    syntax (``（）［］？＊＋`` …) stay literal. Evidence quotes the reply as written
    when the match is found there.
    """
    flags = re.IGNORECASE if p.ignore_case else 0
    m = re.search(p.pattern, turn.reply, flags) or re.search(
        fold_pattern(p.pattern), normalize(turn.reply), flags)
    if p.must_match:
        if m:
            return RuleOutcome.passed(f"/{p.pattern}/ found", m.group(0))
        return RuleOutcome.failed(f"/{p.pattern}/ not found in the reply", turn.reply)
    if m:
        return RuleOutcome.failed(f"/{p.pattern}/ must not match", m.group(0))
    return RuleOutcome.passed(f"/{p.pattern}/ absent")
