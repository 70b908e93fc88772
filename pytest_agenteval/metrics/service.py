"""The agent as a service: calls, errors by kind, latency; what a black box cannot show."""

from __future__ import annotations

from collections import Counter

from ..model.results import INFRA_KINDS, AgentError, ItemResult
from ..privacy import clip
from ._family import Family, Folder, GateValue, MetricModel, RunData, RunMetrics, number
from .summary import percentile

__all__ = ["ErrorGroup", "Latency", "ServiceFamily", "ServiceModel", "UnfoundPath"]

NOT_MEASURED = {
    "ttft": "the agent API is not streaming: time to first token is not observable",
    "retrieval": "the agent is a black box: retrieval quality is not observable",
}


class Latency(MetricModel):
    turns: int
    mean: float | None
    p50: float | None
    p90: float | None
    p95: float | None
    max: float | None


class ErrorGroup(MetricModel):
    """Agent errors with the same kind and detail: one line of the summary, with a count."""

    kind: str
    detail: str
    count: int
    #: the first few items it happened in
    items: list[str]


class UnfoundPath(MetricModel):
    """A configured optional ``response_map`` path that no answered reply of the run had."""

    field: str
    path: str
    closest: str | None
    turns: int


class ServiceModel(MetricModel):
    agent_calls: int
    agent_errors: int
    agent_success_rate: float | None
    agent_error_rate: float | None
    errors_by_kind: dict[str, int]
    #: identical errors grouped, most frequent first (at most 10 groups)
    error_groups: list[ErrorGroup]
    #: optional response paths found in no answered reply (a typo: "no intent" is then wrong)
    unfound_paths: list[UnfoundPath]
    latency_ms: Latency
    not_measured: dict[str, str]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def _agents(error: AgentError) -> bool:
    """An error of the agent's: not one of ours (a rule, a conversation not re-sent, the
    simulated user)."""
    return error.kind not in INFRA_KINDS


class ServiceFamily(Family[ServiceModel]):
    """Agent calls and their errors by kind; the latency of the turns answered.

    An error of ours (:data:`~..model.results.INFRA_KINDS`) is no agent error. A turn
    whose rule type raised (kind ``rule``) was answered: it is an agent call. A
    simulated user's failure (``simulator``: nothing was sent) and a conversation not
    re-sent after a crash (``not_resent``: its outcome is unknown) are not calls.
    """

    key = "service"
    model = ServiceModel
    order = 80
    gate = (GateValue("agent_error_rate", lambda m, g: m.agent_error_rate),
            GateValue("latency_p50_ms", lambda m, g: m.latency_ms.p50),
            GateValue("latency_p95_ms", lambda m, g: m.latency_ms.p95))

    def folder(self, run: RunData) -> _ServiceFolder:
        return _ServiceFolder()

    def summary(self, value: ServiceModel, metrics: RunMetrics) -> list[str]:
        lat = value.latency_ms
        return [f"agent: {value.agent_calls} calls, {value.agent_errors} errors"
                + (f" {value.errors_by_kind}" if value.errors_by_kind else "")
                + f"; latency P50 {number(lat.p50, ' ms')} · P95 {number(lat.p95, ' ms')}"
                f" · max {number(lat.max, ' ms')}"] + [
            f"  {g.count} × {g.kind}: {clip(g.detail, 120)}"
            + (f" ({', '.join(g.items[:3])}{', …' if g.count > 3 else ''})" if g.items else "")
            for g in value.error_groups[:5]] + [
            f"WARNING: response_map.{u.field} '{u.path}' was found in no reply ({u.turns} "
            "answered turns)" + (f"; the replies have '{u.closest}'" if u.closest else "")
            + f": {u.field} counts as not returned"
            for u in value.unfound_paths]


class _ServiceFolder(Folder[ServiceModel]):
    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()
        self.groups: dict[tuple[str, str], list[str]] = {}
        self.replied = 0
        self.misses: Counter[tuple[str, str]] = Counter()
        self.closest: dict[tuple[str, str], str | None] = {}
        self.answered: list[float] = []

    def add(self, item: ItemResult) -> None:
        for t in item.turns:
            e = t.error
            if e is not None and _agents(e):
                self.errors[e.kind] += 1
                self.groups.setdefault((e.kind, e.detail), []).append(item.id)
            if t.reply is not None:
                self.replied += 1
                for m in t.missing_paths:
                    key = (m.field, m.path)
                    self.misses[key] += 1
                    self.closest[key] = self.closest.get(key) or m.closest
            if e is None or e.kind == "rule":
                self.answered.append(t.latency_ms)

    def result(self) -> ServiceModel:
        answered, closest = self.answered, self.closest
        n_agent = self.errors.total()
        top = sorted(self.groups.items(), key=lambda kv: -len(kv[1]))[:10]
        unfound = [UnfoundPath(field=f, path=p, closest=closest[(f, p)], turns=n)
                   for (f, p), n in sorted(self.misses.items()) if n == self.replied]
        calls = len(answered) + n_agent
        return ServiceModel(
            agent_calls=calls,
            agent_errors=n_agent,
            agent_success_rate=_ratio(calls - n_agent, calls),
            agent_error_rate=_ratio(n_agent, calls),
            errors_by_kind=dict(sorted(self.errors.items())),
            error_groups=[ErrorGroup(kind=k, detail=d, count=len(ids), items=ids[:5])
                          for (k, d), ids in top],
            unfound_paths=unfound,
            latency_ms=Latency(
                turns=len(answered),
                mean=sum(answered) / len(answered) if answered else None,
                p50=percentile(answered, 50), p90=percentile(answered, 90),
                p95=percentile(answered, 95), max=max(answered) if answered else None),
            not_measured=dict(NOT_MEASURED),
        )
