"""Robustness pairs: every variant has its clean twin (same ``pair.group``, role
``clean``, or the item whose id the group is, when that item has no ``pair`` and no
challenge), and every pair group has exactly one clean item, among the files linted."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from ..casefile import LoadedItem
from ._registry import Dataset, Finding, LintFile, check

_Member = tuple[LintFile, LoadedItem]


def _groups(dataset: Dataset) -> tuple[dict[str, list[_Member]], set[str]]:
    """The members of each pair group, and the ids of the items that may be a group's
    implicit clean twin (no ``pair``, no challenge: what ``agenteval expand`` names)."""
    groups: dict[str, list[_Member]] = {}
    implicit: set[str] = set()
    for f, item in dataset.items():
        pair = item.model.pair
        if pair is not None:
            groups.setdefault(pair.group, []).append((f, item))
        elif item.model.challenge == "none":
            implicit.add(item.model.id)
    return groups, implicit


def _role(member: _Member) -> str:
    pair = member[1].model.pair
    assert pair is not None
    return pair.role


def _no_clean(group: str, variants: list[_Member], cleans: list[str]) -> Iterator[Finding]:
    near = difflib.get_close_matches(group, cleans, n=1)
    fix = (f"did you mean {near[0]!r}?" if near else
           f"add its clean case with pair: {{group: {group}, role: clean}}")
    for f, item in variants:
        yield f.finding((*item.where, "pair", "group"), f"variant {item.model.id} of pair "
                        f"group {group!r} has no clean twin", fix)


def _many_clean(group: str, cleans: list[_Member]) -> Iterator[Finding]:
    first = cleans[0][1]
    for f, item in cleans[1:]:
        yield f.finding((*item.where, "pair", "role"), f"pair group {group!r} has more than "
                        f"one clean item: {item.model.id} and {first.model.id} "
                        f"({first.location})", "keep one clean item per group: make this "
                        "one a variant, or give it a group of its own")


@check("pairs", scope="dataset")
def pairs(dataset: Dataset) -> Iterator[Finding]:
    """Each pair group has exactly one clean item, and it has at least one variant."""
    groups, implicit = _groups(dataset)
    with_clean = [g for g, members in groups.items() if any(_role(m) == "clean" for m in members)]
    for group, members in groups.items():
        cleans = [m for m in members if _role(m) == "clean"]
        variants = [m for m in members if _role(m) == "variant"]
        if not cleans and group in implicit:
            continue  # the variants of an unpaired clean item, grouped by its id
        if not cleans:
            yield from _no_clean(group, variants, with_clean)
        elif len(cleans) > 1:
            yield from _many_clean(group, cleans)
        elif not variants:
            f, item = cleans[0]
            yield f.finding((*item.where, "pair"), f"pair group {group!r} has no variant, so "
                            f"{item.model.id} is in no pair", "add a variant of it, or remove "
                            "its pair:", "warning")
