"""A comparison in the API is bounded before it starts: rows, groups, one time budget for all fits,
and a posted law keeps to the run's constant cap."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agent.errors import DataError
from agent.problem import Problem
from app.core.config import Settings
from app.services.compare_budget import comparison_options

PROBLEM = Problem(("N",), ("loss",), group="group", axis=("N",), max_constants=4)


def inputs(n_groups: int, rows_per_group: int = 4, n_folds: int | None = 3) -> dict:
    train = pd.DataFrame({"N": np.tile(np.geomspace(1e6, 1e9, rows_per_group), n_groups),
                          "group": np.repeat([f"g{i}" for i in range(n_groups)], rows_per_group),
                          "loss": 2.0})
    return {"problem": PROBLEM, "train": train, "test": train.iloc[0:0], "lines": ["loss = a"],
            "seed": 0, **({"n_folds": n_folds} if n_folds else {})}


def test_the_fits_share_one_time_budget_whatever_the_number_of_groups():
    settings = Settings(compare_time_limit=12.0)
    for n_groups in (1, 3, 50):
        options = comparison_options(inputs(n_groups), settings)
        fits = 2 * (3 + 1) * n_groups  # two laws, three folds and the refit, every group
        assert options.time_limit * fits == pytest.approx(12.0)
    assert comparison_options(inputs(2, n_folds=None), settings).time_limit == pytest.approx(12.0 / 16)


def test_a_posted_law_is_fitted_with_the_runs_own_loss():
    assert comparison_options({**inputs(1), "loss": "huber_log"}, Settings()).loss == "huber_log"
    assert comparison_options(inputs(1), Settings()).loss == "auto"  # a run stored before runs named a loss


def test_a_run_with_ten_thousand_groups_is_refused_before_any_fit():
    with pytest.raises(DataError, match="the run has 10000 groups; .* limited to 50 groups "
                                        r"\(SLD_COMPARE_MAX_GROUPS\)"):
        comparison_options(inputs(10_000, rows_per_group=1), Settings(compare_max_rows=10**6))


def test_a_run_with_too_many_rows_is_refused_before_any_fit():
    with pytest.raises(DataError, match=r"the run has 400 rows; .* limited to 100 \(SLD_COMPARE_MAX_ROWS\)"):
        comparison_options(inputs(4, rows_per_group=100), Settings(compare_max_rows=100))


@pytest.fixture
def settings(database_url):
    return Settings(database_url=database_url, heartbeat_interval=0.2, stale_after=30, poll_interval=0.05,
                    default_budget=20, compare_max_groups=1)


def test_the_api_refuses_a_comparison_over_the_group_limit(client, done_run):
    r = client.post(f"/runs/{done_run['id']}/compare", json={"name": "mine", "lines": ["loss = E + A * N ** -a"]})
    assert r.status_code == 422
    assert r.json()["detail"].startswith("the run has 2 groups; a comparison in the API")
    assert client.get("/health").status_code == 200


def test_a_posted_law_over_the_runs_constant_cap_is_refused(client, done_run):
    assert done_run["spec"]["max_constants"] == 4
    r = client.post(f"/runs/{done_run['id']}/compare",
                    json={"name": "big", "lines": ["loss = a + b * N ** c + d * N ** e"]})
    assert r.status_code == 422
    assert r.json()["detail"] == "law 'big': law has 5 constants, more than the cap of 4"

