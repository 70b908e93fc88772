"""``agenteval lint``: checks of what case files mean, beyond their schema.

One module per family of checks, each check a small function registered with
:func:`check` (see :mod:`._registry`):

* ``knowledge_points`` (:mod:`._knowledge`) — a knowledge point's path exists in the
  knowledge of its case or turn and holds the stated value;
* ``handoff_expectation`` (:mod:`._expectations`) — a HANDOFF_REQUIRED expectation
  carries a ``handoff`` and a ``no_commitment`` rule;
* ``pairs`` (:mod:`._pairs`) — every variant has its clean twin, one clean item a group;
* ``history`` (:mod:`._history`) — user and assistant take turns, the assistant last;
* ``personal_data`` (:mod:`._privacy`) — no real-looking phone, ID number, e-mail or key;
* ``review`` (:mod:`._review`) — a reviewed item names its reviewer and date;
* ``references`` (:mod:`._references`) — labels, intent codes and rule ids exist;
* ``mix`` (:mod:`._coverage`) — the real mix against the manifest's declared one.
"""

from __future__ import annotations

from . import (  # noqa: F401  (each family registers its checks when imported)
    _coverage,
    _expectations,
    _history,
    _knowledge,
    _pairs,
    _privacy,
    _references,
    _review,
)
from ._registry import CHECKS, Dataset, Finding, ItemView, LintFile, Severity, check
from ._run import LintReport, find_manifest, lint_files

__all__ = ["CHECKS", "Dataset", "Finding", "ItemView", "LintFile", "LintReport", "Severity",
           "check", "find_manifest", "lint_files"]
