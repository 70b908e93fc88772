"""Coverage: the matrix of behaviour × priority, challenge and source, and the real mix
compared with the one the dataset's manifest declares.

Every item counts once per dimension. A scenario whose turns expect several labels
counts under each in the matrix; in the ``behavior`` mix it counts ``1/k`` for each of
its ``k`` labels, so the real shares sum to 1 like the declared ones. No value is
written ``(none)`` (an item without ``test_family``, a turn without a behaviour).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..casefile import LoadedItem
from ..model.dataset import MixDimension
from ._registry import Dataset, Finding, check

__all__ = ["matrix", "real_mix"]

NONE = "(none)"
_PRIORITIES = ("P0", "P1", "P2")


def _behaviors(item: LoadedItem) -> list[str]:
    return list(item.plan.meta["behaviors"]) or [NONE]


def _value(item: LoadedItem, dim: MixDimension) -> str:
    value = getattr(item.model, dim)
    return NONE if value is None else str(value)


def real_mix(items: list[LoadedItem], dim: MixDimension) -> dict[str, float]:
    """The share of each value of ``dim`` among ``items`` (empty without items)."""
    counts: dict[str, float] = {}
    for item in items:
        if dim == "behavior":
            labels = _behaviors(item)
            for label in labels:
                counts[label] = counts.get(label, 0.0) + 1 / len(labels)
        else:
            key = _value(item, dim)
            counts[key] = counts.get(key, 0.0) + 1
    total = len(items)
    return {k: v / total for k, v in counts.items()} if total else {}


def _columns(items: list[LoadedItem]) -> list[tuple[MixDimension, str]]:
    challenges = sorted({_value(i, "challenge") for i in items} - {"none"})
    sources = sorted({_value(i, "source") for i in items})
    return ([("priority", p) for p in _PRIORITIES]
            + [("challenge", c) for c in ["none", *challenges]]
            + [("source", s) for s in sources])


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                               for c, (cell, w) in enumerate(zip(r, widths, strict=True)))
                     .rstrip() for r in rows)


def matrix(items: list[LoadedItem]) -> str:
    """Items per behaviour (rows) and per priority, challenge and source (columns)."""
    if not items:
        return "coverage: no items"
    columns = _columns(items)
    by_label: dict[str, list[LoadedItem]] = {}
    for item in items:
        for label in _behaviors(item):
            by_label.setdefault(label, []).append(item)
    rows = [["behaviour", *(v for _, v in columns), "items"]]
    for label in sorted(by_label, key=lambda x: (x == NONE, x)):
        group = by_label[label]
        rows.append([label, *(str(sum(_value(i, d) == v for i in group)) for d, v in columns),
                     str(len(group))])
    rows.append(["all items", *(str(sum(_value(i, d) == v for i in items)) for d, v in columns),
                 str(len(items))])
    head = "coverage (items; priority | challenge | source):"
    return f"{head}\n{_table(rows)}"


def _mix_findings(dataset: Dataset, dim: MixDimension,
                  declared: dict[str, float]) -> Iterator[Finding]:
    ref = dataset.manifest
    assert ref is not None
    real = real_mix(dataset.dataset_items(), dim)
    tol = ref.model.tolerance
    where = ref.doc.file
    for value, share in declared.items():
        at = ("mix", dim, value)
        got = real.get(value, 0.0)
        if got == 0:
            yield Finding(ref.doc.at(at), f"mix.{dim}.{value}", f"declared {share:.1%}, but no "
                          "item has it", f"add items with {dim}: {value}, or update the mix "
                          f"in {where}", "warning")
        elif abs(got - share) > tol:
            yield Finding(ref.doc.at(at), f"mix.{dim}.{value}", f"declared {share:.1%}, real "
                          f"{got:.1%} ({got - share:+.1%}, beyond the tolerance {tol:g})",
                          f"rebalance the items, or update the mix in {where}", "warning")
    for value, got in sorted(real.items()):
        if value not in declared and got > tol:
            yield Finding(ref.doc.at(("mix", dim)), f"mix.{dim}", f"{value} is {got:.1%} of "
                          "the items but not in the declared mix", f"declare it in {where}",
                          "warning")


@check("mix", scope="dataset")
def mix(dataset: Dataset) -> Iterator[Finding]:
    """Each declared share is met within the manifest's tolerance; a declared value no
    item has, or an undeclared one beyond the tolerance, is a warning."""
    if dataset.manifest is None or dataset.partial is not None:
        return
    for dim, declared in dataset.manifest.model.mix.items():
        yield from _mix_findings(dataset, dim, declared)
