"""Situations: when a ledger rule applies, observed per turn from the dialog itself.

A rule such as "no second contact request" is about a situation (the user
gave a contact), not about a case author remembering a switch. A ledger rule's
``applies_to.when`` names situations; at run time the rule is applied to a
turn only where all of them arise, and its row records the observation that
triggered it (``trigger``). A situation is a function
``observe(params, turn) -> str | None`` returning the evidence when the
situation arises (``None`` when it does not), registered with
:func:`situation` like a rule type, with the same vocabularies as the rule
types as its param defaults, so another business adjusts words, not code.

Built-in situations:

``reply_asks_for_contact``
    the reply asks for the user's contact (the ``asks_for_contact`` vocabulary)
``user_gave_contact``
    a user message of the dialog, this turn's included, holds a contact of theirs
    (a mainland mobile number in any spacing or width, or a number they call their
    phone, by default; not an order's, the business's or one they disown)
``knowledge_changed``
    a fact of an earlier turn's knowledge is gone, nulled or different in this
    turn's knowledge; where the earlier knowledge is unknown (a single case with
    history), this turn's knowledge is empty or has a nulled field while the
    history holds an earlier reply
``user_ended``
    the user's message ends the conversation or refuses (「不用了」「再见」「不想留电话」)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from ._dialog import Compiles, ContactPatterns, find_contact_request
from ._registry import NoParams, Registry, TurnView, parse_params
from ._text import compile_any, negated, normalize

__all__ = [
    "CONTACT_GIVEN",
    "SITUATIONS",
    "USER_ENDS",
    "BoundSituation",
    "SituationType",
    "bind_situations",
    "situation",
]

P = TypeVar("P", bound=BaseModel)

#: a mainland mobile number in any spacing, in digits (NFKC: full-width digits are ASCII) or
#: spoken (一三八…); and any number of 7 to 12 digits the user labels as a phone
#: (「我電話係 9123 4567」 in Hong Kong, 「座机 021-12345678」), but one that starts with 1
#: (a mainland mobile short of a digit is no contact yet)
CONTACT_GIVEN = (r"(?<!\d)(?:\+?86[\s\-]?)?1[3-9](?:[\s\-]?\d){9}(?!\d)",
                 r"(?<![零〇幺一二两三四五六七八九])[一幺][三四五六七八九](?:[\s\-]?[零〇幺一二两三四五六七八九]){9}"
                 r"(?![零〇幺一二两三四五六七八九])",
                 r"(电话|手机|座机|联系方式|联系我|打我|tel|phone|mobile|whatsapp"
                 r"|my (phone |mobile |cell )?number( is)?|my (cell|mobile|phone)('s| is)?"
                 # 「你打嚟 6123 4567 搵我」
                 r"|打(嚟|来|过来|俾我|畀我|给我)"
                 r"|(whatsapp|call|text|reach|message)\s+me)"
                 r"(号码|号)?\s*"
                 r"(是|系|係|为|:|：|at|on)?"
                 r"\s*(?:\+\d{1,3}[\s\-]?)?(?!1)\d(?:[\s\-]?\d){6,11}(?!\d)",
                 # dotted in a mobile's groups (「138.2604.7719」), a landline after its area
                 # code (「0755-8666 1234」)
                 r"(?<![\d.])1[3-9]\d\.\d{4}\.\d{4}(?![\d.])",
                 r"(?<![\d-])(?<!\d\s)0\d{2,3}[\s\-]\d{3,4}[\s\-]?\d{4}(?!\s?\d)",
                 # a North American number after a phone word (「My cell is (415) 555-0137」)
                 r"(cell|phone|mobile|number|call me at|text me at)( is)?[:\s]*(\+?1[\s.-]?)?"
                 r"\(\d{3}\)[\s.-]?\d{3}[\s.-]\d{4}")
#: a number in the user's words that is not theirs to be reached at: an order's or a ticket's
#: (「订单号是13805527419」「报修单号是一三九…」), the business's own (「你们门店的电话0755-…」
#: 「分店個電話」), or one they disown (「…不是我的」「有个170…的号码打给我」)
_NOT_THEIRS_BEFORE = re.compile(
    r"((订单|单号|工单|报修单|快递|运单|物流|编号|卡号|账号|会员号|流水|票号|车架号|身份证|券码|优惠码"
    r"|兑换码|邀请码|取件码|验证码)"
    r"(?![^，,。！？!?\d]{0,6}我的?(手机|电话|号码|号))[^，,。！？!?\d]{0,6}"
    # someone else's: a colleague's, a friend's, a former tenant's (「这是我同事的电话」「前一个租户
    # 的电话」; a spouse's given as the contact is the user's: 「我老公电话…打给他就行」)
    r"|(同事|朋友|闺蜜|邻居|租户|房东|前任|客户)的?(电话|手机|号码)[^，,。！？!?\d]{0,3}"
    # one someone gave the user (「你们小李给了我一个号13788889999」)
    r"|(给了我|给我|告诉我|发给我|发了我)(一个|个)?(号|号码|电话|手机号?)[^，,。！？!?\d]{0,3}"
    # someone else's who left it (「快递员给我留了个号码」)
    r"|(快递员?|骑手|司机|外卖员?|送货员?|师傅|中介|房东|销售|客服)"
    r"(?![^，,。！？!?\d]{0,8}我的?(手机|电话|号码|号))[^，,。！？!?\d]{0,8}(号码|电话|手机)"
    r"[^，,。！？!?\d]{0,3}"
    r"|(?<!我)(?<!我们)(?<!咱们)(?<!我哋)(你们|你哋|贵|门店|分店|店里|客服|商家|公司|银行|酒店|官方|热线)"
    r"(?![^，,。！？!?\d]{0,8}我)"
    r"[^，,。！？!?\d]{0,8}((电话|号码|热线|座机)[^，,。！？!?\d]{0,3})?"
    r"|有个"
    # the business's own, in English (「Your office, 020 7946 0000」)
    r"|(?i:\byour (office|shop|store|branch|hotline|front desk|reception|number)\b)[^\d]{0,6})$")
#: (read with ``match`` at the number's end: no ``^``, which would hold at the text's start only)
_NOT_THEIRS_AFTER = re.compile(r"[^，,。！？!?]{0,8}(不是我|打给我|打来|来电|骗|冒充|打过来)"
                               r"|[,，]\s*(不是我|not mine)")
_EMOJI = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u20E3]")
#: what opens the rest of a number (「后四位 0123」「尾号是 0123」)
_REST = re.compile(r"^\s*(后(四|4|几|五|5)位|尾号|剩下的|最后(四|4)位)(数字)?\s*(是|为|:|：)?\s*")
#: the user ends the conversation or refuses
USER_ENDS = ("不用了", "不需要了", "再见", "拜拜", r"(?<!\d)88(?!\d)", "先这样", "就这样吧",
             "算了(?!一?下)", "不买了", "不考虑了", "不看了", "没兴趣", "不感兴趣",
             "别(再)?(发|打|联系|推)", "不要再", "不想留", "不方便留", "不留(电话|手机|号|联系)",
             "不(想|愿意)给", "没(有)?(别的|其他)(问题|事)了")


@dataclass(frozen=True)
class SituationType(Generic[P]):
    """A registered situation."""

    name: str
    params: type[P]
    observe: Callable[[P, TurnView], str | None]
    doc: str = ""

    def parse(self, raw: dict[str, Any]) -> P:
        """Validate params; raise ``ValueError`` naming the param and the fix."""
        return parse_params(f"situation {self.name!r}", self.params, raw)


SITUATIONS: Registry[SituationType[Any]] = Registry("situation", "situations",
                                                    "._situation")


def situation(name: str, params: type[BaseModel] = NoParams
              ) -> Callable[[Callable[..., str | None]], Callable[..., str | None]]:
    """Register ``observe(params, turn) -> str | None`` as situation ``name``.

    Return the evidence (a short quote) when the situation arises, ``None`` when not.

    Example (in ``conftest.py``)::

        @agenteval.situation("user_mentions_loan")
        def user_mentions_loan(p: agenteval.NoParams, turn: agenteval.TurnView) -> str | None:
            return "贷款" if "贷款" in turn.input else None
    """

    def decorate(fn: Callable[..., str | None]) -> Callable[..., str | None]:
        SITUATIONS.register(name, SituationType(name, params, fn, (fn.__doc__ or "").strip()))
        return fn

    return decorate


@dataclass(frozen=True)
class BoundSituation:
    """A situation with validated params, as one ledger rule's ``when`` names it."""

    type: SituationType[Any]
    params: BaseModel

    def observe(self, turn: TurnView) -> str | None:
        return self.type.observe(self.params, turn)


def bind_situations(when: list[str | dict[str, dict[str, Any] | None]]
                    ) -> tuple[BoundSituation, ...]:
    """``when`` entries (a name, or ``{name: params}``) bound; ``KeyError``/``ValueError``
    name the entry and the fix."""
    out = []
    for entry in when:
        raw: dict[str, Any] | None
        if isinstance(entry, str):
            name, raw = entry, {}
        else:
            (name, raw), = entry.items()
        kind = SITUATIONS.get(name)
        out.append(BoundSituation(kind, kind.parse(raw or {})))
    return tuple(out)


# -- built-in situations -------------------------------------------------------------------

@situation("reply_asks_for_contact", params=ContactPatterns)
def reply_asks_for_contact(p: ContactPatterns, turn: TurnView) -> str | None:
    """The reply asks for the user's contact (「留个手机号」「您的电话是多少」)."""
    return find_contact_request(turn.reply, p.patterns)


class ContactGiven(Compiles):
    patterns: tuple[str, ...] = CONTACT_GIVEN


@situation("user_gave_contact", params=ContactGiven)
def user_gave_contact(p: ContactGiven, turn: TurnView) -> str | None:
    """A user message of the dialog (this turn's included) holds a contact of theirs: not
    an order's or a ticket's number (「订单号是13805527419」), the business's own
    (「你们门店的电话0755-…」) or one they disown (「…不是我的」「有个170…的号码打给我」); a
    number split over two messages (「我号码是135 8827」, then 「4093」) is one."""
    regex = compile_any(p.patterns)
    if regex is None:
        return None
    # (emoji between the digits read as nothing: 「138🐶1234🐱5678」「1️⃣3️⃣9️⃣」)
    said = [_EMOJI.sub("", normalize(h.get("content", "")))
            for h in turn.history if h.get("role") == "user"]
    texts = [_EMOJI.sub("", normalize(turn.input)), *reversed(said)]
    for text in texts:  # (read in Arabic digits, shown as written: 「九一二三四五六七」)
        if (found := _theirs(regex, _digits(text), text)) is not None:
            return found
    # a number split over two messages (「我号码是135 8827」, then 「4093」「后四位 0123」)
    for later, earlier in itertools.pairwise(texts):
        rest = _REST.sub("", later, count=1)
        # (「我号码是138-0013-」 sent early, then 「8000」: the dangling dash joins them)
        if (found := _theirs(regex, earlier.rstrip(" -") + " " + rest)) is not None:
            return found
    return None


#: a number read out in Chinese digits, seven or more (「我電話係九一二三四五六七」)
_CN_DIGIT_RUN = re.compile(r"[零〇幺一二三四五六七八九]{7,12}")
_CN_DIGITS = str.maketrans("零〇幺一二三四五六七八九", "001123456789")


def _digits(text: str) -> str:
    """``text`` with each run of seven Chinese digits or more in Arabic digits."""
    if not _CN_DIGIT_RUN.search(text):
        return text
    return _CN_DIGIT_RUN.sub(lambda m: m.group(0).translate(_CN_DIGITS), text)


def _theirs(regex: re.Pattern[str], text: str, shown: str | None = None) -> str | None:
    """The first contact in ``text`` that is the user's own (see :data:`_NOT_THEIRS_BEFORE`),
    as ``shown`` has it (the text as written, of the same length)."""
    for m in regex.finditer(text):
        if not (_NOT_THEIRS_BEFORE.search(text, max(0, m.start() - 16), m.start())
                or _NOT_THEIRS_AFTER.match(text, m.end())):
            return (shown or text)[m.start():m.end()]
    return None


class UserEnds(Compiles):
    patterns: tuple[str, ...] = USER_ENDS


@situation("user_ended", params=UserEnds)
def user_ended(p: UserEnds, turn: TurnView) -> str | None:
    """The user's message ends the conversation or refuses (not after a negation)."""
    regex = compile_any(p.patterns)
    text = normalize(turn.input)
    for m in regex.finditer(text) if regex else ():
        if not negated(text, m.start()) and not text[m.end():].lstrip().startswith(("吗", "?")):
            return m.group(0)
    return None


def _facts(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every leaf; ``None`` leaves included (a nulled field)."""
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _facts(sub, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _facts(sub, f"{path}[{i}]")
    else:
        yield path, value


def _gone(before: Any, current: dict[str, Any]) -> str | None:
    """The first fact of ``before`` that ``current`` (flattened) lacks, nulls or changes."""
    for path, value in _facts(before):
        if value is None or value == "":
            continue
        if current.get(path) != value:
            shown = current.get(path)
            return f"{path}: {value} → {'null' if shown is None else shown}"
    return None


@situation("knowledge_changed")
def knowledge_changed(p: NoParams, turn: TurnView) -> str | None:
    """A fact of an earlier turn's knowledge is gone, nulled or different in this turn's
    (the listing was withdrawn, a field emptied, another car). Where the earlier knowledge
    is unknown (a single case with history), this turn's knowledge is empty or nulls a
    field while the history holds an earlier reply. The evidence names the fact:
    ``carConfigInfo.price.listPrice: 8.98万 → null``."""
    if turn.earlier_knowledge:
        current = dict(_facts(turn.knowledge)) if turn.knowledge else {}
        for before in reversed(turn.earlier_knowledge):
            if before and (hit := _gone(before, current)):
                return hit
        return None
    if not any(h.get("role") == "assistant" for h in turn.history):
        return None
    if not turn.knowledge:
        return "knowledge: null after an earlier reply"
    nulled = next((path for path, value in _facts(turn.knowledge) if value is None), None)
    return f"{nulled}: null after an earlier reply" if nulled else None
