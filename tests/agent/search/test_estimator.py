"""LawSearch reads like a scikit-learn estimator."""
import numpy as np
import pandas as pd
import pytest
import sympy as sp

from agent.defaults import DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.errors import DataError
from agent.estimator import LawSearch
from agent.search import OfflineProposer


@pytest.fixture(scope="module")
def default_fit(power_law_data):
    """One small search at the default loss, shared by the tests that only read a fitted model."""
    model = LawSearch(axis=["N"], max_constants=4, budget=20, seed=0, n_bootstrap=10)
    return model.fit(power_law_data[["N"]], power_law_data["loss"], groups=power_law_data["group"])


def test_fit_predict_and_the_equations_table(power_law_data):
    train = power_law_data[power_law_data.N < 3e8]
    held_out = power_law_data[power_law_data.N >= 3e8]
    model = LawSearch(axis=["N"], max_constants=4, budget=50, seed=0, n_bootstrap=20)
    model.fit(train[["N"]], train["loss"], groups=train["group"])
    pred = model.predict(held_out[["N"]], groups=held_out["group"])
    assert pred.shape == (len(held_out),)
    assert np.max(np.abs(pred / held_out["loss"].to_numpy() - 1)) < 0.02
    table = model.equations_
    assert list(table.columns[:5]) == ["law", "complexity", "n_constants", "validation_loss", "validation_r2"]
    assert table["score"].is_monotonic_decreasing
    assert isinstance(model.sympy(), sp.Expr)
    assert "N" in model.latex()
    # intervals from a bootstrap of the law over the training runs: the point inside, wider further out
    mid, lo, hi = model.predict(held_out[["N"]], groups=held_out["group"], return_interval=True)
    assert np.array_equal(mid, pred) and np.all(lo <= mid) and np.all(mid <= hi)
    _, p_lo, p_hi = model.predict(held_out[["N"]], groups=held_out["group"], return_interval=True, kind="prediction")
    assert np.all(p_hi - p_lo >= hi - lo)
    # how the law was chosen travels with it: the margin and the close finalists' spread beyond the data
    assert model.selection_["margin"] > 0 and model.selection_["close_finalists"] >= 1


def test_a_target_computed_from_an_input_is_named_y_and_bad_limits_are_refused_by_name():
    X = pd.DataFrame({"N": np.geomspace(1e6, 1e9, 10)})
    y = 2 + 30 * X.N ** -0.3  # a Series that pandas names after N
    model = LawSearch(budget=10, seed=0).fit(X, y)
    assert model.best_.lines[0].startswith("y = ") and model.problem_.targets == ("y",)
    with pytest.raises(DataError, match="column\\(s\\) N are both in X and y"):
        LawSearch(budget=10).fit(X, y.to_frame())  # a table names its columns on purpose
    with pytest.raises(DataError, match="the seed must be a whole number, 0 or more"):
        LawSearch(budget=10, seed=-1).fit(X, y)
    with pytest.raises(DataError, match="one entry each per row: X has 10, y has 5"):
        LawSearch(budget=10).fit(X, y[:5])  # not "5 missing values" in y
    with pytest.raises(DataError, match="X has 10, y has 10, groups has 2"):
        LawSearch(budget=10).fit(X, y, groups=["a", "b"])
    with pytest.raises(DataError, match="X has 10, y has 10, runs has 3"):
        LawSearch(budget=10).fit(X, y, runs=["r1", "r2", "r3"])


def test_rows_that_are_checkpoints_of_a_few_runs_get_intervals_over_runs():
    """``runs=``: which training run each row comes from; the bootstrap then resamples whole runs, so
    checkpoints of five runs carrying each run's seed offset give a wider band than thirty rows would."""
    rng = np.random.default_rng(0)
    sizes = np.repeat([1e7, 3e7, 1e8, 3e8, 1e9], 6)
    run = np.repeat(np.arange(5), 6)
    X = pd.DataFrame({"N": sizes, "D": 20 * sizes * np.tile(np.geomspace(0.1, 1.0, 6), 5)})
    y = (1.7 + 0.6 * (X.N / 1e8) ** -0.34 + 0.5 * (X.D / 1e10) ** -0.28) * np.exp(
        rng.normal(0, 0.02, 5)[run] + rng.normal(0, 0.001, 30))
    far = pd.DataFrame({"N": [4e9], "D": [8e10]})
    width, laws = {}, {}
    for runs in (None, [f"r{k}" for k in run]):
        model = LawSearch(budget=5, seed=0, n_bootstrap=30).fit(X, y, runs=runs)
        _, lo, hi = model.predict(far, return_interval=True)
        width[runs is not None] = float(hi[0] - lo[0])
        laws[runs is not None] = (model.best_.lines, model.best_.constants)
    assert model.problem_.run is not None
    assert width[True] > 1.5 * width[False]
    assert laws[True] == laws[False]  # runs inform the intervals only: the search and its law are the same


def test_a_grouped_law_needs_groups_to_predict(power_law_data, default_fit):
    with pytest.raises(DataError, match="groups="):
        default_fit.predict(power_law_data[["N"]])


@pytest.mark.slow
def test_a_given_proposer_is_left_unused_so_fitting_again_gives_the_same_law(power_law_data, default_fit):
    """The search proposes through a copy: the given proposer's seed library is not used up, so a
    second fit starts where the first did (and both find the law the default proposer finds)."""
    proposer = OfflineProposer()
    model = LawSearch(axis=["N"], max_constants=4, budget=20, seed=0, n_bootstrap=10, proposers=[(proposer, 1.0)])
    found = model.fit(power_law_data[["N"]], power_law_data["loss"], groups=power_law_data["group"]).best_
    assert proposer.state_dict() == {"seed_pos": 0}
    assert found.lines == default_fit.best_.lines and found.constants == default_fit.best_.constants


def test_parameters_round_trip_as_scikit_learn_expects(power_law_data):
    model = LawSearch(axis=["N"], max_constants=4, budget=20, seed=3)
    params = model.get_params()
    assert params == {"axis": ["N"], "budget": 20, "max_constants": 4, "proposers": None, "seed": 3,
                      "time_limit": DEFAULT_TIME_LIMIT, "work_budget": DEFAULT_WORK, "workers": 1,
                      "n_bootstrap": 100, "loss": "auto"}
    twin = LawSearch(**params)  # what sklearn.base.clone does
    assert twin.get_params() == params
    assert model.set_params(seed=0, budget=15) is model and model.get_params()["seed"] == 0
    with pytest.raises(ValueError, match="invalid parameter.*budgett"):
        model.set_params(budgett=10)
    X, y, groups = power_law_data[["N"]], power_law_data["loss"], power_law_data["group"]
    model.fit(X, y, groups=groups)
    assert model.search_.config.budget == 15 and model.search_.config.seed == 0  # fit reads the parameters


def test_sklearn_clone_gives_an_unfitted_twin():
    base = pytest.importorskip("sklearn.base")
    model = LawSearch(axis=["N"], budget=20, proposers=[(OfflineProposer(), 1.0)])
    twin = base.clone(model)
    assert twin.get_params()["budget"] == 20 and not hasattr(twin, "best_")
    assert twin.get_params()["proposers"][0][0] is not model.proposers[0][0]


def test_the_loss_asked_for_fits_the_law_and_its_intervals(power_law_data, default_fit):
    """``loss="lsq"``: the reported law is fitted on raw residuals, every finalist was scored that way,
    and the interval refits use it too (so a prediction interval adds raw, not relative, noise)."""
    model = LawSearch(axis=["N"], max_constants=4, budget=20, seed=0, n_bootstrap=10, loss="lsq")
    model.fit(power_law_data[["N"]], power_law_data["loss"], groups=power_law_data["group"])
    assert model.best_.fit_loss == "lsq"
    finalists = [c for c in model.search_.candidates if c.finalist]
    assert finalists and {c.meta["fit_loss"] for c in finalists} == {"lsq"}
    model.predict(power_law_data[["N"]], groups=power_law_data["group"], return_interval=True)
    assert model.bootstrap_.log_space == (False,)
    default = default_fit
    default.predict(power_law_data[["N"]], groups=power_law_data["group"], return_interval=True)
    assert default.best_.fit_loss == "robust_log" and default.bootstrap_.log_space == (True,)


@pytest.mark.slow
def test_the_readmes_own_sweep_comes_back_as_the_power_law_it_was_made_from():
    """The README's sweep, ``E + A*N**-0.3`` in two groups with 0.3 % noise, at the default options.
    On this search seed the 4-row tail once preferred ``c0 + c1*tanh(log(N/3.2e7)) + c2*N**-a2``, a
    sigmoid centred on the reference sld divides N by (choice.py, rule 4)."""
    rng = np.random.default_rng(0)
    rows = [(N, g, (E + A * N ** -0.3) * np.exp(rng.normal(0, 0.003)))
            for g, E, A in [("a", 1.8, 300.0), ("b", 2.1, 250.0)] for N in np.geomspace(1e6, 1e9, 10)]
    df = pd.DataFrame(rows, columns=["N", "group", "loss"])
    model = LawSearch(seed=0, n_bootstrap=0).fit(df[["N"]], df["loss"], groups=df["group"])
    assert model.best_.n_constants == 3 and "reference_dependent" not in model.best_.selection
    far = pd.DataFrame({"N": [1e10, 1e10]})
    truth = np.array([1.8 + 300.0 * 1e10 ** -0.3, 2.1 + 250.0 * 1e10 ** -0.3])
    assert np.max(np.abs(model.predict(far, groups=["a", "b"]) / truth - 1)) < 0.02  # 10x beyond the data
