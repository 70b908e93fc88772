"""Unicode-aware text helpers shared by the rule types."""

from __future__ import annotations

import functools
import math
import re
import re._constants as sre_c  # type: ignore[import-not-found]
import re._parser as sre_parse  # type: ignore[import-not-found]
import unicodedata
from collections.abc import Iterable
from typing import Any

from ._traditional import PAIRS

__all__ = ["DISCOUNT", "KEEP_CHARS", "LABEL", "ZHE", "asked", "clause_spans", "clauses",
           "cn_value", "compile_any", "fold_pattern", "leaves", "negated", "normalize",
           "number_spans", "numbers", "prepare_numbers", "quoted", "said_at", "sentences",
           "unnegated"]

_REGEX_META = frozenset("()[]{}?*+.^$|\\")

#: 。！？!?；; and newlines; a half-width full stop after a word and before a space or the
#: end (「OK. 这台是2021款的.」, not 3.37, a list's 「1. 」 or 「Ms. Lee」); emoji before a space
#: (「车还在呢😊 车况很好」)
_SENTENCE_END = re.compile(r"[。！？!?；;\n]+|(?<=[^\d\s.])(?<!Mr)(?<!Ms)(?<!Mrs)(?<!Dr)(?<!No)"
                           r"(?<!St)(?<!vs)(?<!etc)\.(?=\s|$|[\u4e00-\u9fff])"
                           r"|[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s+")
#: a quotation: words the reply mentions (the user's own, a phrase) and does not say
_QUOTED = re.compile(r"“[^“”]*”|「[^「」]*」|『[^『』]*』|\"[^\"\n]*\"")
_ONLY_PUNCT = re.compile(r"^[\s\W_]*$")


#: traditional characters folded one-to-one to simplified (OpenCC's table, see
#: ``_traditional``), so that 「請留下手機號碼」「經紀人」 and 「3.37萬公里」 match the
#: simplified vocabularies (characters that are also in simplified use with another
#: meaning, such as 乾 or 於, are left alone)
_TRADITIONAL = str.maketrans(PAIRS[0::2], PAIRS[1::2])


#: texts up to this length are kept once folded: every rule of a turn reads the same reply,
#: a scenario's history comes back every turn, and a vocabulary's terms every turn (folding
#: a reply costs 16 µs); a longer text is folded each time, so the caches stay small
KEEP_CHARS = 2_000


def normalize(text: str, ignore_case: bool = False) -> str:
    """NFKC (full-width digits, letters and punctuation to their plain forms), and common
    traditional characters to simplified, one character to one; Markdown emphasis is
    dropped (「**留个**手机号」 is 「留个手机号」; the stars of 「138****5678」 stay)."""
    return (_fold if len(text) > KEEP_CHARS else _fold_kept)(text, ignore_case)


#: a run of * or ` that marks emphasis or code, not one inside a masked number
_EMPHASIS = re.compile(r"\*++(?!\d)|(?<![\d*])\*++|`+")


def _fold(text: str, ignore_case: bool) -> str:
    out = unicodedata.normalize("NFKC", text).translate(_TRADITIONAL)
    if "*" in out or "`" in out:
        out = _EMPHASIS.sub("", out)
    return out.casefold() if ignore_case else out


_fold_kept = functools.lru_cache(maxsize=8192)(_fold)


def fold_pattern(pattern: str) -> str:
    """NFKC-fold a regex pattern, except full-width characters that would become syntax.

    ``您好！`` becomes ``您好!`` and ``[，]`` becomes ``[,]``, but ``（`` and ``？`` stay
    literal full-width characters instead of turning into a group or a quantifier.
    """
    out = []
    for ch in pattern:
        folded = unicodedata.normalize("NFKC", ch).translate(_TRADITIONAL)
        if folded == ch:
            out.append(ch)
        elif folded in _REGEX_META:
            out.append(ch)  # （ ？ ［ stay literal full-width characters
        else:  # escaped: a folded ～ is "\~", never a set operation inside [...]
            out.append("".join(c if c.isalnum() else re.escape(c) for c in folded))
    return "".join(out)


#: a scripted bot's bracketed label (「【诚信二手车】」「【温馨提示】」), and a line of one alone
LABEL = re.compile(r"【[^】\n]{0,12}】")
_LABEL_LINE = re.compile(rf"(?m)^[ \t]*{LABEL.pattern}[ \t]*$")
#: a line break after a comma or 、 continues the sentence
_BROKEN_LINE = re.compile(r"(?<=[，,、])[ \t]*\n[ \t\n]*(?=\S)")


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: 。！？!?；; and newlines end a sentence (not a newline after
    a comma or 、, which breaks a line inside a sentence)."""
    text = _QUOTED.sub(lambda m: _SENTENCE_END.sub(" ", m.group(0)), text)  # 「您问的“能便宜吗？”」
    text = _BROKEN_LINE.sub(" ", text)  # 「这台朗逸，\n表显3.37万公里」 is one sentence
    text = _LABEL_LINE.sub("", text)  # a scripted bot's 「【温馨提示】」 line says nothing
    parts = _SENTENCE_END.split(text)
    return [p.strip() for p in parts if not _ONLY_PUNCT.match(p)]


#: a comma, colon, tilde or dash between digits (「3,500元」「16:00」「3～5天」) ends no clause
_CLAUSE_END = re.compile(r"(?:[。！？!?；;\n，、：…]|——+|(?<!\d)[,:~～—]|[,:~～—](?!\d)"
                         # a space after an emoji (「十拿九稳👍 到了我微信喊您」)
                         r"|(?<=[\U0001F300-\U0001FAFF])\s+(?=[\u4e00-\u9fff]))+")
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(万|千)?")
_UNIT = {"万": 10_000.0, "千": 1_000.0, None: 1.0}
#: 「别错过」「别忘了」 urge (marketing), they negate nothing;
#: 「唔」 and 「冇」 negate in Cantonese (「唔留电话都冇问题」), but 「唔该」 (please),
#: 「唔好意思」 (sorry) do not;
#: 「要不」 (how about: 「要不加个微信」「要不要看看」), 「不过」 (but), 「不如」 (why not),
#: 「不少」 and 「不错」 are no negation; a negation does not reach past a 「～」
#: (「您别生气哈～方便留个手机号吗」 asks)
_NEGATION = re.compile(r"(?<!要)(不(?!过|如|少|错|要错过|要忘)|没|无法|"
                       r"(?<![告分特区级类性个差识辨离道])别(?!错过|忘|家|人|的)|未|暂不|不能|"
                       r"不方便|不支持|不提供|唔(?!该|好意思)|冇|没有(额外|其他|任何|别的|什么)的?|"
                       r"不用|没有|无需|无须|不必|不敢|没办法|没法|为什么要|凭什么|何必|"
                       r"不(认为|觉得)(有)?|没觉得|不(代表|等于|意味着)[^，,。！？!?；;～~]{0,6})"
                       r"(方便|能|可以|会|需要|必|用)?(再)?"
                       r"(加|用|给|提供|走|通过|留|添加|向您|跟您)?[^，,。！？!?；;～~]{0,4}$")


def clauses(text: str) -> list[str]:
    """Clauses of ``text``: sentences further cut at commas, colons and ellipses."""
    norm = normalize(text)
    return [norm[a:b] for a, b in clause_spans(norm)]


def clause_spans(norm: str) -> list[tuple[int, int]]:
    """Where each of :func:`clauses` sits in ``norm`` (text already normalised): the
    (start, end) of every non-blank clause, without its surrounding whitespace."""
    out, pos = [], 0
    # a bracket's aside is part of its clause (「把您的需求(明天16:00取、6寸)转给店员」)
    asides = [b.span() for b in _ASIDE.finditer(norm)] if "(" in norm else []
    for m in [*_CLAUSE_END.finditer(norm), None]:
        if m is not None and any(a < m.start() < b for a, b in asides):
            continue
        end = m.start() if m else len(norm)
        piece = norm[pos:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((pos + lead, pos + len(piece.rstrip())))
        pos = m.end() if m else end
    return out


_ASIDE = re.compile(r"\([^()\n]{1,40}\)")
_ASKS = re.compile(r"(吗|么|没有?|与否|是否)[~～啊呀哈]*$")
#: 「呢」 asks in a wh-question (「您想什么时候来呢」), after 「那」 or in a short elliptical
#: question (「周末呢」); 「车还在呢」「就在店里摆着呢」 state
_NE = re.compile(r"呢[~～啊呀哈]*$")
_WH = re.compile(r"什么|怎么(?!可能)|哪|几|多少|多久|谁|为什么|如何|是不是|要不要|能不能|有没有|"
                 r"可不可以|还是|^那")


def asked(text: str) -> list[bool]:
    """For each of :func:`clauses`, whether it asks (ends in ? or a question particle)."""
    norm = normalize(text)
    out = []
    for a, b in clause_spans(norm):
        clause, end = norm[a:b], _CLAUSE_END.search(norm, b)  # only blanks before its end
        out.append("?" in (end.group(0) if end else "") or bool(_ASKS.search(clause)) or (
            bool(_NE.search(clause)) and (len(clause) <= 3 or bool(_WH.search(clause)))))
    return out


def compile_any(patterns: Iterable[str]) -> re.Pattern[str] | None:
    """One case-insensitive regex for a list of patterns (None for an empty list).

    Cached: rules call it on every turn with the same vocabularies.
    """
    return _compile_any(tuple(patterns))


@functools.lru_cache(maxsize=512)
def _compile_any(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    if not patterns:
        return None
    body = "|".join(f"(?:{fold_pattern(p)})" for p in patterns)
    # a vocabulary of a hundred alternatives is tried whole at every position of a text; a
    # lookahead of the characters any match can start with rejects most positions at once
    # (the same matches: every match starts with one of them)
    first = _starts(body)
    if first is not None:
        body = f"(?=[{''.join(re.escape(c) for c in sorted(first))}])(?:{body})"
    return re.compile(body, re.IGNORECASE)


#: what \s and \d may start a match with
_SPACES = frozenset(chr(c) for c in range(0x3001) if chr(c).isspace()) | {"\u3000"}
_DIGITS = frozenset(chr(c) for c in range(0x10000) if chr(c).isdecimal())
_CLASS_MAX = 400  # a character class wider than this is no filter


def _starts(pattern: str) -> frozenset[str] | None:
    """Every character a match of ``pattern`` (matched case-insensitively) can start with,
    or None when that is not a small set (it may match the empty string, start with any
    character, a word character, a negated class …)."""
    try:
        parsed = sre_parse.parse(pattern, re.IGNORECASE)
    except re.error:
        return None
    found, nullable = _first(list(parsed))
    if found is None or nullable:
        return None
    return frozenset(found | {v for c in found for v in (c.lower(), c.upper(), c.casefold())
                              if len(v) == 1})


def _first(items: list[Any]) -> tuple[set[str] | None, bool]:
    """The characters a sequence of parsed items can start with, and whether it can match
    the empty string."""
    out: set[str] = set()
    for op, av in items:
        if op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue  # zero width: the next item starts the match
        if op is sre_c.LITERAL:
            return out | {chr(av)}, False
        if op is sre_c.IN:
            chars = _class(av)
            return (None if chars is None else out | chars), False
        if op is sre_c.CATEGORY:
            chars = _category(av)
            return (None if chars is None else out | chars), False
        if op is sre_c.SUBPATTERN:
            found, nullable = _first(list(av[-1]))
        elif op is sre_c.BRANCH:
            firsts = [_first(list(branch)) for branch in av[1]]
            if any(f is None for f, _ in firsts):
                return None, False
            found = set().union(*(f for f, _ in firsts if f is not None))
            nullable = any(n for _, n in firsts)
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            found, nullable = _first(list(av[2]))
            nullable = nullable or av[0] == 0
        else:  # any character, a back reference, a negated literal …
            return None, False
        if found is None:
            return None, False
        out |= found
        if not nullable:
            return out, False
    return out, True


def _class(items: list[Any]) -> set[str] | None:
    chars: set[str] = set()
    for op, av in items:
        if op is sre_c.LITERAL:
            chars.add(chr(av))
        elif op is sre_c.RANGE and av[1] - av[0] < _CLASS_MAX:
            chars |= {chr(c) for c in range(av[0], av[1] + 1)}
        elif op is sre_c.CATEGORY and (more := _category(av)) is not None:
            chars |= more
        else:  # a negated class, a wide range, \w …
            return None
    return chars if len(chars) < _CLASS_MAX * 4 else None


def _category(av: Any) -> set[str] | None:
    if av in (sre_c.CATEGORY_DIGIT, sre_c.CATEGORY_UNI_DIGIT):
        return set(_DIGITS)
    if av in (sre_c.CATEGORY_SPACE, sre_c.CATEGORY_UNI_SPACE):
        return set(_SPACES)
    return None


#: an English negation a few words before (「we won't send you any promo」「no discount」)
#: (「don't forget to leave your number」「don't hesitate to…」 ask)
_EN_NEGATION = re.compile(r"\b(no|not|never|don't|won't|can't|cannot|without)\b"
                          r"(?!\s+(forget|hesitate))[a-z\s']{0,14}$", re.IGNORECASE)


#: a question of the form 「X不X」: 「可不可以留个电话」「方唔方便」 ask, they negate nothing
_A_NOT_A = re.compile(r"([\u4e00-\u9fff])[不唔没冇](?=\1)|有冇")


#: a negation over a list (「也不会再向您要联系方式或者推荐别的书了」): it reaches past 或者
_NEGATED_LIST = re.compile(r"(不会再?|不再|不用再?|无需|不需要|不要再?(?!错过|忘)|没有)"
                           r"[^，,。！？!?；;～~]{0,16}(或者|或是|或|和|以及|及|、|还是)"
                           r"[^，,。！？!?；;～~]{0,8}$")


#: a promise to stop sending (「不会再给您推送任何活动」), a comparison that denies
#: (「不像别家那么坑」)
_NEGATED_SEND = re.compile(r"(不会再?|不再|不用再?|无需|不需要|不要再?)(给|向|跟|为|对)?(您|你)?"
                           r"(推送|推荐|发送?|介绍|打扰|提供)(任何|什么|其他|别的)?$"
                           r"|不像[^，,。！？!?；;～~]{0,8}(那么|这么|那样|这样)$"
                           # 「已经帮您退订促销短信」
                           r"|(退订|退掉|取消|关闭|停止|停发)(了)?(您|你)?的?$")


def negated(text: str, start: int, window: int = 8) -> bool:
    """True when a negation ends right before ``start`` (「不方便加微信」, 「无法承诺」,
    「won't send you any promo」, 「不会再要联系方式或者推荐…」「不会再给您推送任何活动」
    「不像别家那么坑」), not in a question 「可不可以…」."""
    if _NEGATED_LIST.search(text[max(0, start - 30):start]) or _NEGATED_SEND.search(
            text[max(0, start - 20):start]):
        return True
    # the character at ``start`` is read too: 「方不方便留…」 matched from 「方便」
    before = _A_NOT_A.sub("", text[max(0, start - window):start + 1])
    if start < len(text):
        before = before[:-1]
    return bool(_NEGATION.search(before)
                or _EN_NEGATION.search(text[max(0, start - 20):start]))


def quoted(text: str, start: int) -> bool:
    """True when ``start`` is inside a quotation (「您说“连句对不起都没有”」 mentions the
    words, it does not say them)."""
    return any(q.start() < start < q.end() for q in _QUOTED.finditer(text))


#: words reported, not said now (「师傅当场已经跟您说过抱歉了吧」)
_REPORTED = re.compile(r"(说过|讲过|道过|表示过)(了)?(一声|一句|句)?$")


def said_at(text: str, start: int) -> bool:
    """The words at ``start`` are said: not :func:`negated` (「无需道歉」「为什么要说抱歉」
    apologise for nothing; 「不方便加微信」 offers nothing), not :func:`quoted` and not
    reported (「师傅已经跟您说过抱歉了吧」)."""
    return (not negated(text, start) and not quoted(text, start)
            and not _REPORTED.search(text, max(0, start - 6), start))


#: what joins two words of one phrase (「优惠活动」「优惠和活动」「手机或电话」)
_JOINS = re.compile(r"[的和与或及、]?")


def unnegated(regex: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of ``regex`` in ``text`` that is :func:`said_at` its start; a match
    that goes on the phrase of a negated one is negated with it (「不会再给您推送优惠活动了」:
    the 活动 of 优惠活动)."""
    end = -2
    for m in regex.finditer(text):
        if end >= 0 and _JOINS.fullmatch(text, end, m.start()):
            end = m.end()
            continue
        if said_at(text, m.start()):
            return m
        end = m.end()
    return None


_DATE_DOT = re.compile(r"(?<![\d.])((?:19|20)\d{2})\.(\d{1,2})(?![\d.])")
_SHORT_YEAR = re.compile(r"(?<![\d.])(\d{2})(?=年)")
_CLOCK = re.compile(r"(?<![\d.])([01]?\d|2[0-3]):([0-5]\d)(?!\d)")


def numbers(text: str) -> list[tuple[str, float]]:
    """Every number in ``text`` with its value: 3.37万 → 33700, 33,700 → 33700, ８ → 8.

    A year and month written 2021.06 are two numbers (2021, 6), a two-digit
    year before 年 (21年) is 2021, and a clock time 9:00 is 9点 (9:30 is 9点30分).
    """
    return [(raw, value) for _, _, raw, value in number_spans(prepare_numbers(text))]


_CN_DIGIT = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
             "八": 8, "九": 9}
_CN_UNIT = {"十": 10, "百": 100, "千": 1_000}
#: a Chinese numeral of two characters or more: with 百, 千 or 万 (「三万三千七百」「八万五」; one
#: digit after the last unit: 「一千二一瓶」 is 1200 a bottle), or
#: before a unit (「十一月」「十二点」), or tens before a measure word (「精修三十张」
#: 「五十寸」; not 「七八个」, a range); 「十分」「万一」「千万别」「一次」 are no numbers
_CN_NUMBER = re.compile(r"[一二两三四五六七八九十](?=[零一二两三四五六七八九十]*[百千万])"
                        r"(?:[零一二两三四五六七八九]*[十百千万])+(?:零?[一二两三四五六七八九])?"
                        r"|[一二两三四五六七八九十][零一二两三四五六七八九十]+"
                        r"(?=公里|千米|元|块|次|年|个月|月|天|点|号|岁)"
                        r"|([一二两三四五六七八九]十[一二三四五六七八九]?|十[一二三四五六七八九])"
                        r"(?=张|寸|套|台|辆|人|位|间|节|课时|分钟|小时|周|平米|平方|米|斤|公斤|克"
                        r"|件|层|期|项|颗|个|份|瓶|盒|本|页|道|款|家|所|座|棵|只|条|对|组|场)")
#: 「3.37w公里」「8.98W」: w is 万 before a unit, an approximation or the end (「5W快充」 is watts)
_CN_ZERO = re.compile(r"(?<![一二两三四五六七八九十百千万\d])零(?=过户|次|事故)")  # 「零过户」
_W = re.compile(r"(?<=\d)w(?=公里|千米|km|元|块|多|左右|以内|出头|$|[,，。!！?？~～、)）])",
                re.IGNORECASE)
_PM = re.compile(r"(下午|晚上|傍晚|晚)\s*(\d{1,2})(?=点)")
#: 「7pm」 is 19点, 「9 a.m.」 9点
_EN_CLOCK = re.compile(r"(?<![\d.:])(\d{1,2})\s*([ap])\.?m\.?(?![a-z])", re.IGNORECASE)
def _en_clock(m: re.Match[str]) -> str:
    return f"{int(m.group(1)) % 12 + (12 if m.group(2) in 'pP' else 0)}点"


#: a share off in tenths (「立减三成」 is 30%)
_CHENG_OFF = re.compile(r"(立减|优惠|减免|首付|减)([一二两三四五六七八九])成(?![本功为员交立绩])")
#: money written the other ways: 「RMB 129」「¥129」 → 129元, 「3.8k」 → 3.8千,
#: 「三块五」「3块5」 → 3.5元
_CURRENCY = re.compile(r"(?:rmb|cny|¥|￥)\s*(\d[\d,]*(?:\.\d+)?)", re.IGNORECASE)
_K = re.compile(r"(?<=\d)[kK](?=/|元|块|$|[\s,，。!！?？~～、)）]|\.(?!\d)"
                r"|左右|多|起|以内|以上|以下|出头|上下|的)")
_KUAI = re.compile(r"(?<![\d.])(\d+)块(\d)(?![\d十百千万])"
                   r"|(?<![一二两三四五六七八九十百千万\d])([一二两三四五六七八九十])块([一二三四五六七八九])"
                   r"(?![一二三四五六七八九十百千万\d])")
#: one Chinese digit before a unit of time, money or measure (「质保五年」「十块钱」「两小时起约」
#: 「打两针」), not in an idiom (「三天两头」「这两天」「过两天」) or a school year (「四年级」);
#: and a half (「一个半小时」 → 1.5小时)
_CN_SINGLE = re.compile(r"(?<![一二两三四五六七八九十百千万零〇\d.])((?<![这那前头过没隔几])两"
                        r"|[二三四五六七八九十])"
                        r"(?=(年|个月|天|个小时|小时|个钟头|分钟|公里|元|块|周|次|针|节|期|斤|公斤|米)"
                        r"(?![一二两三四五六七八九十级]))")
_CN_HALF = re.compile(r"(?<![一二两三四五六七八九十百千万零\d.])([一二两三四五六七八九十])个半"
                      r"(?=小时|月|钟头)")
#: a share written as a fraction: 「1/3」 and 「三分之一」 are 0.333… (not 24/7, nor a date:
#: 「3/10离店」「3/9（周六）开班」「3/9那期」; a fraction not in its lowest terms, 3/9, is one too)
_FRACTION = re.compile(r"(?<![\d/.])([1-9])/([2-9]|10)(?![\d/])"
                       r"(?!\s*(离店|入住|送达|到达|到店|出发|返回|号|日|前|后|起|截止"
                       r"|[（(]?\s*(周|星期|礼拜)|那期|这期|期|开班|开课|开学|开业|开始|当天|那天|这天"
                       r"|上午|下午|晚上|早上|中午))")
_CN_FRACTION = re.compile(r"([一二两三四五六七八九十])分之([一二两三四五六七八九])")
#: 「Jun 2021」「June, 2021」 → 2021年6月
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                       "sep", "oct", "nov", "dec"), 1)}
_EN_MONTH = re.compile(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?,?\s+"
                       r"((?:19|20)\d{2})\b", re.IGNORECASE)
#: one Chinese digit where it can only be an hour or a month: 「早上九点」「晚上六点」「2021年六月」
_CN_HOUR = re.compile(r"(早上|上午|中午|下午|晚上|傍晚|凌晨|早|晚)([一二两三四五六七八九十])(?=点)")
_CN_MONTH = re.compile(r"(?<=年)([一二三四五六七八九十])(?=月)")
#: a year read digit by digit: 「二〇二一年」「二零二一年」 → 2021年
_CN_YEAR = re.compile(r"(?<![零〇一二两三四五六七八九十百千万\d])"
                      r"([零〇一二三四五六七八九]{4})(?=年)")
_YEAR_DIGITS = str.maketrans("零〇一二三四五六七八九", "00123456789")
#: 折 of a discount, not of 折旧, 折叠, 折腾, 折合, 折算, 折返
ZHE = r"折(?![旧叠腾合算返中])"
#: a discount as a share of the price: 八折, 8.5折, 八五折 (the price topic of ``no_commitment``)
DISCOUNT = r"[一二两三四五六七八九\d]{1,2}(\.\d)?\s*" + ZHE
#: and a discount as a share: 「打九折」 is 9折
_CN_SHARE = re.compile(r"(?<![一二两三四五六七八九十百千万\d])([一二三四五六七八九])"
                       r"(?=" + ZHE + ")")
#: a rent's terms: 「押一付三」 is one month's deposit and three months' rent
_YA_FU = re.compile(r"押([一二两三四五六])付([一二两三四五六十])")
#: and litres of fuel: 「六个油」「五升」
#: a decimal in words before its unit (「一点五升」 is 1.5升)
_CN_DECIMAL = re.compile(r"(?<![一二两三四五六七八九十百千万\d])([一二两三四五六七八九十]+)点"
                         r"([零〇一二三四五六七八九]+)(?=升|公升|公里|万|米|倍|寸|吨|L|T)")
#: digits with their units in words (「3万3千7百公里」 is 33700)
#: 「8万9千8」「6 万 7 左右」: the last digit is of the place below the one before it
_MIXED = re.compile(r"(?<![\d.])(\d{1,4})\s*万\s*((?:\d[千百十])*)"
                    r"(?:(\d)(?=\s*(?:左右|多|几|上下|出头|公里|元|块|[，,。！？!?、；;)）]|$)))?")
_PLACE = {"千": 1000, "百": 100, "十": 10}
_BELOW = {"万": 1000, "千": 100, "百": 10, "十": 1}


def _mixed(m: re.Match[str]) -> str:
    rest, last = m.group(2), m.group(3)
    if not rest and last is None:
        return m.group(0)
    value = int(m.group(1)) * 10_000 + sum(int(rest[i]) * _PLACE[rest[i + 1]]
                                           for i in range(0, len(rest), 2))
    return str(value + (int(last) * _BELOW[rest[-1] if rest else "万"] if last else 0))


_CN_LITRE = re.compile(r"(?<![一二两三四五六七八九十百千万\d])([一二两三四五六七八九十])"
                       r"(?=个油|升|公升)")


def _share(part: int, whole: int) -> str:
    """1 of 3 → 「0.3333」 (four places: equal shares read alike in both forms)."""
    return f"{part / whole:.4f}"


def _kuai(m: re.Match[str]) -> str:
    """3块5 and 三块五 → 3.5元."""
    if m.group(1):
        return f"{m.group(1)}.{m.group(2)}元"
    return f"{cn_value(m.group(3))}.{cn_value(m.group(4))}元"


def _pm(m: re.Match[str]) -> str:
    """晚上6点 → 晚上18点 (12 and anything past it stay)."""
    hour = int(m.group(2))
    return m.group(1) + str(hour + 12 if 0 < hour < 12 else hour)


def cn_value(numeral: str) -> int:
    """三万三千七百 → 33700, 八万五 → 85000, 三千五 → 3500, 十一 → 11, 两万零五百 → 20500."""
    total = section = digit = 0
    last_unit, zero = 0, False
    for ch in numeral:
        if ch in _CN_DIGIT:
            digit, zero = _CN_DIGIT[ch], zero or ch == "零"
        elif ch == "万":
            total, section, digit, last_unit, zero = (section + digit) * 10_000, 0, 0, 10_000, False
        else:
            unit = _CN_UNIT[ch]
            section += (digit or (1 if unit == 10 else 0)) * unit
            digit, last_unit, zero = 0, unit, False
    if digit and last_unit >= 100 and not zero:  # 「八万五」: the digit after 万 counts 千
        digit *= last_unit // 10
    return total + section + digit


def prepare_numbers(text: str) -> str:
    """``text`` as :func:`number_spans` reads it (NFKC, 2021.06 → 2021-06, 21年 → 2021年,
    三万三千七百 → 33700, 3.37w → 3.37万, 晚上6点 and 晚上六点 → 18点, 十点半 → 10点30分,
    28㎡ → 28平米, 二〇二一年六月 → 2021年6月)."""
    return (_prepare if len(text) > KEEP_CHARS else _prepare_kept)(text)


#: spoken and local forms, read first: 「千二八」 1280, 「万二」 12000 (not 「万一」, in case);
#: 「十蚊」 (Cantonese dollars); 「十点三个字」 10:15; 「朝七晚十一」 7 to 23 o'clock; 「八五折」;
#: 「1830–2130hrs」; 「£1.25m」
_NUMERAL = "一二两三四五六七八九十百千万零"
_CN_ABBREV = re.compile(rf"(?<![{_NUMERAL}\d.])(?!万一)([千万])([一二三四五六七八九])"
                        rf"([一二三四五六七八九])?(?![{_NUMERAL}\d])")
_MAN = re.compile(rf"(?<![{_NUMERAL}\d.])(\d+(?:\.\d+)?|[一二两三四五六七八九十百千]+)"
                  r"\s*蚊(半)?")
#: 「廿五」 is 25, 「卅」 30
_NIAN = re.compile(r"([廿卅])([一二三四五六七八九])?")
_ZI = re.compile(r"(?:(?<=星期[一二三四五六日天])|(?<=礼拜[一二三四五六日天])"
                 r"|(?<=周[一二三四五六日末])|(?<![一二两三四五六七八九十\d])(?<!星期)(?<!礼拜)(?<!周))"
                 r"(\d{1,2}|[一二两三四五六七八九十]{1,3})点"
                 r"(\d{1,2}|[一二两三四五六七八九十]{1,2})个字")
_DAY_NIGHT = re.compile(r"朝(\d{1,2}|[一二两三四五六七八九十]{1,3})(?:点)?"
                        r"晚(\d{1,2}|[一二两三四五六七八九十]{1,3})")
_CN_SHARE2 = re.compile(rf"(?<![{_NUMERAL}\d])([一二三四五六七八九])([一二三四五六七八九])"
                        r"(?=" + ZHE + ")")
_HRS = re.compile(r"(?<![\d:])([01]\d|2[0-3])([0-5]\d)(?:(\s*[–\-~至到]\s*)([01]\d|2[0-3])"
                  r"([0-5]\d))?\s*hrs?\b", re.IGNORECASE)
_MILLION = re.compile(r"((?:£|\$|€|hk\$|us\$|s\$|a\$|c\$|nt\$|rm|mop|hkd|usd)\s*)(\d+(?:\.\d+)?)"
                      r"\s*(m|mn|million|bn|billion)\b", re.IGNORECASE)


def _number(word: str) -> int:
    return int(word) if word.isdigit() else cn_value(word)


def _man(m: re.Match[str]) -> str:
    """「十蚊」 10元, 「一蚊半」 1.5元 (Cantonese dollars)."""
    value = float(m.group(1)) if "." in m.group(1) else float(_number(m.group(1)))
    return f"{value + (0.5 if m.group(2) else 0):g}元"


def _hrs(m: re.Match[str]) -> str:
    first = f"{int(m.group(1))}:{m.group(2)}"
    return first + (f"{m.group(3)}{int(m.group(4))}:{m.group(5)}" if m.group(4) else "")


def _spoken(text: str) -> str:
    text = _CN_ABBREV.sub(lambda m: str(round({"千": 1000, "万": 10_000}[m.group(1)] * (
        1 + cn_value(m.group(2)) / 10 + (cn_value(m.group(3)) / 100 if m.group(3) else 0)))),
                          text)
    text = _NIAN.sub(lambda m: str({"廿": 20, "卅": 30}[m.group(1)]
                                   + (cn_value(m.group(2)) if m.group(2) else 0)), text)
    text = _MAN.sub(_man, text)
    text = _ZI.sub(lambda m: f"{_number(m.group(1))}点{_number(m.group(2)) * 5}分", text)
    text = _DAY_NIGHT.sub(lambda m: f"{_number(m.group(1))}点至"
                                    f"{_number(m.group(2)) % 12 + 12}点", text)
    text = _CN_SHARE2.sub(lambda m: f"{cn_value(m.group(1))}.{cn_value(m.group(2))}", text)
    text = _HRS.sub(_hrs, text)
    return _MILLION.sub(_millions, text)


def _millions(m: re.Match[str]) -> str:
    scale = 1e9 if m.group(3).lower() in ("bn", "billion") else 1e6
    return f"{m.group(1)}{float(m.group(2)) * scale:.0f}"


def _prepare(text: str) -> str:
    text = _spoken(_DATE_DOT.sub(r"\1-\2", normalize(text)))
    text = _EN_MONTH.sub(lambda m: f"{m.group(2)}年{_MONTHS[m.group(1)[:3].lower()]}月", text)
    text = _CN_YEAR.sub(lambda m: m.group(1).translate(_YEAR_DIGITS), text)
    text = _CN_DECIMAL.sub(lambda m: f"{cn_value(m.group(1))}.{m.group(2).translate(_YEAR_DIGITS)}",
                           text)
    text = _MIXED.sub(_mixed, text)
    text = _CN_NUMBER.sub(lambda m: str(cn_value(m.group(0))), text)
    text = _CN_HALF.sub(lambda m: f"{cn_value(m.group(1))}.5", text)
    text = _CN_SINGLE.sub(lambda m: str(cn_value(m.group(1))), text)
    text = _CN_FRACTION.sub(lambda m: _share(cn_value(m.group(2)), cn_value(m.group(1))), text)
    text = _FRACTION.sub(lambda m: _share(int(m.group(1)), int(m.group(2)))
                         if int(m.group(1)) < int(m.group(2))
                         and math.gcd(int(m.group(1)), int(m.group(2))) == 1 else m.group(0), text)
    text = _CN_HOUR.sub(lambda m: m.group(1) + str(cn_value(m.group(2))), text)
    text = _CN_MONTH.sub(lambda m: str(cn_value(m.group(1))), text)
    text = _CN_LITRE.sub(lambda m: str(cn_value(m.group(1))), text)
    text = _CN_SHARE.sub(lambda m: str(cn_value(m.group(1))), text)
    text = _YA_FU.sub(lambda m: f"押{cn_value(m.group(1))}付{cn_value(m.group(2))}", text)
    text = _CN_ZERO.sub("0", text)
    text = _W.sub("万", text)
    text = _CURRENCY.sub(lambda m: m.group(1) + "元", text)
    text = _K.sub("千", text)
    text = _KUAI.sub(_kuai, text)
    text = _CLOCK.sub(lambda m: f"{int(m.group(1))}点" + (f"{int(m.group(2))}分"
                                                        if m.group(2) != "00" else ""), text)
    text = _PM.sub(_pm, text)
    text = _EN_CLOCK.sub(_en_clock, text)
    text = _CHENG_OFF.sub(lambda m: f"{m.group(1)}{cn_value(m.group(2)) * 10}%", text)
    text = _CN_HALF_HOUR.sub(lambda m: f"{cn_value(m.group(1))}点30分", text)
    text = _HALF_HOUR.sub(r"\1点30分", _SQUARE_METRE.sub("平米", text))
    return _SHORT_YEAR.sub(lambda m: str(2000 + int(m.group(1))), text)


#: half past (「十点半」 is 10点30分), square metres as NFKC writes ㎡ (28m2: not a 2)
_HALF_HOUR = re.compile(r"(\d+)点半")
_CN_HALF_HOUR = re.compile(r"(?<![一二两三四五六七八九十\d])([一二两三四五六七八九十]{1,3})点半")
_SQUARE_METRE = re.compile(r"(?<=\d)\s*m2(?![0-9a-z])", re.IGNORECASE)


_prepare_kept = functools.lru_cache(maxsize=4096)(_prepare)


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
