"""Where a text holds personal data: phone numbers, identity document numbers, e-mails.

:func:`spans` finds them as people, speech recognisers, chatbots and systems write them,
for :class:`~pytest_agenteval.privacy.Masker` to mask and the lint to report. What counts,
with examples, is tabled in docs/configuration.md#privacy; in short:

* **Numbers** are read as *runs*: digits (ASCII, full-width, circled, or Chinese as
  spoken) with at most three separators between two of them (spaces of every kind,
  dashes, dots, brackets, commas, slashes, ``%20``, ``&nbsp;``, ``\\u00a0``). A run is
  cut into *groups* at its separators and where the digits change script, and a number
  must begin and end on a group boundary: ``138 0013 8000`` is a mobile number,
  ``13.58 14.28 15.98`` (prices) is none. A number joined by dots, commas or slashes must
  also have a phone's or ID number's grouping (an IP address, a list or a version has
  none); a decimal's fraction and a date are no number.
* **Phones**: a mainland mobile (with or without 86 / 0086 / +86), a landline after an
  area code, a Taiwan or Malaysian mobile, a foreign number after ``+`` or ``00`` or a
  country code of its own, and any number a phone word introduces (电话, 手機, Tel,
  WhatsApp, HP, call me at …, or 係我手機 after it). After a code word (订单, 发票代码,
  IMEI …) or glued to a code's letters, only a mobile or an ID number is one.
* **ID numbers**: 18 characters (in one piece, or in groups with a valid date of birth),
  an old 15-digit one near a document word, a MyKad, a Hong Kong ID with a bracketed
  check digit, a Taiwan ID with a valid check letter, a US Social Security Number where
  it is named, and any number a document word introduces (身份证, 护照, passport, HKID …).
* **E-mail addresses** with ``@`` in any of its encodings, or spelt out (``at``/``dot``,
  ``[at]``, ``(a)``, ``#``, 艾特, 小老鼠, ★) at a common top-level domain; not a file name
  (``logo@2x.png``), an SSH user (``git@github.com``) or a mention (``@所有人。公司``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = ["DIGIT_VALUE", "RUN", "Kind", "Span", "maybe", "spans"]

Kind = Literal["phone", "id_number", "email"]

_ARABIC = "0123456789０１２３４５６７８９"
_SPOKEN = {"零": "0", "〇": "0", "洞": "0", "一": "1", "幺": "1", "么": "1", "腰": "1",
           "二": "2", "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7",
           "拐": "7", "八": "8", "九": "9", "勾": "9",
           # the financial numerals of cheques and invoices (壹伍捌…)
           "壹": "1", "贰": "2", "貳": "2", "叁": "3", "參": "3", "肆": "4", "伍": "5", "陆": "6",
           "陸": "6", "柒": "7", "捌": "8", "玖": "9"}
#: circled digits, as second-hand platforms' users write a number to slip past filters
_CIRCLED = {c: str(i % 10) for series in ("⓪①②③④⑤⑥⑦⑧⑨", "⓿❶❷❸❹❺❻❼❽❾", "➉➀➁➂➃➄➅➆➇➈")
            for i, c in enumerate(series)}
#: and the mathematical digits of styled profiles (𝟏𝟑𝟖, 𝟙𝟛𝟠, 𝟣𝟥𝟪 …)
_CIRCLED |= {chr(0x1D7CE + k): str(k % 10) for k in range(50)}
#: the value of every character that counts as a digit in a number
DIGIT_VALUE: dict[str, str] = ({c: str(i % 10) for i, c in enumerate(_ARABIC)} | _SPOKEN
                               | _CIRCLED)
_D = re.escape("".join(DIGIT_VALUE))
#: what may stand between two digits of one number: spaces (no-break, ideographic and
#: zero-width too), dashes of every width, dots, brackets, commas and slashes
_SEP_CHARS = (" \t\n\r\u00a0\u2009\u202f\u3000\u200b\u200c\u200d\u2060\ufeff"
              "-‐‑‒–—−－﹣.．·・()（）[]【】,，、/／")
#: one separator: a character, a space as a URL, HTML or JSON writes it, or a dash or dot
#: escaped for Telegram's Markdown (``138\\-0013``)
_S = (rf"(?:%20|&nbsp;|&#160;|\\u00a0|\\u0020|\\n|\\[-.]|[{re.escape(_SEP_CHARS)}]"
      # a run of spaces and tabs, or of dashes (「186 \t \t0375」「176 —— 3390」), is one
      r"|[ \t\u00a0\u2009\u202f\u3000]{2,8}|[-‐‑‒–—−－﹣]{2,3})")
#: an ID number's last character, as written or said (叉)
_X = "XxＸｘ叉×✕"
#: a digit right after ``%`` is a URL escape's (``%2B``, ``%E6``), never a number's
RUN = _RUN = re.compile(rf"(?<!%)[{_D}](?:{_S}{{0,3}}[{_D}])*(?:[ \u3000]?[{_X}](?![A-Za-z]))?")
_CN = re.escape("".join(_SPOKEN))
_NOT_CN = re.escape("".join(c for c in DIGIT_VALUE if c not in _SPOKEN))
#: a run read from its start: a separator (``%20``, ``\\u00a0`` whole, digits and all),
#: or a group: digits of one script, Chinese or not (张三13915826704 holds the mobile
#: number whole, and 138零零13八000 is still one, of five groups)
_TOKEN = re.compile(rf"{_S}|(?P<group>[{_CN}]+[{_X}]?|[{_NOT_CN}]+[{_X}]?)")
#: a run worth reading has seven digits: no phone, ID or document number has fewer
_WORTH = 7
#: separators that also join the numbers of a list, a decimal or alternatives: a number
#: joined by one of these must have a phone's or an ID number's grouping
_LOOSE = frozenset(".．·・,，、/／")
#: the groupings a number joined by one of those may have
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
    r"|编码|編碼|串号|串號|户号|戶號"
    r"|(?<![A-Za-z])(?:imei|imsi|iccid|meid|sn|s/n|serial|order|invoice|ref|hs)(?![A-Za-z]))"
    rf"[0-9]?{_FILLER}{{0,8}}$", re.IGNORECASE)
#: a number glued to a code's letters (JJ-0815-138001, PDAA2023…), where no phone word is
_GLUED = re.compile(r"[A-Za-z][\-_]?$")
#: a phone word right after a number (9786 5432 係我手機, … is my mobile)
_PHONE_AFTER = re.compile(
    r"\s*(?:係|系|是|就是|為|为)(?:我|我的|我嘅|我個)?\s*(?:屋企|家里|家裡|家|公司|办公室|辦公室|宿舍)?"
    r"\s*(?:手機|手机|電話|电话|聯絡電話|联系电话|座机|座機)"
    r"|\s*(?:is|'s)\s+my\s+(?:phone|mobile|cell|number|whatsapp)", re.IGNORECASE)
_SPACED_HAN = re.compile(r"(?<=[\u4e00-\u9fff]) (?=[\u4e00-\u9fff])")
#: words that introduce a phone number
_PHONE_WORDS = re.compile(
    r"(?:电话|電話|手机|手機|座机|座機|固话|固話|联系方式|聯繫方式|聯絡方式|联络方式|致电|致電"
    r"|拨打|撥打|打我|打给我|打給我|打俾我|打畀我|回电|回電|我的号码|我的號碼|手机号|手機號"
    r"|搵我|揾我|📱|☎\ufe0f?|📞"
    r"|hubungi|telefon|talian|wa_id|"
    r"(?<![A-Za-z])(?:tel|phone|mobile|cell|whatsapp|wechat|signal|telegram|viber|fax)(?![A-Za-z])"
    r"|(?:call|text|reach|ring|contact|message)\s+(?:me|us)\s+(?:at|on)"
    r"|(?<![A-Za-z])(?:LINE|HP|H/P)(?![A-Za-z])|wa\.me/)"
    rf"{_FILLER}{{0,8}}$", re.IGNORECASE)
#: words that introduce an identity document's number
_DOCUMENT_WORDS = (r"(?:身份证|身份證|身分证|身分證|证件|證件|护照|護照|通行证|通行證|回乡证|回鄉證"
                   r"|户口本|戶口本|户口簿|戶口簿|户籍|戶籍"
                   r"|台胞证|台胞證|居留证|居留證|(?<![A-Za-z])(?:passport|hkid|id\s?card|id\s?no"
                   r"|id\s?number|identity\s?card|identity\s?no|national\s?id|nric|fin|cert|idno|idcard"
                   # 「Co-applicant Taiwan ID: F223456789」 (not an order's or a user's id)
                   r"|(?:taiwan|roc|resident|citizen|personal)\s?id)"
                   r"(?![A-Za-z]))")
_DOCUMENT = re.compile(
    _DOCUMENT_WORDS + r"(?:[_\s.]?(?:no|num|number|id|code|号码|號碼|号|號|字号|字號)(?![A-Za-z]))?"
    rf"{_FILLER}{{0,8}}"
    r"(?P<no>[A-Za-z]{0,2}[0-9][0-9A-Za-z]{4,19}(?:\s?[(（][0-9A-Za-z][)）])?)"
    r"(?![0-9A-Za-z])", re.IGNORECASE)
_DOCUMENT_NEAR = re.compile(_DOCUMENT_WORDS, re.IGNORECASE)
_HK_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z]{1,2}[0-9]{6}\s?[(（][0-9A][)）]")
_TW_ID = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][12][0-9]{8}(?![A-Za-z0-9])")
#: a Macau resident's ID (1/234567/8)
_MO_ID = re.compile(r"(?<![\d/])[1578]/\d{6}/\d(?![\d/])")
#: a US Social Security Number where it is named (「Social Security Number 512-48-3791」「SSN:
#: 512 48 3791」): three groups the document words' one run does not take
_SSN = re.compile(r"(?<![A-Za-z])(?:social\s+security\s+(?:number|no\.?|#)?|ssn)(?![A-Za-z])"
                  r"[\s:：#=-]{0,4}(?P<no>\d{3}[-\s]\d{2}[-\s]\d{4})(?!\d)", re.IGNORECASE)
_TW_LETTER = dict(zip("ABCDEFGHJKLMNPQRSTUVXYWZIO", range(10, 36), strict=True))

_LOCAL = "A-Za-z0-9０-９Ａ-Ｚａ-ｚ._%+\\-\\\\"
_LABEL = r"[\w\-－]+"
_HAN = "\u4e00-\u9fff"
#: an address: its local part starts a word (not inside a masked ``l****n``) and is
#: ASCII or full-width (Telegram's ``\\.`` and ``\\_`` escapes too), or up to 8 Chinese
#: characters; a Chinese top-level domain follows a dot, not a 。 (``@所有人。公司`` is a
#: mention); an SSH remote (``git@github.com:org/repo``) and a file name
#: (``logo@2x.png``, ``getty@tty1.service``) are none
_EMAIL = re.compile(
    rf"(?P<local>(?<![{_LOCAL}*＊])(?:[{_LOCAL}]*[A-Za-z0-9０-９Ａ-Ｚａ-ｚ_]"
    rf"|(?<![{_HAN}])[{_HAN}]{{1,8}}))"
    rf"(?P<at>(?:[@＠﹫]|%40|%2540|&#64;|&#x40;|&commat;|\\u0040)[\u200b\u200c\u200d\u2060\ufeff]?)"
    rf"(?P<domain>{_LABEL}(?:\\?[.．。]{_LABEL})*?(?:\\?[.．。](?P<tld>[A-Za-z]{{2,}}"
    rf"(?![A-Za-z0-9\-])|[Ａ-Ｚａ-ｚ]{{2,}})|[.．](?P<han>[{_HAN}]{{2,}})))(?!:[\w/~])")
_FILES = frozenset("png jpg jpeg gif svg webp bmp ico css js ts json yaml yml md txt html "
                   "htm pdf py go rs java zip gz tar mp3 mp4 wav lock toml ini log service "
                   "socket timer target mount slice".split())
#: local parts and domains that are no person's: SSH's user, a WhatsApp group's JID
_NOBODY = frozenset({"git"})
_NO_DOMAIN = frozenset({"g.us"})
#: what a spelt-out ``at`` follows in plain English (``sign in at icloud dot com``)
_STOPWORDS = frozenset("in up on me us him her them you it is are was am be log sign login "
                       "logged signed look see mail email online here there back now and or "
                       "but not only also me us available found listed located sold shop buy "
                       "visit details".split())
_OPEN = r"[\[(（{<【]"
_CLOSE = r"[\])）}>】]"
#: an @ written apart from its words, or spelt out (at, [at], 艾特, 圈a), or a # put for it
#: (the spaces around it are taken by the finder)
_WEAK_AT = (rf"(?<=[ \u3000])[@＠]|[@＠](?=[ \u3000])|{_OPEN}\s?(?:at|AT|a|艾特)\s?{_CLOSE}"
            r"|(?<=\s)(?:at|AT)(?=\s)|艾特|小老鼠|老鼠|#|圈a|[★☆]")
_WEAK_DOT = rf"\s?{_OPEN}\s?(?:dot|DOT|点|點)\s?{_CLOSE}\s?|\s(?:dot|DOT)\s|\s?[点點]\s?|[.．。]"
#: an obfuscated address is found from its @ outwards: the @ (cheap to find), then the
#: local part that ends right before it and the domain that starts right after it
_WEAK_AT_RE = re.compile(_WEAK_AT)
#: the first character of every match of ``_WEAK_AT``: a scan for these is a plain
#: character-set search, where the pattern's alternatives were tried at every position
_WEAK_AT_FIRST = re.compile(r"[@＠\[(（{<【aA艾小老#圈★☆]")
_SPACES = " \t\u3000"
_WEAK_LOCAL = re.compile(r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9][A-Za-z0-9._%+\-]*"
                         r"(?:\s(?:dot|DOT)\s[A-Za-z0-9._%+\-]+)*\Z")
_WEAK_DOMAIN = re.compile(
    rf"[A-Za-z0-9\-{_D}]+(?:(?:{_WEAK_DOT})[A-Za-z0-9\-{_D}]+)*?(?:{_WEAK_DOT})"
    rf"(?P<tld>[A-Za-z]{{2,}})(?![A-Za-z])")
#: the top-level domains an obfuscated address may end in (``look at README.md`` is none)
_COMMON_TLD = frozenset("com cn net org edu gov hk tw mo sg my jp kr uk us au ca de fr io co "
                        "me info biz top xyz vip cc".split())
#: a run of seven digits (separated by single characters: a run with ``%20`` or
#: ``&nbsp;`` in it is looked at in full), or a Hong Kong ID's six and its check digit
_QUICK = re.compile(rf"[{_D}](?:[{re.escape(_SEP_CHARS)}]{{0,8}}[{_D}]){{{_WORTH - 1}}}"
                    r"|[0-9]{6}\s?[(（][0-9A][)）]")
#: a date or a time stamp alone (a result's own ``started_at``): no personal data
_ISO = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d\d:?\d\d)?)?")


#: what every obfuscated address's domain has (one of ``_WEAK_DOT``'s forms): a text
#: without any holds none, whatever stands for its @ (a rule id's ``#1``, ``match``)
_DOTS = (".", "．", "。", "点", "點", "dot", "DOT")
#: the bytes of an ASCII text that are not digits (deleted, the digits are counted)
_NOT_DIGIT = bytes(c for c in range(128) if not 48 <= c <= 57)


def _quick(text: str) -> bool:
    """``_QUICK.search(text)``, skipped for an ASCII text (its digits are ASCII) of too few
    digits for either alternative: seven for a run, six and a bracket for a Hong Kong ID.
    A rule id, a reason, a file name; counting is two C calls, the pattern's scan a step
    per character."""
    if text.isascii():
        digits = len(text.encode().translate(None, _NOT_DIGIT))
        if digits < 6 or (digits == 6 and "(" not in text):
            return False
    return _QUICK.search(text) is not None


def maybe(text: str) -> bool:
    """Whether ``text`` may hold personal data (``False``: it certainly holds none)."""
    if ("@" in text or "＠" in text or "﹫" in text or "%" in text or "&#" in text
            or "&nbsp;" in text or "&commat;" in text or "\\" in text or _quick(text)):
        return _ISO.fullmatch(text) is None
    return ("#" in text or "艾特" in text or "圈a" in text or "at" in text or "AT" in text
            or "老鼠" in text or "★" in text or "☆" in text or "(a)" in text or "（a）" in text) \
        and any(dot in text for dot in _DOTS) and bool(_weak_emails(text))


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
    #: a document word (身份证, 护照 …) shortly before it
    documented: bool

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
    # (after a phone word the grouping does not matter: 「我手机号是 15,820,736,904」)
    if loose and not run.introduced \
            and tuple(len(g[2]) for g in run.groups[i:j + 1]) not in _DOT_SHAPES:
        return None
    if "X" in value:
        return _identity(run, i, j, chars, value)
    return _identity(run, i, j, chars, value) or _phone(run, i, j, chars, value)


def _identity(run: _Run, i: int, j: int, chars: str,
              value: str) -> tuple[Kind, str, str] | None:
    """An ID number: 18 characters (in one piece not glued to a code's letters and, after a
    code word, with a province's code and its check digit; or with a valid date of birth);
    an old 15-digit one with a valid date of birth where a document word comes shortly
    before it and no code word (15 digits alone are an IMEI, an IMSI or a waybill far more
    often: those IDs have not been valid since 2013); a Malaysian MyKad number
    (``900512-14-5567``)."""
    n = len(value)
    if "X" in value[:-1]:
        return None
    if n == 18 and value[0] in "123456789" and (
            # after a code word (订单号, 发票号码) only one with a province and a check digit
            (value[:2] in _PROVINCES and _checked(value)) if run.coded and i == j
            else (i == j and not run.glued(i)) or _date(value[6:14])):
        return "id_number", value, _stars(chars, 3, 4) if i == j else _stars(_shown(chars), 3, 4)
    if n == 15 and value[-1] != "X" and value[:2] in _PROVINCES and run.documented \
            and not run.coded \
            and _date("19" + value[6:12]):
        return "id_number", value, _stars(_shown(chars), 3, 4)
    if n == 12 and tuple(len(g[2]) for g in run.groups[i:j + 1]) == (6, 2, 4) \
            and _date(("19" if value[:2] > "30" else "20") + value[:6]):
        return "id_number", value, _stars(_shown(chars), 3, 4, stars=5)
    return None


def _checked(value: str) -> bool:
    """An 18-character ID number's check character is right (GB 11643, ISO 7064 MOD 11-2)."""
    total = sum(int(d) * (2 ** (17 - k) % 11) for k, d in enumerate(value[:17]))
    return "10X98765432"[total % 11] == value[17]


#: the province codes a mainland ID number starts with
_PROVINCES = frozenset("11 12 13 14 15 21 22 23 31 32 33 34 35 36 37 41 42 43 44 45 46 50 51 "
                       "52 53 54 61 62 63 64 65 71 81 82".split())


def _phone(run: _Run, i: int, j: int, chars: str,
           value: str) -> tuple[Kind, str, str] | None:
    n = len(value)
    groups = run.groups[i:j + 1]
    if len(groups) > 1 and len(groups[0][2]) == 4 and value[:2] in ("19", "20") \
            and len(groups[1][2]) <= 2:
        return None  # a date: 电话 2024-05-12 14:30, UTC+8 2024-05-12
    # after a +, the first digits are a country code (+1 415-555-2671 is no mainland mobile)
    if n == 11 and value[0] == "1" and value[1] in "3456789" and not (run.plus and i == 0):
        if i < j and _PRICE_AFTER.match(run.text, groups[-1][1]):
            return None  # prices in three groups: 「158 2999 6999 元三档」
        shown = _shown(chars)
        return "phone", value, f"{shown[:3]}****{shown[-4:]}"
    if run.coded:
        return None
    if n == 12 and value[:2] == "01" and value[2] in "3456789" and i == 0:
        shown = _shown(chars)  # a mobile dialled with the trunk 0: 「请拨 0187 6630 2291」
        return "phone", value[1:], f"{shown[:4]}****{shown[-4:]}"
    if i != 0:
        return _landline(run, i, j, chars, value)
    for cc in ("86", "0086"):
        rest = value[len(cc):]
        if value.startswith(cc) and len(rest) == 11 and rest[0] == "1" and rest[1] in "3456789":
            shown = _shown(chars)[-11:]
            return "phone", rest, f"+86 {shown[:3]}****{shown[-4:]}"
    first = run.groups[0][2]
    widths = [len(g[2]) for g in groups[1:]]
    if i < j and (_value(first) in _COUNTRY or (run.plus and len(first) <= 3)) \
            and 7 <= n - len(first) <= 11 and len(widths) <= 4 and min(widths[1:] or widths) >= 3 \
            and not (_value(first) in ("852", "853") and value[len(first)] not in _SUBSCRIBER):
        # a country code as a group of its own: +852 9123 4567, (65) 9638 2710, 852-5129-8834,
        # +1 415-555-2671, 86 21 6487 2219; its number in groups of three digits or more
        # but the first (an area code), not a list (65 70 72 80 85 …, sizes 44 45 46 …)
        return "phone", value, f"{'+' if run.plus else ''}{_shown(first)} " \
                               f"{_phone_mask(_shown(chars[len(first):]))}"
    if (run.plus and 8 <= n <= 15) or (value.startswith("00") and 11 <= n <= 15
                                       and value[2] != "0"):
        return "phone", value, ("+" if run.plus else "") + _phone_mask(_shown(chars))
    if i < j and re.fullmatch("01[1-9]", _value(first)) and 10 <= n <= 11 \
            and value[3] in _SUBSCRIBER:
        return "phone", value, _phone_mask(_shown(chars))  # a Malaysian mobile: 012-687 4513
    # a phone word's number: 7 digits too where grouped as a local number (a county's
    # 「座机 612 3456」; not 「HP 1350000」), not a company's hotline (400-820-8820)
    local = n == 7 and [len(g[2]) for g in groups] in ([3, 4], [4, 3])
    return _landline(run, i, j, chars, value) or (
        ("phone", value, _phone_mask(_shown(chars)))
        if run.introduced and (8 <= n <= 15 or local) and not _HOTLINE.fullmatch(value)
        else None)


def _landline(run: _Run, i: int, j: int, chars: str,
              value: str) -> tuple[Kind, str, str] | None:
    """A landline (or a Taiwan mobile): an area code, then 10–12 digits in all, the first
    digit after the area code 2–9 (no subscriber number starts with 0 or 1: 010 021 0755
    is a list of area codes); written over groups, the first group is the area code
    (``0-306-40615-2``, an ISBN, is none) unless every group is one digit (``0 2 0 - 8 7
    6 5 …``, typed slowly), and it starts or ends its run (an ICCID's ``0321 5123 4567``
    is none). Taiwan's two-digit area codes count in brackets: ``(04)2326-1587``."""
    groups = run.groups[i:j + 1]
    area = 3 if value.startswith(("010", "02")) else 4
    taiwan = len(value) == 10 and value.startswith("09")  # a mobile: 0912-345-678
    if 10 <= len(value) <= 12 and _AREA.match(value) and (
            value[area:area + 1] in _SUBSCRIBER or taiwan) \
            and (i == j or _AREA.fullmatch(_value(groups[0][2]))
                 or all(len(g[2]) == 1 for g in groups)) and (
            i == 0 or j == len(run.groups) - 1):
        return "phone", value, _phone_mask(_shown(chars))
    start = groups[0][0]
    if i < j and 9 <= len(value) <= 10 and re.fullmatch("0[2-9]", _value(groups[0][2])) \
            and start > 0 and run.text[start - 1] in "(（" and value[2] in _SUBSCRIBER:
        return "phone", value, _phone_mask(_shown(chars))
    return None


_SUBSCRIBER = frozenset("23456789")
#: a company's hotline, no person's number
_HOTLINE = re.compile(r"(400|800)\d{7}")
#: a price after a number (「… 6999 元」)
_PRICE_AFTER = re.compile(r"\s*(元|块|円|rmb|RMB|¥|￥)")


#: country codes a phone number is written with, as a group of its own, without a ``+``
_COUNTRY = frozenset("86 852 853 886 65 60 61 62 63 64 66 81 82 84 44 971".split())


def _phone_mask(shown: str) -> str:
    """138****8000; ****4567 for 8 to 10 digits; ****456 for 7 (four of seven tell too much)."""
    if len(shown) >= 11:
        return f"{shown[:3]}****{shown[-4:]}"
    return f"****{shown[-4:]}" if len(shown) >= 8 else f"****{shown[-3:]}"


def _runs(text: str) -> list[Span]:
    found: list[Span] = []
    for m in _RUN.finditer(text):
        if sum(c in DIGIT_VALUE for c in m.group(0)) < _WORTH:
            continue
        start = m.start()
        groups = [(start + g.start(), start + g.end(), g.group(0))
                  for g in _TOKEN.finditer(m.group(0)) if g.group("group")]
        if groups and groups[-1][1] < m.end() and m.group(0)[-1] in _X:
            # 「… 一零零 叉」: an ID number's check character said apart goes with its last group
            groups[-1] = (groups[-1][0], m.end(), groups[-1][2] + m.group(0)[-1])
        before = text[max(0, start - 24):start]
        # a + that starts a token (not 3.8.1+2024…, UTC+8)
        plus = before.endswith(("+", "＋", "(+", "（+", "%2B", "%2b")) and not (
            before.endswith(("+", "＋")) and len(before) > 1 and before[-2].isalnum())
        if " " in before:  # 座 机, 电 话 typed with a space after every character
            before = _SPACED_HAN.sub("", before)
        # a code word wins over a phone word before it (订单号码是, 发票号码); a phone
        # word over a code's letters (Tel0755-86671234)
        coded = not plus and _CODE_WORDS.search(before) is not None
        introduced = not coded and (_PHONE_WORDS.search(before) is not None
                                    or _PHONE_AFTER.match(text, m.end()) is not None)
        coded = coded or (not introduced and not plus and _GLUED.search(before) is not None)
        documented = _DOCUMENT_NEAR.search(text, max(0, start - 40), start) is not None
        run = _Run(text, start, groups, introduced, plus, coded, documented)
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
    n = _TW_LETTER[no[0].upper()]
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
    for m in _MO_ID.finditer(text):
        found.append(Span("id_number", m.start(), m.end(), m.group(0), _document(m.group(0))))
    for m in _SSN.finditer(text):
        no = m.group("no")
        found.append(Span("id_number", m.start("no"), m.end("no"), no, _document(no)))
    for m in _TW_ID.finditer(text):
        if _tw_valid(m.group(0)):
            found.append(Span("id_number", m.start(), m.end(), m.group(0),
                              _document(m.group(0))))
    return found


def _emails(text: str) -> list[Span]:
    found = []
    for m in _EMAIL.finditer(text):
        if (m.group("tld") or "").lower() not in _FILES and m.group("local") not in _NOBODY \
                and m.group("domain").lower() not in _NO_DOMAIN:
            found.append(Span("email", m.start(), m.end(), m.group(0), _address(m)))
    return found + _weak_emails(text)


def _weak_emails(text: str) -> list[Span]:
    found = []
    for at in _weak_ats(text):
        a, b = at.span()
        a -= a > 0 and text[a - 1] in _SPACES
        b += b < len(text) and text[b] in _SPACES
        domain = _WEAK_DOMAIN.match(text, b)  # anchored: cheaper than the local part's search
        if domain is None:
            continue
        local = _WEAK_LOCAL.search(text, max(0, a - 64), a)
        if (local is not None and len(local.group(0)) >= 2
                and domain.group("tld").lower() in _COMMON_TLD
                and not (text[a:b].strip() in ("at", "AT")
                         and local.group(0).lower() in _STOPWORDS)):
            found.append(Span("email", local.start(), domain.end(),
                              text[local.start():domain.end()],
                              f"{local.group(0)[:1]}***{text[a:b]}{domain.group(0)}"))
    return found


def _weak_ats(text: str) -> Iterator[re.Match[str]]:
    """``_WEAK_AT_RE.finditer(text)``, tried only where a match can start."""
    end = 0
    for first in _WEAK_AT_FIRST.finditer(text):
        at = first.start()
        if at >= end:
            m = _WEAK_AT_RE.match(text, at)  # (its lookbehinds see the text before ``at``)
            if m is not None:
                end = m.end()
                yield m


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
