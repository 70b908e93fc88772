"""Conversations as wholes: pass rate per flow family, how they ended, how much of the task
they achieved."""

from __future__ import annotations

from collections import Counter, defaultdict

from pydantic import Field

from ..model.results import ItemResult
from ._family import (
    Family,
    Folder,
    MetricModel,
    PassRate,
    Rate,
    RunData,
    RunMetrics,
    pass_rate_of,
    pct,
    rate,
)

__all__ = ["FlowsFamily", "FlowsModel"]

#: completion-rate buckets: none, under the default partial threshold, under the default
#: success threshold, under full, full
BUCKETS = ("0", "(0,0.5)", "[0.5,0.8)", "[0.8,1)", "1")


def bucket(x: float) -> str:
    if x <= 0:
        return "0"
    if x >= 1:
        return "1"
    return "(0,0.5)" if x < 0.5 else "[0.5,0.8)" if x < 0.8 else "[0.8,1)"


class FlowsModel(MetricModel):
    scenarios: int
    #: per ``test_family`` of the scenarios ("(none)" without one): pass rate = passed /
    #: evaluated scenarios (errors excluded and counted)
    by_family: dict[str, PassRate]
    #: every scenario's termination: completed, user_stop, agent_stop, max_turns,
    #: sut_error, infra_error
    termination: dict[str, int]
    #: scenarios stopped by a fault of ours (infra_error): excluded from every rate
    infra_errors: int
    #: items with a task, by completion-rate bucket (and "not evaluated")
    completion: dict[str, int]
    #: per task part name: done / decided (not_evaluated parts left out), by item
    parts: dict[str, Rate]
    #: simulated scenarios, and the simulated user's own faults by kind (never the agent's)
    simulated: int = 0
    simulator_faults: dict[str, int] = Field(default_factory=dict)
    #: the simulated user's calls (re-asks and retries included; never the judge's)
    simulator_calls: int = 0


class FlowsFamily(Family[FlowsModel]):
    """Whole conversations.

    - ``by_family[f] = passed / (scenarios of family f that are not errors)``;
    - ``termination``: how each scenario ended (a scripted one: completed, or stopped by
      an error of the agent, ``sut_error``, or of ours, ``infra_error``); a case is no
      flow;
    - ``completion``: the items with a task per completion-rate bucket;
    - ``parts[name] = done / decided`` over the items whose task has a part of that name.
    """

    key = "flows"
    model = FlowsModel
    order = 35

    def folder(self, run: RunData) -> _FlowsFolder:
        return _FlowsFolder()

    def summary(self, value: FlowsModel, metrics: RunMetrics) -> list[str]:
        if not value.scenarios and not value.completion:
            return []
        fams = ", ".join(f"{f} {pct(r)}" for f, r in value.by_family.items())
        ends = ", ".join(f"{k} {n}" for k, n in value.termination.items())
        lines = [f"flows: {value.scenarios} scenario(s); pass rate by family: {fams or '—'}",
                 f"  ended: {ends}"]
        if value.completion:
            lines.append("  task completion: " + ", ".join(
                f"{b} ×{n}" for b, n in value.completion.items()))
        if value.simulated:
            faults = ", ".join(f"{k} {n}" for k, n in value.simulator_faults.items())
            lines.append(f"  simulated: {value.simulated} conversation(s), "
                         f"{value.simulator_calls} simulator call(s); the simulated user's "
                         f"own faults: {faults or 'none'}")
        return lines


class _FlowsFolder(Folder[FlowsModel]):
    def __init__(self) -> None:
        self.scenarios = 0
        self.fams: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.ends: Counter[str] = Counter()
        self.comp: Counter[str] = Counter()
        self.parts: dict[str, list[tuple[str, float]]] = defaultdict(list)
        self.simulated = self.simulator_calls = 0
        self.faults: Counter[str] = Counter()

    def add(self, i: ItemResult) -> None:
        if i.kind == "scenario":
            self.scenarios += 1
            self.fams[i.test_family or "(none)"].append((i.id, i.status))
            self.ends[i.termination] += 1
        if i.task.parts or i.task.reason_code == "needs_judge":
            self.comp[bucket(i.task.completion_rate) if i.task.completion_rate is not None
                      else "not evaluated"] += 1
        for p in i.task.parts:
            if p.status != "not_evaluated":
                self.parts[p.name].append((i.id, float(p.status == "done")))
        if i.simulator is not None:
            self.simulated += 1
            self.simulator_calls += i.simulator.calls
            self.faults.update(f.kind for f in i.simulator.faults)

    def result(self) -> FlowsModel:
        comp, ends = self.comp, self.ends
        return FlowsModel(
            simulated=self.simulated,
            simulator_faults=dict(self.faults.most_common()),
            simulator_calls=self.simulator_calls,
            scenarios=self.scenarios,
            by_family={f: pass_rate_of(members) for f, members in sorted(self.fams.items())},
            termination=dict(ends.most_common()),
            infra_errors=ends.get("infra_error", 0),
            completion={b: comp.get(b, 0) for b in (*BUCKETS, "not evaluated") if comp.get(b)},
            parts={name: rate(v) for name, v in sorted(self.parts.items())},
        )
