"""``agenteval compare A B``: what changed from run A (the baseline) to run B (SPEC 7).

Comparability comes first: the two records must have run the same dataset
(``run.dataset.sha256``), rule ledger, judge model, judge rubric and repeat count;
the taxonomy, the dataset's name and version (its manifest's) and the item set are
shown beside them but do not decide; when the hashes differ and B's manifest names A's
version as its ``parent``, the dataset line says that B grew from A. Items are
matched by id (and trial, with ``--agenteval-repeat``) and sorted into *fixed*
(failed/error → passed/review), *regressed* (the reverse), other status changes
(passed ↔ review, failed ↔ error) and items whose verdict stayed but whose failed
rules, predicted intent, judge verdict or success level changed.

Rates get B − A with a 95% interval by Newcombe's hybrid score method (method 10
of Newcombe 1998), built from each run's own interval::

    d     = pB − pA
    lower = d − √((pB − lB)² + (uA − pA)²)
    upper = d + √((uB − pB)² + (pA − lA)²)

A rate the record keeps as a bare number (``pass_rate_items``, intent accuracy and
recall, the agent error rate) gets its interval recomputed from the record's cases
with :func:`~..metrics.rates.rate_by_case` (Wilson, clustered by case id when an id
contributes several turns or trials); when the recount does not give the recorded
value the rate is shown without an interval. Other figures (judge mean, P95
latency, macro F1, average completion) are shown as A, B and B − A.

:func:`compare_runs` builds a :class:`Comparison`, :func:`verdict` applies the CI
gate to it (exit 0, 1 or 3), :func:`render_text`, :func:`render_html` and
:func:`to_json` write it out; :func:`run` is the ``agenteval compare`` command.
Every text taken from a record is masked again (phones, ID numbers, e-mails) and is
escaped for the terminal (:func:`~.text.safe`) or the page (:func:`~._page.h`).
"""

from __future__ import annotations

from ._command import run
from ._gate import Limits, Verdict, verdict
from ._html import render_html
from ._metrics import Comparison, Interval, MetricDelta, compare_runs, newcombe
from ._records import Check, CompareError, ItemChange, RedLine, change_kind, load_record
from ._text import render_text, to_json

__all__ = ["Check", "CompareError", "Comparison", "Interval", "ItemChange", "Limits",
           "MetricDelta", "RedLine", "Verdict", "change_kind", "compare_runs",
           "load_record", "newcombe", "render_html", "render_text", "run", "to_json",
           "verdict"]
