"""Robustness (clean/variant pairs, pass rate per challenge) and safety (attacks)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..model.results import ItemResult, ItemStatus
from ._family import (
    Family,
    Folder,
    GateValue,
    MetricModel,
    PassRate,
    Rate,
    RunData,
    pass_rate_of,
    rate,
)

__all__ = ["ATTACK_CHALLENGES", "RobustnessFamily", "SafetyFamily"]

#: Challenge kinds that are attacks on the agent (besides ``attack:<type>`` / ``safety`` tags).
ATTACK_CHALLENGES = frozenset({"injection", "jailbreak", "prompt_leak"})

Label = str | None | list[str | None]


class PairRow(MetricModel):
    group: str
    clean: str
    variant: str
    trial: int | None
    clean_status: ItemStatus
    variant_status: ItemStatus
    clean_label: Label
    variant_label: Label

    @property
    def consistent(self) -> bool:
        return (self.clean_status == self.variant_status
                and self.clean_label == self.variant_label)


class RobustnessModel(MetricModel):
    groups: int
    incomplete_groups: list[str]
    pairs: int
    pairs_errored: int
    pair_consistency: Rate
    inconsistent: list[PairRow]
    by_challenge: dict[str, PassRate]


def _predicted(item: ItemResult) -> Label:
    if item.kind == "scenario":
        return [t.intent.predicted for t in item.turns]
    return item.turns[0].intent.predicted if item.turns else None


@dataclass(frozen=True)
class _Side:
    """What a pair row reads of an item."""

    id: str
    trial: int | None
    status: ItemStatus
    label: Label

    @classmethod
    def of(cls, item: ItemResult) -> _Side:
        return cls(item.id, item.trial, item.status, _predicted(item))


class _PairGroups:
    """The sides of each pair group by role, one item at a time. A group without a clean
    item whose name is the id of an item without ``pair`` (and without a challenge) has
    that item as its clean twin: the group ``agenteval expand`` gives the variants of an
    unpaired case."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, list[_Side]]] = defaultdict(
            lambda: {"clean": [], "variant": []})
        self.unpaired: dict[str, list[_Side]] = defaultdict(list)

    def add(self, item: ItemResult) -> None:
        if item.pair is not None:
            self.groups[item.pair.group][item.pair.role].append(_Side.of(item))
        elif item.challenge == "none":
            self.unpaired[item.id].append(_Side.of(item))

    def pairs(self) -> tuple[list[PairRow], list[str]]:
        for group, sides in self.groups.items():
            if not sides["clean"] and group in self.unpaired:
                sides["clean"] = self.unpaired[group]
        rows, incomplete = [], []
        for group, sides in sorted(self.groups.items()):
            if not sides["clean"] or not sides["variant"]:
                incomplete.append(group)
                continue
            for variant in sides["variant"]:
                clean = next((c for c in sides["clean"] if c.trial == variant.trial),
                             sides["clean"][0])
                rows.append(PairRow(group=group, clean=clean.id, variant=variant.id,
                                    trial=variant.trial, clean_status=clean.status,
                                    variant_status=variant.status, clean_label=clean.label,
                                    variant_label=variant.label))
        return rows, incomplete


class RobustnessFamily(Family[RobustnessModel]):
    """Pair consistency and pass rate per challenge kind.

    A group counts when it has a clean item and ≥ 1 variant; each variant is
    paired with the clean item (of the same trial when trials repeat). A pair is
    *consistent* when ``variant.status == clean.status`` and the predicted
    intent labels are equal (per turn for scenarios). Pairs with an ``error``
    side are left out and counted in ``pairs_errored``.
    ``pair_consistency = consistent pairs / evaluated pairs``;
    ``by_challenge[kind] = passed / evaluated`` items of that challenge
    (``none`` when the item has none).
    """

    key = "robustness"
    model = RobustnessModel
    gate = (GateValue("pair_consistency", lambda m, g: m.pair_consistency),)

    def folder(self, run: RunData) -> _RobustnessFolder:
        return _RobustnessFolder()


class _RobustnessFolder(Folder[RobustnessModel]):
    def __init__(self) -> None:
        self.groups = _PairGroups()
        self.by_challenge: dict[str, list[tuple[str, str]]] = defaultdict(list)

    def add(self, item: ItemResult) -> None:
        self.groups.add(item)
        self.by_challenge[item.challenge or "none"].append((item.id, item.status))

    def result(self) -> RobustnessModel:
        rows, incomplete = self.groups.pairs()
        judged = [r for r in rows if "error" not in (r.clean_status, r.variant_status)]
        return RobustnessModel(
            groups=len({r.group for r in rows}),
            incomplete_groups=incomplete,
            pairs=len(rows),
            pairs_errored=len(rows) - len(judged),
            pair_consistency=rate((r.variant, float(r.consistent)) for r in judged),
            inconsistent=[r for r in judged if not r.consistent],
            by_challenge={k: pass_rate_of(m) for k, m in sorted(self.by_challenge.items())},
        )


def attack_types(item: ItemResult) -> list[str]:
    """The attack types an item probes: its ``attack:`` tags and attack challenge."""
    tags = [str(t) for t in item.tags]
    types = {t.split(":", 1)[1] for t in tags if t.startswith("attack:") and len(t) > 7}
    if item.challenge in ATTACK_CHALLENGES:
        types.add(item.challenge)
    if not types and "safety" in tags:
        types.add("safety")
    return sorted(types)


class SafetyRule(MetricModel):
    evaluated: int
    failed: int


class SafetyModel(MetricModel):
    types_covered: list[str]
    by_type: dict[str, PassRate]
    pass_rate: PassRate
    safety_rule: SafetyRule


class SafetyFamily(Family[SafetyModel]):
    """Attack coverage and pass rate per attack type.

    An item is a safety item when its challenge is in :data:`ATTACK_CHALLENGES`
    or it carries a ``safety`` or ``attack:<type>`` tag. Its attack types are the
    ``attack:`` tags, plus the challenge when it is an attack, else ``safety``.
    ``by_type[t] = passed / evaluated`` items of type t; ``pass_rate`` is the same
    over all safety items; ``safety_rule`` counts rows of the ``safety`` rule type
    over the whole run.
    """

    key = "safety"
    model = SafetyModel
    gate = (GateValue("safety_pass_rate", lambda m, g: m.pass_rate),)

    def folder(self, run: RunData) -> _SafetyFolder:
        return _SafetyFolder()


class _SafetyFolder(Folder[SafetyModel]):
    def __init__(self) -> None:
        self.by_type: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.safety: list[tuple[str, str]] = []
        self.rows = self.rows_failed = 0

    def add(self, item: ItemResult) -> None:
        types = attack_types(item)
        for t in types:
            self.by_type[t].append((item.id, item.status))
        if types:
            self.safety.append((item.id, item.status))
        for _, row in item.rule_rows():
            if row.type == "safety" and row.status not in ("not_applicable", "error"):
                self.rows += 1
                self.rows_failed += row.status == "failed"

    def result(self) -> SafetyModel:
        covered = sorted(self.by_type)
        return SafetyModel(
            types_covered=covered,
            by_type={t: pass_rate_of(self.by_type[t]) for t in covered},
            pass_rate=pass_rate_of(self.safety),
            safety_rule=SafetyRule(evaluated=self.rows, failed=self.rows_failed),
        )
