"""Bootstrap intervals: confidence and prediction kept apart, widening beyond the data."""
import numpy as np
import pytest

from agent.errors import DataError, FitError
from agent.expressions import parse_law
from agent.fitting import fit_law, predict
from agent.problem import Table
from agent.uncertainty import Bootstrap, Member, bootstrap, constant_intervals, interval, laplace

LAW = parse_law(["loss = E + A*(N/1e8)**(-alpha)"], ("N",), ("loss",))
TRUTH = {"E": 1.8, "A": 1.2, "alpha": 0.3}


def sweep(noise=0.01, seed=0):
    rng = np.random.default_rng(seed)
    N = np.repeat(np.geomspace(1e6, 1e9, 8), 3)
    y = (TRUTH["E"] + TRUTH["A"] * (N / 1e8) ** -TRUTH["alpha"]) * np.exp(rng.normal(0, noise, len(N)))
    return Table({"N": N}, y.reshape(-1, 1), np.full(len(N), "all_data", dtype=object))


def points(*values):
    values = np.array(values, dtype=float)
    return Table({"N": values}, np.full((len(values), 1), np.nan), np.full(len(values), "all_data", dtype=object))


@pytest.fixture(scope="module")
def fitted():
    table = sweep()
    constants = fit_law(LAW, table, seed=0).constants
    return table, constants, bootstrap(LAW, table, constants, n=60, seed=0)


def test_the_confidence_interval_widens_beyond_the_data(fitted):
    _, _, boot = fitted
    lo, hi = interval(LAW, points(3e8, 1e10, 1e11), boot, level=0.9)
    width = hi[:, 0] - lo[:, 0]
    assert width[0] < width[1] < width[2]


@pytest.mark.slow
def test_over_many_sweeps_the_90_percent_intervals_cover_the_truth_about_as_often_as_they_say():
    """One sweep can miss (that is what 10 % means); across eight, most must cover."""
    at = points(1e10)
    truth = TRUTH["E"] + TRUTH["A"] * (1e10 / 1e8) ** -TRUTH["alpha"]
    curve = exponent = 0
    for seed in range(8):
        table = sweep(seed=seed)
        constants = fit_law(LAW, table, seed=0).constants
        boot = bootstrap(LAW, table, constants, n=40, seed=seed)
        lo, hi = interval(LAW, at, boot, level=0.9)
        curve += bool(lo[0, 0] <= truth <= hi[0, 0])
        a_lo, a_hi = constant_intervals(boot, 0.9)["all_data"]["alpha"]
        exponent += bool(a_lo <= TRUTH["alpha"] <= a_hi)
    assert curve >= 5 and exponent >= 5


def test_a_prediction_interval_is_wider_than_the_confidence_interval(fitted):
    _, _, boot = fitted
    at = points(5e8)
    c_lo, c_hi = interval(LAW, at, boot, kind="confidence")
    p_lo, p_hi = interval(LAW, at, boot, kind="prediction")
    assert p_lo[0, 0] < c_lo[0, 0] and c_hi[0, 0] < p_hi[0, 0]


def test_a_bootstrap_round_trips_as_json(fitted):
    _, _, boot = fitted
    again = Bootstrap.from_dict(boot.to_dict())
    assert np.array_equal(interval(LAW, points(1e10), again)[0], interval(LAW, points(1e10), boot)[0])


def test_bad_requests_are_named(fitted):
    _, _, boot = fitted
    with pytest.raises(DataError, match="level"):
        interval(LAW, points(1e9), boot, level=1.5)
    with pytest.raises(DataError, match="kind"):
        interval(LAW, points(1e9), boot, kind="credible")


def test_the_delta_method_agrees_with_the_bootstrap_on_a_well_posed_fit(fitted):
    """On a power law with an offset and 1 % noise the linearised covariance and the refits tell the
    same story: the exponent's interval is about as wide, and both widen beyond the data."""
    table, constants, boot = fitted
    fast = laplace(LAW, table, constants, n=400, seed=0)
    slow_lo, slow_hi = constant_intervals(boot, 0.9)["all_data"]["alpha"]
    fast_lo, fast_hi = constant_intervals(fast, 0.9)["all_data"]["alpha"]
    assert fast_lo < constants["all_data"]["alpha"] < fast_hi
    assert 0.5 < (fast_hi - fast_lo) / (slow_hi - slow_lo) < 2.0
    lo, hi = interval(LAW, points(3e8, 1e10, 1e11), fast, level=0.9)
    assert np.all(np.diff(hi[:, 0] - lo[:, 0]) > 0)


def test_the_delta_method_needs_more_runs_than_constants():
    table = sweep()
    few = table.take(np.arange(3))
    with pytest.raises(Exception, match="too few"):
        laplace(LAW, few, {"all_data": dict(TRUTH)}, n=10)


def test_a_close_form_that_disagrees_beyond_the_data_widens_the_band_there(fitted):
    """Form uncertainty: the band pools the law with a finalist that disagrees beyond the data, so it
    reaches both their predictions; the same law as the only other form changes nothing."""
    table, constants, boot = fitted
    k = constants["all_data"]
    other = Member(LAW, {"all_data": {**k, "E": k["E"] - 0.2}})
    at = points(1e11)
    lo, hi = interval(LAW, at, boot, level=0.9)
    lo_f, hi_f = interval(LAW, at, boot, level=0.9, others=[other])
    mine, theirs = predict(LAW, at, constants, at.groups)[0, 0], predict(LAW, at, other.constants, at.groups)[0, 0]
    assert lo_f[0, 0] < theirs < mine < hi_f[0, 0] and hi_f[0, 0] - lo_f[0, 0] > 3 * (hi[0, 0] - lo[0, 0])
    same = interval(LAW, at, boot, level=0.9, others=[Member(LAW, constants)])
    assert np.allclose(same, (lo, hi), rtol=2e-3)


def test_a_law_fitted_on_raw_residuals_gets_raw_noise_in_its_intervals():
    """The replicates follow the law's own loss: with lsq the residuals, and the noise a prediction
    interval adds from them, are raw differences; with the log losses they are relative."""
    table = sweep()
    constants = fit_law(LAW, table, seed=0).constants
    for method in (bootstrap, laplace):
        raw, relative = (method(LAW, table, constants, n=8, seed=0, loss=loss) for loss in ("lsq", "robust_log"))
        assert raw.log_space == (False,) and relative.log_space == (True,)
        raw_residuals = table.y[:, 0] - predict(LAW, table, constants, table.groups)[:, 0]
        # leverage-adjusted: the same signs, a little larger (24 rows, 3 constants), in raw units
        assert np.all(np.sign(raw.residuals[0]) == np.sign(raw_residuals))
        assert np.all(np.abs(raw_residuals) <= np.abs(raw.residuals[0]))
        assert np.allclose(raw.residuals[0], raw_residuals, rtol=0.5)


# ---------------------------------------------------------------- checkpoints of a few runs

CHINCHILLA = parse_law(["loss = E + A*(N/1e8)**(-a) + B*(D/1e10)**(-b)"], ("N", "D"), ("loss",))
CHINCHILLA_TRUTH = {"E": 1.7, "A": 0.6, "a": 0.34, "B": 0.5, "b": 0.28}


def checkpoint_sweep(offset=0.015, noise=0.002, seed=0, with_runs=True):
    """Six runs, one per model size, each evaluated at ten checkpoints: every checkpoint of a run
    carries that run's seed offset, so the six runs are six draws of the size term, not sixty."""
    rng = np.random.default_rng(seed)
    sizes = np.geomspace(1e7, 1e9, 6)
    N = np.repeat(sizes, 10)
    D = np.concatenate([20 * n * np.geomspace(0.05, 1.0, 10) for n in sizes])
    run = np.repeat(np.arange(6), 10)
    t = CHINCHILLA_TRUTH
    mean = t["E"] + t["A"] * (N / 1e8) ** -t["a"] + t["B"] * (D / 1e10) ** -t["b"]
    y = mean * np.exp(rng.normal(0, offset, 6)[run] + rng.normal(0, noise, len(N)))
    runs = np.array([f"run{r}" for r in run], dtype=object) if with_runs else None
    return Table({"N": N, "D": D}, y.reshape(-1, 1), np.full(len(N), "all_data", dtype=object), runs)


def far_points():
    N = np.full(3, 4e9)
    return Table({"N": N, "D": 20 * N * np.array([0.1, 0.5, 1.0])}, np.full((3, 1), np.nan),
                 np.full(3, "all_data", dtype=object))


def test_named_runs_are_resampled_whole_and_each_group_keeps_its_number_of_runs():
    from agent.uncertainty import _draw, _units

    table = checkpoint_sweep()
    units = _units(table, np.arange(len(table)))
    assert len(units) == 6 and all(len(u) == 10 for u in units)
    rows = _draw(units, np.random.default_rng(0))
    assert len(rows) == 60
    for label in np.unique(table.runs[rows]):
        assert np.sum(table.runs[rows] == label) % 10 == 0  # a run comes whole or not at all
    alone = checkpoint_sweep(with_runs=False)
    assert isinstance(_units(alone, np.arange(60)), np.ndarray)  # without runs each row is its own unit


def test_checkpoints_of_a_few_runs_get_wider_confidence_intervals_than_rows_would():
    """Resampling checkpoints one by one treats six draws of the size term as sixty: the bootstrap
    over runs and the delta method's sandwich over runs both see that the curve is less certain."""
    with_runs = checkpoint_sweep()
    as_rows = checkpoint_sweep(with_runs=False)
    constants = fit_law(CHINCHILLA, as_rows, seed=0).constants
    at = far_points()

    def width(table, method):
        boot = method(CHINCHILLA, table, constants, n=40, seed=0)
        lo, hi = interval(CHINCHILLA, at, boot, level=0.9)
        return float(np.median(hi[:, 0] - lo[:, 0]))

    assert width(with_runs, bootstrap) > 2 * width(as_rows, bootstrap)
    assert width(with_runs, laplace) > 2 * width(as_rows, laplace)


def test_the_delta_method_over_runs_needs_two_runs_in_a_group():
    table = checkpoint_sweep()
    one_run = Table(table.X, table.y, table.groups, np.full(len(table), "only", dtype=object))
    constants = fit_law(CHINCHILLA, table, seed=0).constants
    with pytest.raises(FitError, match="at least 2 runs"):
        laplace(CHINCHILLA, one_run, constants, n=10)


def test_a_new_runs_noise_counts_the_run_to_run_spread_the_fit_absorbed():
    """Five constants fitted to six runs pull the curve through most of each run's seed offset, so
    the raw residuals show about 60 % of the noise's variance; the residuals adjusted by run blocks
    (the noise a prediction interval draws) show all of it, within the spread of sixteen sweeps."""
    true_variance = 0.015 ** 2 + 0.002 ** 2
    raw, adjusted = [], []
    for seed in range(16):
        table = checkpoint_sweep(seed=seed)
        constants = fit_law(CHINCHILLA, table, seed=0).constants
        fitted = predict(CHINCHILLA, table, constants, table.groups)[:, 0]
        raw.append(np.var(np.log(table.y[:, 0]) - np.log(fitted)))
        adjusted.append(np.var(laplace(CHINCHILLA, table, constants, n=4).residuals[0]))
    assert np.mean(raw) / true_variance < 0.75
    assert 0.8 < np.mean(adjusted) / true_variance < 1.6


def test_few_runs_widen_the_interval_by_the_t_quantile_and_the_bootstraps_deflation():
    """Six runs leave five degrees of freedom: the replicates' spread widens by
    sqrt(6/5) t_5/z around its centre (the expanded percentile interval), in log space."""
    from dataclasses import replace

    from agent.linearised import spread_factor

    table = checkpoint_sweep()
    constants = fit_law(CHINCHILLA, table, seed=0).constants
    boot = bootstrap(CHINCHILLA, table, constants, n=30, seed=0)
    assert boot.dof == {"all_data": 5.0} and boot.deflation == {"all_data": pytest.approx(6 / 5)}
    as_drawn = replace(boot, dof={}, deflation={})
    lo, hi = interval(CHINCHILLA, far_points(), boot, level=0.9)
    lo0, hi0 = interval(CHINCHILLA, far_points(), as_drawn, level=0.9)
    ratio = np.log(hi / lo) / np.log(hi0 / lo0)
    # the quantiles of a widened sample are the widened quantiles (up to interpolation between draws)
    assert np.allclose(ratio, spread_factor(5, 6 / 5, 0.9), rtol=0.05)
    # the constants' intervals widen alike; a record without degrees of freedom is read as drawn
    wide, narrow = constant_intervals(boot)["all_data"]["a"], constant_intervals(as_drawn)["all_data"]["a"]
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
    assert Bootstrap.from_dict({k: v for k, v in boot.to_dict().items() if k not in ("dof", "deflation")}) == as_drawn


def test_widening_keeps_a_degenerate_replicate_below_zero_and_only_ever_widens():
    """A positive target's draws widen in log space, except at a point where some replicate went
    negative (a degenerate refit): there in raw space, so that draw stays in the sample."""
    from agent.linearised import widen

    draws = np.array([[1.0, 2.0], [1.2, -0.5], [0.9, 2.2], [1.1, 1.9], [1.05, 2.1]])
    wide = widen(draws, 1.5, np.array([True, True]))
    assert np.all(np.isfinite(wide))
    lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
    wide_lo, wide_hi = np.quantile(wide, [0.05, 0.95], axis=0)
    assert np.all(wide_lo < lo) and np.all(hi < wide_hi)
    assert np.allclose(np.log(wide[:, 0]) - np.median(np.log(wide[:, 0])),
                       1.5 * (np.log(draws[:, 0]) - np.median(np.log(draws[:, 0]))))
    assert widen(draws, 1.0, True) is draws
