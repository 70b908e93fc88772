"""Newcombe's interval, the metric specs and deltas, and the comparison of two runs."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ...metrics.rates import rate_by_case
from ...privacy import Masker
from ._records import (
    ChangeKind,
    Check,
    DatasetDiff,
    ItemChange,
    ItemRef,
    Key,
    Record,
    RedLine,
    _change,
    _checks,
    _dataset_diff,
    _get,
    _key,
    _new_red_lines,
    _ref,
)

#: a bare-number rate whose recount differs from the record by more has no interval
_TOLERANCE = 1e-9
#: turn error kinds that are not the agent's (the service metrics' infrastructure kinds):
#: a rule type raised (the agent answered), a conversation not re-sent, the simulated user
#: failed. Should they drift apart, the recount no longer gives the recorded rate and the
#: rate is shown without an interval, never with a wrong one.
_NOT_AGENT_ERRORS = frozenset({"rule", "not_resent", "simulator"})


# -- metrics -----------------------------------------------------------------------------------


class Interval(NamedTuple):
    """A rate and its 95% interval."""

    value: float
    low: float
    high: float


def newcombe(a: Interval, b: Interval) -> Interval:
    """B − A with the 95% interval of Newcombe's hybrid score method (method 10).

    ``d = pB − pA``, ``lower = d − √((pB − lB)² + (uA − pA)²)``,
    ``upper = d + √((uB − pB)² + (pA − lA)²)``, from each rate's own interval
    (Wilson in Newcombe; here whatever 95% interval the run recorded, clustered ones
    included).
    """
    d = b.value - a.value
    lower = d - math.sqrt((b.value - b.low) ** 2 + (a.high - a.value) ** 2)
    upper = d + math.sqrt((b.high - b.value) ** 2 + (a.value - a.low) ** 2)
    return Interval(d, lower, upper)


Members = Callable[[Record], list[tuple[str, float]]]


def _turns(doc: Record) -> Iterator[tuple[str, Record]]:
    for case in doc["cases"]:
        for turn in case.get("turns") or ():
            yield str(case["id"]), turn


def _item_members(doc: Record) -> list[tuple[str, float]]:
    return [(str(c["id"]), float(c["status"] == "passed")) for c in doc["cases"]
            if c["status"] != "error"]


def _intent_pairs(doc: Record) -> Iterator[tuple[str, str, str]]:
    """(case id, expected, predicted) of each turn in intent accuracy (as the metrics)."""
    for cid, turn in _turns(doc):
        expected, predicted = _get(turn, "intent", "expected"), _get(turn, "intent", "predicted")
        if turn.get("status") != "error" and expected is not None and predicted is not None:
            yield cid, str(expected), str(predicted)


def _accuracy_members(doc: Record) -> list[tuple[str, float]]:
    return [(cid, float(e == p)) for cid, e, p in _intent_pairs(doc)]


def _recall_members(label: str) -> Members:
    def members(doc: Record) -> list[tuple[str, float]]:
        return [(cid, float(p == label)) for cid, e, p in _intent_pairs(doc) if e == label]
    return members


def _agent_error_members(doc: Record) -> list[tuple[str, float]]:
    out = []
    for cid, turn in _turns(doc):
        kind = _get(turn, "error", "kind")
        if kind is None or kind == "rule":  # answered: a call without an agent error
            out.append((cid, 0.0))
        elif kind not in _NOT_AGENT_ERRORS:
            out.append((cid, 1.0))
    return out


@dataclass(frozen=True)
class _Spec:
    name: str
    path: tuple[str, ...]
    unit: Literal["pct", "num", "ms"] = "pct"
    rate: bool = True
    higher_is_better: bool = True
    members: Members | None = None


_SPECS: tuple[_Spec, ...] = (
    _Spec("pass_rate_items", ("pass_rate_items",), members=_item_members),
    _Spec("hard_rule_pass_rate", ("red_lines", "hard_rule_pass_rate")),
    _Spec("success_rate", ("success", "success_rate")),
    _Spec("pass_rate", ("success", "pass_rate")),
    _Spec("avg_completion", ("success", "avg_completion"), rate=False),
    _Spec("accuracy", ("intent", "accuracy"), members=_accuracy_members),
    _Spec("macro_f1", ("intent", "macro_f1"), unit="num", rate=False),
    _Spec("judge_mean", ("judge", "mean"), unit="num", rate=False),
    _Spec("judge_availability", ("judge", "availability")),
    _Spec("pair_consistency", ("robustness", "pair_consistency")),
    _Spec("latency_p95_ms", ("service", "latency_ms", "p95"), unit="ms", rate=False,
          higher_is_better=False),
    _Spec("agent_error_rate", ("service", "agent_error_rate"), higher_is_better=False,
          members=_agent_error_members),
)


@dataclass(frozen=True)
class MetricDelta:
    """One metric in both runs; ``low``/``high`` bound B − A (rates only)."""

    metric: str
    kind: Literal["rate", "figure"]
    unit: str
    higher_is_better: bool
    a: float | None
    b: float | None
    delta: float | None
    low: float | None = None
    high: float | None = None
    #: whether the interval excludes 0; ``None`` without an interval
    significant: bool | None = None

    def worsening(self) -> float | None:
        """How much B is worse than A (negative: better); ``None`` if either is missing."""
        if self.delta is None:
            return None
        return -self.delta if self.higher_is_better else self.delta


def _number(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _rate(doc: Record, spec: _Spec) -> tuple[float | None, Interval | None]:
    raw = _get(doc.get("metrics"), *spec.path)
    if isinstance(raw, Mapping):
        value, low, high = _number(raw.get("value")), _number(raw.get("low")), \
            _number(raw.get("high"))
        if value is None or low is None or high is None:
            return value, None
        return value, Interval(value, low, high)
    value = _number(raw)
    if value is None or spec.members is None:
        return value, None
    recount = rate_by_case(spec.members(doc))
    if recount["value"] is None or abs(recount["value"] - value) > _TOLERANCE:
        return value, None
    return value, Interval(value, recount["low"], recount["high"])


def _delta(a: Record, b: Record, spec: _Spec) -> MetricDelta:
    va, ia = _rate(a, spec)
    vb, ib = _rate(b, spec)
    kind: Literal["rate", "figure"] = "rate" if spec.rate else "figure"
    delta = None if va is None or vb is None else vb - va
    base = MetricDelta(spec.name, kind, spec.unit, spec.higher_is_better, va, vb, delta)
    if ia is None or ib is None:
        return base
    d = newcombe(ia, ib)
    return MetricDelta(spec.name, kind, spec.unit, spec.higher_is_better, va, vb, d.value,
                       d.low, d.high, d.low > 0 or d.high < 0)


def _labels(*docs: Record) -> list[str]:
    seen: dict[str, None] = {}
    for doc in docs:
        seen.update(dict.fromkeys(_get(doc.get("metrics"), "intent", "per_label") or {}))
    return list(seen)


def _specs(a: Record, b: Record) -> list[_Spec]:
    recalls = [_Spec(f"recall[{label}]", ("intent", "per_label", label, "recall"),
                     members=_recall_members(label)) for label in _labels(a, b)]
    return [*_SPECS[:7], *recalls, *_SPECS[7:]]


# -- the comparison ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunInfo:
    path: str
    started: str | None
    items: int
    gate: str | None
    language: str | None


def _info(path: Path, doc: Record) -> RunInfo:
    run = doc["run"]
    return RunInfo(str(path), run.get("started"), len(doc["cases"]), _get(doc, "gate", "result"),
                   run.get("language"))


@dataclass(frozen=True)
class Comparison:
    a: RunInfo
    b: RunInfo
    checks: list[Check]
    dataset: DatasetDiff
    changes: list[ItemChange]
    only_in_a: list[ItemRef]
    only_in_b: list[ItemRef]
    metrics: list[MetricDelta]
    new_red_lines: list[RedLine]

    @property
    def comparable(self) -> bool:
        return all(c.same for c in self.checks if c.blocking)

    def why_not_comparable(self) -> list[str]:
        grown = f": {self.dataset.lineage}" if self.dataset.lineage else ""
        return [f"{_CHECK_NAMES[c.check]} differs (A {_short(c.a)}, B {_short(c.b)})"
                + (grown if c.check == "dataset" else "")
                for c in self.checks if c.blocking and not c.same]

    def count(self, kind: ChangeKind) -> int:
        return sum(1 for c in self.changes if c.change == kind)


_CHECK_NAMES = {"dataset": "dataset", "dataset_version": "dataset version",
                "ledger": "rule ledger", "taxonomy": "taxonomy",
                "judge_model": "judge model", "rubric": "judge rubric",
                "repeat": "repeat count", "items": "items"}


def _short(value: Any) -> str:
    if value is None:
        return "none"
    text = str(value)
    return text[:12] if re.fullmatch(r"[0-9a-f]{40,}", text) else text


def _by_key(doc: Record) -> dict[Key, Record]:
    return {_key(c): c for c in doc["cases"]}


def compare_runs(a: Record, b: Record, path_a: Path = Path("A"),
                 path_b: Path = Path("B")) -> Comparison:
    """Compare two run records (``results.json`` documents) item by item and metric by
    metric; A is the baseline, B the candidate."""
    masker = Masker()
    ka, kb = _by_key(a), _by_key(b)
    changes, red = [], []
    for key, case_b in kb.items():
        case_a = ka.get(key)
        red += _new_red_lines(case_a, case_b, masker)
        if case_a is not None and (change := _change(case_a, case_b, masker)) is not None:
            changes.append(change)
    return Comparison(
        a=_info(path_a, a), b=_info(path_b, b), checks=_checks(a, b),
        dataset=_dataset_diff(a, b), changes=changes,
        only_in_a=[_ref(c, masker) for k, c in ka.items() if k not in kb],
        only_in_b=[_ref(c, masker) for k, c in kb.items() if k not in ka],
        metrics=[_delta(a, b, s) for s in _specs(a, b)], new_red_lines=red)
