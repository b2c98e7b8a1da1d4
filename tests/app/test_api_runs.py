"""Runs over HTTP: queued with 202, executed by a worker, watched, cancelled, read back."""
from __future__ import annotations

import pytest

import migrations
from agent.defaults import DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.search import SearchConfig
from agent.storage import RunState

SPEC = {"inputs": ["N"], "targets": ["loss"], "group": "group", "max_constants": 4, "budget": 20}


def test_a_run_is_queued_with_a_complete_spec(client, dataset_id):
    spec = {k: v for k, v in SPEC.items() if k != "max_constants"}
    r = client.post("/runs", json={"dataset_id": dataset_id, **spec, "seed": 3, "cap": 5})
    assert r.status_code == 202, r.text
    run = r.json()
    assert run["state"] == "queued" and run["dataset_id"] == dataset_id and run["worker_id"] is None
    spec = run["spec"]
    assert spec["inputs"] == ["N"] and spec["targets"] == ["loss"] and spec["group"] == "group"
    assert spec["axis"] == ["N"]  # default: the positive inputs spanning a decade (a scale)
    config = spec["config"]  # the whole search config, defaults resolved: what the worker will run
    assert (spec["max_constants"], config["budget"], config["seed"]) == (5, 20, 3)
    assert (config["work_budget"], config["time_limit"]) == (DEFAULT_WORK, DEFAULT_TIME_LIMIT)
    assert config["n_folds"] == SearchConfig().n_folds and config["fit"]["starts"] == SearchConfig().fit.starts
    assert spec["proposers"] == [{"kind": "offline", "weight": 1.0}] and spec["test_split"] is None
    assert client.get(f"/runs/{run['id']}").json()["state"] == "queued"


def test_a_run_names_its_loss_and_every_fit_of_its_search_uses_it(client, dataset_id):
    from agent.fitting import LOSSES
    from app.schemas.runs import RunCreate

    assert set(RunCreate.model_json_schema()["properties"]["loss"]["enum"]) == {"auto", *LOSSES}
    config = client.post("/runs", json={"dataset_id": dataset_id, **SPEC, "loss": "huber_log"}).json()["spec"]["config"]
    assert (config["fit"]["loss"], config["finalist_fit"]["loss"], config["final_fit"]["loss"]) == ("huber_log",) * 3
    assert config["finalist_losses"] == ["huber_log"]
    default = client.post("/runs", json={"dataset_id": dataset_id, **SPEC}).json()["spec"]["config"]
    assert default["final_fit"]["loss"] == "auto" and default["finalist_losses"] == list(SearchConfig().finalist_losses)


def test_a_loss_the_data_cannot_take_is_refused_when_queued(client):
    rows = [{"x": x, "y": y} for x, y in ((1.0, 2.0), (2.0, 1.0), (4.0, 0.0), (8.0, -0.5))]
    ds = client.post("/datasets", json={"rows": rows}).json()
    r = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["x"], "targets": ["y"], "loss": "log"})
    assert r.status_code == 422 and "target 'y' has 2 value(s) <= 0" in r.json()["detail"]
    r = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["x"], "targets": ["y"], "loss": "l1"})
    assert r.status_code == 422 and "loss" in r.text
    assert client.get("/runs").json()["total"] == 0


def test_a_worker_runs_it_to_done_with_progress_and_a_final_law(client, done_run):
    progress = done_run["progress"]
    assert progress["candidates"] == 16 and progress["generation"] >= 1 and progress["elapsed"] > 0
    assert progress["best_validation_r2"] > 0.9
    final = done_run["final"]
    assert set(final["constants"]) == {"a", "b"} and final["law"]
    assert done_run["attempts"] == 1 and done_run["finished_at"] is not None
    kinds = [e["kind"] for e in client.get(f"/runs/{done_run['id']}/events").json()]
    assert kinds[:2] == ["queued", "claimed"] and kinds[-1] == "done"


def test_the_best_law_has_formula_constants_scores_and_lineage(client, done_run):
    best = client.get(f"/runs/{done_run['id']}/best").json()
    assert best["final"] and best["run_state"] == "done"
    assert best["lines"] == done_run["final"]["law"] and best["text"] == "\n".join(best["lines"])
    assert "loss" in best["sympy"] and best["latex"].startswith(r"\mathrm{loss}") or "loss" in best["latex"]
    assert set(best["constants"]) == {"a", "b"} and best["n_constants"] <= 4
    assert best["validation"]["r2"] > 0.9 and best["train"]["r2"] > 0.99
    for step in best["lineage"]:
        assert step["id"] < best["candidate_id"]
    # how it was chosen: the parsimony margin and the close finalists (their spread beyond the data)
    assert best["selection"]["margin"] > 0 and best["selection"]["close_finalists"] >= 1
    same = client.get(f"/datasets/{done_run['dataset_id']}/best-law").json()
    assert same["run_id"] == done_run["id"] and same["lines"] == best["lines"]


def test_the_leaderboard_sorts_and_pages(client, done_run):
    url = f"/runs/{done_run['id']}/candidates"
    page = client.get(url, params={"limit": 5}).json()
    finalists = done_run["progress"]["finalists"]  # the best laws, re-scored before reporting
    assert finalists > 0 and page["total"] == 16 + finalists and len(page["items"]) == 5
    scores = [c["score"] for c in page["items"]]
    assert scores == sorted(scores, reverse=True)
    ok = client.get(url, params={"status": "ok", "sort": "complexity", "order": "asc", "limit": 500}).json()
    complexities = [c["complexity"] for c in ok["items"]]
    assert complexities == sorted(complexities) and all(c["status"] == "ok" for c in ok["items"])
    total = page["total"]
    by_id = client.get(url, params={"sort": "id", "order": "asc", "offset": total - 2}).json()
    assert [c["id"] for c in by_id["items"]] == [total - 2, total - 1]
    reported = client.get(f"/runs/{done_run['id']}/best").json()
    assert client.get(f"{url}/{reported['candidate_id']}").json()["kind"] == "finalist"
    one = client.get(f"{url}/3").json()
    assert one["id"] == 3 and one["lines"]
    bad = client.get(url, params={"sort": "lines"})
    assert bad.status_code == 422 and "cannot sort by 'lines'" in bad.json()["detail"]


def test_runs_are_listed_by_dataset_and_state(client, dataset_id, done_run):
    queued = client.post("/runs", json={"dataset_id": dataset_id, **SPEC}).json()
    listed = client.get("/runs", params={"dataset_id": dataset_id}).json()
    assert [r["id"] for r in listed["items"]] == [queued["id"], done_run["id"]]
    assert [r["id"] for r in client.get("/runs", params={"state": "done"}).json()["items"]] == [done_run["id"]]


def test_cancelling_a_queued_run_is_immediate(client, worker, dataset_id):
    run = client.post("/runs", json={"dataset_id": dataset_id, **SPEC}).json()
    r = client.post(f"/runs/{run['id']}/cancel")
    assert r.status_code == 200 and r.json()["state"] == "cancelled"
    assert worker.run_once() is None
    again = client.post(f"/runs/{run['id']}/cancel")
    assert again.status_code == 409 and again.json()["detail"] == f"run {run['id']} is already cancelled"


def test_a_running_run_stops_at_the_end_of_a_generation_when_cancelled(client, storage, worker, dataset_id,
                                                                      monkeypatch):
    run = client.post("/runs", json={"dataset_id": dataset_id, **SPEC, "budget": 200}).json()
    save = storage.save_generation

    def save_then_cancel(*args, **kwargs):  # the user cancels while generation 0 is being saved
        record = save(*args, **kwargs)
        if record.generation == 1:
            storage.request_cancel(run["id"])
        return record

    monkeypatch.setattr(storage, "save_generation", save_then_cancel)
    worker.run_once()
    done = client.get(f"/runs/{run['id']}").json()
    # seen by the heartbeat before generation 2 starts, or by generation 2's save: never later
    assert done["state"] == "cancelled" and done["progress"]["generation"] in (1, 2)
    assert done["progress"]["candidates"] < 200
    assert done["final"]["law"]  # the best law so far is still reported


def test_a_run_that_cannot_fit_anything_is_refused_when_queued_or_fails_with_a_reason(client, storage, worker):
    flat = [{"x": x, "y": 1.0} for x in (1.0, 2.0, 3.0, 4.0)]  # a constant target: there is nothing to fit
    ds = client.post("/datasets", json={"rows": flat}).json()
    r = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["x"], "targets": ["y"], "budget": 5})
    assert r.status_code == 422 and "'y' has the same value (1) in every row" in r.json()["detail"]
    assert client.get("/runs").json()["total"] == 0
    # a run stored before that check existed (a spec of the older shape) fails with the reason, not a crash
    old = storage.create_run(ds["id"], {"inputs": ["x"], "targets": ["y"], "group": None, "axis": ["x"],
                                        "max_constants": 4, "budget": 5, "seed": 0, "time_limit": None,
                                        "patience": None, "proposers": [{"kind": "offline", "weight": 1.0}],
                                        "test_split": None, "task": None})
    worker.run_once()
    failed = client.get(f"/runs/{old.id}").json()
    assert failed["state"] == "failed" and "'y' has the same value (1) in every row" in failed["error"]


def test_a_run_whose_every_law_fails_to_fit_fails_saying_which_stage_and_why(client, worker, monkeypatch):
    from agent.search.proposers.offline import OfflineProposer
    from agent.search.records import Proposal
    from app import worker as worker_module

    class Overflowing(OfflineProposer):  # proposes only a law that overflows whatever its constants
        def seeds_left(self, context):
            return 1

        def propose(self, context, n, rng):
            return [Proposal(("y = c + exp(exp(exp(k*x + 10)))",), self.name)]

    monkeypatch.setattr(worker_module, "build_proposers", lambda specs, endpoints: [(Overflowing(), 1.0)])
    ds = client.post("/datasets", json={"rows": [{"x": x, "y": x} for x in (1.0, 1.5, 2.0, 2.5, 3.0)]}).json()
    run = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["x"], "targets": ["y"], "budget": 3}).json()
    worker.run_once()
    failed = client.get(f"/runs/{run['id']}").json()
    assert failed["state"] == "failed"
    assert "failed at fit (most often: " in failed["error"] and "overflow" in failed["error"]  # as sld discover says


def test_a_crashing_search_fails_its_run_and_the_worker_carries_on(client, worker, dataset_id, monkeypatch):
    from agent.search import Search

    first = client.post("/runs", json={"dataset_id": dataset_id, **SPEC}).json()
    second = client.post("/runs", json={"dataset_id": dataset_id, **SPEC, "budget": 5}).json()
    original = Search.step
    monkeypatch.setattr(Search, "step", lambda self: (_ for _ in ()).throw(RuntimeError("disk on fire")))
    worker.run_once()
    monkeypatch.setattr(Search, "step", original)
    worker.run_once()
    crashed = client.get(f"/runs/{first['id']}").json()
    assert crashed["state"] == "failed" and crashed["error"] == "internal error: RuntimeError: disk on fire"
    assert client.get(f"/runs/{second['id']}").json()["state"] == "done"


def test_too_few_training_rows_are_refused_when_the_run_is_queued(client):
    ds = client.post("/datasets", json={"rows": [{"x": 1.0, "y": 2.0}, {"x": 2.0, "y": 3.0}]}).json()
    r = client.post("/runs", json={"dataset_id": ds["id"], "inputs": ["x"], "targets": ["y"]})
    assert r.status_code == 422 and r.json()["detail"] == "only 2 training row(s); a run needs at least 4"


@pytest.mark.parametrize("change, message", [
    ({"targets": ["lossx"]}, "unknown column(s) 'lossx' (target); dataset"),
    ({"inputs": ["N", "M"]}, "unknown column(s) 'M' (input)"),
    ({"group": "grp"}, "unknown column(s) 'grp' (group)"),
    ({"inputs": ["group"]}, "column 'group' (input) is not numeric (it holds text such as 'a')"),
    ({"inputs": ["N"], "targets": ["N"]}, "cannot be both input and target"),
    ({"group": "loss"}, "the group column 'loss' cannot also be an input or a target"),
    ({"axis": ["D"]}, "unknown column(s) 'D' (axis)"),
    ({"run": "seed_run"}, "unknown column(s) 'seed_run' (run)"),
    ({"run": "N"}, "the run column 'N' cannot also be an input, a target or the group"),
    ({"budget": 0}, "budget: Input should be greater than or equal to 1"),
    ({"budget": 10**9}, "over the limit"),
    ({"inputs": ["N-1"]}, "'N-1' cannot be used in a law"),
    ({"colour": "red"}, "colour: unknown field"),
    ({"test_split": {"column": "nope"}}, "unknown test_split column 'nope'"),
    ({"test_split": {"column": "group", "value": "z"}}, "no row has group = 'z'"),
    ({"proposers": [{"kind": "llm", "weight": 1}]}, "an 'llm' proposer needs llm settings"),
    ({"proposers": [{"kind": "llm", "llm": {"model": "m", "api_key": "sk-x"}}]}, "API key is not accepted"),
    ({"proposers": [{"kind": "llm", "llm": {"model": "m", "temperature": 9}}]}, "llm.temperature"),
    ({"proposers": [{"kind": "gpt"}]}, "proposers.0.kind"),
])
def test_a_bad_run_spec_gets_a_422_naming_the_problem(client, dataset_id, change, message):
    r = client.post("/runs", json={"dataset_id": dataset_id, **SPEC, **change})
    assert r.status_code == 422, r.text
    assert message in r.json()["detail"]
    assert client.get("/runs").json()["total"] == 0


def test_checkpoints_of_a_few_runs_name_their_run_and_the_stored_intervals_widen(client, worker):
    """Five runs, six checkpoints each, each run off by its seed: queued with ``run``, the spec keeps the
    column and the worker refits the law on resampled runs, so the constants' intervals are wider
    than the same rows queued as thirty runs (where the delta method answers)."""
    import numpy as np

    rng = np.random.default_rng(0)
    offsets = rng.normal(0, 0.02, 5)
    rows = [{"N": n, "D": 20 * n * f, "run": f"r{k}",
             "loss": (1.7 + 0.6 * (n / 1e8) ** -0.34 + 0.5 * (20 * n * f / 1e10) ** -0.28)
             * float(np.exp(offsets[k] + rng.normal(0, 0.001)))}
            for k, n in enumerate((1e7, 3e7, 1e8, 3e8, 1e9)) for f in np.geomspace(0.1, 1.0, 6)]
    ds = client.post("/datasets", json={"rows": rows}).json()
    widths = {}
    for run_column in (None, "run"):
        spec = {"dataset_id": ds["id"], "inputs": ["N", "D"], "targets": ["loss"], "budget": 5, "run": run_column}
        r = client.post("/runs", json=spec)
        assert r.status_code == 202, r.text
        assert r.json()["spec"]["run"] == run_column
        worker.run_once()
        best = client.get(f"/runs/{r.json()['id']}/best").json()
        assert best["intervals"]["method"] == ("bootstrap" if run_column else "delta")  # refits over runs
        bands = best["intervals"]["constants"]["all_data"]
        widths[run_column] = np.median([hi - lo for lo, hi in bands.values()])
        # a prediction's band comes from the same stored draws, and says which method drew them
        pred = client.post("/predict", json={"run_id": r.json()["id"], "points": [{"N": 4e9, "D": 8e10}],
                                             "interval": 0.9})
        assert pred.status_code == 200, pred.text
        assert pred.json()["interval"]["method"] == best["intervals"]["method"]
    assert widths["run"] > 1.5 * widths[None]  # 2.4x here


def test_llm_settings_are_stored_with_the_run_without_any_key(client, dataset_id):
    spec = {**SPEC, "proposers": [{"kind": "offline", "weight": 0.3},
                                  {"kind": "llm", "weight": 0.7, "llm": {"model": "smollm2"}}]}
    run = client.post("/runs", json={"dataset_id": dataset_id, **spec}).json()
    assert run["spec"]["proposers"][1] == {"kind": "llm", "weight": 0.7,
                                           "llm": {"model": "smollm2", "endpoint": "local", "name": "llm"}}


def test_unknown_run_ids_are_404(client):
    for path in ["/runs/7", "/runs/7/best", "/runs/7/candidates", "/runs/7/events", "/runs/7/compare"]:
        r = client.get(path)
        assert r.status_code == 404 and r.json()["detail"] == "run 7 not found", path
    assert client.post("/runs/7/cancel").status_code == 404
    r = client.post("/runs", json={"dataset_id": 7, **SPEC})
    assert r.status_code == 404 and r.json()["detail"] == "dataset 7 not found"


def test_a_queued_run_has_no_best_law_yet(client, dataset_id):
    run = client.post("/runs", json={"dataset_id": dataset_id, **SPEC}).json()
    r = client.get(f"/runs/{run['id']}/best")
    assert r.status_code == 404 and "has no fitted law yet (state queued" in r.json()["detail"]
    r = client.get(f"/datasets/{dataset_id}/best-law")
    assert r.status_code == 404 and r.json()["detail"] == f"dataset {dataset_id} has no finished run yet"


def test_health_reports_the_database_and_queue(client, dataset_id):
    client.post("/runs", json={"dataset_id": dataset_id, **SPEC})
    h = client.get("/health").json()
    assert h["status"] == "ok" and h["schema_revision"] == migrations.head_revision() and h["queued_runs"] == 1
    assert h["database"] in ("sqlite", "postgresql")


def test_runs_state_enum_matches_the_api(client):
    assert client.get("/runs", params={"state": "bogus"}).status_code == 422
    assert {s.value for s in RunState} == {"queued", "running", "done", "failed", "cancelled"}


def test_a_run_with_an_unreachable_llm_falls_back_to_offline_and_says_so(client, worker, dataset_id):
    llm = {"model": "smollm2", "endpoint": "local", "max_retries": 0, "timeout_s": 2}
    run = client.post("/runs", json={"dataset_id": dataset_id, **SPEC, "budget": 30, "proposers": [
        {"kind": "offline", "weight": 0.5}, {"kind": "llm", "weight": 0.5, "llm": llm}]}).json()
    worker.run_once()
    done = client.get(f"/runs/{run['id']}").json()
    assert done["state"] == "done", done
    events = client.get(f"/runs/{run['id']}/events", params={"limit": 1000}).json()
    warnings = [e["payload"] for e in events if e["kind"] == "warning"]
    assert warnings and "unavailable" in warnings[0]["message"]
    assert "llm" in done["progress"]["proposers"]
