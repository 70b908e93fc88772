"""Rates with 95% intervals, and the repeat-trial figures (SPEC 6, stability).

A rate is returned as ``{"value", "low", "high", "n"}``: a share in 0..1 with
its interval and the size of its denominator. With nothing to count (n = 0)
the value and the bounds are ``None`` ("not evaluated"), never 0.

When a case runs several trials (``--agenteval-repeat n``), the trials of one
case are not independent draws, so rates over trials use an interval
clustered by case (:func:`clustered_rate`). :func:`rate_by_case` chooses for
the caller: Wilson when every case counts once, clustered otherwise.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "Z95",
    "CaseTally",
    "clustered_rate",
    "is_flaky",
    "pass_hat_k",
    "pass_k_table",
    "rate_by_case",
    "repeat_consistency",
    "wilson",
]

#: The two-sided 95% normal quantile.
Z95 = 1.959964


def _check(successes: float, n: float) -> None:
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")


def _wilson_bounds(p: float, n: float, z: float) -> tuple[float, float]:
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    # the exact interval always holds p̂; min/max only undo floating-point rounding at 0 and 1
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def wilson(successes: float, n: int, z: float = Z95) -> dict[str, Any]:
    """Wilson score interval of a proportion.

    With p̂ = s/n:
    ``centre = (p̂ + z²/2n) / (1 + z²/n)``,
    ``half = z / (1 + z²/n) · √(p̂(1−p̂)/n + z²/4n²)``,
    interval ``[centre − half, centre + half]`` clipped to [0, 1].

    Args:
        successes: Successes counted (may be fractional, e.g. 0.5 per partial success).
        n: Trials counted.
        z: Normal quantile; the default gives a 95% interval.

    Returns:
        ``{"value": p̂, "low", "high", "n"}``; value and bounds are ``None`` when n == 0.

    Raises:
        ValueError: If successes is negative or larger than n.
    """
    _check(successes, n)
    if n == 0:
        return {"value": None, "low": None, "high": None, "n": 0}
    p = successes / n
    low, high = _wilson_bounds(p, n, z)
    return {"value": p, "low": low, "high": high, "n": n}


def _cluster_variance(per_cluster: Sequence[tuple[float, int]], p: float) -> float:
    total = sum(n for _, n in per_cluster)
    g = len(per_cluster)
    squares = sum((c - p * n) ** 2 for c, n in per_cluster)
    return g / (g - 1) * squares / total**2


def _effective_n(per_cluster: Sequence[tuple[float, int]], p: float) -> float:
    total = sum(n for _, n in per_cluster)
    if p in (0.0, 1.0):
        return float(len(per_cluster))
    variance = _cluster_variance(per_cluster, p)
    if variance == 0:
        return float(total)
    return min(float(total), p * (1 - p) / variance)


def clustered_rate(per_cluster: Sequence[tuple[float, int]], z: float = Z95) -> dict[str, Any]:
    """A rate over trials clustered by case, with a cluster-robust 95% interval.

    For G cases, case i with c_i successes in n_i trials, N = Σn_i:

    - ratio estimator ``p̂ = Σc_i / N``;
    - cluster-robust (sandwich, CR1) variance of the ratio
      ``V = G/(G−1) · Σ(c_i − p̂·n_i)² / N²``;
    - effective sample size ``n_eff = min(N, p̂(1−p̂)/V)`` (Kish: N divided by the
      design effect, truncated at 1); ``n_eff = G`` when p̂ is 0 or 1 (every trial
      agrees, so only the cases are independent) and ``n_eff = N`` when V = 0 otherwise;
    - interval: the Wilson interval of p̂ at n_eff (Korn & Graubard), which
      stays inside [0, 1] and does not collapse to a point at p̂ = 0 or 1.

    Falls back to :func:`wilson` on the pooled trials when every case has one
    trial (no clustering) or there is a single case (no between-case variance).

    Args:
        per_cluster: ``(successes, trials)`` per case; trials may not be 0.
        z: Normal quantile; the default gives a 95% interval.

    Returns:
        The :func:`wilson` keys plus ``clusters``, ``n_eff`` and ``method``
        (``"wilson"`` or ``"clustered"``); ``n`` counts trials.
    """
    for c, n in per_cluster:
        _check(c, n)
    clusters = [(c, n) for c, n in per_cluster if n > 0]
    total = sum(n for _, n in clusters)
    successes = sum(c for c, _ in clusters)
    if len(clusters) < 2 or all(n == 1 for _, n in clusters):
        return {**wilson(successes, total, z), "clusters": len(clusters),
                "n_eff": float(total) if total else None, "method": "wilson"}
    p = successes / total
    n_eff = _effective_n(clusters, p)
    low, high = _wilson_bounds(p, n_eff, z)
    return {"value": p, "low": low, "high": high, "n": total, "clusters": len(clusters),
            "n_eff": n_eff, "method": "clustered"}


class CaseTally:
    """:func:`rate_by_case` folded one member at a time: a metric folder adds each
    ``(case id, success)`` as its item arrives, and the end of the run only sums and
    sorts by id."""

    __slots__ = ("_by_case",)

    def __init__(self) -> None:
        self._by_case: dict[str, list[float]] = defaultdict(list)

    def add(self, case_id: str, success: float) -> None:
        self._by_case[case_id].append(success)

    def __len__(self) -> int:
        """The members added (the rate's denominator)."""
        return sum(len(v) for v in self._by_case.values())

    def result(self, z: float = Z95) -> dict[str, Any]:
        """:func:`rate_by_case` of the members added, in the order they were."""
        grouped = self._by_case
        # in the order of the ids: the items of an xdist run arrive in another order, and
        # the float sums of the clustered interval must not depend on it
        return clustered_rate([(sum(grouped[k]), len(grouped[k])) for k in sorted(grouped)], z)


def rate_by_case(members: Iterable[tuple[str, float]], z: float = Z95) -> dict[str, Any]:
    """A rate over denominator members tagged with their case id.

    Each member is ``(case id, success)`` with success in 0..1; the members of
    one id form a cluster (its trials, or its turns). ``value = Σsuccess / count``
    and the interval is :func:`clustered_rate` over the ids (Wilson when every
    id occurs once).
    """
    tally = CaseTally()
    for case_id, success in members:
        tally.add(case_id, success)
    return tally.result(z)


def _check_counts(counts: Sequence[tuple[int, int]]) -> None:
    for c, n in counts:
        _check(c, n)


def pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """pass^k: the chance that k trials of a case in a row all pass (τ-bench).

    ``pass^k = (1/|cases|) · Σ_cases C(c, k) / C(n, k)``, with c passed trials of n.

    Args:
        counts: ``(passed, trials)`` per case.
        k: Trials that must all pass, ≥ 1.

    Returns:
        The mean, or ``None`` when there is no case or some case has fewer than k trials.

    Raises:
        ValueError: If k < 1 or a count is inconsistent.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    _check_counts(counts)
    if not counts or min(n for _, n in counts) < k:
        return None
    return sum(math.comb(c, k) / math.comb(n, k) for c, n in counts) / len(counts)


def is_flaky(passed: int, trials: int) -> bool:
    """A case is flaky when some but not all of its trials pass: ``0 < c < n``."""
    return 0 < passed < trials


def repeat_consistency(counts: Sequence[tuple[int, int]]) -> float | None:
    """Share of cases whose trials agree: ``|{c = 0 or c = n}| / |cases|``; None if no case."""
    _check_counts(counts)
    if not counts:
        return None
    return sum(1 for c, n in counts if not is_flaky(c, n)) / len(counts)


def pass_k_table(counts: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """pass^k for k = 1..n, n the fewest trials of any case, plus flakiness.

    Returns:
        ``{"cases", "trials" (n), "pass_hat_k": [{"k", "value"}], "flaky" (count of
        cases with 0 < c < n), "repeat_consistency" (:func:`repeat_consistency`
        with its Wilson interval over cases)}``.
    """
    _check_counts(counts)
    trials = min((n for _, n in counts), default=0)
    agreeing = sum(1 for c, n in counts if not is_flaky(c, n))
    return {
        "cases": len(counts),
        "trials": trials,
        "pass_hat_k": [{"k": k, "value": pass_hat_k(counts, k)} for k in range(1, trials + 1)],
        "flaky": len(counts) - agreeing,
        "repeat_consistency": wilson(agreeing, len(counts)),
    }
