"""The cyclic garbage collector paused while many acyclic objects are made at once."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused"]


@contextmanager
def paused() -> Iterator[None]:
    """No cyclic collection inside: objects built in bulk that form no cycle (a parsed
    file's values, a run's metrics and report) are freed by their reference counts anyway,
    and the collector's passes over them while they grow cost more than building them
    (collection walks everything not frozen, again at each generation's threshold).
    Restores the collector's state as it was (a caller's own pause is kept)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
