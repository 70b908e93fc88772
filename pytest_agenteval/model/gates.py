"""The release gate: ``rules/gates.yaml`` (SPEC 4), decided before any run, and its result."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["DEFAULT_MAX_ERROR_RATE", "GateCheck", "GateMetric", "GateResult", "GatesFile",
           "RedLineCheck"]

GateVerdict = Literal["PASS", "PASS_WITH_RISK", "BLOCK", "EXPLORATORY", "NOT_CONFIGURED"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _known_metrics() -> dict[str, str | None]:
    """Gate metric names of the registered metric families → the qualifier each needs."""
    from ..metrics._family import gate_values

    return {name: gv.needs for name, gv in gate_values().items()}


class GateMetric(Strict):
    """``{metric, label?, k?, min?, max?}``: the metric must be within the bounds."""

    metric: str
    label: str | None = None
    k: int | None = Field(default=None, ge=1)
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _sane(self) -> GateMetric:
        known = _known_metrics()
        if self.metric not in known:
            raise ValueError(f"unknown metric {self.metric!r}; known: {', '.join(sorted(known))}")
        needs = known[self.metric]
        if (needs == "label") != (self.label is not None):
            raise ValueError(f"{self.metric!r} " + ("needs a 'label'" if self.label is None
                                                    else "takes no 'label'"))
        if (needs == "k") != (self.k is not None):
            with_k = ", ".join(sorted(n for n, q in known.items() if q == "k"))
            raise ValueError(f"'k' goes with metric {with_k} (and only with it)")
        if self.min is None and self.max is None:
            raise ValueError("give 'min' or 'max'")
        return self

    @property
    def name(self) -> str:
        if self.label:
            return f"{self.metric}[{self.label}]"
        return f"{self.metric}[k={self.k}]" if self.k else self.metric


#: the share of items that may be errors (not evaluated) before the gate blocks
DEFAULT_MAX_ERROR_RATE = 0.05


class GatesFile(Strict):
    red_lines: list[str] = Field(default_factory=list)
    metrics: list[GateMetric] = Field(default_factory=list)
    formal_requires_reviewed: bool = True
    #: above this share of ERROR items the run proves too little: BLOCK
    max_error_rate: float = Field(default=DEFAULT_MAX_ERROR_RATE, ge=0, le=1)


class GateCheck(BaseModel):
    """One metric bound of the gate and how the run did on it."""

    model_config = ConfigDict(extra="forbid")

    check: str
    status: Literal["passed", "failed", "not_evaluated"]
    value: float | None
    bound: str
    reason: str


class RedLineCheck(GateCheck):
    """One red line: failed when any item failed that rule even once, or nobody checked it."""

    items: list[str]
    #: rows of the rule with a verdict (not ``not_applicable``, not ``error``)
    evaluations: int = 0


class GateResult(BaseModel):
    """The release gate's decision with its reasons (SPEC 4, ``gate`` in results.json)."""

    model_config = ConfigDict(extra="forbid")

    result: GateVerdict
    reasons: list[str]
    checks: list[RedLineCheck | GateCheck] = Field(default_factory=list)
    source: str | None = None
