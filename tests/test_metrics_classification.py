"""Tests of the L2 intent metrics (pytest_agenteval/metrics/classification.py)."""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support

from pytest_agenteval.metrics.classification import intent_metrics, intent_pairs

from factories import intent, item, scenario, turn

LABELS = ["A", "B", "C", "D"]

pair_lists = st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from([*LABELS, "UNKNOWN"])),
                      max_size=40)
taxonomies = st.none() | st.lists(st.sampled_from([*LABELS, "E"]), unique=True)


def _same(ours: float | None, theirs: float) -> bool:
    """None exactly where scikit-learn is undefined (NaN), equal elsewhere."""
    if math.isnan(theirs):
        return ours is None
    return ours is not None and ours == pytest.approx(float(theirs))


def _json_native(value: Any) -> bool:
    if isinstance(value, dict):
        return all(type(k) is str and _json_native(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_native(v) for v in value)
    return value is None or type(value) in (str, int, float, bool)


def _sk(pairs: list[tuple[str, str]], labels: list[str], average: str | None) -> Any:
    return precision_recall_fscore_support([e for e, _ in pairs], [p for _, p in pairs],
                                           labels=labels, average=average,
                                           zero_division=np.nan)


# --- properties against scikit-learn --------------------------------------------------------


@given(pair_lists.filter(bool), taxonomies)
def test_per_label_matches_sklearn_where_defined(pairs: list[tuple[str, str]],
                                                 taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    precision, recall, f1, support = _sk(pairs, out["labels"], None)
    for i, label in enumerate(out["labels"]):
        row = out["per_label"][label]
        assert _same(row["precision"], precision[i])
        assert _same(row["recall"], recall[i])
        assert _same(row["f1"], f1[i])
        assert row["support"] == int(support[i])


@given(pair_lists.filter(bool), taxonomies)
def test_micro_and_accuracy_match_sklearn(pairs: list[tuple[str, str]],
                                          taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    precision, recall, f1, _ = _sk(pairs, out["labels"], "micro")
    assert _same(out["micro_precision"], precision)
    assert _same(out["micro_recall"], recall)
    assert _same(out["micro_f1"], f1)
    assert out["accuracy"] == pytest.approx(
        accuracy_score([e for e, _ in pairs], [p for _, p in pairs]))


@given(pair_lists, taxonomies)
def test_macro_f1_is_the_mean_of_defined_f1s(pairs: list[tuple[str, str]],
                                             taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    defined = [row["f1"] for row in out["per_label"].values() if row["f1"] is not None]
    if not defined:
        assert out["macro_f1"] is None
        return
    assert out["macro_f1"] == pytest.approx(sum(defined) / len(defined))
    assert out["macro_f1"] == pytest.approx(_sk(pairs, out["labels"], "macro")[2])


@given(pair_lists, taxonomies)
def test_confusion_matrix_matches_sklearn(pairs: list[tuple[str, str]],
                                          taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    axis, matrix = out["confusion"]["labels"], out["confusion"]["matrix"]
    assert sum(map(sum, matrix)) == out["evaluated"] == len(pairs)
    if pairs:
        with warnings.catch_warnings():  # sklearn warns on a 1×1 matrix, our axis is right
            warnings.simplefilter("ignore", UserWarning)
            expected = confusion_matrix([e for e, _ in pairs], [p for _, p in pairs],
                                        labels=axis)
        assert matrix == expected.tolist()
    assert ("UNKNOWN" in axis) == any(p == "UNKNOWN" for _, p in pairs)


@given(pair_lists, taxonomies)
def test_output_is_json_native_and_round_trips(pairs: list[tuple[str, str]],
                                               taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    assert _json_native(out)
    assert json.loads(json.dumps(out, allow_nan=False)) == out


@given(pair_lists, taxonomies)
def test_labels_are_the_taxonomy_then_the_labels_seen(pairs: list[tuple[str, str]],
                                                      taxonomy: list[str] | None) -> None:
    out = intent_metrics(pairs, taxonomy)
    seen = {e for e, _ in pairs} | {p for _, p in pairs if p != "UNKNOWN"}
    assert out["labels"][:len(taxonomy or [])] == list(taxonomy or [])
    assert set(out["labels"]) == set(taxonomy or []) | seen


# --- degenerate inputs ----------------------------------------------------------------------


def test_empty_input_is_not_evaluated_everywhere() -> None:
    out = intent_metrics([], ["A", "B"])
    assert out["evaluated"] == 0
    assert out["per_label"] == {
        "A": {"precision": None, "recall": None, "f1": None, "support": 0},
        "B": {"precision": None, "recall": None, "f1": None, "support": 0},
    }
    for key in ("macro_f1", "macro_precision", "macro_recall", "micro_f1", "accuracy"):
        assert out[key] is None
    assert out["confusion"] == {"labels": ["A", "B"], "matrix": [[0, 0], [0, 0]]}


def test_empty_input_without_taxonomy() -> None:
    out = intent_metrics([], None)
    assert out["labels"] == [] and out["per_label"] == {} and out["macro_f1"] is None
    assert out["confusion"] == {"labels": [], "matrix": []}


def test_one_label_all_right() -> None:
    out = intent_metrics([("A", "A"), ("A", "A")], None)
    assert out["per_label"]["A"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 2}
    assert out["macro_f1"] == out["micro_f1"] == out["accuracy"] == 1.0


def test_label_without_support_or_prediction_is_none_not_zero() -> None:
    out = intent_metrics([("A", "A"), ("B", "A")], ["A", "B", "C"])
    assert out["per_label"]["C"] == {"precision": None, "recall": None, "f1": None, "support": 0}
    # B was expected once and never predicted: precision undefined, recall a real 0
    assert out["per_label"]["B"] == {"precision": None, "recall": 0.0, "f1": 0.0, "support": 1}
    # A: tp 1, fp 1, fn 0 → F1 2/3; B: F1 0; C: undefined, left out of the mean
    assert out["macro_f1"] == pytest.approx((2 / 3 + 0.0) / 2)


def test_only_unknown_predictions() -> None:
    out = intent_metrics([("A", "UNKNOWN"), ("B", "UNKNOWN")], None)
    assert out["labels"] == ["A", "B"]
    assert out["per_label"]["A"] == {"precision": None, "recall": 0.0, "f1": 0.0, "support": 1}
    assert out["micro_precision"] is None and out["micro_recall"] == 0.0
    assert out["accuracy"] == 0.0 and out["unknown_predictions"] == 2
    assert out["confusion"] == {"labels": ["A", "B", "UNKNOWN"],
                                "matrix": [[0, 0, 1], [0, 0, 1], [0, 0, 0]]}


def test_unknown_lowers_recall_not_precision() -> None:
    out = intent_metrics([("A", "A"), ("A", "UNKNOWN"), ("B", "B")], ["A", "B"])
    assert out["per_label"]["A"]["precision"] == 1.0
    assert out["per_label"]["A"]["recall"] == 0.5
    assert out["micro_precision"] == 1.0 and out["micro_recall"] == pytest.approx(2 / 3)
    assert out["accuracy"] == pytest.approx(2 / 3)


def test_expected_unknown_makes_it_a_scored_label() -> None:
    out = intent_metrics([("UNKNOWN", "UNKNOWN"), ("A", "A")], None)
    assert out["labels"] == ["A", "UNKNOWN"]
    assert out["per_label"]["UNKNOWN"]["f1"] == 1.0


def test_predicted_label_outside_the_taxonomy_is_scored() -> None:
    out = intent_metrics([("A", "Z")], ["A"])
    assert out["labels"] == ["A", "Z"]
    assert out["per_label"]["Z"] == {"precision": 0.0, "recall": None, "f1": 0.0, "support": 0}


# --- pairs from item results ----------------------------------------------------------------


def test_intent_pairs_reads_cases_and_scenario_turns() -> None:
    items = [
        item("a", intent_=intent("A", "A")),
        item("b", intent_=intent("A", None)),                  # no intent returned
        item("c", "error"),                                    # the agent did not answer
        item("d", intent_=intent(None, "B")),                  # nothing expected
        scenario("s", "failed", turn("failed", intent_=intent("B", "UNKNOWN")),
                 turn(intent_=intent("C", "C"))),
    ]
    assert intent_pairs(items) == [("A", "A"), ("B", "UNKNOWN"), ("C", "C")]


def test_intent_pairs_skips_turns_whose_verdict_is_error() -> None:
    # the agent answered with an intent, but a rule type raised: the turn is an error
    crashed = turn("error", error="rule", intent_=intent("D", "D"))
    assert crashed.intent.predicted == "D"
    items = [item("x", "error", turns=[crashed]),
             scenario("s", "error", turn(intent_=intent("B", "B")), crashed)]
    assert intent_pairs(items) == [("B", "B")]
    # the same turn with a verdict counts
    answered = crashed.model_copy(update={"status": "passed", "error": None})
    assert intent_pairs([item("y", turns=[answered])]) == [("D", "D")]
