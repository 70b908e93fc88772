"""Unit and property tests of rates and repeat-trial figures (pytest_agenteval/metrics/rates.py)."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agenteval.metrics.rates import (
    clustered_rate,
    is_flaky,
    pass_hat_k,
    pass_k_table,
    rate_by_case,
    repeat_consistency,
    wilson,
)

# --- Wilson ---------------------------------------------------------------------------------


@pytest.mark.parametrize("s, n, low, high", [
    (8, 10, 0.4902, 0.9433),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (50, 100, 0.4038, 0.5962),
    (1, 1, 0.2065, 1.0),
])
def test_wilson_known_values(s: int, n: int, low: float, high: float) -> None:
    out = wilson(s, n)
    assert out["value"] == pytest.approx(s / n)
    assert out["low"] == pytest.approx(low, abs=1e-4)
    assert out["high"] == pytest.approx(high, abs=1e-4)
    assert out["n"] == n


def test_wilson_of_nothing_is_none_not_zero() -> None:
    assert wilson(0, 0) == {"value": None, "low": None, "high": None, "n": 0}


@pytest.mark.parametrize("s, n", [(-1, 3), (4, 3)])
def test_wilson_rejects_impossible_counts(s: int, n: int) -> None:
    with pytest.raises(ValueError, match="successes"):
        wilson(s, n)


@given(st.integers(1, 10_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_brackets_the_estimate(sn: tuple[int, int]) -> None:
    s, n = sn
    out = wilson(s, n)
    assert 0.0 <= out["low"] <= out["value"] <= out["high"] <= 1.0
    assert all(type(out[k]) is float for k in ("value", "low", "high"))


# --- clustered rate -------------------------------------------------------------------------


def test_clustered_rate_with_one_trial_per_case_is_wilson() -> None:
    out = clustered_rate([(1, 1)] * 8 + [(0, 1)] * 2)
    assert out["method"] == "wilson"
    assert (out["low"], out["high"]) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_clustered_rate_with_one_case_is_wilson_over_its_trials() -> None:
    out = clustered_rate([(8, 10)])
    assert out["method"] == "wilson" and out["clusters"] == 1
    assert (out["low"], out["high"]) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_clustered_rate_by_hand() -> None:
    # p = 6/12; V = 3/2 · ((4−2)² + 0 + (0−2)²) / 12² = 1/12; n_eff = 0.25 / V = 3
    out = clustered_rate([(4, 4), (2, 4), (0, 4)])
    assert out["method"] == "clustered"
    assert out["value"] == 0.5 and out["n"] == 12 and out["clusters"] == 3
    assert out["n_eff"] == pytest.approx(3.0)
    ref = wilson(1.5, 3)
    assert (out["low"], out["high"]) == pytest.approx((ref["low"], ref["high"]))


def test_clustered_rate_at_certainty_counts_cases_not_trials() -> None:
    out = clustered_rate([(5, 5)] * 4)
    ref = wilson(4, 4)
    assert out["value"] == 1.0 and out["n_eff"] == 4.0
    assert (out["low"], out["high"]) == pytest.approx((ref["low"], ref["high"]))


def test_clustered_rate_is_wider_than_naive_wilson_when_cases_agree_internally() -> None:
    clusters = [(5, 5)] * 6 + [(0, 5)] * 4
    out, naive = clustered_rate(clusters), wilson(30, 50)
    assert out["high"] - out["low"] > naive["high"] - naive["low"]


def test_clustered_rate_of_nothing_is_none() -> None:
    assert clustered_rate([])["value"] is None


def test_clustered_interval_covers_at_about_95_percent() -> None:
    rnd, mu, hits, reps = random.Random(7), 0.5, 0, 400
    for _ in range(reps):
        probs = [rnd.betavariate(0.5, 0.5) for _ in range(30)]
        clusters = [(sum(rnd.random() < p for _ in range(4)), 4) for p in probs]
        out = clustered_rate(clusters)
        hits += out["low"] <= mu <= out["high"]
    assert hits / reps >= 0.9


@given(st.lists(st.integers(1, 6).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
                max_size=30))
def test_clustered_rate_brackets_the_pooled_estimate(clusters: list[tuple[int, int]]) -> None:
    out = clustered_rate(clusters)
    total = sum(n for _, n in clusters)
    if not total:
        assert out["value"] is None
        return
    assert out["value"] == pytest.approx(sum(c for c, _ in clusters) / total)
    assert 0.0 <= out["low"] <= out["value"] + 1e-12
    assert out["value"] - 1e-12 <= out["high"] <= 1.0


def test_rate_by_case_groups_members_by_id() -> None:
    assert rate_by_case([("a", 1.0), ("b", 0.0)])["method"] == "wilson"
    out = rate_by_case([("a", 1.0), ("a", 1.0), ("b", 0.0), ("b", 1.0)])
    assert out["method"] == "clustered" and out["clusters"] == 2 and out["value"] == 0.75


# --- pass^k, flaky, consistency -------------------------------------------------------------

EXAMPLE = [(4, 4), (2, 4), (0, 4)]


@pytest.mark.parametrize("k, expected", [
    (1, 0.5),
    (2, (1 + 1 / 6 + 0) / 3),
    (3, 1 / 3),
    (4, 1 / 3),
])
def test_pass_hat_k_closed_form(k: int, expected: float) -> None:
    assert pass_hat_k(EXAMPLE, k) == pytest.approx(expected)


def test_pass_hat_k_undefined_beyond_the_fewest_trials() -> None:
    assert pass_hat_k(EXAMPLE, 5) is None
    assert pass_hat_k([], 1) is None


def test_pass_hat_k_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be"):
        pass_hat_k(EXAMPLE, 0)


def test_pass_k_table_of_example() -> None:
    table = pass_k_table(EXAMPLE)
    assert table["cases"] == 3 and table["trials"] == 4
    assert [row["k"] for row in table["pass_hat_k"]] == [1, 2, 3, 4]
    assert table["pass_hat_k"][1]["value"] == pytest.approx(7 / 18)
    assert table["flaky"] == 1
    assert table["repeat_consistency"]["value"] == pytest.approx(2 / 3)
    assert table["repeat_consistency"]["n"] == 3


def test_pass_k_table_of_nothing() -> None:
    table = pass_k_table([])
    assert table["pass_hat_k"] == [] and table["repeat_consistency"]["value"] is None


@pytest.mark.parametrize("c, n, flaky", [(0, 4, False), (4, 4, False), (1, 4, True),
                                         (3, 4, True), (1, 1, False)])
def test_is_flaky(c: int, n: int, flaky: bool) -> None:
    assert is_flaky(c, n) is flaky


def test_repeat_consistency() -> None:
    assert repeat_consistency(EXAMPLE) == pytest.approx(2 / 3)
    assert repeat_consistency([]) is None


counts_strategy = st.lists(
    st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1, max_size=20)


@given(counts_strategy)
def test_pass_hat_k_is_non_increasing_and_starts_at_the_mean_pass_share(
        counts: list[tuple[int, int]]) -> None:
    table = [row["value"] for row in pass_k_table(counts)["pass_hat_k"]]
    assert table[0] == pytest.approx(sum(c / n for c, n in counts) / len(counts))
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(table))
    assert all(0.0 <= v <= 1.0 for v in table)
