"""The cyclic garbage collector paused while many acyclic objects are made at once, and
spared its walk over a finished run at exit."""

from __future__ import annotations

import atexit
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

__all__ = ["YOUNG", "paused", "restore", "roomier", "spare_the_exit"]

#: the youngest generation's threshold while a process runs case items (Python's is 700)
YOUNG = 10_000


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


def roomier() -> tuple[int, int, int] | None:
    """Collect the youngest generation every :data:`YOUNG` allocations, not every 700,
    while case items run (in a run of case items alone: the user's own tests keep
    Python's); what it was, to :func:`restore`, or ``None`` if left alone.

    A conversation's objects (its task, the HTTP exchange, the turn's result as it is
    built) live for the agent's latency, 100 ms and more, with 64 of them in flight: at
    700 allocations a collection comes every few milliseconds and walks each of them at
    least once (and again in the next generation) before they die of their reference
    counts. At 10,000, most die before any collection: in a 10,000-case run the
    collector's CPU went from 0.45–0.55 s to 0.05 s. Garbage in cycles waits at most
    10,000 allocations for its collection, as it waited 700: a few megabytes at most.
    Left alone where the threshold is 0 (collection off) or already higher, and in
    development mode.
    """
    was = gc.get_threshold()
    if sys.flags.dev_mode or not 0 < was[0] < YOUNG:
        return None
    gc.set_threshold(YOUNG, *was[1:])
    return was


def restore(was: tuple[int, int, int] | None) -> None:
    """The threshold :func:`roomier` changed, back as it was (unless someone changed it
    meanwhile)."""
    if was is not None and gc.get_threshold()[0] == YOUNG:
        gc.set_threshold(*was)
