"""Bundled SLDBench tasks as datasets: import, run with the task's defaults, compare with the human law."""
from __future__ import annotations

import pytest

TASK = "parallel_scaling_law"


@pytest.fixture
def imported(client, sldbench_env):
    r = client.post(f"/tasks/{TASK}/import")
    assert r.status_code == 201, r.text
    return r.json()


def test_tasks_are_listed_and_imported_once(client, imported):
    assert imported["name"] == TASK and imported["task"] == TASK and imported["n_rows"] == 48
    assert imported["source"] == f"sldbench:{TASK}" and imported["groups"]["split"] == ["test", "train"]
    again = client.post(f"/tasks/{TASK}/import")
    assert again.status_code == 200 and again.json()["id"] == imported["id"]
    forced = client.post(f"/tasks/{TASK}/import", json={"force": True})
    assert forced.status_code == 201 and forced.json()["id"] != imported["id"]
    listed = {t["name"]: t for t in client.get("/tasks").json()}
    assert len(listed) == 8 and listed[TASK]["dataset_id"] == forced.json()["id"]
    assert listed[TASK]["human_law"] and listed["sft_scaling_law"]["dataset_id"] is None


def test_an_unknown_task_is_404(client):
    r = client.post("/tasks/nope/import")
    assert r.status_code == 404 and r.json()["detail"].startswith("unknown task 'nope'; bundled tasks: ")


def test_a_run_on_a_task_uses_its_columns_holds_out_its_test_rows_and_compares_with_the_human_law(
        client, worker, imported):
    r = client.post("/runs", json={"dataset_id": imported["id"], "budget": 8})
    assert r.status_code == 202, r.text
    spec = r.json()["spec"]
    assert spec["task"] == TASK and spec["targets"] == ["loss"] and spec["group"] == "group"
    assert spec["test_split"] == {"column": "split", "value": "test"} and spec["max_constants"] == 4
    worker.run_once()
    run = client.get(f"/runs/{r.json()['id']}").json()
    assert run["state"] == "done", run
    assert run["final"]["test"]["n_rows"] == 12  # scored once on the held-out rows
    cmp = client.get(f"/runs/{run['id']}/compare").json()
    assert [law["name"] for law in cmp["laws"]] == ["discovered", "human"]
    assert cmp["protocol"]["training_rows"] == 36 and cmp["protocol"]["test_rows"] == 12
    human = cmp["laws"][1]
    assert human["test"]["overall"]["r2"] > 0.99  # the human law is excellent on this task
    assert human["published_test"]["overall"]["r2"] == pytest.approx(0.9999, abs=1e-3)  # the paper's number
    assert set(human["test"]["groups"]) == {"pile", "stack"}
