"""Bootstrap intervals: confidence and prediction kept apart, widening beyond the data."""
import numpy as np
import pytest

from agent.errors import DataError
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
        assert np.allclose(raw.residuals[0], table.y[:, 0] - predict(LAW, table, constants, table.groups)[:, 0])
