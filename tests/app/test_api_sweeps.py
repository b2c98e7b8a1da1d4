"""Sweeps over HTTP: a user plans one, trainers claim its points and post one row each.

The trainer side is driven here by hand, as ``sld train worker`` drives it (its real loop runs
in ``tests/trainer/test_sweep_loop.py``).
"""
from __future__ import annotations

import json

import pytest

from app.core.auth import issue_token
from trainer.spec import ROW_COLUMNS

GRID = {"name": "ci", "n_params": [25e3, 85e3], "tokens": [2.5e5, 5e5]}


def a_row(**over) -> dict:
    row = {c: 1.0 for c in ROW_COLUMNS} | {"device": "cpu", "torch": "2.13.0", "python": "3.11.7"}
    return row | over


def claim(client, worker="trainer-1"):
    return client.post("/sweeps/claim", json={"worker_id": worker})


def test_a_grid_sweep_is_planned_cheapest_first_and_listed(client):
    r = client.post("/sweeps", json=GRID)
    assert r.status_code == 201, r.text
    sweep = r.json()
    assert sweep["n_points"] == 4 and sweep["counts"]["queued"] == 4 and sweep["dataset_id"] is None
    points = client.get(f"/sweeps/{sweep['id']}").json()["points"]
    assert [p["seq"] for p in points] == [0, 1, 2, 3]
    assert [p["cost"] for p in points] == sorted(p["cost"] for p in points)
    assert client.get("/sweeps").json()["total"] == 1


@pytest.mark.parametrize("body,detail", [
    ({"n_params": [25e3]}, "a grid design needs tokens"),
    ({"design": "isoflop", "n_params": [25e3], "tokens": [1e6]}, "an isoflop design needs budgets"),
    ({"n_params": [1.0], "tokens": [1e6]}, "n_params.0: Input should be greater than or equal to 1000"),
    ({"n_params": [1e5], "tokens": [1e6], "dropout": 0.1}, "dropout: unknown field"),
    ({"design": "isoflop", "n_params": [1e7], "budgets": [1e9]}, "the design plans no run"),
    ({"n_params": [1e5], "tokens": [1e6], "corpus": "wikipedia"}, "corpus: Input should be 'stdlib' or 'stdlib+torch'"),
    ({"n_params": [2e4, 1e5, 1e6], "tokens": [1e5 * (i + 1) for i in range(40)], "seeds": list(range(10))},
     "plans 1200 runs, more than the limit of 1000"),
])
def test_a_design_that_cannot_be_trained_is_refused_with_the_reason(client, body, detail):
    r = client.post("/sweeps", json=body)
    assert r.status_code == 422 and detail in r.json()["detail"], r.text


def test_a_trainer_claims_heartbeats_and_posts_the_row_that_makes_the_dataset(client):
    sweep = client.post("/sweeps", json=GRID).json()
    assert claim(client).status_code == 200
    got = claim(client, "trainer-2").json()
    assert got["heartbeat_interval"] > 0 and got["stale_after"] > got["heartbeat_interval"]
    point = got["point"]
    assert client.post(f"/sweeps/points/{point['id']}/heartbeat", json={"worker_id": "trainer-2"}).status_code == 204
    done = client.post(f"/sweeps/points/{point['id']}/result", json={"worker_id": "trainer-2", "row": a_row(N=7)})
    assert done.status_code == 200 and done.json()["state"] == "done" and done.json()["result"]["N"] == 7
    dataset_id = client.get(f"/sweeps/{sweep['id']}").json()["dataset_id"]
    rows = client.get(f"/datasets/{dataset_id}/rows").json()["items"]
    assert list(rows[0]) == list(ROW_COLUMNS) and rows[0]["N"] == 7


def test_a_suggested_run_is_queued_in_the_sweep_and_its_row_joins_the_sweeps_dataset(client):
    """Which run to do next, done: the point trains like the sweep's own and feeds the same dataset."""
    sweep = client.post("/sweeps", json=GRID | {"batch_sizes": [4], "context": 64, "corpus": "stdlib+torch",
                                                "eval_sequences": 2048}).json()
    first = claim(client).json()["point"]
    client.post(f"/sweeps/points/{first['id']}/result", json={"worker_id": "trainer-1", "row": a_row(N=1)})
    added = client.post(f"/sweeps/{sweep['id']}/points", json={"n_params": [4e5], "tokens": [8e6]})
    assert added.status_code == 201, added.text
    out = added.json()
    assert out["n_points"] == 5 and out["counts"]["queued"] == 4 and out["counts"]["done"] == 1
    new = out["points"][-1]
    assert new["seq"] == 4 and new["spec"]["batch"] == 4 and new["spec"]["context"] == 64
    assert new["spec"]["corpus"] == "stdlib+torch" and new["spec"]["eval_sequences"] == 2048
    while (got := claim(client)).status_code == 200:  # cheapest first: the big suggested run comes last
        point = got.json()["point"]
        client.post(f"/sweeps/points/{point['id']}/result", json={"worker_id": "trainer-1",
                                                                 "row": a_row(N=point["seq"])})
    assert point["id"] == new["id"]
    dataset_id = client.get(f"/sweeps/{sweep['id']}").json()["dataset_id"]
    assert len(client.get(f"/datasets/{dataset_id}/rows").json()["items"]) == 5
    assert client.post("/sweeps/999/points", json={"n_params": [4e5], "tokens": [8e6]}).status_code == 404
    bad = client.post(f"/sweeps/{sweep['id']}/points", json={"n_params": [4e5], "tokens": []})
    assert bad.status_code == 422


def test_a_trainer_that_lost_its_point_gets_409_and_writes_nothing(client):
    client.post("/sweeps", json=GRID)
    point = claim(client).json()["point"]
    for path, body in [("heartbeat", {}), ("result", {"row": a_row()}), ("fail", {"error": "x"})]:
        r = client.post(f"/sweeps/points/{point['id']}/{path}", json={"worker_id": "not-the-owner", **body})
        assert r.status_code == 409 and "no longer owns point" in r.json()["detail"]
        # a point that never existed is not a lost one
        r = client.post(f"/sweeps/points/99999/{path}", json={"worker_id": "trainer-1", **body})
        assert r.status_code == 404 and r.json()["detail"] == "sweep point 99999 not found"


def test_a_row_without_the_trainers_columns_is_422(client):
    client.post("/sweeps", json=GRID)
    point = claim(client).json()["point"]
    row = a_row()
    del row["val_loss"]
    r = client.post(f"/sweeps/points/{point['id']}/result", json={"worker_id": "trainer-1", "row": row | {"x": 1}})
    assert r.status_code == 422 and "missing val_loss; unknown x" in r.json()["detail"]
    r = client.post(f"/sweeps/points/{point['id']}/result", headers={"content-type": "application/json"},
                    content=json.dumps({"worker_id": "trainer-1", "row": a_row(val_loss=float("inf"))}))
    assert r.status_code == 422 and "val_loss" in r.json()["detail"], r.text


def test_claim_is_204_when_nothing_is_left_and_a_failed_point_is_tried_again(client):
    assert claim(client).status_code == 204
    client.post("/sweeps", json={**GRID, "n_params": [25e3], "tokens": [2.5e5]})
    point = claim(client).json()["point"]
    r = client.post(f"/sweeps/points/{point['id']}/fail", json={"worker_id": "trainer-1", "error": "CUDA out of memory"})
    assert r.json()["state"] == "queued" and r.json()["error"] == "CUDA out of memory"
    assert claim(client).json()["point"]["attempts"] == 2


def test_trainers_need_a_write_token_once_tokens_exist(client, storage):
    _, reader = issue_token(storage, "viewer", scope="read", tenant=None)
    _, writer = issue_token(storage, "trainer", scope="write", tenant=None)
    assert claim(client).status_code == 401
    r = client.post("/sweeps/claim", json={"worker_id": "t"}, headers={"Authorization": f"Bearer {reader}"})
    assert r.status_code == 403
    r = client.post("/sweeps/claim", json={"worker_id": "t"}, headers={"Authorization": f"Bearer {writer}"})
    assert r.status_code == 204


def test_a_run_can_hold_out_the_largest_models_of_a_sweep(client, dataset_id):
    body = {"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"], "group": "group", "budget": 10}
    r = client.post("/runs", json=body | {"test_split": {"column": "N", "at_least": 1e8}})
    assert r.status_code == 202, r.text
    assert r.json()["spec"]["test_split"] == {"column": "N", "value": "test", "at_least": 1e8}
    r = client.post("/runs", json=body | {"test_split": {"column": "N", "at_least": 1e12}})
    assert r.status_code == 422 and "leaves no training or no test rows: N spans 1e+06 to 1e+09" in r.json()["detail"]
    r = client.post("/runs", json=body | {"test_split": {"column": "group", "at_least": 1}})
    assert r.status_code == 422 and "needs a numeric column" in r.json()["detail"]
