"""The release gate, ``rules/gates.yaml`` (SPEC 4), decided before any run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["METRICS", "PER_LABEL", "GateMetric", "GatesFile"]

#: gate metric names → where their value is in the run's metrics
PER_LABEL = frozenset({"precision", "recall", "f1", "support"})
METRICS = frozenset({
    *PER_LABEL, "macro_f1", "micro_f1", "accuracy",
    "hard_rule_pass_rate", "success_rate", "pass_rate",
    "judge_availability", "judge_mean", "judge_review_rate", "fact_risk_rate",
    "knowledge_coverage", "pair_consistency", "safety_pass_rate",
    "agent_error_rate", "latency_p50_ms", "latency_p95_ms", "pass_hat_k", "repeat_consistency",
})


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GateMetric(Strict):
    """``{metric, label?, k?, min?, max?}``: the metric must be within the bounds."""

    metric: str
    label: str | None = None
    k: int | None = Field(default=None, ge=1)
    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _sane(self) -> GateMetric:
        if self.metric not in METRICS:
            raise ValueError(f"unknown metric {self.metric!r}; known: {', '.join(sorted(METRICS))}")
        if (self.metric in PER_LABEL) != (self.label is not None):
            raise ValueError(f"{self.metric!r} " + ("needs a 'label'" if self.label is None
                                                    else "takes no 'label'"))
        if (self.metric == "pass_hat_k") != (self.k is not None):
            raise ValueError("'k' goes with metric pass_hat_k (and only with it)")
        if self.min is None and self.max is None:
            raise ValueError("give 'min' or 'max'")
        return self

    @property
    def name(self) -> str:
        if self.label:
            return f"{self.metric}[{self.label}]"
        return f"{self.metric}[k={self.k}]" if self.k else self.metric


class GatesFile(Strict):
    red_lines: list[str] = Field(default_factory=list)
    metrics: list[GateMetric] = Field(default_factory=list)
    formal_requires_reviewed: bool = True
