"""Scoring matches SLDBench's evaluator: per target, then averaged; variance with ddof 0."""
from __future__ import annotations

import numpy as np
import pytest

from agent.scoring import benchmark_mean, floored, score


def test_a_hand_computed_example():
    # err = (0, 0, 0, -1): MSE 0.25, MAE 0.25; Var(y) = 1.25 (ddof 0), mean |y - 2.5| = 1.0
    s = score(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0]))
    assert s.nmse == pytest.approx(0.2)
    assert s.r2 == pytest.approx(0.8)
    assert s.nmae == pytest.approx(0.25)
    assert s.n_rows == 4


def test_variance_uses_ddof_0_not_the_sample_variance():
    s = score(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0, 3.0, 5.0]))
    assert s.nmse != pytest.approx(0.25 / np.var([1, 2, 3, 4], ddof=1))


def test_several_targets_are_scored_one_by_one_then_averaged():
    truth = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 2.0], [4.0, 2.0]])
    pred = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 2.0], [5.0, 2.0]])
    # column 1: NMSE 0.25/1.25 = 0.2; column 2: 0.25/1.0 = 0.25 -> 0.225; NMAE 0.25 in both
    s = score(truth, pred)
    assert s.nmse == pytest.approx(0.225)
    assert s.r2 == pytest.approx(0.775)
    assert s.nmae == pytest.approx(0.25)
    # not the R² of the pooled values
    assert s.r2 != pytest.approx(score(truth.ravel(), pred.ravel()).r2)


def test_a_perfect_prediction_scores_one():
    y = np.array([2.0, 3.0, 5.0])
    assert score(y, y).r2 == 1.0 and score(y, y).nmae == 0.0


def test_predicting_the_mean_scores_zero():
    y = np.array([2.0, 3.0, 7.0])
    assert score(y, np.full(3, y.mean())).r2 == pytest.approx(0.0)


def test_non_finite_predictions_score_minus_infinity():
    s = score(np.array([1.0, 2.0]), np.array([1.0, np.nan]))
    assert s.r2 == float("-inf") and floored(s.r2) == -1.0


def test_shape_mismatch_and_empty_input_are_errors():
    with pytest.raises(ValueError, match="shape mismatch"):
        score(np.ones(3), np.ones(4))
    with pytest.raises(ValueError, match="zero rows"):
        score(np.ones(0), np.ones(0))


def test_the_benchmark_mean_floors_each_task_at_minus_one_and_reports_the_raw_mean():
    paper_human_row = [0.9999, 0.9664, 0.9571, 0.6711, 0.7032, 0.9106, -0.0757, -939.8]
    raw, mean_floored = benchmark_mean(paper_human_row)
    assert mean_floored == pytest.approx(0.517, abs=5e-4)
    assert raw == pytest.approx(sum(paper_human_row) / 8)
    assert floored(float("nan")) == -1.0 and floored(0.3) == 0.3
