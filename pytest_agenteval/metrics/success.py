"""Task success (SPEC 6), per outcome class, and the scope decision (answer or decline)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..model.results import ItemResult
from ._family import Family, GateValue, MetricModel, Rate, RunData, RunMetrics, evaluated, pct, rate

__all__ = ["OUTCOMES", "OutcomeClassesFamily", "ScopeFamily", "SuccessFamily", "SuccessModel",
           "success_of"]

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


def success_of(items: Sequence[ItemResult]) -> SuccessModel:
    """Task success over ``task.success_level`` (SPEC 6).

    With S, P, F the evaluated items at success, partial, failure (E = S + P + F):
    ``success_rate = (S + 0.5·P) / E``, ``pass_rate = (S + P) / E``. Items with
    status ``error`` are excluded and counted in ``errors``; other items whose
    ``success_level`` is ``None`` are counted in ``not_evaluated``. The interval
    of ``success_rate`` treats a partial as half a success.
    """
    ok = evaluated(items)
    scored = [(i.id, i.task.success_level) for i in ok if i.task.success_level is not None]
    counts = Counter(level for _, level in scored)
    rates = [i.task.completion_rate for i in ok if i.task.completion_rate is not None]
    return SuccessModel(
        items=len(items), errors=len(items) - len(ok), not_evaluated=len(ok) - len(scored),
        evaluated=len(scored), levels={lvl: counts.get(lvl, 0) for lvl in LEVEL_CREDIT},  # type: ignore[call-overload]
        success_rate=rate((cid, LEVEL_CREDIT[lvl]) for cid, lvl in scored),
        pass_rate=rate((cid, float(lvl != "failure")) for cid, lvl in scored),
        completion_rate_mean=sum(rates) / len(rates) if rates else None,
    )


class SuccessFamily(Family[SuccessModel]):
    key = "success"
    model = SuccessModel
    order = 30
    gate = (GateValue("success_rate", lambda m, g: m.success_rate),
            GateValue("pass_rate", lambda m, g: m.pass_rate))

    def compute(self, run: RunData) -> SuccessModel:
        return success_of(run.items)

    def summary(self, value: SuccessModel, metrics: RunMetrics) -> list[str]:
        return [f"success: success_rate {pct(value.success_rate)} · pass_rate "
                f"{pct(value.pass_rate)} ({value.evaluated} evaluated, {value.errors} "
                f"errors excluded, {value.not_evaluated} not evaluated)"]


class OutcomeClassesModel(MetricModel):
    ANSWERABLE: SuccessModel
    HANDOFF_REQUIRED: SuccessModel
    OUT_OF_SCOPE: SuccessModel
    CONTROL: SuccessModel
    unclassified: int


class OutcomeClassesFamily(Family[OutcomeClassesModel]):
    """:func:`success_of` per expected outcome class (ANSWERABLE … CONTROL).

    ``unclassified`` counts items without an outcome (scenarios, whose outcome is per turn).
    """

    key = "outcome_classes"
    model = OutcomeClassesModel

    def compute(self, run: RunData) -> OutcomeClassesModel:
        per = {o: success_of([i for i in run.items if i.outcome == o]) for o in OUTCOMES}
        return OutcomeClassesModel(
            **per, unclassified=sum(1 for i in run.items if i.outcome not in OUTCOMES))


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
    """Answer or decline: ANSWERABLE against OUT_OF_SCOPE items only.

    With A = evaluated ANSWERABLE items, A✓ those correct (not failed),
    O = evaluated OUT_OF_SCOPE items, O✓ those correct (declined) and
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

    def compute(self, run: RunData) -> ScopeModel:
        inside = [i for i in run.items if i.outcome in ("ANSWERABLE", "OUT_OF_SCOPE")]
        ans = [i for i in evaluated(inside) if i.outcome == "ANSWERABLE"]
        oos = [i for i in evaluated(inside) if i.outcome == "OUT_OF_SCOPE"]
        a_ok = [i for i in ans if i.status != "failed"]
        o_bad = [i for i in oos if i.status == "failed"]
        return ScopeModel(
            answerable=len(ans), answerable_answered=len(a_ok),
            out_of_scope=len(oos), out_of_scope_answered=len(o_bad),
            errors=len(inside) - len(ans) - len(oos),
            excluded=sum(1 for i in run.items if i.outcome in ("HANDOFF_REQUIRED", "CONTROL")),
            in_scope_recall=rate((i.id, float(i.status != "failed")) for i in ans),
            answer_precision=rate([(i.id, 1.0) for i in a_ok] + [(i.id, 0.0) for i in o_bad]),
            scope_accuracy=rate((i.id, float(i.status != "failed")) for i in ans + oos),
        )
