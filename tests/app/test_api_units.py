"""Runs on data in any units (issue 18): refused at submission when no law can use a column,
found the same when the units change."""
from __future__ import annotations

import io

import numpy as np
import pytest

from tests.app.conftest import toy_rows


def upload(client, frame) -> int:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    r = client.post("/datasets", files={"file": ("d.csv", buf.getvalue().encode(), "text/csv")}, data={"name": "d"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_a_run_on_a_constant_column_is_refused_at_submission_saying_what_to_do(client):
    dataset = upload(client, toy_rows().assign(vocab=32000))
    r = client.post("/runs", json={"dataset_id": dataset, "inputs": ["N", "vocab"], "targets": ["loss"],
                                   "group": "group", "budget": 5})
    assert 400 <= r.status_code < 500
    assert "'vocab' has the same value (32000) in every row" in r.text and "leave it out of the inputs" in r.text
    assert client.get("/runs").json()["total"] == 0  # nothing stored


# the units of a run do not depend on the database: one backend is enough for this slow one
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_compute_in_flops_runs_to_the_law_found_in_smaller_units(client, worker):
    """The worker searches normalised numbers: only the reference scale in the law differs."""
    laws = []
    for scale in (1.0, 1e12):
        frame = toy_rows().assign(N=lambda d: d["N"] * scale)
        r = client.post("/runs", json={"dataset_id": upload(client, frame), "inputs": ["N"], "targets": ["loss"],
                                       "group": "group", "max_constants": 4, "budget": 16})
        assert r.status_code == 202, r.text
        worker.run_once()
        run = client.get(f"/runs/{r.json()['id']}").json()
        assert run["state"] == "done", run
        laws.append(run["final"])
    small, flops = laws
    assert [line.replace("(N/3.2e+19)", "(N/3.2e+07)") for line in flops["law"]] == small["law"]
    for group in ("a", "b"):
        np.testing.assert_allclose(list(flops["constants"][group].values()),
                                   list(small["constants"][group].values()), rtol=1e-6)
