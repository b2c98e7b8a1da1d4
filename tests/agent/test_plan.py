"""plan_discovery: one request and one dataset give one plan, with every default resolved in one place."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agent.defaults import DEFAULT_BUDGET, DEFAULT_CAP, DEFAULT_TIME_LIMIT, DEFAULT_WORK, MIN_TRAIN_ROWS
from agent.errors import DataError
from agent.plan import DiscoveryRequest, HeldOut, plan_discovery


@pytest.fixture
def sweep():
    """N spans three decades, D a little over one, lr less than one, and a shifted input is not positive."""
    n = 12
    return pd.DataFrame({
        "N": np.geomspace(1e6, 1e9, n), "D": np.geomspace(1e9, 1.5e10, n), "lr": np.resize([1e-3, 3e-3, 9e-3], n),
        "shift": np.linspace(-1.0, 100.0, n), "loss": np.linspace(3.0, 2.0, n),
        "split": ["train"] * (n - 3) + ["test"] * 3,
    })


def test_the_defaults_are_the_product_defaults(sweep):
    plan = plan_discovery(sweep, DiscoveryRequest(["N", "D", "lr", "shift"], ["loss"]))
    assert plan.problem.axis == ("N", "D")  # positive and spanning a decade: not lr, not shift
    assert plan.problem.max_constants == DEFAULT_CAP
    c = plan.config
    assert (c.budget, c.work_budget, c.time_limit, c.seed) == (DEFAULT_BUDGET, DEFAULT_WORK, DEFAULT_TIME_LIMIT, 0)
    assert plan.held_out is None


def test_the_default_cap_is_per_target_so_a_second_target_does_not_halve_the_first_ones_law(sweep):
    """Loss and accuracy of the same runs: with one cap of 6 for both, the loss could not have Chinchilla's
    five constants.  A cap that is given is the whole law's, as a task's is."""
    sweep = sweep.assign(acc=np.linspace(0.3, 0.6, len(sweep)))
    assert plan_discovery(sweep, DiscoveryRequest(["N", "D"], ["loss", "acc"])).problem.max_constants == 2 * DEFAULT_CAP
    assert plan_discovery(sweep, DiscoveryRequest(["N", "D"], ["loss", "acc"], max_constants=7)).problem.max_constants == 7


def test_a_given_axis_cap_and_limits_are_kept_and_zero_means_no_limit(sweep):
    request = DiscoveryRequest(["N", "lr"], ["loss"], axis=[], max_constants=3, budget=50, work_budget=0,
                               time_limit=None, seed=4, patience=2)
    plan = plan_discovery(sweep, request)
    assert plan.problem.axis == () and plan.problem.max_constants == 3
    c = plan.config
    assert (c.budget, c.work_budget, c.time_limit, c.seed, c.patience) == (50, None, None, 4, 2)


@pytest.mark.parametrize("limits, message", [
    (dict(budget=0), r"the budget must be a whole number of candidate laws, at least 1 \(got 0\)"),
    (dict(budget=-3), r"at least 1 \(got -3\)"),
    (dict(budget=2.5), r"the budget must be a whole number"),
    (dict(max_constants=0), r"the constant cap must be a whole number, at least 1"),
    (dict(seed=-5), r"the seed must be a whole number, 0 or more \(got -5\)"),
    (dict(patience=0), r"patience must be a whole number of generations"),
    (dict(work_budget=-5.0), r"the work budget must be a finite number, 0 \(no limit\) or more"),
    (dict(time_limit=float("nan")), r"the time limit must be a finite number"),
])
def test_limits_a_search_cannot_run_with_are_refused_by_name(sweep, limits, message):
    """Once a budget of -3 searched nothing and blamed the constant cap, and a seed of -5 was a traceback."""
    with pytest.raises(DataError, match=message):
        plan_discovery(sweep, DiscoveryRequest(["N"], ["loss"], **limits))


def test_held_out_rows_are_split_off_before_the_axis_is_chosen(sweep):
    # on the training rows alone D spans less than a decade, so it is no axis there
    plan = plan_discovery(sweep, DiscoveryRequest(["N", "D"], ["loss"], held_out=HeldOut("split", "test")))
    train, test = plan.split(sweep)
    assert (len(train), len(test)) == (9, 3) and set(test["split"]) == {"test"}
    assert plan.problem.axis == ("N",)


def test_a_threshold_holds_out_the_largest_rows_of_a_numeric_column(sweep):
    largest = sweep["N"].max()
    train, test = HeldOut("N", at_least=largest).split(sweep)
    assert (test["N"] == largest).all() and (train["N"] < largest).all() and len(train) + len(test) == len(sweep)


@pytest.mark.parametrize("change, message", [
    ({"inputs": ["N", "M"]}, "column 'M' is not in the data"),
    ({"axis": ["lr"]}, "axis column(s) lr must be among the inputs"),
    ({"group": "N"}, "the group column 'N' cannot also be an input or a target"),
    ({"held_out": HeldOut("fold")}, "column 'fold' is not in the data"),
    ({"run": "seed_run"}, "column 'seed_run' is not in the data"),
    ({"run": "N"}, "the run column 'N' cannot also be an input, a target or the group"),
])
def test_a_request_that_does_not_fit_the_data_is_refused_by_name(sweep, change, message):
    request = DiscoveryRequest(**{"inputs": ["N"], "targets": ["loss"], **change})
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        plan_discovery(sweep, request)


def test_a_run_column_travels_with_the_problem_and_its_training_table(sweep):
    """Rows that are checkpoints of one run name it; the plan keeps the column, the stored problem
    round-trips it, and the training table carries each row's run (points to predict at have none)."""
    from agent.problem import Problem, make_table

    sweep["run"] = np.repeat(["r1", "r2", "r3", "r4"], 3)
    plan = plan_discovery(sweep, DiscoveryRequest(["N", "D"], ["loss"], run="run"))
    assert plan.problem.run == "run"
    assert Problem.from_dict(plan.problem.to_dict()) == plan.problem
    assert make_table(sweep, plan.problem).runs.tolist() == sweep["run"].tolist()
    assert make_table(sweep.drop(columns=["run", "loss"]), plan.problem, require_targets=False).runs is None
    sweep.loc[4, "run"] = None
    with pytest.raises(DataError, match=r"column 'run' \(run\) has 1 missing value"):
        plan_discovery(sweep, DiscoveryRequest(["N", "D"], ["loss"], run="run"))


def test_too_few_training_rows_are_refused(sweep):
    few = sweep.head(MIN_TRAIN_ROWS - 1)
    with pytest.raises(DataError, match=f"only {MIN_TRAIN_ROWS - 1} training row"):
        plan_discovery(few, DiscoveryRequest(["N"], ["loss"]))


def test_a_named_loss_reaches_every_fit_of_the_search(sweep):
    """Screening, finalists and the final refit all fit with the loss asked for, and the finalists
    are not re-scored under another one: the reported law is fitted exactly as the user said."""
    config = plan_discovery(sweep, DiscoveryRequest(["N"], ["loss"], loss="huber_log")).config
    assert (config.fit.loss, config.finalist_fit.loss, config.final_fit.loss) == ("huber_log",) * 3
    assert config.finalist_losses == ("huber_log",)
    # the effort of each fit is untouched: only the residuals change
    default = plan_discovery(sweep, DiscoveryRequest(["N"], ["loss"])).config
    assert (config.fit.starts, config.finalist_fit.starts) == (default.fit.starts, default.finalist_fit.starts)


def test_the_auto_loss_leaves_the_search_as_it_was(sweep):
    from agent.search import SearchConfig

    config = plan_discovery(sweep, DiscoveryRequest(["N"], ["loss"])).config
    assert (config.fit, config.finalist_fit, config.final_fit, config.finalist_losses) \
        == (SearchConfig().fit, SearchConfig().finalist_fit, SearchConfig().final_fit, SearchConfig().finalist_losses)


@pytest.mark.parametrize("loss, target, message", [
    ("l1", "loss", "unknown loss 'l1'; choose one of auto, lsq, log, huber_log, robust_log"),
    ("log", "shift", "loss 'log' fits log residuals, but target 'shift' has 1 value"),
    ("robust_log", "shift", "use loss 'lsq'"),
])
def test_a_loss_the_data_cannot_take_is_refused_before_the_search(sweep, loss, target, message):
    with pytest.raises(DataError, match=message):
        plan_discovery(sweep, DiscoveryRequest(["N"], [target], loss=loss))


def test_lsq_and_auto_take_targets_of_any_sign(sweep):
    for loss in ("lsq", "auto"):
        assert plan_discovery(sweep, DiscoveryRequest(["N"], ["shift"], loss=loss)).config is not None
