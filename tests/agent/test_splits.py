"""Validation rows come from the training rows: the tail along the axis, or folds of settings."""
import numpy as np

from agent.splits import kfold_by_setting, make_folds, tail_folds


def test_tail_folds_validate_on_the_far_end_of_each_group_and_keep_levels_whole():
    axis = np.tile(np.arange(1, 11, dtype=float), 2)
    groups = np.array(["a"] * 10 + ["b"] * 10, dtype=object)
    folds = tail_folds(axis, groups, n_folds=3)
    first = folds[0]
    assert set(axis[first.validate]) == {9.0, 10.0}
    assert axis[first.fit].max() < axis[first.validate].min()
    assert set(groups[first.validate]) == {"a", "b"}
    # later folds move the origin back with the same horizon
    assert [sorted(set(axis[f.validate])) for f in folds] == [[9.0, 10.0], [8.0, 9.0], [7.0, 8.0]]


def test_the_nearest_fold_fits_the_axis_on_three_levels_earlier_ones_on_two():
    # a floor, a scale and an exponent along the axis pass through any two levels: the nearest fold,
    # the final law's stand-in, keeps three; the earlier origins are down-weighted checks
    axis = np.repeat([1.0, 2.0, 4.0, 8.0], 2)
    folds = tail_folds(axis, np.array(["g"] * 8, dtype=object), n_folds=3)
    assert [sorted(set(axis[f.fit])) for f in folds] == [[1.0, 2.0, 4.0], [1.0, 2.0]]


def test_three_axis_levels_validate_on_settings_not_on_a_tail():
    x = {"n": np.repeat([1.0, 2.0, 4.0], 4), "lr": np.tile([1e-3, 2e-3, 4e-3, 8e-3], 3)}
    groups = np.array(["g"] * 12, dtype=object)
    assert tail_folds(x["n"], groups, n_folds=3) == []
    folds = make_folds(x["n"], groups, x, ["n", "lr"], seed=0)
    assert len(folds) >= 3 and not any(f.ordered for f in folds)


def test_kfold_keeps_one_setting_in_one_fold_across_groups():
    x = {"p": np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3])}
    folds = kfold_by_setting(x, ["p"], n_folds=3, seed=0)
    for f in folds:
        held = set(x["p"][f.validate])
        assert held.isdisjoint(set(x["p"][f.fit]))
    assert sorted(np.concatenate([f.validate for f in folds]).tolist()) == list(range(6))


def test_rolling_origin_folds_are_ordered_and_kfold_folds_exchangeable():
    axis = np.arange(1, 11, dtype=float)
    assert all(f.ordered for f in tail_folds(axis, np.array(["g"] * 10, dtype=object)))
    assert not any(f.ordered for f in kfold_by_setting({"p": axis}, ["p"], n_folds=3))
