"""The cyclic garbage collector paused while many acyclic objects are made at once, and
spared its walk over a finished run at exit."""

from __future__ import annotations

import atexit
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

__all__ = ["paused", "spare_the_exit"]


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


@cache  # once per process
def spare_the_exit() -> None:
    """Exempt everything alive at exit from the interpreter's last collections.

    Once its exit handlers have run, the interpreter tears its modules down and collects
    the cyclic garbage more than once on the way, walking every object still tracked:
    0.7 to 1 s after a 10,000-case run, most of the time from the last reply to the exit.
    What it walks then is the run's (pytest's reports and items, the plugin's plans), and
    freeing it only returns memory to a process that is ending; the exit handler
    registered here freezes it instead (``gc.freeze()``, 0.05 s).

    Only where the plugin is active, once per process. Exit handlers run after pytest has
    returned, so pytest's own collections at unconfigure (which report the unraisable
    exceptions of the tests' garbage) have run. The handlers registered before this one
    run after it as they would anyway; cycles they drop are never collected. Not in
    development mode (``python -X dev``), where the warnings of garbage collected at
    exit are wanted.
    """
    if not sys.flags.dev_mode:
        atexit.register(gc.freeze)
