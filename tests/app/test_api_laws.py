"""Predictions and comparisons: a run's law, a candidate, or a posted law; bad laws named."""
from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event

from agent.storage import RunState
from agent.storage.rdb import RDBStorage
from app.main import create_app
from tests.app.conftest import TRUE_LAW

TRUE_LINES = ["loss = E + A * N ** -0.3"]
TRUE_CONSTANTS = {g: {"E": E, "A": A} for g, (E, A) in TRUE_LAW.items()}


def test_a_posted_law_predicts_at_new_points(client):
    r = client.post("/predict", json={"lines": TRUE_LINES, "constants": {"E": 1.8, "A": 300.0},
                                      "points": [{"N": 1e10}, {"N": 1e12}]})
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["targets"] == ["loss"] and out["source"] == "posted law"
    assert out["predictions"][0]["loss"] == pytest.approx(1.8 + 300 * 1e10 ** -0.3)
    assert out["predictions"][1]["loss"] == pytest.approx(1.8 + 300 * 1e12 ** -0.3)


def test_posted_per_group_constants_follow_each_points_group(client):
    r = client.post("/predict", json={"lines": TRUE_LINES, "constants": TRUE_CONSTANTS, "group": "group",
                                      "points": [{"N": 1e10, "group": "b"}, {"N": 1e10, "group": "a"}]})
    preds = [p["loss"] for p in r.json()["predictions"]]
    assert preds == pytest.approx([2.1 + 250 * 1e10 ** -0.3, 1.8 + 300 * 1e10 ** -0.3])


def test_a_runs_final_law_extrapolates_close_to_the_true_law(client, done_run):
    r = client.post("/predict", json={"run_id": done_run["id"], "points": [{"N": 1e10, "group": "a"},
                                                                          {"N": 1e10, "group": "b"}]})
    assert r.status_code == 200, r.text
    assert "final law" in r.json()["source"]
    a, b = (p["loss"] for p in r.json()["predictions"])
    assert a == pytest.approx(1.8 + 300 * 1e10 ** -0.3, rel=0.02)
    assert b == pytest.approx(2.1 + 250 * 1e10 ** -0.3, rel=0.02)
    best_id = client.get(f"/runs/{done_run['id']}/best").json()["candidate_id"]
    one = client.post("/predict", json={"run_id": done_run["id"], "candidate_id": best_id,
                                        "points": [{"N": 1e10, "group": "a"}]})
    assert one.status_code == 200 and f"candidate {best_id}" in one.json()["source"]


def test_a_runs_law_predicts_with_an_interval_that_widens_beyond_the_data(client, done_run):
    """From the delta method on the run's training rows: no refit holds the request."""
    points = [{"N": n, "group": "a"} for n in (1e9, 1e10, 1e11)]
    conf = client.post("/predict", json={"run_id": done_run["id"], "points": points, "interval": 0.9})
    pred = client.post("/predict", json={"run_id": done_run["id"], "points": points, "interval": 0.9,
                                         "kind": "prediction"})
    assert conf.status_code == 200 and pred.status_code == 200, conf.text + pred.text
    forms = 1 + len(client.get(f"/runs/{done_run['id']}").json()["final"]["alternatives"])  # + the close finalists
    assert conf.json()["interval"] == {"level": 0.9, "kind": "confidence", "method": "delta", "draws": 200,
                                       "forms": forms}
    c, p = conf.json()["predictions"], pred.json()["predictions"]
    assert all(row["loss_lo"] <= row["loss"] <= row["loss_hi"] for row in c)
    widths = [row["loss_hi"] - row["loss_lo"] for row in c]
    assert widths[0] < widths[1] < widths[2]
    assert all(q["loss_hi"] - q["loss_lo"] > w for q, w in zip(p, widths))
    posted = client.post("/predict", json={"lines": ["loss = E + A*N**(-a)"], "constants": {"E": 1, "A": 1, "a": 1},
                                           "points": [{"N": 10.0}], "interval": 0.9})
    assert posted.status_code == 422 and "training runs" in posted.text


def test_the_worker_stores_the_law_s_uncertainty_so_reads_never_recompute_it(client, storage, done_run,
                                                                                monkeypatch):
    best = client.get(f"/runs/{done_run['id']}/best").json()
    intervals = best["intervals"]
    assert intervals["level"] == 0.9 and intervals["method"] == "delta" and intervals["kind"] == "confidence"
    for group, values in best["constants"].items():
        for name, value in values.items():
            lo, hi = intervals["constants"][group][name]
            assert lo < value < hi, (group, name, lo, value, hi)

    def no_rows(*args, **kwargs):
        raise AssertionError("an interval on the final law must come from the stored replicates")

    monkeypatch.setattr(type(storage), "load_rows", no_rows)
    r = client.post("/predict", json={"run_id": done_run["id"], "points": [{"N": 1e10, "group": "b"}],
                                      "interval": 0.9})
    assert r.status_code == 200, r.text
    row = r.json()["predictions"][0]
    assert row["loss_lo"] < row["loss"] < row["loss_hi"]


def test_a_finished_runs_best_law_is_built_once_and_revalidated_by_etag(client, done_run, monkeypatch):
    first = client.get(f"/runs/{done_run['id']}/best")
    etag = first.headers["etag"]
    assert first.status_code == 200 and etag.startswith('W/"')

    import app.api.routes.datasets as dataset_routes
    import app.api.routes.runs as run_routes

    def no_rebuild(*args, **kwargs):
        raise AssertionError("a finished run's best law is served from what was built, not rebuilt")

    monkeypatch.setattr(run_routes, "best_law", no_rebuild)
    monkeypatch.setattr(dataset_routes, "best_law", no_rebuild)
    again = client.get(f"/runs/{done_run['id']}/best")
    assert again.status_code == 200 and again.content == first.content and again.headers["etag"] == etag
    by_dataset = client.get(f"/datasets/{done_run['dataset_id']}/best-law")
    assert by_dataset.content == first.content  # the same run, the same bytes
    unchanged = client.get(f"/runs/{done_run['id']}/best", headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.content == b""
    run = client.get(f"/runs/{done_run['id']}")
    assert client.get(f"/runs/{done_run['id']}", headers={"If-None-Match": run.headers["etag"]}).status_code == 304


def test_an_unchanged_best_law_is_read_without_the_database_and_a_workers_commit_is_seen(
        settings, storage, done_run, database_url):
    """While nothing was committed, a read of the best law runs no SQL at all (the token table's
    answer is trusted for a second, the run's version for as long as the storage's generation holds);
    a commit by another process (a worker, with connections of its own) is seen once it moves."""
    with TestClient(create_app(settings.model_copy(update={"auth_cache_seconds": 60}), storage)) as client:
        url = f"/datasets/{done_run['dataset_id']}/best-law"
        deadline = time.monotonic() + 10
        while storage.generation() is None:  # PostgreSQL's listener starts on the first ask
            assert time.monotonic() < deadline
            time.sleep(0.02)
        first = client.get(url)
        assert first.status_code == 200 and first.json()["run_id"] == done_run["id"]
        statements = []
        event.listen(storage.engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
        assert [client.get(url).content for _ in range(3)] == [first.content] * 3
        assert statements == []

        worker = RDBStorage(database_url)
        try:  # a better run of the same dataset, finished by another process
            final = storage.get_run(done_run["id"]).final
            better = worker.create_run(done_run["dataset_id"], storage.get_run(done_run["id"]).spec)
            worker.claim_run("elsewhere", stale_after=60)
            worker.finish_run(better.id, "elsewhere", RunState.DONE, final=final, best_score=1e9)
        finally:
            worker.close()
        deadline = time.monotonic() + 10
        while (now := client.get(url).json())["run_id"] != better.id:
            assert time.monotonic() < deadline, "the other process's commit was never seen"
            time.sleep(0.02)
        assert now["final"] is True


def test_suggest_ranks_next_runs_in_the_target_s_group_and_explains_each(client, done_run):
    candidates = [{"N": n, "group": g} for g in ("a", "b") for n in (3e8, 1e9, 3e9)]
    r = client.post(f"/runs/{done_run['id']}/suggest", json={
        "candidates": candidates, "targets": [{"N": 1e11, "group": "a"}], "cost_factor": 1.0, "top": 6})
    assert r.status_code == 200, r.text
    ranked = r.json()["suggestions"]
    assert [s["rank"] for s in ranked] == [1, 2, 3, 4, 5, 6]
    assert all(s["point"]["group"] == "a" for s in ranked[:3])  # another group's run teaches nothing here
    assert all(s["reduction"] == 0 for s in ranked[3:])
    assert ranked[0]["cost"] == ranked[0]["point"]["N"] and "narrows" in ranked[0]["explanation"]
    bad = client.post(f"/runs/{done_run['id']}/suggest", json={"candidates": [{"N": 1e9}], "targets": [{"N": 1e11}]})
    assert bad.status_code == 422 and "group" in bad.json()["detail"]
    assert client.post("/runs/999/suggest", json={"candidates": [{"N": 1}], "targets": [{"N": 1}]}).status_code == 404


@pytest.mark.parametrize("body, message", [
    ({"lines": ["loss = log(N - c)"], "constants": {"c": 10.0}, "points": [{"N": 100.0}, {"N": 5.0}]},
     "the prediction at point 2 is not finite: log of a non-positive value (log(N - c) with N - c = -5) at N=5"),
    ({"lines": ["loss = sqrt(c - N)"], "constants": {"c": 1.0}, "points": [{"N": 3.0}]},
     "sqrt of a non-positive value"),
    ({"lines": ["loss = (N - c) ** 0.5 + 1"], "constants": {"c": 1.0}, "points": [{"N": -3.0}]},
     "sqrt of a non-positive value"),
    ({"lines": ["loss = import_os(N)"], "constants": {}, "points": [{"N": 1.0}]}, "import_os"),
    ({"lines": ["loss = a * N ** b"], "constants": {"a": 1.0}, "points": [{"N": 1.0}]},
     "no value for constant(s) b"),
    ({"lines": ["loss = a * N"], "constants": {"a": "x"}, "points": [{"N": 1.0}]}, "constant 'a' must be a finite number"),
    ({"lines": ["loss = a * N"], "constants": {"a": 1.0}, "points": [{"M": 1.0}]}, "uses no input column"),
    ({"lines": ["loss = a * N"], "constants": {"a": 1.0}, "inputs": ["N"], "points": [{"M": 1.0}]},
     "missing column(s): N"),
    ({"lines": ["loss = a * N"], "constants": {"a": 1.0}, "points": [{"N": "big"}]}, "column 'N' is not numeric"),
    ({"lines": ["loss = a * N"], "constants": {"g1": {"a": 1.0}, "g2": {"a": 2.0}}, "points": [{"N": 1.0}]},
     "give each point its group"),
    ({"lines": ["loss = a * N"], "constants": {"g1": {"a": 1.0}}, "group": "g", "points": [{"N": 1.0, "g": "g9"}]},
     "no constants for group(s) g9"),
    ({"lines": ["loss = a * N"], "points": [{"N": 1.0}]}, "give run_id, or a law's 'lines' and 'constants'"),
    ({"run_id": 1, "lines": ["loss = a"], "constants": {}, "points": [{"N": 1.0}]}, "not both"),
    ({"lines": ["loss = a * N"], "constants": {"a": 1.0}, "points": []}, "points: List should have at least 1 item"),
])
def test_bad_predictions_are_refused_with_the_reason(client, body, message):
    r = client.post("/predict", json=body)
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]


def test_predicting_with_unknown_runs_or_candidates_is_404(client, done_run):
    assert client.post("/predict", json={"run_id": 99, "points": [{"N": 1.0}]}).json()["detail"] == "run 99 not found"
    r = client.post("/predict", json={"run_id": done_run["id"], "candidate_id": 999, "points": [{"N": 1.0}]})
    assert r.status_code == 404 and r.json()["detail"] == f"run {done_run['id']} has no candidate 999"


def compared(client, worker, run_id, law):
    """Post a law, let a worker fit the queued comparison, read it back."""
    r = client.post(f"/runs/{run_id}/compare", json=law)
    assert r.status_code == 202, r.text
    job = r.json()
    assert job["state"] == "queued" and job["result"] is None and job["url"] == f"/runs/{run_id}/comparisons/{job['id']}"
    worker.run_once()  # a worker answers queued comparisons before it looks for runs
    return client.get(job["url"]).json()


def test_a_posted_law_is_queued_then_compared_by_a_worker_with_the_same_protocol(client, worker, done_run):
    job = compared(client, worker, done_run["id"], {"name": "textbook", "lines": TRUE_LINES})
    assert job["state"] == "done" and job["error"] is None and job["law"] == {"name": "textbook", "lines": TRUE_LINES}
    cmp = job["result"]
    assert [law["name"] for law in cmp["laws"]] == ["discovered", "textbook"]
    protocol = cmp["protocol"]
    assert protocol["training_rows"] == 20 and protocol["validation_rows"] > 0 and protocol["test_rows"] == 0
    for law in cmp["laws"]:
        assert set(law["validation"]["groups"]) == {"a", "b"}
        assert law["validation"]["overall"]["n_rows"] == protocol["validation_rows"]
        assert len(law["folds"]) == protocol["folds"] and set(law["constants"]) == {"a", "b"}
        assert law["test"] is None
    textbook = cmp["laws"][1]
    assert textbook["validation"]["overall"]["r2"] > 0.9
    assert textbook["constants"]["a"]["E"] == pytest.approx(1.8, rel=0.05)
    assert cmp["best"] in ("discovered", "textbook")


def test_comparing_with_a_law_that_cannot_work_names_the_problem(client, worker, done_run):
    r = client.post(f"/runs/{done_run['id']}/compare", json={"lines": ["loss = c * M"]})
    assert r.status_code == 422  # refused at once: nothing is queued
    assert r.json()["detail"] == "law 'posted': the expression for 'loss' uses no input column"
    r = client.post(f"/runs/{done_run['id']}/compare", json={"lines": "loss = exec(N)"})
    assert r.status_code == 422 and "exec" in r.json()["detail"]
    # a law that parses but cannot be fitted fails in the worker, with the reason
    job = compared(client, worker, done_run["id"], {"name": "broken", "lines": ["loss = c * log(-N)"]})
    assert job["state"] == "failed" and job["result"] is None
    assert job["error"].startswith("law 'broken' ")  # cannot be fitted, or its best fit is not finite
    assert "log of a non-positive value (log(-N) with -N = -1e+06) at N=1e+06" in job["error"]
    assert client.get(f"/runs/{done_run['id']}/comparisons/99").status_code == 404


def test_a_user_dataset_has_no_human_law_to_compare_with(client, done_run):
    r = client.get(f"/runs/{done_run['id']}/compare")
    assert r.status_code == 404 and f"POST a law to /runs/{done_run['id']}/compare" in r.json()["detail"]
