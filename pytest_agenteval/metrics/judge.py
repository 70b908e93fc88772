"""L3 judge figures and knowledge use, over judged turns (a case is one turn)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from pydantic import Field

from ..model.cases import DIMENSIONS
from ..model.results import ItemResult, JudgeResult
from ._family import Family, Folder, GateValue, MetricModel, Rate, RunData, RunMetrics, pct, rate
from .rates import CaseTally
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


def _latency(values: Sequence[float]) -> JudgeLatency:
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


class _Scores:
    """The judged turns' scores, folded one verdict at a time: per dimension the sum and
    the count of its non-null scores (integers: the means do not depend on the order the
    verdicts came in), and how many turns gave each score or null."""

    __slots__ = ("dist", "sums")

    def __init__(self) -> None:
        self.sums: dict[str, list[int]] = {}  # dimension → [Σ score, n]
        self.dist: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, scores: dict[str, int | None] | None) -> None:
        for dim, score in (scores or {}).items():
            if score is None:
                self.dist[dim]["null"] += 1
                continue
            self.dist[dim][str(score)] += 1
            acc = self.sums.get(dim)
            if acc is None:
                self.sums[dim] = [score, 1]
            else:
                acc[0] += score
                acc[1] += 1

    def mean(self, dim: str | None = None) -> tuple[float | None, int]:
        """The mean of one dimension's non-null scores, or of every score pooled, and n."""
        parts = list(self.sums.values()) if dim is None else [self.sums.get(dim, [0, 0])]
        total, n = sum(p[0] for p in parts), sum(p[1] for p in parts)
        return (total / n if n else None), n

    def dimensions(self) -> dict[str, DimensionMean]:
        dist = self.dist
        # the rubric's seven in their order, then a rubric's own dimensions by name
        order = ([d for d in DIMENSIONS if d in dist]
                 + sorted(d for d in dist if d not in DIMENSIONS))
        out = {}
        for d in order:
            m, n = self.mean(d)
            out[d] = DimensionMean(mean=m, n=n, distribution={
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
        self.rows = CaseTally()
        self.facts = [0, 0]  # Σ factual_accuracy score, n (non-null, judged turns)
        self.fact_risk = CaseTally()

    def add(self, item: ItemResult) -> None:
        for _, row in item.rule_rows():
            if row.type == "knowledge_points" and row.status not in ("not_applicable", "error"):
                self.rows.add(item.id, float(row.status == "passed"))
        for t in item.turns:
            v = t.judge
            if v.judged:
                score = (v.scores or {}).get("factual_accuracy")
                if score is not None:
                    self.facts[0] += score
                    self.facts[1] += 1
                self.fact_risk.add(item.id, float(bool(v.fact_risk)))

    def result(self) -> KnowledgeModel:
        total, n = self.facts
        return KnowledgeModel(
            rows_evaluated=len(self.rows),
            required_coverage=rate(self.rows),
            faithfulness=total / n if n else None,
            faithfulness_n=n,
            fact_risk_rate=rate(self.fact_risk),
        )


class _JudgeFolder(Folder[JudgeModel]):
    """Folds each turn's verdict as its item arrives: the end of the run sorts the tallies
    by case id and sums them, and walks no list of 10,000 verdicts."""

    def __init__(self) -> None:
        self.owed = CaseTally()
        self.missing: Counter[str] = Counter()
        self.codes: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.scores = _Scores()
        self.review = CaseTally()
        self.fact_risk = CaseTally()
        self.latencies: list[float] = []
        self.configured = False
        self.calls = self.rule_calls = self.task_calls = self.cache_hits = 0

    def add(self, item: ItemResult) -> None:
        for t in item.turns:
            v = t.judge
            if _owed(item, v, t.status):
                self.owed.add(item.id, float(v.judged))
                if not v.judged:
                    self.missing[v.reason] += 1
                    self.codes[v.reason_code or "unknown"] += 1
            self.configured = self.configured or v.reason_code != "no_judge"
            self.calls += v.calls + t.rule_judge_calls
            self.rule_calls += t.rule_judge_calls
            self.cache_hits += v.cached
            if v.judged:
                self.statuses[v.status] += 1
                self.scores.add(v.scores)
                self.review.add(item.id, float(v.status == "review"))
                self.fact_risk.add(item.id, float(bool(v.fact_risk)))
                if v.latency_ms is not None:
                    self.latencies.append(float(v.latency_ms))
        self.task_calls += item.task.judge_calls

    def result(self) -> JudgeModel:
        configured, counted = self.configured, self.statuses
        return JudgeModel(
            configured=configured,
            reason=None if configured else "no judge configured",
            reason_code=None if configured else "no_judge",
            expected_turns=len(self.owed),
            judged_turns=sum(counted.values()),
            availability=rate(self.owed),
            not_evaluated_reasons=dict(self.missing.most_common()),
            not_evaluated=dict(self.codes.most_common()),
            calls=self.calls + self.task_calls,
            rule_calls=self.rule_calls,
            task_calls=self.task_calls,
            cache_hits=self.cache_hits,
            verdicts={s: counted.get(s, 0) for s in JUDGED},
            dimensions=self.scores.dimensions(),
            mean=self.scores.mean()[0],
            review_rate=rate(self.review),
            fact_risk_rate=rate(self.fact_risk),
            latency_ms=_latency(self.latencies),
        )
