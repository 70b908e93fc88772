"""Knowledge rule types: ``knowledge_points`` and ``grounded_numbers``.

Numbers are compared by value, so 3.37万, 33700 and 33,700 are the same fact,
and a date 2021-06 is found as 2021年6月.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any, Literal

from pydantic import Field

from ._registry import Params, RuleOutcome, TurnView, rule
from ._text import (
    KEEP_CHARS,
    ZHE,
    cn_value,
    compile_any,
    leaves,
    normalize,
    number_spans,
    numbers,
    prepare_numbers,
    sentences,
)

__all__ = ["GroundedNumbers", "KnowledgeNotUsed", "KnowledgePoints", "value_present"]

_APPROX_AFTER = re.compile(r"^\s*(多|余|左右|出头|上下|来|几)")  # 「3万几」 (Cantonese)
_APPROX_BEFORE = re.compile(r"(?P<word>约|大约|大概|差不多|将近|接近|近|不到|\b(?:about|around"
                            r"|roughly|approximately|approx\.?|nearly|almost|just under))"
                            r"\s*(?:[a-z]{1,3}\$|[£$€]|rm|mop|hkd|usd|sgd)?\s*$", re.IGNORECASE)
#: which side of the number the true value lies on: 「3万多」 above it, 「将近9万」 below
_ABOVE = frozenset("多余几") | {"出头"}
_BELOW = frozenset({"将近", "接近", "近", "不到", "nearly", "almost", "just under"})
#: a number the user gives as a bound (「预算10万以内」「最多9万」) grounds itself, not a
#: value near it (read with ``match`` at the number's end: no ``^``)
_BOUND_AFTER = re.compile(r"\s*(万|千|元|块)?\s*(以内|以下|之内|以上|封顶|内)")
_BOUND_BEFORE = re.compile(r"(预算|不超过|最多|至多|最少|至少|控制在)\s*$")
_SQUASH = re.compile(r"\s+")
#: a number's unit, after an approximation's marker (「3万多公里」): an approximate number is
#: grounded only by a number of its unit, where both have one (「约500米」 is not 458元's)
_MEASURE = re.compile(r"\s*(?:多|余|左右|出头|上下|来|几|st|nd|rd|th)?\s*(公里|千米|km|m2(?!\d)|米"
                      r"|m(?![a-z\d])|floor"
                      r"|元|块|"
                      r"rmb|点|款|号|平方米|平米|平方|㎡|平|人|晚(?![\d一二三四五六七八九十上间饭])|个月|月|"
                      r"年|天|小时|分钟|分|秒|周|%|"
                      r"折|层|楼|次|台|辆|套|间|张|kg|公斤|斤|克|寸|瓦|w(?![a-z])|升|个油|"
                      r"l(?![a-z]))", re.IGNORECASE)
_MEASURES = {"款": "年", "千米": "公里", "km": "公里", "m": "米", "块": "元", "rmb": "元",
             "平方米": "平", "平米": "平", "平方": "平", "㎡": "平", "m2": "平", "kg": "公斤",
             "w": "瓦",
             "l": "升", "个油": "升", "分": "分钟", "楼": "层", "辆": "台", "floor": "层"}


#: a date's year and month (「2021-06」): their units, though none is written
_YEAR_OF = re.compile(r"-\d{1,2}(?!\d)")
_MONTH_OF = re.compile(r"(?<![\d.])\d{4}-$")


def _measure(prepared: str, end: int, start: int = -1) -> str | None:
    """The unit of the number at ``start:end`` of a prepared text, or None (a date's parts
    are 年 and 月: 「油耗大概6.5L」 is not grounded by the 6 of 2021-06)."""
    if start >= 0 and _YEAR_OF.match(prepared, end) and end - start == 4:
        return "年"
    if start >= 5 and _MONTH_OF.search(prepared, start - 5, start):
        return "月"
    m = _MEASURE.match(prepared, end)
    if m is None:
        return None
    unit = m.group(1).lower()
    return _MEASURES.get(unit, unit)


#: a count of one in words (「一次」「一个」), which the number readers leave alone
_ONE = re.compile(r"(?<![一二两三四五六七八九十百千万\d])一(?=次|个|位|台|辆|间|套|年|天)")
#: the units a required value (BR-002) and this item's fact (BR-014) are read with, named
#: as :data:`_MEASURES` names them
_UNIT_AFTER = re.compile(r"\s*(公里|千米|km|万公里|元|块|次|年|月|天|号|点|辆|人|座|L|T)",
                         re.IGNORECASE)


def _unit(text: str, end: int) -> str | None:
    m = _UNIT_AFTER.match(text, end)
    return None if m is None else _MEASURES.get(m.group(1).lower(), m.group(1).lower())


Spans = tuple[tuple[int, int, float, str | None], ...]


def _numbers_with_units(text: str) -> Spans:
    """(start, end, value, unit) of every number: a reply's once a turn, a value's once."""
    return (_spans if len(text) > KEEP_CHARS else _spans_kept)(text)


def _spans(text: str) -> Spans:
    prepared = prepare_numbers(text)
    return tuple((s, e, v, _unit(prepared, e)) for s, e, _, v in number_spans(prepared))


_spans_kept = functools.lru_cache(maxsize=4096)(_spans)


#: between the two ends of a range (9:00-18:00, 3-5天)
_RANGE = re.compile(r"^\s*(点|分|天|万|元)?\s*(-|~|～|至|到|—+)\s*$")
#: how far apart a range's two ends may be said (「早上九点开门，晚上六点关门」)
_RANGE_REACH = 12
_YEAR = re.compile(r"(19|20)\d\d(?!\d)")


def _found_in_order(wanted: Spans, have: Spans,
                    value: str = "") -> bool:
    """Each wanted number in order, same value and unit, close after the previous one (the
    two ends of a range in ``value``, the prepared value, within a clause or two); tried from
    every place its first number is found (「| 年款 | 2021款 |…| 上牌 | 2021-06 |」 holds
    2021-06 at its second 2021)."""
    if not wanted:
        return True
    _, _, first, unit = wanted[0]
    return any(_in_order_from(wanted, have, value, k) for k, (_, _, hv, hu) in enumerate(have)
               if abs(hv - first) < 1e-9 and (unit is None or hu == unit or (unit == "元"
                                                                             and hu is None)))


def _in_order_from(wanted: Spans, have: Spans, value: str, pos: int) -> bool:
    """:func:`_found_in_order` with the first wanted number at ``have[pos]``."""
    last_end = None
    for i, (ws, _we, wv, wu) in enumerate(wanted):
        gap = ws - wanted[i - 1][1] if i else 0
        reach = max(3, gap + 2)
        if i and _RANGE.match(value[wanted[i - 1][1]:ws]) and not _YEAR.match(
                value, wanted[i - 1][0]):  # 2021-06 is a date, no range
            reach = _RANGE_REACH
        while pos < len(have):
            hs, he, hv, hu = have[pos]
            pos += 1
            near = last_end is None or hs - last_end <= reach
            # a sum of money may go without its 元 (「日托费用3.8k/月」 for 3800元)
            if abs(hv - wv) < 1e-9 and (wu is None or hu == wu or (wu == "元" and hu is None)) \
                    and near:
                last_end = he
                break
        else:
            return False
    return True


#: a phone, a fax or an account number: seven digits or more, whole or in groups
_DIGIT_RUN = re.compile(r"(?<![\d.:])\d{2,4}(?:[ \-]\d{3,8}){1,3}(?![\d.:])"
                        r"|(?<![\d.])\d{7,}(?![\d.])")
_SEPARATORS = re.compile(r"[ \-]")


def value_present(value: str, reply: str) -> bool:
    """A required value is in the reply: its numbers in order, each with the same unit
    (3.37万公里 = 33700公里, not 标价3.37万) and close together (2021-06 = 2021年6月,
    not 2021款…6月份), a phone number by its digits (0571-87065432 = 「0571 8706 5432」); a
    value without numbers by its text."""
    if (whole := _DIGIT_RUN.fullmatch(value.strip())) and len(
            digits := _SEPARATORS.sub("", whole.group(0))) >= 7:
        return any(_SEPARATORS.sub("", m.group(0)) == digits
                   for m in _DIGIT_RUN.finditer(normalize(reply)))
    wanted = _numbers_with_units(value)
    if wanted:  # (「有过一次过户」 says 「过户1次」)
        return _found_in_order(wanted, _numbers_with_units(_ONE.sub("1", reply)),
                               prepare_numbers(value))
    squash = _SQUASH.sub("", normalize(value, ignore_case=True))
    return squash in _SQUASH.sub("", normalize(reply, ignore_case=True))


class KnowledgePoints(Params):
    pass


@rule("knowledge_points", params=KnowledgePoints)
def knowledge_points(p: KnowledgePoints, turn: TurnView) -> RuleOutcome:
    """Every value of the case's ``expected.knowledge_points`` appears in the reply.

    Values are compared after normalisation: numbers by value (3.37万公里 is
    found as 33700公里), dates by their numbers in order (2021-06 as
    2021年6月), a phone number by its digits (0571-87065432 as 「0571 8706 5432」), text
    after NFKC without spaces. Not applicable when the case
    lists no knowledge points. Score = share of points found.
    """
    points = turn.knowledge_points
    if not points:
        return RuleOutcome.not_applicable("the case lists no knowledge points")
    missing = [kp for kp in points if not value_present(str(kp["value"]), turn.reply)]
    score = 1 - len(missing) / len(points)
    if missing:
        names = ", ".join(f"{kp['path']}={kp['value']}" for kp in missing)
        return RuleOutcome.failed(f"{len(missing)} of {len(points)} knowledge points missing: "
                                  f"{names}", turn.reply, score)
    return RuleOutcome.passed(f"all {len(points)} knowledge points used",
                              ", ".join(str(kp["value"]) for kp in points), score)


class GroundedNumbers(Params):
    #: the bot's own service terms (「24小时内」「30分钟内回复」「3个工作日」「7×24」), not a
    #: walk of 12 minutes
    ignore: tuple[str, ...] = (r"\d+\s*(小时|分钟)\s*(内|之内|以内)", r"\d+\s*个?工作日",
                               # 「3天内给您回复」, not 「量完5天内出设计方案」
                               r"\d+\s*天内(?=[^，,。]{0,4}(联系|回复|回电|答复|处理|回访|通知|反馈"
                               r"|给(您|你)))", r"24\s*小时", r"7\s*[x×*]\s*24",
                               r"第\s*\d+(?!\s*(排|座|层|楼|号))", r"\d+\s*(位|名)",
                               # names with a digit in them (「4S店」「A4纸」「3D」「5G」)
                               r"\d[sS]店", r"[Aa][3-5]纸", r"\b\d[DdGg]\b",
                               r"1\d{2}\*{3,4}\d{4}", r"尾号\s*\d{4}",
                               # a list's item number at the start of a line: 「1. 车型：…」
                               r"(?<![^\n])\s*\d{1,2}(?=\s*[.、)）](?!\d))")
    tolerance: float = Field(default=0.25, ge=0, le=1)
    sources: tuple[Literal["knowledge", "history", "user", "input"], ...] = (
        "knowledge", "history", "input")


def _approx(text: str, start: int, end: int) -> str | None:
    """How the number at ``start:end`` is approximate: "above" (「3万多」), "below"
    (「将近9万」), "about" (「约9万」「9万左右」), or None when it is not."""
    after = _APPROX_AFTER.match(text[end:end + 3])
    if after is None and (unit := _MEASURE.match(text, end)):  # 「70公里左右」「10分钟上下」
        after = _APPROX_AFTER.match(text[unit.end():unit.end() + 3])
    before = _APPROX_BEFORE.search(text[max(0, start - 20):start])
    if after is None and before is None:
        return None
    if after is not None and after.group(1) in _ABOVE:
        return "above"
    if before is not None and before.group("word").lower() in _BELOW:
        return "below"
    return "about"


def _near(kind: str, value: float, known: float, tolerance: float) -> bool:
    """The true value ``known`` fits the approximate ``value`` of this kind."""
    reach = tolerance * max(abs(known), 1.0)
    if kind == "above":
        return value <= known <= value + reach
    if kind == "below":
        return value - reach <= known <= value
    return abs(known - value) <= reach


def _keys(value: object) -> list[str]:
    """Every mapping key of a JSON-like value."""
    if isinstance(value, dict):
        return [str(k) for k in value] + [k for v in value.values() for k in _keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _keys(v)]
    return []


def _source_numbers(text: str) -> list[tuple[float, bool, str | None]]:
    """Every number of a source with whether it is only a bound (「10万以内」) and its
    unit."""
    # a count in words (「我们五个人」) grounds its digits in the reply (「5个人」); a reply's
    # own count in words is not read as a number, so none is flagged for it
    text = _COUNT.sub(lambda m: str(cn_value(m.group(1))), text)
    text = _CHENG.sub(lambda m: f"{cn_value(m.group(1)) * 10}%", text)
    text = _EN_COUNT.sub(lambda m: str(_EN_NUMBERS[m.group(1).lower()]), text)
    prepared = prepare_numbers(text)
    # a number written in dashed groups (「400-820-1234」) grounds its digits run together
    joined: list[tuple[float, bool, str | None]] = [
        (float(m.group(0).replace("-", "")), False, None) for m in _GROUPS.finditer(text)]
    spans = number_spans(prepared)
    found = joined + [(v, bool(_BOUND_AFTER.match(prepared, e) or _BOUND_BEFORE.search(
        prepared[max(0, s - 4):s])), _measure(prepared, e, s)) for s, e, _, v in spans]
    # a percentage is its share too (首付最低30% grounds 「8.98万 × 0.3」)
    found += [(round(v / 100, 6), False, None) for _, e, _, v in spans
              if prepared.startswith("%", e)]
    # a length, a weight or a time in the smaller unit too (2.2米 grounds 「220厘米」)
    found += [(v * factor, bound, smaller) for v, bound, unit in list(found)
              for smaller, factor in _SMALLER.get(unit or "", ())]
    found += [(float(m.group(1)) / 1000, False, "升") for m in _ML.finditer(prepared)]
    for m in _OFF.finditer(prepared):
        off = float(m.group(2) or m.group(3))
        found += [(100 - off, False, None), (round((100 - off) / 10, 4), False, None)]
    if _HALF.search(prepared):  # (and what halves: 「18,000 ÷ 2」)
        found += [(5.0, False, None), (50.0, False, None), (2.0, False, None)]
    # a share (「1/4」「三分之一」) is its percentage too (「25%」)
    found += [(round(v * 100, 4), False, None) for v, _, unit in list(found)
              if 0 < v < 1 and unit is None]
    # a discount is its share off too: 8折 grounds 「20% off」, 85折 「15% off」
    zhe = [float(m.group(1)) for m in _ZHE_OFF.finditer(prepared)]
    found += [(round(100 - v * (10 if v < 10 else 1), 4), False, None) for v in zhe if 0 < v < 100]
    # and as the other way of writing it: 85折 is 8.5折 (not 7折 70: 「便宜70%」)
    found += [(round(v / 10 if v >= 10 else v * 10, 4), False, None) for v in zhe
              if 10 <= v < 100 or (0 < v < 10 and not v.is_integer())]
    return found


_ZHE_OFF = re.compile(r"(\d+(?:\.\d+)?)\s*" + ZHE)
_GROUPS = re.compile(r"(?<![\d.:-])\d{2,4}(?:-\d{2,4}){1,3}(?![\d.:-])")  # (not 9:00-18:00)
_SMALLER = {"米": (("厘米", 100), ("毫米", 1000)), "公里": (("米", 1000),),
            "公斤": (("克", 1000),), "千克": (("克", 1000),), "小时": (("分钟", 60),),
            "升": (("毫升", 1000),),
            # and in the larger one (90分钟 grounds 「一个半小时」, 500克 「0.5公斤」)
            "分钟": (("小时", 1 / 60),), "克": (("公斤", 0.001), ("千克", 0.001)),
            "厘米": (("米", 0.01),)}
#: millilitres, which the readers give no unit (1500ml grounds 「1.5L」)
_ML = re.compile(r"(\d+(?:\.\d+)?)\s*(ml|毫升)", re.IGNORECASE)
#: a share off (「优惠30%」 grounds 「打7折」 and 「70%」), half price (「半价」 grounds 「五折」)
_OFF = re.compile(r"(优惠|减|立减|便宜|折扣)\s*(\d+(?:\.\d+)?)\s*%|(\d+(?:\.\d+)?)\s*%\s*off",
                  re.IGNORECASE)
_HALF = re.compile(r"半价|一半|对折|半个月|半年|\bhalf\b", re.IGNORECASE)
_DATE_MD = re.compile(r"(?<!\d)(\d{1,2})月(\d{1,2})(?:日|号)|\d{4}-(\d{1,2})-(\d{1,2})(?!\d)")


def _dates(prepared: str) -> list[tuple[str, str]]:
    """The month and day of every date in a prepared text (「3月8日」「2024-03-08」)."""
    return [(m.group(1) or m.group(3), m.group(2) or m.group(4))
            for m in _DATE_MD.finditer(prepared)]


#: an hour and its minutes (「10点30分」): a time is grounded whole, not by its parts
_HOUR_MINUTE = re.compile(r"(\d+)点(\d+)分")
#: a share in tenths (「最低三成」 is 30%)
_CHENG = re.compile(r"(?<![一二两三四五六七八九十])([一二两三四五六七八九])成(?![本功为员交立绩])")
_EN_NUMBERS = {w: i for i, w in enumerate(("zero one two three four five six seven eight nine "
                                           "ten eleven twelve").split())}
#: a count in English words (「two adults」)
_EN_COUNT = re.compile(r"\b(" + "|".join(_EN_NUMBERS) + r")\b", re.IGNORECASE)
_COUNT = re.compile(r"(?<![一二两三四五六七八九十百千万零〇\d.])"
                    r"(十[一二三四五六七八九]|[二两三四五六七八九十])"  # (not 一: 「一盒多重」)
                    r"(?=(个人|个|位|人|间|套|台|辆|张|份|晚|层|件|只|条|双|把|盒|瓶|箱|桌))")
#: a sum shown with its working (「298×3=894元」): its result is grounded by its operands
_TIMES, _PLUS, _MINUS = frozenset("×xX*＊"), frozenset("+＋"), frozenset("−－")
_OPS = _TIMES | _PLUS | _MINUS | frozenset("÷/")
#: a hyphen is a minus only with a space on each side (「12万 - 8.98万」, not 「9:00-18:00」)
_SPACED_MINUS = re.compile(r"\s-\s")
#: what says the result is rounded (「8.98万 × 30% ≈ 2.69万」): right within 1%
_ABOUT = frozenset("≈≒")
#: what may stand between two numbers of a sum: a unit or a word (「100平方米 =」「CNY 950」)
_GAP = re.compile(r"[^\d，,。；;！？!?\n]{0,16}")  # (「2 nights × MOP 1,680」)


def _calculated(text: str) -> list[float]:
    """The results of the sums ``text`` writes out in digits, operators and brackets alone
    (「12+3×(3-1)=18元」), where they are right."""
    out = []
    for m in _SUM.finditer(text):
        value = _evaluate(m.group(1).replace(" ", ""))
        result = float(m.group(2))
        if value is not None and abs(value - result) < 1e-6 * max(1.0, abs(result)):
            out.append(result)
    return out


def _worked_back(text: str) -> list[float]:
    """The results shown before their working in brackets (「S$90 (3 × S$30)」「HK$9,000
    （18,000 ÷ 2）」), where the working is right (read, never run)."""
    out = []
    for m in _RESULT_WORKED.finditer(text):
        working = _NOT_ARITHMETIC.sub("", m.group(2).replace(",", "").replace("−", "-")
                                      .replace("－", "-"))
        if _OPS.isdisjoint(working) and "-" not in working:
            continue
        value, result = _evaluate(working), float(m.group(1).replace(",", ""))
        if value is not None and abs(value - result) < 1e-6 * max(1.0, abs(result)):
            out.append(result)
    return out


#: a number, then its working in brackets (not 「8.98万 (…)」: a unit that multiplies it)
_RESULT_WORKED = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?)(?![\d.,]*\s*[万千亿kKwW])"
                            r"[^\d()\n]{0,12}\(([^()\n]{3,40})\)")  # (「RM333.25 a month (…)」)
#: what is not a digit, a point or an operator (a currency, a unit, a space)
_NOT_ARITHMETIC = re.compile(r"[^\d.+\-×xX*＊÷/]")
_SUM = re.compile(r"(?<![\d.])([\d.]+(?:\s*[-+×xX*＊÷/()（）]\s*[\d.()（）]+)+)\s*[=＝]\s*"
                  r"(\d+(?:\.\d+)?)")


def _evaluate(expr: str) -> float | None:
    """The value of an arithmetic expression of numbers, + - × ÷ and brackets (no names, no
    calls: it is read, never run), or None when it is not one."""
    tokens: list[str] = re.findall(r"\d+(?:\.\d+)?|[-+×xX*＊÷/()（）]", expr)
    if "".join(tokens) != expr:
        return None
    pos = 0

    def peek() -> str:
        return tokens[pos] if pos < len(tokens) else ""

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def atom() -> float:
        token = take()
        if token in "(（":
            value = total()
            if take() not in ")）":
                raise ValueError(expr)
            return value
        return float(token)

    def product() -> float:
        value = atom()
        while peek() and peek() in "×xX*＊÷/":
            op, right = take(), atom()
            value = value / right if op in "÷/" else value * right
        return value

    def total() -> float:
        value = product()
        while peek() and peek() in "+-":
            op, right = take(), product()
            value = value + right if op == "+" else value - right
        return value

    try:
        value = total()
    except (ValueError, IndexError, ZeroDivisionError):
        return None
    return value if pos == len(tokens) else None


def _worked(text: str) -> list[float]:
    """The results of the sums ``text`` shows with their working (「298×3=894元」「300万 ÷
    100平方米 = 3万元」「25800 × 30% = 7740元」「380 × 2 + 190 = 950」), where they are
    right: × and ÷ before + and −, a percentage as its share; a result after 「≈」 is right
    within 1% (「8.98万 × 30% ≈ 2.69万」)."""
    spans = [(s, e, v / 100 if text.startswith("%", e) else v)
             for s, e, _, v in number_spans(text)]
    out: list[float] = []
    terms: list[float] = []  # the sum so far, by its added terms; empty: no sum begun
    for (_, end, value), (start, _, after) in itertools.pairwise(spans):
        gap = text[end:start]
        ops = [c for c in gap if c in _OPS] or ["−"] * len(_SPACED_MINUS.findall(gap))
        about = not _ABOUT.isdisjoint(gap)
        if not _GAP.fullmatch(gap):
            terms = []
        elif "=" in gap or "＝" in gap or about:
            slack = 1e-2 if about else 1e-6
            if terms and abs(sum(terms) - after) < slack * max(1.0, abs(after)):
                out.append(after)
            terms = []
        elif len(ops) == 1:
            terms = terms or [value]
            if ops[0] in _PLUS or ops[0] in _MINUS:
                terms.append(after if ops[0] in _PLUS else -after)
            elif ops[0] in _TIMES:
                terms[-1] *= after
            elif after:
                terms[-1] /= after
        else:
            terms = []
    return out


@rule("grounded_numbers", params=GroundedNumbers)
def grounded_numbers(p: GroundedNumbers, turn: TurnView) -> RuleOutcome:
    """Every number in the reply appears in the knowledge, the history or the input.

    Numbers are compared by value (8.98万 = 89800, 2021.06 = 2021年6月, 21年 =
    2021年; 「质保五年」「十块钱」「两个半小时」「6.5k起」 are read, 「1/3」 is 「三分之一」, and a
    knowledge key names its item: 「plan_500m」 grounds 「500M」). A number marked as
    approximate is grounded when a source value fits it within
    ``tolerance``: above it for 「3万多」 (33,700 fits; 「9万多」 for 8.98万 does not), below
    it for 「将近9万」「不到9万」, on either side for 「约9万」「9万左右」, and only by a
    number of its unit where both have one (「约500米」 is not grounded by 458元, nor
    「大概5.8L」 by the 6 of 2021-06: a date's parts are 年 and 月); a user's bound
    (「预算10万以内」) grounds only itself. A sum the reply works out (「298×3=894元」
    「300万 ÷ 100平方米 = 3万元」「25800 × 30% = 7740元」) grounds its result when it is
    right; a count in words in a source (「我们五个人」「two adults」「最低三成」) grounds its
    digits, a number in dashed groups (「400-820-1234」) its digits run together, and a
    length, a weight or a time the same in a smaller unit (2.2米 grounds 「220厘米」). A
    clock time and a date are grounded whole (「十点半」 is not grounded by 6:30 and 10:00,
    nor 「8月3日」 by 2024-03-08), units convert both ways (90分钟 grounds 「一个半小时」,
    1500ml 「1.5L」), a share off grounds what is paid (优惠30% grounds 「7折」), a fraction
    its percentage (1/4 grounds 「25%」), and a sum in brackets is worked out
    (「12+3×(3-1)=18元」; read, never run), and so is a result before its working in
    brackets (「S$90 (3 × S$30)」); a difference (「12万 − 8.98万 = 3.02万」) is worked out too,
    a result after 「≈」 is right within 1% (「8.98万 × 30% ≈ 2.69万」), and a percentage
    grounds its share (首付30% grounds 「8.98万 × 0.3」); a number in groups is grounded whole by
    the same digits grouped otherwise (021-62345678 grounds 「021-6234 5678」), and an
    approximation without a unit is not grounded by a house number, an hour, a year or a
    month (「月供不到两千」 by 七莘路1888号). Local forms are read (「千二八」 1280,
    「萬二」, 「十蚊」「一蚊半」, 「十點三個字」 10:15, 「朝七晚十一」, 「八五折」, 「£1.25m」,
    「1830hrs」), and so are English approximations (「about RM6k」「nearly」). Numbers
    inside an ``ignore`` pattern (「24小时」「第1」, a masked phone 「138****0000」) are skipped.
    ``sources`` picks where a number may come from: ``knowledge`` (this turn's),
    ``history`` (every earlier message), ``user`` (only the user's earlier
    messages) and ``input``; ``[knowledge, user, input]`` keeps a fact from an
    earlier turn's knowledge, repeated in an earlier reply, from counting once
    the knowledge is gone. A number and its source are compared by unit too where both
    have one (质保6个月 is not grounded by the 6 of 2021-06, a month; 约12分钟 not by
    12层). Fails with the ungrounded numbers as evidence.
    """
    sources = []
    if "knowledge" in p.sources:  # a key names its item too (「plan_500m」 for 「500M」)
        sources += leaves(turn.knowledge)
        sources += [k for k in _keys(turn.knowledge) if any(c.isdigit() for c in k)]
    if "history" in p.sources:
        sources += [h["content"] for h in turn.history]
    elif "user" in p.sources:
        sources += [h["content"] for h in turn.history if h.get("role") == "user"]
    if "input" in p.sources:
        sources.append(turn.input)
    known = [kv for s in sources for kv in _source_numbers(s)]
    text = prepare_numbers(turn.reply)
    # a sum the reply works out (「298×3=894元」): its operands must be grounded, its result is
    known += [(c, False, None) for c in (*_worked(text), *_calculated(text), *_worked_back(text))]
    clocks = {(float(h), float(m)) for s in sources
              for h, m in _HOUR_MINUTE.findall(prepare_numbers(s))}
    # a date is grounded whole too (「2024年8月3日」 is not 2024-03-08 read in parts)
    dates = {(int(m), int(d)) for s in sources for m, d in _dates(prepare_numbers(s))}
    skip = compile_any(p.ignore)
    spans = [m.span() for m in skip.finditer(text)] if skip else []
    # a number in groups said as a source writes it otherwise (021-62345678 as 「021-6234 5678」)
    # (and without its area code: 02-27001234 grounds 「(02) 2700-1234」)
    runs = {"".join(groups[k:]) for s in sources for m in _DIGIT_RUN.finditer(s)
            for groups in [_SEPARATORS.split(m.group(0))] for k in range(len(groups))}
    spans += [m.span() for m in _DIGIT_RUN.finditer(text)
              if _SEPARATORS.sub("", m.group(0)) in runs]
    bad = _ungrounded(text, spans, known, clocks, p.tolerance)
    if dates:
        bad += [f"{m}月{d}日" for m, d in _dates(text) if (int(m), int(d)) not in dates]
    if bad:
        return RuleOutcome.failed(f"numbers not in knowledge, history or input: {bad}",
                                  ", ".join(bad))
    return RuleOutcome.passed("every number is grounded")


def _ungrounded(text: str, skipped: list[tuple[int, int]],
                known: list[tuple[float, bool, str | None]], clocks: set[tuple[float, float]],
                tolerance: float) -> list[str]:
    """The numbers of the prepared reply ``text`` that no source grounds, but those inside
    ``skipped`` spans; an hour's minutes (「十点半」) only with their hour, as in ``clocks``."""
    bad = []
    hour: tuple[int, float] | None = None  # where the last hour ended, and its value
    for start, end, raw, value in number_spans(text):
        if any(a <= start < b for a, b in skipped):
            continue
        unit = _measure(text, end, start)
        if unit == "点":
            hour = (end + 1, value)
        elif unit == "分钟" and hour is not None and hour[0] == start:
            if (hour[1], value) not in clocks:  # 「十点半」 is not grounded by 6:30 and 10:00
                bad.append(f"{hour[1]:g}点{raw}分")
            continue
        if not _grounded(text, start, end, value, unit, known, tolerance):
            bad.append(raw)
    return bad


def _grounded(text: str, start: int, end: int, value: float, unit: str | None,
              known: list[tuple[float, bool, str | None]], tolerance: float) -> bool:
    """The number at ``start:end`` of the reply is a source's value (of its unit, where both
    have one), or approximates one that is no bound within ``tolerance``."""
    alike = [(k, bound, of) for k, bound, of in known
             if unit is None or of is None or of == unit]
    if any(abs(k - value) < 1e-9 for k, _, _ in alike):
        return True
    kind = _approx(text, start, end)
    # (「月供不到2000」 is not grounded by 七莘路1888号, nor 「两成左右」 by 18:00)
    return kind is not None and any(_near(kind, value, k, tolerance) for k, bound, of in alike
                                    if not bound and (of == unit or of not in _LABELS))


#: what a number of a source names rather than measures (a house number, an hour, a year, a
#: month, a floor): an approximation in the reply without that unit is not it
_LABELS = frozenset({"号", "点", "年", "月", "层", "楼"})


class KnowledgeNotUsed(Params):
    paths: tuple[str, ...] = ()
    numeric_only: bool = True
    #: where the knowledge names its item (``carConfigInfo.title``): a fact said in a
    #: sentence that names this item (「我这里只有这台2021款朗逸的：标价8.98万」「本车（朗逸）
    #: 标价8.98万」) is offered as this item's, not the other's
    title: str | None = None
    #: words that name this turn's item whatever its title
    this_item: tuple[str, ...] = ("本车",)
    #: a telling number (not a year) said approximately, as ``grounded_numbers`` reads
    #: 「3万多」「将近9万」「9万左右」, is that fact when it fits within this share of it and
    #: has its unit (「三万多公里」 is 3.37万公里's); 0: only the values themselves
    tolerance: float = Field(default=0.25, ge=0, le=1)


_DIGIT = re.compile(r"\d")
#: words that point at this turn's item before its name (「这台朗逸」)
_THIS = ("这台", "这辆", "这部", "这款", "本台")


def _approx_present(value: str, text: str, tolerance: float) -> bool:
    """A telling number of ``value`` (≥ 10 or a fraction, not a year) said approximately in
    ``text``, with the same unit, within ``tolerance`` of it (see :func:`_near`)."""
    wanted = [(v, u) for _, _, v, u in _numbers_with_units(value)
              if (v >= 10 or not v.is_integer()) and not (v.is_integer() and 1900 <= v <= 2099)]
    if not wanted:
        return False
    prepared = prepare_numbers(text)
    for start, end, _, said in number_spans(prepared):
        kind = _approx(prepared, start, end)
        if kind is None:
            continue
        marker = _APPROX_AFTER.match(prepared[end:end + 3])  # 「3万多公里」: the unit after 多
        unit = _unit(prepared, end + (marker.end() if marker else 0))
        if any(u == unit and _near(kind, said, k, tolerance) for k, u in wanted):
            return True
    return False


_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_RULE_ROW = re.compile(r"^[\s|:-]+$")


def _by_column(text: str) -> str:
    """``text`` with each Markdown table's cells written out as lines under their column's
    header (「| 上牌时间 | 2021年6月 | 暂无资料 |」 under 「| 项目 | 朗逸 | 速腾 |」 is 「朗逸
    上牌时间：2021年6月」), so that a cell's sentence names the column's item."""
    if "|" not in text:
        return text
    out: list[str] = []
    header: list[str] | None = None
    for line in text.split("\n"):
        m = _ROW.match(line)
        if m is None:
            header = None
            out.append(line)
            continue
        cells = [c.strip() for c in m.group(1).split("|")]
        if header is None:
            header = cells
        elif not _RULE_ROW.match(line):
            out += [f"{header[j]} {cells[0]}：{cell}" for j, cell in enumerate(cells)
                    if j and j < len(header)]
            continue
        out.append(line)
    return "\n".join(out)


_BOOK_TITLE = re.compile(r"《([^《》]{1,30})》")
#: a model year (「2021款」「19款」)
_MODEL_YEAR = re.compile(r"(?<!\d)((?:19|20)?\d{2})\s*款")
#: words before a name that point at another item of that name (「隔壁那辆朗逸」; not 「那台朗逸」,
#: which may be this one: 「您之前看的那台朗逸」)
_THAT_ONE = re.compile(r"(隔壁|另一台|另外一台|另一辆|另外一辆)[^，,。！？!?\n]{0,8}$")


def _names_this(text: str, names: list[str], year: str | None) -> bool:
    """``text`` names this item: one of ``names`` not pointed away from (「隔壁那辆朗逸」, or
    with a model year other than this item's ``year``: 「那台2019款的朗逸」)."""
    for name in names:
        for m in re.finditer(re.escape(name), text):
            before = text[max(0, m.start() - 10):m.start()]
            other = _MODEL_YEAR.search(before)
            if (other and year and other.group(1)[-2:] != year[-2:]) or (
                    _THAT_ONE.search(before) and not other):
                continue
            return True
    return False


def _names(title: str) -> tuple[str, ...]:
    """How a reply names the item with this title: its first word without digits (the make
    and model) and that word's endings (大众朗逸 → 大众朗逸, 众朗逸, 朗逸); a trim such as
    自动舒适版 is shared by other cars of the model and names none."""
    # a title in 《》 is named by what it quotes (「《流浪地球2》」「《三体》全集（全3册）」)
    if quoted := _BOOK_TITLE.findall(normalize(title)):
        return tuple(quoted)
    words = [w for w in normalize(title).split() if w and not _DIGIT.search(w)]
    if not words:  # (「依视路钻晶A4 1.60」: the name before its first digit)
        words = [w for w in [_DIGIT.split(normalize(title))[0].strip()] if len(w) >= 2]
    if not words:
        return ()
    first = words[0]
    return tuple(first[i:] for i in range(len(first) - 1))


def _at(knowledge: Any, path: str) -> Any:
    node = knowledge
    for part in path.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


@rule("knowledge_not_used", params=KnowledgeNotUsed)
def knowledge_not_used(p: KnowledgeNotUsed, turn: TurnView) -> RuleOutcome:
    """The reply states no fact of this turn's knowledge (another vehicle was asked about).

    Checks the values at ``paths`` (dotted; default every value), by default
    only those with a telling number (mileage, price, dates: a decimal or a
    number ≥ 10), compared like ``knowledge_points``, or said approximately within
    ``tolerance`` with its unit (「三万多公里」 for 3.37万公里). A value the user said
    themselves may be repeated. A fact said only in sentences that name this turn's item
    (a word of ``title``'s value, or of ``this_item``) is offered as this item's: 「思域查不
    到。您可以看看这台朗逸，3.37万公里」 passes. A title in 《》 is named by what it quotes
    (「《流浪地球2》」), one whose every word has a digit by its name before the first
    (「依视路钻晶A4 1.60」); a name with another model year before it (「那台2019款的朗逸」 for a
    2021款) or after 「隔壁」「另一台」 names another item. Not applicable without knowledge.
    """
    if not turn.knowledge:
        return RuleOutcome.not_applicable("no knowledge this turn")
    values = ([v for path in p.paths for v in leaves(_at(turn.knowledge, path))] if p.paths
              else leaves(turn.knowledge))
    if p.numeric_only:  # a lone small integer (0 transfers, 1 owner) is no telling fact
        values = [v for v in values
                  if any(n >= 10 or not n.is_integer() for _, n in numbers(v))]
    def present(value: str, text: str) -> bool:
        return value_present(value, text) or (
            p.tolerance > 0 and _approx_present(value, text, p.tolerance))

    said = "\n".join([turn.input, *(h["content"] for h in turn.history if h.get("role") == "user")])
    values = [v for v in values if not present(v, said)]  # the user's own words
    used = [v for v in values if present(v, turn.reply)]
    title = _at(turn.knowledge, p.title) if p.title else None
    # a name the user used for the car they asked about (「2019款的朗逸」) tells nothing apart,
    # unless the reply points at this one (「您之前看的这台朗逸标价8.98万」)
    user = normalize(said)
    titled = _names(title) if isinstance(title, str) else ()
    names = [*(n for n in (*p.this_item, *titled)
               if n not in user or any(f"{this}{n}" in user for this in _THIS)),
             *(f"{this}{n}" for this in _THIS for n in titled)]
    if used and names:  # a fact said only where the reply names this item is this item's
        # (a table's cell under a column named for it: 「| 项目 | 朗逸 | 速腾 |」)
        folded = [(s, normalize(s)) for s in sentences(_by_column(turn.reply))]
        year = _MODEL_YEAR.search(title) if isinstance(title, str) else None
        told = [s for s, f in folded if not _names_this(f, names, year.group(1) if year else None)]
        used = [v for v in used if any(present(v, s) for s in told)]
    if used:
        return RuleOutcome.failed(f"states this turn's knowledge: {used}", ", ".join(used))
    return RuleOutcome.passed("no fact of this turn's knowledge in the reply")
