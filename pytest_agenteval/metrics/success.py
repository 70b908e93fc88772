"""Task success (SPEC 6), per outcome class, and the scope decision (answer or decline)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..model.results import ItemResult
from ._family import Family, Folder, GateValue, MetricModel, Rate, RunData, RunMetrics, pct, rate

__all__ = ["OUTCOMES", "OutcomeClassesFamily", "ScopeFamily", "SuccessFamily", "SuccessModel",
           "Unit", "success_of_units"]

OUTCOMES = ("ANSWERABLE", "HANDOFF_REQUIRED", "OUT_OF_SCOPE", "CONTROL")
LEVEL_CREDIT = {"success": 1.0, "partial": 0.5, "failure": 0.0}


class SuccessModel(MetricModel):
    items: int
    errors: int
    not_evaluated: int
    evaluated: int
    levels: dict[str, int]
    success_rate: Rate
    pass_rate: Rate
    completion_rate_mean: float | None
    #: SPEC 6's avg_completion: the mean completion rate of the evaluated units with a task
    avg_completion: float | None = None


@dataclass(frozen=True)
class Unit:
    """What success is counted over: an item, or a scenario turn that declares an outcome."""

    cluster: str  # the item id (turns of one scenario are one cluster)
    status: str
    level: str | None
    completion: float | None = None

    @classmethod
    def of_item(cls, item: ItemResult) -> Unit:
        return cls(item.id, item.status, item.task.success_level, item.task.completion_rate)


_TURN_LEVEL = {"passed": "success", "review": "partial", "failed": "failure"}


def success_of_units(units: Sequence[Unit]) -> SuccessModel:
    """Task success (SPEC 6).

    With S, P, F the evaluated units at success, partial, failure (E = S + P + F):
    ``success_rate = (S + 0.5·P) / E``, ``pass_rate = (S + P) / E``. Units with
    status ``error`` are excluded and counted in ``errors``; other units whose
    level is ``None`` are counted in ``not_evaluated``. The interval of
    ``success_rate`` treats a partial as half a success; units are clustered by
    item. ``avg_completion`` is the mean completion rate over the units that have one.
    """
    ok = [u for u in units if u.status != "error"]
    scored = [(u.cluster, u.level) for u in ok if u.level is not None]
    counts = Counter(level for _, level in scored)
    rates = [u.completion for u in ok if u.completion is not None]
    mean = sum(rates) / len(rates) if rates else None
    return SuccessModel(
        items=len(units), errors=len(units) - len(ok), not_evaluated=len(ok) - len(scored),
        evaluated=len(scored), levels={lvl: counts.get(lvl, 0) for lvl in LEVEL_CREDIT},
        success_rate=rate((cid, LEVEL_CREDIT[lvl]) for cid, lvl in scored),
        pass_rate=rate((cid, float(lvl != "failure")) for cid, lvl in scored),
        completion_rate_mean=mean, avg_completion=mean,
    )


class _OutcomeUnits:
    """Per outcome class, one item at a time: each case that declares it, and each scenario
    turn that does (its level follows the turn's verdict: passed → success, review →
    partial, failed → failure)."""

    def __init__(self) -> None:
        self.per: dict[str, list[Unit]] = {o: [] for o in OUTCOMES}

    def add(self, item: ItemResult) -> None:
        per = self.per
        if item.kind == "case":
            if item.outcome in per:
                per[item.outcome].append(Unit.of_item(item))
            return
        for t in item.turns:
            if t.expected.outcome in per:
                per[t.expected.outcome].append(
                    Unit(item.id, t.status, _TURN_LEVEL.get(t.status)))


class _SuccessFolder(Folder[SuccessModel]):
    def __init__(self) -> None:
        self.units: list[Unit] = []

    def add(self, item: ItemResult) -> None:
        self.units.append(Unit.of_item(item))

    def result(self) -> SuccessModel:
        return success_of_units(self.units)


class SuccessFamily(Family[SuccessModel]):
    key = "success"
    model = SuccessModel
    order = 30
    gate = (GateValue("success_rate", lambda m, g: m.success_rate),
            GateValue("pass_rate", lambda m, g: m.pass_rate))

    def folder(self, run: RunData) -> _SuccessFolder:
        return _SuccessFolder()

    def summary(self, value: SuccessModel, metrics: RunMetrics) -> list[str]:
        avg = "" if value.avg_completion is None else \
            f" · avg_completion {value.avg_completion:.1%}"
        return [f"success: success_rate {pct(value.success_rate)} · pass_rate "
                f"{pct(value.pass_rate)}{avg} ({value.evaluated} evaluated, {value.errors} "
                f"errors excluded, {value.not_evaluated} not evaluated)"]


class OutcomeClassesModel(MetricModel):
    ANSWERABLE: SuccessModel
    HANDOFF_REQUIRED: SuccessModel
    OUT_OF_SCOPE: SuccessModel
    CONTROL: SuccessModel
    unclassified: int


class OutcomeClassesFamily(Family[OutcomeClassesModel]):
    """:func:`success_of_units` per expected outcome class (ANSWERABLE … CONTROL), over the
    cases and the scenario turns that declare one (:class:`_OutcomeUnits`).

    ``unclassified`` counts the cases without an outcome and the scenarios none of whose
    turns declares one.
    """

    key = "outcome_classes"
    model = OutcomeClassesModel

    def folder(self, run: RunData) -> _OutcomeClassesFolder:
        return _OutcomeClassesFolder()


class _OutcomeClassesFolder(Folder[OutcomeClassesModel]):
    def __init__(self) -> None:
        self.units = _OutcomeUnits()
        self.unclassified = 0

    def add(self, item: ItemResult) -> None:
        self.units.add(item)
        self.unclassified += item.outcome not in OUTCOMES and not any(
            t.expected.outcome in OUTCOMES for t in item.turns)

    def result(self) -> OutcomeClassesModel:
        per = {o: success_of_units(u) for o, u in self.units.per.items()}
        return OutcomeClassesModel(**per, unclassified=self.unclassified)


class ScopeModel(MetricModel):
    answerable: int
    answerable_answered: int
    out_of_scope: int
    out_of_scope_answered: int
    errors: int
    excluded: int
    in_scope_recall: Rate
    answer_precision: Rate
    scope_accuracy: Rate


class ScopeFamily(Family[ScopeModel]):
    """Answer or decline: ANSWERABLE against OUT_OF_SCOPE units only (cases, and scenario
    turns that declare the outcome: :class:`_OutcomeUnits`).

    With A = evaluated ANSWERABLE units, A✓ those correct (not failed),
    O = evaluated OUT_OF_SCOPE units, O✓ those correct (declined) and
    O✗ = O − O✓ (answered instead of declining):

    - ``in_scope_recall = A✓ / A``;
    - ``answer_precision = A✓ / (A✓ + O✗)``;
    - ``scope_accuracy = (A✓ + O✓) / (A + O)``.

    HANDOFF_REQUIRED and CONTROL items are in no denominator (``excluded``
    counts them); error items are excluded and counted in ``errors``. An item
    is correct when it is not ``failed`` (``review`` is a soft-quality flag of
    the judge, not a wrong scope decision).
    """

    key = "scope"
    model = ScopeModel

    def folder(self, run: RunData) -> _ScopeFolder:
        return _ScopeFolder()


class _ScopeFolder(Folder[ScopeModel]):
    def __init__(self) -> None:
        self.units = _OutcomeUnits()

    def add(self, item: ItemResult) -> None:
        self.units.add(item)

    def result(self) -> ScopeModel:
        per = self.units.per
        ans = [u for u in per["ANSWERABLE"] if u.status != "error"]
        oos = [u for u in per["OUT_OF_SCOPE"] if u.status != "error"]
        a_ok = [u for u in ans if u.status != "failed"]
        o_bad = [u for u in oos if u.status == "failed"]
        inside = len(per["ANSWERABLE"]) + len(per["OUT_OF_SCOPE"])
        return ScopeModel(
            answerable=len(ans), answerable_answered=len(a_ok),
            out_of_scope=len(oos), out_of_scope_answered=len(o_bad),
            errors=inside - len(ans) - len(oos),
            excluded=len(per["HANDOFF_REQUIRED"]) + len(per["CONTROL"]),
            in_scope_recall=rate((u.cluster, float(u.status != "failed")) for u in ans),
            answer_precision=rate([(u.cluster, 1.0) for u in a_ok]
                                  + [(u.cluster, 0.0) for u in o_bad]),
            scope_accuracy=rate((u.cluster, float(u.status != "failed")) for u in ans + oos),
        )
