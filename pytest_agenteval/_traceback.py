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
    """``exc`` formatted from its first frame outside the plugin."""
    return "".join(traceback.format_exception(type(exc), exc, _user_tb(exc)))


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
