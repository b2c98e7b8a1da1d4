"""The fitting backend recovers known constants, per group, and rejects what cannot be fitted."""
import numpy as np
import pytest

from agent.errors import FitError
from agent.expressions import parse_law
from agent.fitting import FitOptions, fit_law, predict, resolve_loss
from agent.fitting.structure import analyse
from agent.problem import Table


def table(x, y, groups=None, name="x"):
    x = np.asarray(x, float)
    groups = np.array(groups if groups is not None else ["all"] * len(x), dtype=object)
    return Table({name: x}, np.asarray(y, float).reshape(len(x), -1), groups)


def test_power_law_with_offset_is_recovered_from_noise_free_data():
    x = np.logspace(6, 9, 20)
    y = 1.7 + 400.0 * x ** -0.32
    law = parse_law("y = E + A*x**(-alpha)", ["x"], ["y"])
    fitted = fit_law(law, table(x, y), options=FitOptions(loss="lsq"))
    c = fitted.constants["all"]
    assert c["alpha"] == pytest.approx(0.32, rel=1e-4)
    assert c["E"] == pytest.approx(1.7, rel=1e-4)
    assert c["A"] == pytest.approx(400.0, rel=1e-3)


def test_each_group_gets_its_own_constants():
    x = np.tile(np.logspace(1, 4, 12), 2)
    groups = ["a"] * 12 + ["b"] * 12
    y = np.where(np.array(groups) == "a", 2.0 + 5 * x ** -0.5, 1.0 + 9 * x ** -0.3)
    law = parse_law("y = E + A*x**(-alpha)", ["x"], ["y"])
    fitted = fit_law(law, table(x, y, groups))
    assert fitted.constants["a"]["alpha"] == pytest.approx(0.5, rel=1e-3)
    assert fitted.constants["b"]["alpha"] == pytest.approx(0.3, rel=1e-3)
    pred = predict(law, table(x, y, groups), fitted.constants, groups)
    assert np.allclose(pred[:, 0], y, rtol=1e-5)


def test_linear_constants_are_projected_out_and_scales_fitted_in_log_space():
    law = parse_law("y = E + A*(x/N0)**(-alpha)", ["x"], ["y"])
    (block,) = analyse(law)
    assert set(block.linear) == {"E", "A"}
    assert block.nonlinear == ("N0", "alpha")
    assert block.positive == frozenset({"N0"})


def test_targets_sharing_no_constants_are_fitted_as_separate_blocks():
    law = parse_law("u = a + b*x\nv = c*exp(d*x)", ["x"], ["u", "v"])
    blocks = analyse(law)
    assert [b.target_index for b in blocks] == [(0,), (1,)]


@pytest.mark.parametrize("loss", ["lsq", "log", "huber_log", "robust_log"])
def test_every_loss_fits_a_clean_curve(loss):
    x = np.logspace(2, 5, 15)
    y = 0.5 + 3.0 * x ** -0.25
    law = parse_law("y = E + A*x**(-alpha)", ["x"], ["y"])
    fitted = fit_law(law, table(x, y), options=FitOptions(loss=loss))
    assert fitted.constants["all"]["alpha"] == pytest.approx(0.25, rel=1e-3)


def _at_100x(loss, y, x):
    """The fitted law's relative error 10x beyond the rows (y = 1.7 + 400 x^-0.32 there)."""
    law = parse_law("y = E + A*x**(-alpha)", ["x"], ["y"])
    constants = fit_law(law, table(x, y), options=FitOptions(loss=loss)).constants
    return float(predict(law, table([1e10], [1.0]), constants, ["all"])[0, 0] / (1.7 + 400.0 * 1e10 ** -0.32) - 1)


def test_robust_log_is_not_pulled_by_a_few_bad_runs():
    x = np.logspace(6, 9, 24)
    y = (1.7 + 400.0 * x ** -0.32) * np.exp(np.random.default_rng(0).normal(0, 0.005, 24))
    y[[3, 9, 15]] *= [1.15, 1.25, 1.2]  # three runs that went wrong, 15-25 % above the law
    assert abs(_at_100x("log", y, x)) > 0.03      # least squares bends the law towards them
    assert abs(_at_100x("robust_log", y, x)) < 0.015


def test_robust_log_is_the_log_fit_itself_where_no_run_stands_out():
    x = np.logspace(6, 9, 24)
    y = (1.7 + 400.0 * x ** -0.32) * np.exp(np.random.default_rng(0).normal(0, 0.005, 24))
    law = parse_law("y = E + A*x**(-alpha)", ["x"], ["y"])
    robust, plain = (fit_law(law, table(x, y), options=FitOptions(loss=loss)).constants for loss in ("robust_log", "log"))
    assert robust == plain


def test_auto_is_the_robust_log_fit_on_positive_targets_and_least_squares_otherwise():
    assert resolve_loss("auto", np.array([0.5, 2.0])) == "robust_log"
    assert resolve_loss("auto", np.array([-0.5, 2.0])) == "lsq"


def test_log_losses_refuse_non_positive_targets():
    law = parse_law("y = a + b*x", ["x"], ["y"])
    with pytest.raises(FitError, match="positive targets"):
        fit_law(law, table([1, 2, 3], [-1, 0, 1]), options=FitOptions(loss="log"))


def test_a_law_that_is_never_finite_is_rejected_with_a_reason():
    law = parse_law("y = a*log(-x - b**2 - 1)", ["x"], ["y"])
    with pytest.raises(FitError, match="finite"):
        fit_law(law, table([1, 2, 3, 4], [1, 2, 3, 4]))


def test_same_seed_same_constants():
    rng = np.random.default_rng(0)
    x = np.logspace(1, 3, 10)
    y = 1 + 2 * x ** -0.4 + rng.normal(0, 1e-3, 10)
    law = parse_law("y = E + A/(x**alpha + B)", ["x"], ["y"])
    a = fit_law(law, table(x, y), seed=3).constants
    b = fit_law(law, table(x, y), seed=3).constants
    assert a == b


def test_effort_is_bounded_by_work_not_by_the_clock():
    """A work budget stops further local refinements the same way on a fast or a loaded
    machine; the time limit is only a safety net and does not bind here."""
    rng = np.random.default_rng(1)
    x = np.logspace(1, 3, 40)
    y = 1 + 2 * x ** -0.4 + 0.3 * np.exp(-x / 50) + rng.normal(0, 1e-3, 40)
    law = parse_law("y = E + A/(x**alpha + B) + C*exp(-x/k)", ["x"], ["y"])
    few = FitOptions(local=1, max_work=None, time_limit=1e6)
    capped = FitOptions(local=12, max_work=1.0, time_limit=1e6)  # spent after the first refinement
    unbounded = FitOptions(local=12, max_work=None, time_limit=1e6)
    assert fit_law(law, table(x, y), options=capped).constants == fit_law(law, table(x, y), options=few).constants
    assert fit_law(law, table(x, y), options=unbounded).work > fit_law(law, table(x, y), options=capped).work


def test_a_warm_start_from_an_earlier_fit_keeps_its_basin():
    """Two decaying modes: a one-start fit may swap or merge them; starting from an earlier
    fit's constants (as the final refit does from the search's) recovers them."""
    x = np.linspace(0.0, 10.0, 60)
    y = 2.0 * np.exp(-0.3 * x) + 1.0 * np.exp(-3.0 * x)
    law = parse_law("y = A*exp(-k*x) + B*exp(-m*x)", ["x"], ["y"])
    truth = {"A": 2.0, "k": 0.3, "B": 1.0, "m": 3.0}
    near = {"all": {name: value * 1.05 for name, value in truth.items()}}
    fitted = fit_law(law, table(x, y), options=FitOptions(loss="lsq", starts=1, local=1), warm=near)
    assert fitted.constants["all"] == pytest.approx(truth, rel=1e-5)
    unusable = {"all": {"A": 2.0}}  # missing constants: ignored, not an error
    assert fit_law(law, table(x, y), options=FitOptions(loss="lsq"), warm=unusable).constants


def test_predict_names_groups_without_constants():
    law = parse_law("y = a*x", ["x"], ["y"])
    with pytest.raises(FitError, match="no constants for group"):
        predict(law, {"x": np.array([1.0])}, {"g1": {"a": 1.0}}, ["g2"])
