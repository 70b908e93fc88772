"""Histories: only ``user`` and ``assistant`` speak (the schema enforces the roles), the
two take turns, and a history ends with the assistant (the next message, the case's
input or the scenario's first turn, is the user's)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.cases import Case, HistoryItem
from ._registry import Finding, ItemView, check


def _history(view: ItemView) -> tuple[tuple[str, ...], list[HistoryItem]]:
    model = view.item.model
    if isinstance(model, Case):
        return ("request", "history"), model.request.history
    return ("history",), model.history


@check("history")
def history(view: ItemView) -> Iterator[Finding]:
    """History messages alternate user / assistant and end with the assistant's."""
    base, messages = _history(view)
    for i in range(1, len(messages)):
        if messages[i].role == messages[i - 1].role:
            role = messages[i].role
            yield view.finding((*base, i, "role"), f"two {role} messages in a row "
                               f"(history[{i - 1}] and history[{i}])",
                               "merge them into one message, or put the other side's "
                               "message between them")
    if messages and messages[-1].role != "assistant":
        last = len(messages) - 1
        yield view.finding((*base, last, "role"), "the history ends with a user message, and "
                           "the input that follows is the user's too",
                           "end the history with the assistant's reply, or move this message "
                           "into the input")
