"""One search behind every face: a run posted to the API, `sld discover --csv` and `LawSearch.fit`,
asked the same thing on the same data with the same seed, report the same law and constants.

Nothing but the columns, the budget and the seed is given, so each face's defaults are in play: the
constant cap, the axis (the inputs that are positive and span a decade: N, not lr), the work budget
and the time limit.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from agent.defaults import DEFAULT_BUDGET, DEFAULT_CAP, DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.estimator import LawSearch
from tests.app.conftest import toy_rows

BUDGET, SEED = 16, 1


@pytest.fixture
def sweep_csv(tmp_path):
    """The toy law in N, with a learning rate that spans less than a decade and does not matter."""
    rows = toy_rows()
    rows["lr"] = np.resize([1e-3, 2e-3, 4e-3], len(rows))
    path = tmp_path / "sweep.csv"
    rows.to_csv(path, index=False)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the storage is not what is tested
def test_the_api_the_cli_and_lawsearch_report_the_same_law(client, worker, sld, sweep_csv):
    ds = client.post("/datasets", files={"file": ("sweep.csv", sweep_csv.read_bytes(), "text/csv")}).json()
    posted = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["N", "lr"], "targets": ["loss"],
                                        "group": "group", "budget": BUDGET, "seed": SEED}).json()
    worker.run_once()
    run = client.get(f"/runs/{posted['id']}").json()
    assert run["state"] == "done", run

    cli = sld("discover", "--csv", str(sweep_csv), "--inputs", "N,lr", "--target", "loss", "--group", "group",
              "--budget", str(BUDGET), "--seed", str(SEED), "--json")
    assert cli.exit_code == 0, cli.stderr
    from_cli = json.loads(cli.stdout)

    data = pd.read_csv(sweep_csv)
    model = LawSearch(budget=BUDGET, seed=SEED).fit(data[["N", "lr"]], data["loss"], groups=data["group"])

    spec = run["spec"]
    assert spec["axis"] == ["N"] and list(model.problem_.axis) == ["N"]
    assert spec["max_constants"] == model.problem_.max_constants == DEFAULT_CAP
    assert (spec["config"]["work_budget"], spec["config"]["time_limit"]) == (DEFAULT_WORK, DEFAULT_TIME_LIMIT)
    assert run["final"]["law"] == from_cli["law"] == list(model.best_.lines)
    for constants in (from_cli["constants"], model.best_.constants):
        assert constants.keys() == run["final"]["constants"].keys() == {"a", "b"}
        for group, values in constants.items():
            assert values == pytest.approx(run["final"]["constants"][group], rel=1e-6)
    assert run["progress"]["candidates"] == from_cli["search"]["candidates"] == model.search_.progress["candidates"]


def test_every_face_starts_from_the_defaults_of_agent_defaults():
    import inspect

    from app.cli.discover_cmd import discover_cmd
    from app.core.config import Settings

    cli = {name: p.default.default for name, p in inspect.signature(discover_cmd).parameters.items()}
    assert (cli["budget"], cli["work"], cli["time_limit"], cli["cap"]) \
        == (DEFAULT_BUDGET, DEFAULT_WORK, DEFAULT_TIME_LIMIT, None)  # None: DEFAULT_CAP per target, in the plan
    service = {name: field.default for name, field in Settings.model_fields.items()}
    assert (service["default_budget"], service["default_work_budget"], service["default_time_limit"]) \
        == (DEFAULT_BUDGET, DEFAULT_WORK, DEFAULT_TIME_LIMIT)
    params = LawSearch().get_params()
    assert (params["budget"], params["work_budget"], params["time_limit"], params["max_constants"]) \
        == (DEFAULT_BUDGET, DEFAULT_WORK, DEFAULT_TIME_LIMIT, None)
