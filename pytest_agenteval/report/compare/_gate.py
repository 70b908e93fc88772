"""The comparison gate: the limits, the verdict and its exit status."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..text import safe
from ._metrics import _TOLERANCE, Comparison, MetricDelta
from ._records import CompareError, item_label

# -- the gate ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """What the comparison gate allows (``--max-regressions``, ``--max-drop``, …)."""

    max_regressions: int = 0
    max_drop: Mapping[str, float] = field(default_factory=dict)
    significant_only: bool = False
    allow_incomparable: bool = False


@dataclass(frozen=True)
class Verdict:
    """``PASS`` (exit 0), ``FAIL`` (1) or ``NOT_COMPARABLE`` (3); ``failures`` are the
    gate's reasons, one line each, also when the gate is not applied."""

    result: Literal["PASS", "FAIL", "NOT_COMPARABLE"]
    exit: int
    failures: list[str]
    not_comparable: list[str]


def parse_max_drop(values: Iterable[str]) -> dict[str, float]:
    """``["success_rate=0.02", …]`` as a mapping; a rate's drop is a share (0.02 = 2
    points), a figure's in its own unit."""
    out = {}
    for raw in values:
        name, sep, number = raw.partition("=")
        try:
            limit = float(number)
        except ValueError:
            limit = -1.0
        if not sep or not name.strip() or not limit >= 0:
            raise CompareError(f"--max-drop {raw}: expected METRIC=X with X a number ≥ 0, "
                               "e.g. --max-drop success_rate=0.02")
        out[name.strip()] = limit
    return out


def _matches(name: str, metric: str) -> bool:
    return metric == name or (name == "recall" and metric.startswith("recall["))


def check_limits(c: Comparison, limits: Limits) -> None:
    """Every ``--max-drop`` names a metric of the comparison, or :class:`CompareError`."""
    known = [m.metric for m in c.metrics]
    for name in limits.max_drop:
        if not any(_matches(name, m) for m in known):
            raise CompareError(f"--max-drop {name}: no such metric in these runs; known: "
                               + ", ".join(["recall", *known]))
    if limits.max_regressions < 0:
        raise CompareError("--max-regressions must be 0 or more")


def _fmt(m: MetricDelta, value: float | None) -> str:
    if value is None:
        return "not evaluated"
    if m.unit == "pct":
        return f"{value * 100:.1f}%"
    return f"{value:.0f} ms" if m.unit == "ms" else f"{value:.3f}"


def _drop_failure(m: MetricDelta, limit: float, significant_only: bool) -> str | None:
    if m.a is None:
        return None
    if m.b is None:
        return f"{m.metric} is not evaluated in B (A: {_fmt(m, m.a)}; --max-drop {limit:g})"
    worse = m.worsening()
    if worse is None or worse <= limit + _TOLERANCE:
        return None
    if significant_only and m.significant is False:
        return None
    how = "rose" if not m.higher_is_better else "dropped"
    return (f"{m.metric} {how} by {_amount(m, worse)} ({_fmt(m, m.a)} → {_fmt(m, m.b)}), "
            f"allowed {_amount(m, limit)}" + (" (significant)" if m.significant else ""))


def _amount(m: MetricDelta, value: float) -> str:
    if m.unit == "pct":
        return f"{value * 100:.1f} pp"
    return f"{value:.0f} ms" if m.unit == "ms" else f"{value:.3f}"


def _failures(c: Comparison, limits: Limits) -> list[str]:
    out = [f"new red-line failure: {r.rule_id} on {item_label(r.id, r.trial)}"
           + (" (an item only in B)" if r.only_in_b else "")
           + (f": {safe(r.evidence)}" if r.evidence else "") for r in c.new_red_lines]
    regressed = [item_label(x.id, x.trial) for x in c.changes if x.change == "regressed"]
    if len(regressed) > limits.max_regressions:
        out.append(f"{len(regressed)} regression(s), allowed {limits.max_regressions}: "
                   + ", ".join(regressed[:10]) + (" …" if len(regressed) > 10 else ""))
    for m in c.metrics:
        for name, limit in limits.max_drop.items():
            if _matches(name, m.metric):
                failure = _drop_failure(m, limit, limits.significant_only)
                if failure:
                    out.append(failure)
                break
    return out


def verdict(c: Comparison, limits: Limits) -> Verdict:
    """The CI gate: 0 when no new red-line failure, regressions ≤ the limit and no
    metric worse beyond its limit; 1 otherwise; 3 when the runs are not comparable
    (unless ``allow_incomparable``)."""
    failures = _failures(c, limits)
    why = c.why_not_comparable()
    if why and not limits.allow_incomparable:
        return Verdict("NOT_COMPARABLE", 3, failures, why)
    return Verdict("FAIL", 1, failures, why) if failures else Verdict("PASS", 0, [], why)
