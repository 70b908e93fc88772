"""Personal data and keys in a case file: no real-looking phone number, ID number or
e-mail address, and no API key, anywhere in its text (comments too), unless the project's
privacy allow-list (``privacy.allow`` in agenteval.yaml) names it.

Found with the masker's own patterns (:meth:`~pytest_agenteval.privacy.Masker.find`) and
the ``safety`` rule type's secret shapes. *Real-looking* leaves out what is plainly a
placeholder:

* a mobile number whose eight subscriber digits are two blocks of four, each one digit
  repeated or a straight run (``138 0000 0000``, ``139 1234 5678``, ``159 0000 1234``);
* an ID number whose check digit or birth date is wrong (a real one has both right);
* an e-mail address at a reserved domain (``example.com``, ``*.example``, ``*.test``,
  ``*.invalid``, ``*.localhost``; RFC 2606).

A key is never a placeholder. A finding shows the value masked, never as written.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import unicodedata
from collections.abc import Iterator

from ..model import field_name
from ..privacy import Masker, PersonalDatum
from ..rules._judged import find_secrets
from ..yamlio import Location
from ._registry import Finding, LintFile, check

__all__ = ["placeholder_phone", "real_email", "real_id_number"]

_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_RESERVED = (".example.com", ".example.net", ".example.org", ".example", ".test", ".invalid",
             ".localhost")
_FIX = "replace it with a placeholder (138 0000 0000, an address at example.com), or add it " \
       "to privacy.allow in agenteval.yaml"


def _block(b: str) -> bool:
    steps = {int(y) - int(x) for x, y in itertools.pairwise(b)}
    return len(steps) == 1 and steps <= {-1, 0, 1}


def placeholder_phone(digits: str) -> bool:
    """A mobile number plainly made up: its 8 subscriber digits are two 4-digit blocks,
    each one digit repeated or a straight run (13800000000, 13912345678)."""
    sub = digits[-8:]
    return len(sub) == 8 and _block(sub[:4]) and _block(sub[4:])


def real_id_number(digits: str, raw: str) -> bool:
    """An 18-character mainland ID number with a valid birth date and check digit."""
    if len(digits) < 17:
        return False
    try:
        born = dt.date(int(digits[6:10]), int(digits[10:12]), int(digits[12:14]))
    except ValueError:
        return False
    if not dt.date(1900, 1, 1) <= born <= dt.date.today():
        return False
    total = sum(int(d) * w for d, w in zip(digits[:17], _ID_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == unicodedata.normalize("NFKC", raw[-1:]).upper()


def real_email(raw: str) -> bool:
    """An e-mail address at a domain that is not reserved for examples (RFC 2606)."""
    domain = raw.rpartition("@")[2].lower()
    return domain != "localhost" and not any(
        f".{domain}".endswith(r) for r in _RESERVED)


def _real(datum: PersonalDatum) -> bool:
    if datum.kind == "phone":
        return not placeholder_phone(datum.digits)
    if datum.kind == "id_number":
        return real_id_number(datum.digits, datum.raw)
    return real_email(datum.raw)


#: shows a finding masked, whatever privacy.mask says
_SHOW = Masker()
_WORDS = {"phone": "phone number", "id_number": "ID number", "email": "e-mail address"}


class _Fields:
    """The field a line of the file belongs to: the deepest key or item on it, else the
    last one before it."""

    def __init__(self, f: LintFile) -> None:
        deepest: dict[int, tuple[str | int, ...]] = {}
        for path, line in f.doc.lines.items():
            if path and len(path) >= len(deepest.get(line, ())):
                deepest[line] = path
        self.lines = sorted(deepest)
        self.paths = [deepest[n] for n in self.lines]

    def at(self, line: int) -> str:
        i = bisect.bisect_right(self.lines, line) - 1
        return field_name(self.paths[i]) if i >= 0 else ""


@check("personal_data", scope="file")
def personal_data(f: LintFile) -> Iterator[Finding]:
    """No real-looking phone number, ID number, e-mail address or key in the file."""
    mask = f.project.masker
    fields = _Fields(f)
    for n, line in enumerate(f.text.split("\n"), start=1):
        where = Location(f.doc.file, n)
        for datum in mask.find(line):
            if _real(datum):
                yield Finding(where, fields.at(n), f"a real-looking {_WORDS[datum.kind]} "
                              f"({_SHOW.text(datum.raw)})", _FIX)
        for m in find_secrets(line):
            if m.group(0) not in mask.allow:
                yield Finding(where, fields.at(n), f"an API key or credential "
                              f"({m.group(0)[:6]}…)", "remove it: a case file is shared and "
                              "reported; take keys from the environment")
