"""The user's traceback, without the plugin's frames: what a rule, a callable or an adapter
of theirs raised, and where in their code."""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from types import TracebackType

__all__ = ["user_location", "user_traceback"]

_PACKAGE = str(Path(__file__).resolve().parent) + os.sep


def _own(filename: str) -> bool:
    return filename.startswith(_PACKAGE)


def _user_tb(exc: BaseException) -> TracebackType | None:
    tb = exc.__traceback__
    while tb is not None and _own(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next  # the plugin's frames come first: drop them
    return tb


def user_traceback(exc: BaseException) -> str:
    """``exc`` formatted from its first frame outside the plugin, with its causes.

    Formatted here rather than by :func:`traceback.format_exception`: on Python 3.11 that
    calls :func:`ast.parse` for the ``^^^`` marks, and this may run on the engine's keeper
    thread while pytest's main thread parses a module it rewrites. 3.11 keeps one AST
    recursion counter for every thread, so the two corrupt it and either may raise
    ``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905).
    """
    chain: list[BaseException] = []
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen and len(chain) < 10:
        chain.append(link)
        seen.add(id(link))
        link = link.__cause__ or (None if link.__suppress_context__ else link.__context__)
    parts: list[str] = []
    for i, link in enumerate(reversed(chain)):
        if i:
            parts.append(_CAUSED if link.__cause__ is chain[-i] else _DURING)
        tb = _user_tb(link) if link is exc else link.__traceback__
        if tb is not None:
            parts.append("Traceback (most recent call last):\n")
            for frame in traceback.extract_tb(tb):
                parts.append(f'  File "{frame.filename}", line {frame.lineno}, in {frame.name}\n')
                if frame.line:
                    parts.append(f"    {frame.line.strip()}\n")
        parts += traceback.format_exception_only(type(link), link)
    return "".join(parts)


_CAUSED = "\nThe above exception was the direct cause of the following exception:\n\n"
_DURING = "\nDuring handling of the above exception, another exception occurred:\n\n"


def user_location(exc: BaseException, fallback: object = None) -> str:
    """``file:line`` of the deepest frame outside the plugin where ``exc`` was raised.

    When every frame is the plugin's (it raised about the user's code, e.g. a check
    that returned no outcome), the location of ``fallback`` (a function) is given.
    """
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not _own(f.filename)]
    if frames:
        return f"{_short(frames[-1].filename)}:{frames[-1].lineno}"
    code = getattr(fallback, "__code__", None)
    if code is not None:
        return f"{_short(code.co_filename)}:{code.co_firstlineno}"
    return ""


def _short(filename: str) -> str:
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith("..") else rel
