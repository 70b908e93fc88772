"""Masking of personal data in everything that is reported (SPEC 8).

Chinese mobile numbers, mainland ID card numbers and e-mail addresses are
masked in the run record, the terminal and every report; numbers on the
allow-list (test numbers) stay readable. Full-width digits are recognised.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _pii

if TYPE_CHECKING:
    from .model.results import ItemResult

__all__ = ["Masker", "PersonalDatum", "clip", "whole"]

#: a surrogate code point: never text on its own (a str holds a whole astral character
#: as one code point), and no UTF-8 file can hold it
_SURROGATE = re.compile("[\ud800-\udfff]")
#: a number below this (in magnitude) has too few digits to be a phone or ID number
_SMALL = 10**6


#: characters of one token (a key, an e-mail, a number): a cut may not fall inside one
_TOKEN = frozenset("0123456789０１２３４５６７８９_+.@%/=:~-"
                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIGIT = frozenset("0123456789０１２３４５６７８９")


def whole(text: str) -> str:
    """``text`` with each half character (a lone surrogate: an emoji cut in two, a
    ``\ud83d`` in an agent's JSON) as U+FFFD: text that every encoder and file can hold."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def clip(text: str, n: int, mark: str = "…") -> str:
    """``text`` in at most ``n`` characters, never cutting a token or a number in two.

    A cut that falls inside a run of token characters (a key, an e-mail, an ID or phone
    number, spaced ``138 1234 5678`` included) backs off to the start of the run: the
    masker sees whole values or none, so a cut can never leave a part of a secret or
    13 of 18 digits of an ID number that no pattern recognises.
    """
    if len(text) <= n:
        return text
    cut = max(0, n - len(mark))
    if 0 < cut < len(text) and (text[cut] in _pii.DIGIT_VALUE
                                or text[cut - 1] in _pii.DIGIT_VALUE):
        # inside a number with its separators (138 - 0013 - 8000, 幺三八 零零幺三): before it
        for m in _pii.RUN.finditer(text, max(0, cut - 256), min(len(text), cut + 64)):
            if m.start() < cut < m.end():
                cut = m.start()
                break
    if 0 < cut < len(text) and text[cut - 1] in _TOKEN and (
            text[cut] in _TOKEN or (text[cut] in " -" and cut + 1 < len(text)
                                    and text[cut + 1] in _DIGIT)):
        while cut > 0 and (text[cut - 1] in _TOKEN or (
                text[cut - 1] in " -" and cut >= 2 and text[cut - 2] in _DIGIT)):
            cut -= 1
    return text[:cut].rstrip() + mark


def _prefixes(secret: str, shortest: int) -> str:
    """A pattern for every prefix of ``secret`` at least ``shortest`` long, longest first."""
    tail = ""
    for ch in reversed(secret[shortest:]):
        tail = f"(?:{re.escape(ch)}{tail})?"
    return re.escape(secret[:shortest]) + tail


_URL_CREDENTIALS = re.compile(r"(://)[^/\s@:]*:[^/\s@]*@")

#: a secret's prefix this long is masked too (a cut elsewhere must not expose one)
_SECRET_PREFIX = 8


def _digits(text: str) -> str:
    """The digits of an allow-list entry, read as :mod:`._pii` reads a number's."""
    return "".join(_pii.DIGIT_VALUE.get(c, "X" if c in "XxＸｘ" else "") for c in text)


@dataclass(frozen=True)
class PersonalDatum:
    """A phone number, ID number or e-mail address found in a text, as written."""

    kind: _pii.Kind
    raw: str
    #: a number's digits (a phone's last 11, an ID number's 18; a spoken number's as
    #: digits); an e-mail's address
    digits: str
    #: where it starts in the text
    start: int


class Masker:
    """Masks phone numbers, ID numbers and e-mails; ``allow`` lists kept values."""

    def __init__(self, enabled: bool = True, allow: Iterable[str] = (),
                 secrets: Iterable[str] = ()) -> None:
        self.enabled = enabled
        self.allow = set(allow)
        #: number-like entries (phones, ID numbers) also match in another format
        self.allow_digits = {_digits(a)[-11:] for a in allow if len(_digits(a)) >= 7
                             and "@" not in a}
        self.secrets = sorted((s for s in secrets if len(s) >= 4), key=len, reverse=True)
        long = [s for s in self.secrets if len(s) > _SECRET_PREFIX]
        #: a long secret, or any prefix of it of 8 characters or more
        self._secret_prefixes = (re.compile("|".join(_prefixes(s, _SECRET_PREFIX) for s in long))
                                 if long else None)
        #: the secrets too short for a prefix: replaced whole
        self._short_secrets = [s for s in self.secrets if len(s) <= _SECRET_PREFIX]
        #: a result's strings repeat (field names, rule ids, reasons): mask each once
        self._memo: dict[str, str] = {}
        self._walk = self._walker()

    def text(self, value: str) -> str:
        masked = self._memo.get(value)
        if masked is None:
            if len(self._memo) > 50_000:
                self._memo.clear()
            masked = self._memo[value] = self._text(value)
        return masked

    def _text(self, value: str) -> str:
        value = whole(value)  # a half character as U+FFFD, even when masking is off
        if self._secret_prefixes is not None:  # secrets go even when masking is off
            value = self._secret_prefixes.sub("***", value)
        if "://" in value:  # credentials in a URL (http://user:password@host)
            value = _URL_CREDENTIALS.sub(r"\1***@", value)
        for secret in self._short_secrets:
            value = value.replace(secret, "***")
        if not self.enabled:
            return value
        found = _pii.spans(value)
        if not found:
            return value
        out, at = [], 0
        for s in found:
            if not self._kept(value[s.start:s.end], s):
                out += [value[at:s.start], s.masked]
                at = s.end
        return "".join(out) + value[at:] if out else value

    def find(self, text: str) -> list[PersonalDatum]:
        """The personal data of ``text`` that masking hides (the allow-list's kept), in the
        order they appear (see :mod:`pytest_agenteval._pii` for what counts). Whether
        masking is on or off."""
        return [PersonalDatum(s.kind, text[s.start:s.end], s.digits, s.start)
                for s in _pii.spans(text) if not self._kept(text[s.start:s.end], s)]

    def _kept(self, raw: str, span: _pii.Span) -> bool:
        if raw in self.allow:
            return True
        return span.kind != "email" and span.digits[-11:] in self.allow_digits

    def data(self, value: Any) -> Any:
        """A masked, JSON-native copy, by type and never by key name.

        Strings are masked (mapping keys too). A number is masked when its digits
        are a phone or ID number (an unquoted ``13800000000`` in a case file is an
        int): it then becomes the masked text. Other JSON scalars are kept; anything
        else is written as masked text (a date, a Path, a numpy float).
        """
        return self._walk(value)

    def _walker(self) -> Callable[[Any], Any]:
        """The recursive walk of :meth:`data`, built once per masker: a closure that calls
        itself is a reference cycle, and one per call would be garbage for the collector."""
        memo, text, number = self._memo, self.text, self._number

        # results are large: the memo is inlined, and a mapping's text, None and bool
        # values take no call of their own
        def mapping(v: dict[Any, Any]) -> dict[str, Any]:
            out = {}
            for k, x in v.items():
                key = memo.get(k) if type(k) is str else None
                if key is None:
                    key = text(str(k))  # a str is itself
                of = type(x)
                if of is str:
                    hit = memo.get(x)
                    out[key] = hit if hit is not None else text(x)
                elif x is None or of is bool:
                    out[key] = x
                else:
                    out[key] = walk(x)
            return out

        def walk(v: Any) -> Any:
            kind = type(v)
            if kind is str:
                hit = memo.get(v)
                return hit if hit is not None else text(v)
            if kind is dict:
                return mapping(v)
            if kind is list or kind is tuple:
                return [walk(x) for x in v]
            if v is None or kind is bool:
                return v
            if kind is int or kind is float:
                return v if -_SMALL < v < _SMALL else number(v)
            return self._other(v)

        return walk

    def _other(self, value: Any) -> Any:
        """What :meth:`data` makes of a value of no JSON type of its own: a mapping or
        sequence subclass as its plain form, anything else as its masked text."""
        if isinstance(value, dict):
            return self._walk(dict(value))
        if isinstance(value, list | tuple):
            return self._walk(list(value))
        return self.text(str(value))

    def _number(self, value: float) -> Any:
        text = str(value)
        masked = self.text(text)
        return value if masked == text else masked

    def result(self, item: ItemResult, **identity: Any) -> dict[str, Any]:
        """An item's result as it may leave the process: JSON-native and masked.

        ``identity`` (``nodeid``, ``file``, ``line``, ``trial``, ``trials``) is set on it.
        Its identity (id, node id, file) is the test data's own name and stays as written.
        """
        return self._identified(self.data(item.model_dump(mode="json")), item, identity)

    def result_typed(self, item: ItemResult, **identity: Any
                     ) -> tuple[dict[str, Any], ItemResult | None, dict[str, Any] | None]:
        """:meth:`result`; the masked result typed when masking changed nothing in it (then
        it is ``item`` itself, given ``identity``: no validation, no copy; the caller's
        result is made for its one item), else ``None``; and then also a copy of the
        result that shares no container with it (to tell later whether anyone changed it:
        ``==`` is a walk in C, a fraction of encoding it again)."""
        plain = item.model_dump(mode="json")
        masked: dict[str, Any] = self.data(plain)
        if masked != plain:
            return self._identified(masked, item, identity), None, None
        # the identity's fields are plain values (text, numbers, None): set as validated
        item.__dict__.update(identity)
        item.__pydantic_fields_set__.update(identity)
        return (self._identified(masked, item, identity), item,
                self._identified(plain, item, identity))

    @staticmethod
    def _identified(masked: dict[str, Any], item: ItemResult,
                    identity: dict[str, Any]) -> dict[str, Any]:
        masked.update(id=item.id, nodeid=item.nodeid, file=item.file)
        masked.update(identity)
        return masked
