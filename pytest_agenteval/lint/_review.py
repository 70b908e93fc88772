"""Review: a ``review_status: reviewed`` item says who reviewed it (``reviewed_by``) and
when (``reviewed_at``, a real date, not in the future)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

from ._registry import Finding, ItemView, check


def _date_problem(text: str) -> str | None:
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        return f"reviewed_at {text!r} is not a date"
    return f"reviewed_at {text} is in the future" if day > dt.date.today() else None


@check("review")
def review(view: ItemView) -> Iterator[Finding]:
    """A reviewed item carries its reviewer and its review date."""
    model = view.item.model
    if model.reviewed_at is not None:
        problem = _date_problem(model.reviewed_at)
        if problem:
            yield view.finding(("reviewed_at",), problem, "write the day of the review, "
                               "YYYY-MM-DD")
    if model.review_status != "reviewed":
        return
    for name, what in (("reviewed_by", "who reviewed it"), ("reviewed_at", "when (YYYY-MM-DD)")):
        if getattr(model, name) is None:
            yield view.finding(("review_status",), f"reviewed, but {name} is missing",
                               f"add {name}: {what}, or set review_status: candidate")
