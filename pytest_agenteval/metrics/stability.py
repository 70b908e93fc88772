"""Stability across repeat trials (``--agenteval-repeat``): pass^k, flaky cases, judge spread."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..model.results import ItemResult
from ._family import Family, Folder, GateValue, MetricModel, Rate, RunData, RunMetrics, Wilson, pct
from .judge import Unit, mean, scores_by_dimension, verdicts
from .rates import clustered_rate, is_flaky, pass_k_table

__all__ = ["StabilityFamily", "StabilityModel"]


class PassHatK(MetricModel):
    k: int
    value: float | None


class FlakyCase(MetricModel):
    id: str
    passed: int
    trials: int


class ScoreSpread(MetricModel):
    mean: float | None
    std: float | None
    within_case_std: float | None
    n: int


class StabilityModel(MetricModel):
    repeated: bool
    reason: str | None
    trials_planned: int | None
    errors: int
    all_error_cases: list[str]
    cases: int
    trials: int
    pass_hat_k: list[PassHatK]
    flaky: int
    repeat_consistency: Wilson
    flaky_cases: list[FlakyCase]
    pass_rate: Rate
    judge_scores: dict[str, ScoreSpread]


def _std(values: Sequence[float]) -> float | None:
    if len(values) < 2:
        return None
    m = sum(values) / len(values)
    return math.sqrt(sum((x - m) ** 2 for x in values) / (len(values) - 1))


def _pooled_within_std(keyed: Sequence[tuple[Any, int]]) -> float | None:
    groups: dict[Any, list[int]] = defaultdict(list)
    for key, score in keyed:
        groups[key].append(score)
    dof = sum(len(g) - 1 for g in groups.values())
    if dof == 0:
        return None
    squares = sum((x - sum(g) / len(g)) ** 2 for g in groups.values() for x in g)
    return math.sqrt(squares / dof)


def _score_spread(judged: Sequence[Unit]) -> dict[str, ScoreSpread]:
    return {d: ScoreSpread(mean=mean([s for _, s in v]), std=_std([s for _, s in v]),
                           within_case_std=_pooled_within_std(v), n=len(v))
            for d, v in scores_by_dimension(judged).items()}


def _pass_hat_k(m: StabilityModel, k: int | None) -> float | None:
    return next((row.value for row in m.pass_hat_k if row.k == k), None)


class StabilityFamily(Family[StabilityModel]):
    """Repeat trials: per case c passed of n evaluated trials (errors left out).

    - ``pass_hat_k[k] = mean over cases of C(c, k) / C(n, k)``, k = 1..min n;
    - ``flaky``: cases with ``0 < c < n``; ``repeat_consistency`` = cases with
      c = 0 or c = n / cases (Wilson over cases);
    - ``pass_rate = Σc / Σn`` with the interval clustered by case;
    - per judge dimension: ``mean``, ``std`` (sample standard deviation over all
      scored trials) and ``within_case_std`` = √(Σ_case Σ_trial (x − x̄_case)² /
      Σ_case (n_case − 1)), the pooled spread of one turn's score across trials.

    Without ``trial`` on the results (no ``--agenteval-repeat``), ``repeated`` is
    false and the figures are empty or ``None``.
    """

    key = "stability"
    model = StabilityModel
    order = 50
    gate = (GateValue("pass_hat_k", lambda m, g: _pass_hat_k(m, g.k), needs="k"),
            GateValue("repeat_consistency", lambda m, g: m.repeat_consistency))

    def folder(self, run: RunData) -> _StabilityFolder:
        return _StabilityFolder()

    def summary(self, value: StabilityModel, metrics: RunMetrics) -> list[str]:
        if not value.repeated:
            return []
        ks = " · ".join(f"pass^{row.k} {pct(row.value)}" for row in value.pass_hat_k)
        return [f"stability: {ks}; flaky {len(value.flaky_cases)} of {value.cases}"]


class _StabilityFolder(Folder[StabilityModel]):
    def __init__(self) -> None:
        self.repeated = False
        self.trials_planned = self.errors = 0
        self.ids: set[str] = set()
        #: per case id: (passed, evaluated) trials, errors left out
        self.counts: dict[str, tuple[int, int]] = {}
        self.judged: list[Unit] = []

    def add(self, item: ItemResult) -> None:
        self.repeated = self.repeated or item.trial is not None
        self.trials_planned = max(self.trials_planned, item.trials or 0)
        self.ids.add(item.id)
        self.judged += verdicts(item)
        if item.status == "error":
            self.errors += 1
            return
        c, n = self.counts.get(item.id, (0, 0))
        self.counts[item.id] = (c + (item.status == "passed"), n + 1)

    def result(self) -> StabilityModel:
        repeated = self.repeated
        counts = self.counts if repeated else {}
        table = pass_k_table(list(counts.values()))
        return StabilityModel(
            repeated=repeated,
            reason=None if repeated else "the run has no repeated trials (--agenteval-repeat)",
            trials_planned=self.trials_planned or None,
            errors=self.errors if repeated else 0,
            all_error_cases=sorted(self.ids - set(counts)) if repeated else [],
            **table,
            flaky_cases=[FlakyCase(id=cid, passed=c, trials=n)
                         for cid, (c, n) in sorted(counts.items()) if is_flaky(c, n)],
            pass_rate=Rate(**clustered_rate(list(counts.values()))),
            judge_scores=_score_spread(self.judged) if repeated else {},
        )
