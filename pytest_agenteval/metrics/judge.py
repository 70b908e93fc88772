"""L3 judge figures and knowledge use, over judged turns (a case is one turn)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pydantic import Field

from ..model.cases import DIMENSIONS
from ..model.results import ItemResult, JudgeResult
from ._family import Family, Folder, GateValue, MetricModel, Rate, RunData, RunMetrics, pct, rate
from .summary import percentile

__all__ = ["JudgeFamily", "JudgeModel", "KnowledgeFamily", "Verdict", "review_entries",
           "review_queue", "scores_by_dimension", "verdicts"]

JUDGED = ("passed", "review", "failed")


class Verdict(NamedTuple):
    """What the figures read of a judged turn's :class:`JudgeResult` (a folder keeps this,
    not the result with its reasons)."""

    status: str
    scores: dict[str, int | None] | None
    fact_risk: bool | None
    latency_ms: float | None


#: ((item id, turn index), verdict)
Unit = tuple[tuple[str, int], JudgeResult | Verdict]


def _owed(item: ItemResult, verdict: JudgeResult, status: str) -> bool:
    """A verdict was owed: the judge is configured and on, and the agent answered."""
    if verdict.judged:
        return True
    return status != "error" and item.judge_enabled and verdict.expected


def verdicts(item: ItemResult) -> list[Unit]:
    """The judged turns of one item, each as the light :class:`Verdict` a folder keeps."""
    return [((item.id, t.index), Verdict(v.status, v.scores, v.fact_risk, v.latency_ms))
            for t in item.turns if (v := t.judge).judged]


def scores_by_dimension(judged: Iterable[Unit]) -> dict[str, list[tuple[tuple[str, int], int]]]:
    by_dim: dict[str, list[tuple[tuple[str, int], int]]] = defaultdict(list)
    for key, verdict in judged:
        for dim, score in (verdict.scores or {}).items():
            if score is not None:
                by_dim[dim].append((key, score))
    return dict(sorted(by_dim.items()))


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


class DimensionMean(MetricModel):
    mean: float | None
    n: int
    #: how many judged turns gave each score ("1".."5"), and null (not applicable)
    distribution: dict[str, int] = Field(default_factory=dict)


class JudgeLatency(MetricModel):
    n: int
    mean: float | None
    p50: float | None
    p95: float | None


class JudgeModel(MetricModel):
    configured: bool
    reason: str | None
    reason_code: str | None
    expected_turns: int
    judged_turns: int
    availability: Rate
    not_evaluated_reasons: dict[str, int]
    #: owed but not evaluated turns by reason code (timeout, rate_limited, http_error,
    #: contract_violation, moderated)
    not_evaluated: dict[str, int] = Field(default_factory=dict)
    #: judge calls made (re-asks and retries included): L3's, the judge-based rule types'
    #: and the tasks'; and verdicts served by the cache
    calls: int = 0
    #: of ``calls``, those made by judge-based rule types (llm_score …)
    rule_calls: int = 0
    #: of ``calls``, those made to decide task parts (``task.judge_calls``)
    task_calls: int = 0
    cache_hits: int = 0
    verdicts: dict[str, int]
    dimensions: dict[str, DimensionMean]
    mean: float | None
    review_rate: Rate
    fact_risk_rate: Rate
    latency_ms: JudgeLatency


def _latency(judged: Sequence[Unit]) -> JudgeLatency:
    values = [float(v.latency_ms) for _, v in judged if v.latency_ms is not None]
    return JudgeLatency(n=len(values), mean=mean(values), p50=percentile(values, 50),
                        p95=percentile(values, 95))


class JudgeFamily(Family[JudgeModel]):
    """L3 judge figures over judged turns (a case is one turn).

    - ``availability = judged / expected``: judged = verdict passed, review or failed;
      expected = judged, or not evaluated for any reason but ``no_judge``,
      ``disabled`` or ``agent_error`` on an answered turn of an item whose judge is
      not switched off;
    - ``dimensions[d].mean`` = mean of the non-null scores of dimension d over judged
      turns; ``mean`` = mean of all non-null scores pooled;
    - ``review_rate = review verdicts / judged``; ``fact_risk_rate = fact_risk true /
      judged``;
    - ``calls``: every judge call of the run, L3's, the judge-based rule types'
      (``rule_calls``) and the tasks' (``task_calls``); the simulated user's are not.

    With no judge configured every figure is ``None`` and ``reason`` says so.
    """

    key = "judge"
    model = JudgeModel
    order = 40
    gate = (GateValue("judge_availability", lambda m, g: m.availability),
            GateValue("judge_mean", lambda m, g: m.mean),
            GateValue("judge_review_rate", lambda m, g: m.review_rate),
            GateValue("fact_risk_rate", lambda m, g: m.fact_risk_rate))

    def folder(self, run: RunData) -> _JudgeFolder:
        return _JudgeFolder()

    def summary(self, value: JudgeModel, metrics: RunMetrics) -> list[str]:
        if value.reason:
            return []  # said first of all by the summary (report.text.summary_lines)
        m = "n/a" if value.mean is None else f"{value.mean:.2f}"
        line = (f"judge (L3): mean {m}, availability {pct(value.availability)} "
                f"({value.judged_turns}/{value.expected_turns}), review {pct(value.review_rate)}"
                f", fact risk {pct(value.fact_risk_rate)}; {value.calls} call(s), "
                f"{value.cache_hits} from cache")
        lines = [line]
        if value.not_evaluated:
            lines.append("  not evaluated: " + ", ".join(
                f"{k} {n}" for k, n in value.not_evaluated.items()))
        return lines


def _dimensions(judged: Sequence[Unit],
                scores: dict[str, list[tuple[tuple[str, int], int]]]) -> dict[str, DimensionMean]:
    dist: dict[str, Counter[str]] = defaultdict(Counter)
    for _, v in judged:
        for dim, score in (v.scores or {}).items():
            dist[dim]["null" if score is None else str(score)] += 1
    # the rubric's seven in their order, then a rubric's own dimensions by name
    order = [d for d in DIMENSIONS if d in dist] + sorted(d for d in dist if d not in DIMENSIONS)
    out = {}
    for d in order:
        values = [s for _, s in scores.get(d, [])]
        out[d] = DimensionMean(mean=mean(values), n=len(values), distribution={
            k: dist[d].get(k, 0) for k in ("1", "2", "3", "4", "5", "null")})
    return out


def review_queue(items: Iterable[ItemResult]) -> list[dict[str, object]]:
    """The human review queue: every judged turn whose verdict is review or failed, or that
    the judge flagged for fact risk — with the dimensions that put it there, the judge's
    reasons and the reply as evidence (all masked: items are)."""
    return [entry for item in items for entry in review_entries(item)]


def review_entries(item: ItemResult) -> list[dict[str, object]]:
    """The entries of one item in the :func:`review_queue`."""
    queue: list[dict[str, object]] = []
    for t in item.turns:
        v = t.judge
        if not v.judged or (v.status == "passed" and not v.fact_risk):
            continue
        reasons = v.reasons or {}
        scores = v.scores or {}
        dims = [{"dimension": d, "score": scores[d], "reason": reasons.get(d, "")}
                for d in v.flagged or () if scores.get(d) is not None]
        queue.append({
            "case": item.id, "nodeid": item.nodeid, "turn": t.index,
            "status": v.status, "item_status": item.status, "why": v.reason,
            "dimensions": dims, "fact_risk": bool(v.fact_risk),
            "fact_risk_reason": reasons.get("fact_risk", "") if v.fact_risk else "",
            "input": t.input, "reply": t.reply,
        })
    return queue


class KnowledgeModel(MetricModel):
    rows_evaluated: int
    required_coverage: Rate
    faithfulness: float | None
    faithfulness_n: int
    fact_risk_rate: Rate


class KnowledgeFamily(Family[KnowledgeModel]):
    """Knowledge use.

    - ``required_coverage = passed / evaluated`` rows of rule type ``knowledge_points``
      (not_applicable rows left out), clustered by item;
    - ``faithfulness`` = mean judge ``factual_accuracy`` score (1–5) over judged turns;
    - ``fact_risk_rate`` = judged turns flagged ``fact_risk`` / judged turns.
    """

    key = "knowledge"
    model = KnowledgeModel
    gate = (GateValue("knowledge_coverage", lambda m, g: m.required_coverage),)

    def folder(self, run: RunData) -> _KnowledgeFolder:
        return _KnowledgeFolder()


class _KnowledgeFolder(Folder[KnowledgeModel]):
    def __init__(self) -> None:
        self.rows: list[tuple[str, float]] = []
        self.judged: list[Unit] = []

    def add(self, item: ItemResult) -> None:
        self.rows += [(item.id, float(row.status == "passed")) for _, row in item.rule_rows()
                      if row.type == "knowledge_points"
                      and row.status not in ("not_applicable", "error")]
        self.judged += verdicts(item)

    def result(self) -> KnowledgeModel:
        judged = self.judged
        facts = [s for _, s in scores_by_dimension(judged).get("factual_accuracy", [])]
        return KnowledgeModel(
            rows_evaluated=len(self.rows),
            required_coverage=rate(self.rows),
            faithfulness=mean(facts),
            faithfulness_n=len(facts),
            fact_risk_rate=rate((k[0], float(bool(v.fact_risk))) for k, v in judged),
        )


class _JudgeFolder(Folder[JudgeModel]):
    def __init__(self) -> None:
        self.owed: list[tuple[str, float]] = []
        self.missing: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.judged: list[Unit] = []
        self.configured = False
        self.calls = self.rule_calls = self.task_calls = self.cache_hits = 0

    def add(self, item: ItemResult) -> None:
        for t in item.turns:
            v = t.judge
            if _owed(item, v, t.status):
                self.owed.append((item.id, float(v.judged)))
                if not v.judged:
                    self.missing[v.reason] += 1
                    self.codes[v.reason_code or "unknown"] += 1
            self.configured = self.configured or v.reason_code != "no_judge"
            self.calls += v.calls + t.rule_judge_calls
            self.rule_calls += t.rule_judge_calls
            self.cache_hits += v.cached
        self.task_calls += item.task.judge_calls
        self.judged += verdicts(item)

    def result(self) -> JudgeModel:
        configured, judged = self.configured, self.judged
        scores = scores_by_dimension(judged)
        counted = Counter(v.status for _, v in judged)
        return JudgeModel(
            configured=configured,
            reason=None if configured else "no judge configured",
            reason_code=None if configured else "no_judge",
            expected_turns=len(self.owed),
            judged_turns=len(judged),
            availability=rate(self.owed),
            not_evaluated_reasons=dict(self.missing.most_common()),
            not_evaluated=dict(self.codes.most_common()),
            calls=self.calls + self.task_calls,
            rule_calls=self.rule_calls,
            task_calls=self.task_calls,
            cache_hits=self.cache_hits,
            verdicts={s: counted.get(s, 0) for s in JUDGED},
            dimensions=_dimensions(judged, scores),
            mean=mean([s for v in scores.values() for _, s in v]),
            review_rate=rate((k[0], float(v.status == "review")) for k, v in judged),
            fact_risk_rate=rate((k[0], float(bool(v.fact_risk))) for k, v in judged),
            latency_ms=_latency(judged),
        )
