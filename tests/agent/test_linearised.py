"""The small-sample corrections of a linearised fit, checked against the linear-regression textbook."""
import numpy as np
import pytest
from scipy import stats

from agent.expressions import parse_law
from agent.fitting import FitOptions, fit_law
from agent.linearised import adjusted_residuals, linearise, spread_factor
from agent.problem import Table

LINE = parse_law(["y = a + b*x"], ("x",), ("y",))
RAW = (False,)  # an lsq fit: residuals in the target's own units


def line_table(runs=None, seed=0):
    rng = np.random.default_rng(seed)
    x = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 9.0])
    y = 1.0 + 0.5 * x + rng.normal(0, 0.1, len(x))
    return Table({"x": x}, y.reshape(-1, 1), np.full(len(x), "all_data", dtype=object), runs)


def fitted_line(table):
    constants = fit_law(LINE, table, seed=0, options=FitOptions(loss="lsq")).constants["all_data"]
    return linearise(LINE, table, constants, "all_data", RAW)


def hat_matrix(x):
    design = np.column_stack([np.ones_like(x), x])
    return design @ np.linalg.solve(design.T @ design, design.T)


def test_a_rows_residual_is_divided_by_the_square_root_of_one_minus_its_leverage():
    """Davison & Hinkley's modified residuals: the far row (x = 9) pulls the line most, so its raw
    residual hides the most noise."""
    table = line_table()
    lin = fitted_line(table)
    leverage = np.diag(hat_matrix(table.X["x"]))
    assert np.allclose(adjusted_residuals(lin), lin.residual / np.sqrt(1 - leverage), rtol=1e-5)
    assert np.argmax(np.abs(adjusted_residuals(lin) / lin.residual)) == 7


def test_a_runs_residuals_are_adjusted_together_by_the_inverse_square_root_of_one_minus_its_hat_block():
    runs = np.array(["r0", "r0", "r1", "r1", "r2", "r2", "r3", "r3"], dtype=object)
    table = line_table(runs)
    lin = fitted_line(table)
    hat = hat_matrix(table.X["x"])
    expected = lin.residual.copy()
    for label in np.unique(runs):
        block = np.flatnonzero(runs == label)
        vals, vecs = np.linalg.eigh(np.eye(len(block)) - hat[np.ix_(block, block)])
        expected[block] = (vecs / np.sqrt(vals)) @ vecs.T @ lin.residual[block]
    assert np.allclose(adjusted_residuals(lin), expected, rtol=1e-5)
    # not the same as adjusting each row alone: a run's rows share the pull of the fit
    assert not np.allclose(adjusted_residuals(lin), adjusted_residuals(fitted_line(line_table())), rtol=1e-3)


@pytest.mark.parametrize("level", [0.8, 0.9, 0.95])
def test_the_spread_factor_is_the_t_quantile_over_the_normal_one_times_the_bootstraps_deflation(level):
    q = 1 - (1 - level) / 2
    t_over_z = stats.t.ppf(q, 5) / stats.norm.ppf(q)
    assert spread_factor(5, 1.0, level) == pytest.approx(t_over_z)
    assert spread_factor(5, 6 / 5, level) == pytest.approx(np.sqrt(6 / 5) * t_over_z)
    assert spread_factor(np.inf, 1.0, level) == pytest.approx(1.0)
    assert spread_factor(10_000, 1.0, level) == pytest.approx(1.0, abs=1e-3)
    assert spread_factor(1, 1.0, level) > spread_factor(2, 1.0, level) > spread_factor(30, 1.0, level) > 1
