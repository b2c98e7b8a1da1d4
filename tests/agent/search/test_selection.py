"""The score as a pure function of recorded parts: how rolling-origin folds are weighed."""
import numpy as np
import pytest

from agent.search.selection import Selection, fold_weights, score_standard_error, selection_score


def test_rolling_origin_folds_weigh_one_a_quarter_a_ninth_from_the_fold_fitted_on_the_most_rows():
    assert np.allclose(fold_weights(3, ordered=True), [1.0, 0.25, 1.0 / 9])
    assert np.allclose(fold_weights(3, ordered=False), [1.0, 1.0, 1.0])


def test_a_law_that_extrapolates_well_from_the_most_rows_outranks_one_good_only_from_the_fewest():
    sel = Selection()
    good_late = selection_score([0.01, 1.0], None, 0.0, 10, ordered=True, sel=sel)
    good_early = selection_score([1.0, 0.01], None, 0.0, 10, ordered=True, sel=sel)
    assert good_late > good_early
    # exchangeable folds cannot tell the two apart
    assert selection_score([0.01, 1.0], None, 0.0, 10, False, sel) == selection_score([1.0, 0.01], None, 0.0, 10,
                                                                                         False, sel)
    # in decades: fold 0 weighs four times fold 1
    assert np.isclose(good_late, -(1 * -2 + 0.25 * 0) / 1.25 - sel.complexity_weight * 10)


def test_implausibility_costs_half_a_decade_per_failed_check():
    sel = Selection()
    assert np.isclose(selection_score([0.1], None, 0.0, 0, True, sel) - selection_score([0.1], None, 1.0, 0, True, sel),
                      sel.implausible_penalty)


def test_a_scores_standard_error_weighs_each_folds_error_as_the_score_weighs_the_fold():
    one_fold = score_standard_error({"fold_se": [0.3]}, ordered=True)
    assert one_fold == pytest.approx(0.3)
    w = np.array([1, 1 / 4, 1 / 9])
    w = w / w.sum()
    expected = np.sqrt(np.sum((w * np.array([0.3, 0.3, 0.3])) ** 2))
    assert score_standard_error({"fold_se": [0.3, 0.3, 0.3]}, ordered=True) == pytest.approx(expected)
    assert score_standard_error({"fold_se": [0.3, None]}, ordered=True) is None  # unknown: no rule
    assert score_standard_error({}, ordered=True) is None
