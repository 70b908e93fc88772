"""Where a text holds personal data: phone numbers, identity document numbers, e-mails.

:func:`spans` finds them as people, speech recognisers, chatbots and systems write them,
for :class:`~pytest_agenteval.privacy.Masker` to mask and the lint to report:

* **Numbers** are read as *runs*: digits (ASCII, full-width, or Chinese as spoken:
  一三八, 幺 for 1, 两 for 2, 洞/拐/勾 in radio style) with at most three separator
  characters between two of them (spaces, dashes, dots, slashes, brackets). A run is cut
  into the *groups* its separators make, and a number must begin and end on a group
  boundary: ``138 0013 8000`` is a mobile number, while ``13.58 14.28 15.98`` (prices) is
  not, since no run of whole groups there has the shape of one. A run joined by dots
  must also have a phone's or ID number's grouping, so an IP address or a version is no
  number of either.
* **A mobile number** is 11 digits 13x–19x, with or without 86 / 0086 / +86 before it.
  **A landline** begins with an area code (010, 02x, 03xx–09xx: Taiwan's 09xx mobiles
  too) and has 10–12 digits. **A foreign number** is 8–15 digits after a ``+`` (or 11–15
  after ``00``). Any run of 7–15 digits that a phone word introduces (电话, 手機,
  WhatsApp, Tel, call me at …) is a phone number too, in whatever format (a Hong Kong
  ``9123 4567``).
* **An ID number** is 18 characters (17 digits and a digit or X) or an old 15-digit one.
  Written in one piece, 18 characters are always one; spread over groups (``110101
  19900307 123X``), or 15 digits, only with a valid date of birth. A Hong Kong ID
  (``A123456(7)``), a Taiwan ID with a valid check letter, and any document number that
  a document word introduces (身份证, 護照, passport, 通行证 …) are ID numbers too.
* **An e-mail address** with ``@`` or ``＠`` (spaces around it, ``。`` or ``．`` for a
  dot, URL-encoded ``%40``), or obfuscated (``name at qq dot com``, ``name[at]163.com``,
  ``name#qq.com``, 艾特) at a common top-level domain.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

__all__ = ["DIGIT_VALUE", "RUN", "Kind", "Span", "maybe", "spans"]

Kind = Literal["phone", "id_number", "email"]

_ARABIC = "0123456789０１２３４５６７８９"
_SPOKEN = {"零": "0", "〇": "0", "洞": "0", "一": "1", "幺": "1", "么": "1", "腰": "1",
           "二": "2", "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7",
           "拐": "7", "八": "8", "九": "9", "勾": "9"}
#: the value of every character that counts as a digit in a number
DIGIT_VALUE: dict[str, str] = {c: str(i % 10) for i, c in enumerate(_ARABIC)} | _SPOKEN
_D = re.escape("".join(DIGIT_VALUE))
#: what may stand between two digits of one number: spaces (no-break and ideographic
#: too), dashes of every width, dots, slashes and brackets
_SEP_CHARS = (" \t\n\r\u00a0\u2009\u202f\u3000\u200b\u200c\u200d\u2060\ufeff"
              "-‐‑‒–—−－﹣.．·・/／()（）[]【】,，、")
#: one separator: a character, or a space as a URL or HTML writes it
_S = rf"(?:%20|&nbsp;|&#160;|\\u00a0|\\u0020|\\n|[{re.escape(_SEP_CHARS)}])"
#: an ID number's last character, as written or said (叉)
_X = "XxＸｘ叉"
#: a digit right after ``%`` is a URL escape's (``%2B``, ``%E6``), never a number's
RUN = _RUN = re.compile(rf"(?<!%)[{_D}](?:{_S}{{0,3}}[{_D}])*(?:[{_X}](?![A-Za-z]))?")
#: a run read from its start: a separator (``%20``, ``\\u00a0`` whole, digits and all),
#: or a group of digits
_TOKEN = re.compile(rf"{_S}|(?P<group>[{_D}]+[{_X}]?)")
#: a run worth reading has seven digits: no phone, ID or document number has fewer
_WORTH = 7
#: separators that also join the numbers of a list or a decimal: a number joined by one
#: of these must have a phone's or an ID number's grouping
_LOOSE = frozenset(".．·・,，、")
#: the groupings a number joined by dots may have
_DOT_SHAPES = frozenset({(3, 4, 4), (3, 3, 5), (2, 3, 4, 4), (4, 3, 4, 4), (3, 8), (4, 8),
                         (3, 7), (4, 7), (4, 4, 4), (4, 3, 3), (6, 8, 4), (6, 4, 4, 4)})
_AREA = re.compile(r"0(?:10|2\d|[3-9]\d\d)")

#: what may stand between a word and the number it introduces: punctuation, quotes,
#: brackets, and 是 / 为 / 号码 / me / on (``手机号码是：``, ``WhatsApp me on``)
_FILLER = (r"(?:[\s:：=＝\"'“”‘’「」『』()（）\[\]【】#№/／\-_,，.|｜]|号码|號碼|号|號|码|碼"
           r"|[是为為係系我你的给給俾畀打拨撥]|(?<![A-Za-z])(?:me|on|at|us|no|is)(?![A-Za-z]))")
#: words that introduce a code, not a person's number (发票代码 044031900111, ICCID …):
#: a run after one, or glued to a code's letters (JJ-0815-138001), is a landline or a
#: foreign number only if nothing else it could be
_CODE_WORDS = re.compile(
    r"(?:单号|單號|编号|編號|订单|訂單|代码|代碼|发票|發票|流水|序列号|序號|工号|工號|学号|學號"
    r"|准考证|準考證|保单|保單|合同|案号|案號|批号|批號|卡号|卡號|货号|貨號|型号|型號|券号|工单|工單"
    r"|(?<![A-Za-z])(?:imei|iccid|meid|sn|s/n|serial|order|invoice|ref)(?![A-Za-z]))"
    rf"{_FILLER}{{0,8}}$|[A-Za-z][\-_]?$", re.IGNORECASE)
_SPACED_HAN = re.compile(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])")
#: words that introduce a phone number
_PHONE_WORDS = re.compile(
    r"(?:电话|電話|手机|手機|座机|座機|固话|固話|联系方式|聯繫方式|聯絡方式|联络方式|致电|致電"
    r"|拨打|撥打|打我|打给我|打給我|回电|回電|我的号码|我的號碼|手机号|手機號|"
    r"(?<![A-Za-z])(?:tel|phone|mobile|cell|whatsapp|wechat|signal|telegram|viber|fax)(?![A-Za-z])"
    r"|(?:call|text|reach|ring|contact|message)\s+(?:me|us)\s+(?:at|on)"
    r"|(?<![A-Za-z])(?:LINE|HP|H/P)(?![A-Za-z])|wa\.me/)"
    rf"{_FILLER}{{0,8}}$", re.IGNORECASE)
#: words that introduce an identity document's number
_DOCUMENT_WORDS = (r"(?:身份证|身份證|身分证|身分證|证件|證件|护照|護照|通行证|通行證|回乡证|回鄉證"
                   r"|台胞证|台胞證|居留证|居留證|(?<![A-Za-z])(?:passport|hkid|id\s?card|id\s?no"
                   r"|id\s?number|identity\s?card|identity\s?no|national\s?id|nric|fin)(?![A-Za-z]))")
_DOCUMENT = re.compile(
    _DOCUMENT_WORDS + r"(?:[_\s.]?(?:no|num|number|id|code|号码|號碼|号|號|字号|字號)(?![A-Za-z]))?"
    rf"{_FILLER}{{0,8}}"
    r"(?P<no>[A-Za-z]{0,2}[0-9][0-9A-Za-z]{4,19}(?:\s?[(（][0-9A-Za-z][)）])?)"
    r"(?![0-9A-Za-z])", re.IGNORECASE)
_HK_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,2}[0-9]{6}\s?[(（][0-9A][)）]")
_TW_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z][12][0-9]{8}(?![A-Za-z0-9])")
_TW_LETTER = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))

_LOCAL = "A-Za-z0-9０-９Ａ-Ｚａ-ｚ._%+\\-"
_LABEL = r"[\w\-－]+"
_HAN = "\u4e00-\u9fff"
#: an address: its local part starts a word (not inside a masked ``l****n``) and is
#: ASCII or full-width, or up to 8 Chinese characters; an SSH remote
#: (``git@github.com:org/repo``) and a file name (``logo@2x.png``) are none
_EMAIL = re.compile(
    rf"(?P<local>(?<![{_LOCAL}*＊])(?:[{_LOCAL}]*[A-Za-z0-9０-９Ａ-Ｚａ-ｚ_]"
    rf"|(?<![{_HAN}])[{_HAN}]{{1,8}}))"
    rf"(?P<at>[@＠]|%40|&#64;|&#x40;|\\u0040)"
    rf"(?P<domain>{_LABEL}(?:[.．。]{_LABEL})*?[.．。](?P<tld>[A-Za-z]{{2,}}(?![A-Za-z0-9\-])"
    rf"|[Ａ-Ｚａ-ｚ]{{2,}}|[{_HAN}]{{2,}}))(?!:[\w/~])")
_FILES = frozenset("png jpg jpeg gif svg webp bmp ico css js ts json yaml yml md txt html "
                   "htm pdf py go rs java zip gz tar mp3 mp4 wav lock toml ini log".split())
_OPEN = r"[\[(（{<【]"
_CLOSE = r"[\])）}>】]"
#: an @ written apart from its words, or spelt out (at, [at], 艾特, 圈a), or a # put for it
#: (the spaces around it are taken by the finder)
_WEAK_AT = (rf"(?<=[ \u3000])[@＠]|[@＠](?=[ \u3000])|{_OPEN}\s?(?:at|AT|艾特)\s?{_CLOSE}"
            r"|(?<=\s)(?:at|AT)(?=\s)|艾特|#|圈a")
_WEAK_DOT = rf"\s?{_OPEN}\s?(?:dot|DOT|点|點)\s?{_CLOSE}\s?|\s(?:dot|DOT)\s|\s?[点點]\s?|[.．。]"
#: an obfuscated address is found from its @ outwards: the @ (cheap to find), then the
#: local part that ends right before it and the domain that starts right after it
_WEAK_AT_RE = re.compile(_WEAK_AT)
_SPACES = " \t\u3000"
_WEAK_LOCAL = re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*\Z")
_WEAK_DOMAIN = re.compile(
    rf"[A-Za-z0-9\-{_D}]+(?:(?:{_WEAK_DOT})[A-Za-z0-9\-{_D}]+)*?(?:{_WEAK_DOT})"
    rf"(?P<tld>[A-Za-z]{{2,}})(?![A-Za-z])")
#: the top-level domains an obfuscated address may end in (``look at README.md`` is none)
_COMMON_TLD = frozenset("com cn net org edu gov hk tw mo sg my jp kr uk us au ca de fr io co "
                        "me info biz top xyz vip cc".split())
#: a run of seven digits (separated by single characters: a run with ``%20`` or
#: ``&nbsp;`` in it is looked at in full), or a Hong Kong ID's six and its check digit
_QUICK = re.compile(rf"[{_D}](?:[{re.escape(_SEP_CHARS)}]{{0,3}}[{_D}]){{{_WORTH - 1}}}"
                    r"|[0-9]{6}\s?[(（][0-9A][)）]")
#: a date or a time stamp alone (a result's own ``started_at``): no personal data
_ISO = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d\d:?\d\d)?)?")


def maybe(text: str) -> bool:
    """Whether ``text`` may hold personal data (``False``: it certainly holds none)."""
    if ("@" in text or "＠" in text or "%" in text or "&#" in text or "&nbsp;" in text
            or "\\u00" in text
            or _QUICK.search(text) is not None):
        return _ISO.fullmatch(text) is None
    return ("#" in text or "艾特" in text or "圈a" in text or "at" in text or "AT" in text) \
        and bool(_weak_emails(text))


@dataclass(frozen=True)
class Span:
    """A personal datum: its kind, where it is, its digits, and its masked form."""

    kind: Kind
    start: int
    end: int
    #: a number's digits (a phone's last 11, an ID's 18 with its X); an e-mail's address
    digits: str
    masked: str


def _value(chars: str) -> str:
    return "".join(DIGIT_VALUE.get(c, "X") for c in chars)


def _date(yyyymmdd: str) -> bool:
    year, month, day = int(yyyymmdd[:4]), int(yyyymmdd[4:6]), int(yyyymmdd[6:8])
    return 1900 <= year <= 2099 and 1 <= month <= 12 and 1 <= day <= 31


def _stars(chars: str, keep_head: int, keep_tail: int, stars: int | None = None) -> str:
    middle = len(chars) - keep_head - keep_tail
    return chars[:keep_head] + "*" * (middle if stars is None else stars) + chars[-keep_tail:]


def _shown(chars: str) -> str:
    """The digits as the masked form shows them: ASCII for Arabic digits of either width,
    the characters themselves for a number said in Chinese (in part or whole)."""
    if all(c in _ARABIC for c in chars):
        return unicodedata.normalize("NFKC", chars)
    return chars


@dataclass
class _Run:
    text: str
    start: int
    #: (start, end) in ``text`` of each group, and its characters without separators
    groups: list[tuple[int, int, str]]
    introduced: bool
    plus: bool
    #: a code's digits (after 发票代码, ICCID, or a code's letters)
    coded: bool

    def seps(self, i: int, j: int) -> list[str]:
        return [self.text[self.groups[k][1]:self.groups[k + 1][0]] for k in range(i, j)]

    def fraction(self, i: int) -> bool:
        """Whether group ``i`` is the fraction of a decimal (3.1951617…: no number of its
        own; a number's ``.0``, as a spreadsheet exports a phone, is no fraction of it)."""
        return i > 0 and self.text[self.groups[i - 1][1]:self.groups[i][0]] in (".", "．")

    def glued(self, i: int) -> bool:
        """Whether group ``i`` follows a Latin letter directly (a code's digits: PDAA2023…)."""
        a = self.groups[i][0]
        return a > 0 and self.text[a - 1].isascii() and self.text[a - 1].isalpha()

    def chars(self, i: int, j: int) -> str:
        return "".join(g[2] for g in self.groups[i:j + 1])


def _number(run: _Run, i: int, j: int) -> tuple[Kind, str, str] | None:
    """What groups ``i..j`` of ``run`` are (kind, digits, masked form), if a number."""
    chars = run.chars(i, j)
    value = _value(chars)
    if run.fraction(i):
        return None
    loose = any(set(s) & _LOOSE for s in run.seps(i, j))
    if loose and tuple(len(g[2]) for g in run.groups[i:j + 1]) not in _DOT_SHAPES:
        return None
    if "X" in value:
        return _identity(run, i, j, chars, value)
    return _identity(run, i, j, chars, value) or _phone(run, i, j, chars, value)


def _identity(run: _Run, i: int, j: int, chars: str,
              value: str) -> tuple[Kind, str, str] | None:
    """An ID number: 18 characters (in one piece not glued to a code's letters, or with a
    valid date of birth), or 15 digits with one."""
    n = len(value)
    if "X" in value[:-1]:
        return None
    if n == 18 and value[0] in "123456789" and (
            (i == j and not run.glued(i)) or _date(value[6:14])):
        return "id_number", value, _stars(chars, 3, 4) if i == j else _stars(_shown(chars), 3, 4)
    if n == 15 and value[-1] != "X" and value[0] in "12345678" and _date("19" + value[6:12]):
        return "id_number", value, _stars(_shown(chars), 3, 4)
    return None


def _phone(run: _Run, i: int, j: int, chars: str,
           value: str) -> tuple[Kind, str, str] | None:
    n = len(value)
    # after a +, the first digits are a country code (+1 415-555-2671 is no mainland mobile)
    if n == 11 and value[0] == "1" and value[1] in "3456789" and not (run.plus and i == 0):
        shown = _shown(chars)
        return "phone", value, f"{shown[:3]}****{shown[-4:]}"
    if run.coded:
        return None
    if i != 0:
        return _landline(run, i, j, chars, value)
    for cc in ("86", "0086"):
        rest = value[len(cc):]
        if value.startswith(cc) and len(rest) == 11 and rest[0] == "1" and rest[1] in "3456789":
            shown = _shown(chars)[-11:]
            return "phone", rest, f"+86 {shown[:3]}****{shown[-4:]}"
    first = run.groups[0][2]
    if i < j and (_value(first) in _COUNTRY or (run.plus and len(first) <= 3)) \
            and 7 <= n - len(first) <= 11:
        # a country code as a group of its own: +852 9123 4567, (65) 9638 2710, 852-5129-8834,
        # +1 415-555-2671
        return "phone", value, f"{'+' if run.plus else ''}{_shown(first)} " \
                               f"{_phone_mask(_shown(chars[len(first):]))}"
    if (run.plus and 8 <= n <= 15) or (value.startswith("00") and 11 <= n <= 15
                                       and value[2] != "0"):
        return "phone", value, ("+" if run.plus else "") + _phone_mask(_shown(chars))
    return _landline(run, i, j, chars, value) or (
        ("phone", value, _phone_mask(_shown(chars))) if run.introduced and 7 <= n <= 15 else None)


def _landline(run: _Run, i: int, j: int, chars: str,
              value: str) -> tuple[Kind, str, str] | None:
    """A landline (or a Taiwan mobile): an area code, then 10–12 digits in all; written
    over groups, the first group is the area code (``0-306-40615-2``, an ISBN, is none)
    unless every group is one digit (``0 2 0 - 8 7 6 5 …``, typed slowly), and it starts
    or ends its run (an ICCID's ``0321 5123 4567`` is none)."""
    groups = run.groups[i:j + 1]
    if 10 <= len(value) <= 12 and _AREA.match(value) and (
            i == j or _AREA.fullmatch(_value(groups[0][2]))
            or all(len(g[2]) == 1 for g in groups)) and (
            i == 0 or j == len(run.groups) - 1):
        return "phone", value, _phone_mask(_shown(chars))
    return None


#: country codes a phone number is written with, as a group of its own, without a ``+``
_COUNTRY = frozenset("852 853 886 65 60 61 62 63 64 66 81 82 84 44 971".split())


def _phone_mask(shown: str) -> str:
    return f"{shown[:3]}****{shown[-4:]}" if len(shown) >= 11 else f"****{shown[-4:]}"


def _runs(text: str) -> list[Span]:
    found: list[Span] = []
    for m in _RUN.finditer(text):
        if sum(c in DIGIT_VALUE for c in m.group(0)) < _WORTH:
            continue
        start = m.start()
        groups = [(start + g.start(), start + g.end(), g.group(0))
                  for g in _TOKEN.finditer(m.group(0)) if g.group("group")]
        before = text[max(0, start - 24):start]
        plus = before.endswith(("+", "＋", "(+", "（+", "%2B", "%2b"))
        if " " in before:  # 座 机, 电 话 typed with a space after every character
            before = _SPACED_HAN.sub("", before)
        # a code word wins over a phone word before it (订单号码是, 发票号码)
        coded = not plus and _CODE_WORDS.search(before) is not None
        introduced = not coded and _PHONE_WORDS.search(before) is not None
        run = _Run(text, start, groups, introduced, plus, coded)
        i = 0
        while i < len(groups):
            best = None
            for j in range(len(groups) - 1, i - 1, -1):
                got = _number(run, i, j)
                if got is not None:
                    best = j, got
                    break
            if best is None:
                i += 1
                continue
            j, (kind, digits, masked) = best
            a, b = groups[i][0], groups[j][1]
            if kind == "phone" and (plus or masked.startswith("+86 ")) and i == 0:
                a = _absorb_plus(text, a)
            elif kind == "phone" and i == 0 and a > 0 and text[a - 1] in "(（" and any(
                    c in text[a:b] for c in ")）"):
                a -= 1  # (65) 9638 2710: its bracket goes with it
            found.append(Span(kind, a, b, digits, masked))
            i = j + 1
    return found


def _absorb_plus(text: str, a: int) -> int:
    """The start of a number with the ``+`` (or ``%2B``) written before it."""
    for mark in ("(+", "（+", "+", "＋", "%2B", "%2b"):
        if text.startswith(mark, a - len(mark)):
            return a - len(mark)
    return a


def _tw_valid(no: str) -> bool:
    n = _TW_LETTER[no[0]]
    total = n // 10 + (n % 10) * 9 + sum(int(d) * w for d, w in zip(no[1:9], range(8, 0, -1),
                                                                     strict=True))
    return (total + int(no[9])) % 10 == 0


def _document(no: str) -> str:
    return no[0] + "*" * (len(no) - 3) + no[-2:]


def _documents(text: str) -> list[Span]:
    found = []
    for m in _DOCUMENT.finditer(text):
        no = m.group("no")
        if sum(c.isdigit() for c in no) >= _WORTH:
            found.append(Span("id_number", m.start("no"), m.end("no"), no, _document(no)))
    for m in _HK_ID.finditer(text):
        found.append(Span("id_number", m.start(), m.end(), m.group(0), _document(m.group(0))))
    for m in _TW_ID.finditer(text):
        if _tw_valid(m.group(0)):
            found.append(Span("id_number", m.start(), m.end(), m.group(0),
                              _document(m.group(0))))
    return found


def _emails(text: str) -> list[Span]:
    found = []
    for m in _EMAIL.finditer(text):
        if m.group("tld").lower() not in _FILES:
            found.append(Span("email", m.start(), m.end(), m.group(0), _address(m)))
    return found + _weak_emails(text)


def _weak_emails(text: str) -> list[Span]:
    found = []
    for at in _WEAK_AT_RE.finditer(text):
        a, b = at.span()
        a -= a > 0 and text[a - 1] in _SPACES
        b += b < len(text) and text[b] in _SPACES
        local = _WEAK_LOCAL.search(text, max(0, a - 64), a)
        domain = _WEAK_DOMAIN.match(text, b)
        if (local is not None and domain is not None and len(local.group(0)) >= 2
                and domain.group("tld").lower() in _COMMON_TLD):
            found.append(Span("email", local.start(), domain.end(),
                              text[local.start():domain.end()],
                              f"{local.group(0)[:1]}***{text[a:b]}{domain.group(0)}"))
    return found


def _address(m: re.Match[str]) -> str:
    return f"{m.group('local')[:1]}***{m.group('at')}{m.group('domain')}"


def spans(text: str) -> list[Span]:
    """The personal data of ``text``, in order, none overlapping another (e-mails first,
    then the numbers of runs, then document numbers)."""
    if not maybe(text):
        return []
    taken: list[Span] = []
    for finder in (_emails, _runs, _documents):
        for s in finder(text):
            if all(s.end <= t.start or s.start >= t.end for t in taken):
                taken.append(s)
    return sorted(taken, key=lambda s: s.start)
