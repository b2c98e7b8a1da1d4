"""Runs: claimed by exactly one worker, heartbeats, stale re-claims, atomic generations."""
from __future__ import annotations

import threading
from datetime import timedelta

import pandas as pd
import pytest

from agent.search.records import Candidate
from agent.storage import Checkpoint, ConflictError, NotFoundError, RunLost, RunState
from agent.storage.rdb import convert as cv


@pytest.fixture
def dataset(storage):
    return storage.create_dataset(pd.DataFrame({"N": [1.0, 2.0, 3.0], "loss": [3.0, 2.5, 2.2]}))


def candidates(ids, generation=0):
    return [Candidate(id=i, generation=generation, lines=(f"loss = a * N ** b + {i}",), proposer="seed",
                      status="ok" if i % 3 else "rejected", reason=None if i % 3 else "non-finite fit",
                      score=float(i) / 10 if i % 3 else float("-inf"),
                      validation={"r2": 1 - 1 / (i + 1)} if i % 3 else {}, n_constants=i % 4,
                      complexity=10 + i, constants={"all_data": {"a": 1.5, "b": -0.1 * i}})
            for i in ids]


def save(storage, run_id, worker, ids, generation):
    storage.save_generation(run_id, worker, candidates=candidates(ids, generation),
                            checkpoint=Checkpoint(run_id, generation, {"generation": generation, "ids": list(ids)}),
                            progress={"candidates": max(ids) + 1, "generation": generation},
                            best_score=max(ids) / 10, events=[{"kind": "generation", "n": len(ids)}])


def test_a_new_run_is_queued_and_the_oldest_is_claimed_first(storage, dataset):
    first = storage.create_run(dataset.id, {"budget": 10, "seed": 1})
    storage.create_run(dataset.id, {"budget": 10, "seed": 2})
    assert first.state is RunState.QUEUED and first.worker_id is None and first.spec["seed"] == 1
    claimed = storage.claim_run("w1", stale_after=30)
    assert (claimed.id, claimed.state, claimed.worker_id, claimed.attempts) == (first.id, RunState.RUNNING, "w1", 1)
    assert claimed.started_at is not None and claimed.heartbeat_at is not None


def test_concurrent_workers_claim_each_run_exactly_once(storage, dataset):
    run_ids = [storage.create_run(dataset.id, {}).id for _ in range(12)]
    claimed, lock = [], threading.Lock()

    def worker(name):
        while (run := storage.claim_run(name, stale_after=60)) is not None:
            with lock:
                claimed.append(run.id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(claimed) == run_ids
    assert storage.claim_run("late", stale_after=60) is None


def test_a_stale_run_is_reclaimed_and_its_old_worker_can_write_nothing(storage, dataset, monkeypatch):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("dead", stale_after=60)
    save(storage, run.id, "dead", [0, 1, 2], generation=0)
    assert storage.claim_run("other", stale_after=60) is None  # heartbeat still fresh
    later = cv.now() + timedelta(seconds=61)  # the storage's clock, moved on past the heartbeat's age limit
    monkeypatch.setattr(cv, "now", lambda: later)
    resumed = storage.claim_run("other", stale_after=60)
    assert (resumed.id, resumed.worker_id, resumed.attempts) == (run.id, "other", 2)
    assert storage.load_checkpoint(run.id).state == {"generation": 0, "ids": [0, 1, 2]}
    with pytest.raises(RunLost, match="owned by other, not dead"):
        storage.heartbeat(run.id, "dead")
    with pytest.raises(RunLost):
        save(storage, run.id, "dead", [3, 4], generation=1)
    assert storage.list_candidates(run.id).total == 3
    assert storage.load_checkpoint(run.id).generation == 0
    claim_events = [e.payload for e in storage.list_events(run.id) if e.kind == "claimed"]
    assert claim_events[-1] == {"worker_id": "other", "attempt": 2, "resumed_from_worker": "dead"}


def test_a_generation_is_saved_whole_or_not_at_all(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    save(storage, run.id, "w", [0, 1, 2], generation=0)
    with pytest.raises(ConflictError, match="already stored"):
        save(storage, run.id, "w", [2, 3], generation=1)  # candidate 2 again
    assert [c.id for c in storage.list_candidates(run.id, order_by="id", descending=False).items] == [0, 1, 2]
    assert storage.load_checkpoint(run.id).generation == 0
    after = storage.get_run(run.id)
    assert after.generation == 0 and after.progress == {"candidates": 3, "generation": 0}
    assert [e.kind for e in storage.list_events(run.id)].count("generation") == 1


def test_checkpoints_round_trip_exactly_including_non_finite_numbers(storage, dataset):
    run = storage.create_run(dataset.id, {})
    assert storage.load_checkpoint(run.id) is None
    storage.claim_run("w", stale_after=60)
    state = {"rng": [1, 2, 3], "best": float("-inf"), "values": [0.1 + 0.2, float("nan")]}
    storage.save_generation(run.id, "w", candidates=[], checkpoint=Checkpoint(run.id, 4, state),
                            progress={}, best_score=None)
    loaded = storage.load_checkpoint(run.id)
    assert loaded.generation == 4 and loaded.state["values"][0] == 0.1 + 0.2
    assert loaded.state["best"] == float("-inf") and loaded.state["values"][1] != loaded.state["values"][1]


def test_candidates_come_back_as_they_were_stored(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    save(storage, run.id, "w", range(6), generation=0)
    stored = storage.get_candidate(run.id, 4)
    assert stored == candidates([4])[0]
    rejected = storage.get_candidate(run.id, 3)
    assert rejected.score == float("-inf") and rejected.reason == "non-finite fit" and not rejected.ok
    with pytest.raises(NotFoundError, match=f"run {run.id} has no candidate 99"):
        storage.get_candidate(run.id, 99)


def test_a_candidates_scores_come_back_exactly_even_when_not_finite(storage, dataset):
    """A resumed run reloads its candidates from storage and ranks them again: a fold's NMSE of inf
    must not come back as null or NaN."""
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    odd = Candidate(id=0, generation=0, lines=("loss = a * N ** b",), proposer="seed", status="ok", score=-1.5,
                    validation={"r2": -2.0, "fold_nmse": [3.0, float("inf")], "fold_r2": [-2.0, float("-inf")],
                                "disagreement": float("nan"), "folds_ordered": True},
                    fit={"loss": float("inf"), "method": "log"})
    storage.save_generation(run.id, "w", candidates=[odd], checkpoint=Checkpoint(run.id, 0, {}),
                            progress={}, best_score=None)
    back = storage.get_candidate(run.id, 0)
    assert back.validation["fold_nmse"] == [3.0, float("inf")] and back.validation["fold_r2"][1] == float("-inf")
    assert back.validation["disagreement"] != back.validation["disagreement"]  # NaN
    assert back.fit == {"loss": float("inf"), "method": "log"} and back.validation["folds_ordered"] is True


def test_the_leaderboard_sorts_pages_and_puts_rejected_laws_last(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    save(storage, run.id, "w", range(7), generation=0)
    by_score = storage.list_candidates(run.id, order_by="score")
    assert [c.id for c in by_score.items] == [5, 4, 2, 1, 0, 3, 6] and by_score.total == 7
    worst_first = storage.list_candidates(run.id, order_by="score", descending=False)
    assert [c.id for c in worst_first.items][:5] == [1, 2, 4, 5, 0]
    page = storage.list_candidates(run.id, order_by="complexity", descending=False, offset=2, limit=3)
    assert [c.id for c in page.items] == [2, 3, 4] and page.total == 7
    ok = storage.list_candidates(run.id, status="ok")
    assert ok.total == 4 and all(c.ok for c in ok.items)
    assert storage.best_candidate(run.id).id == 5
    with pytest.raises(ValueError, match="cannot sort by 'lines'"):
        storage.list_candidates(run.id, order_by="lines")


def test_finishing_a_run_stores_its_final_law(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    final = {"lines": ["loss = a * N ** b"], "constants": {"all_data": {"a": 3.0, "b": -0.2}}, "validation": {"r2": 0.9}}
    done = storage.finish_run(run.id, "w", RunState.DONE, final=final, best_score=0.9, progress={"candidates": 10})
    assert done.state is RunState.DONE and done.final == final and done.finished_at is not None
    assert done.progress == {"candidates": 10} and done.best_score == 0.9
    with pytest.raises(RunLost):
        storage.finish_run(run.id, "w", RunState.FAILED, error="late")
    assert storage.get_run(run.id).state is RunState.DONE


def test_best_run_of_a_dataset_is_the_done_run_with_the_best_score(storage, dataset):
    assert storage.best_run(dataset.id) is None
    scores = {}
    for score in (0.5, 0.9, 0.7):
        run = storage.create_run(dataset.id, {})
        storage.claim_run("w", stale_after=60)
        storage.finish_run(run.id, "w", RunState.DONE, final={"lines": []}, best_score=score)
        scores[run.id] = score
    failed = storage.create_run(dataset.id, {})
    storage.claim_run("w", stale_after=60)
    storage.finish_run(failed.id, "w", RunState.FAILED, error="boom", best_score=5.0)
    assert storage.best_run(dataset.id).best_score == 0.9


def test_cancel_is_immediate_when_queued_and_requested_when_running(storage, dataset):
    queued = storage.create_run(dataset.id, {})
    running = storage.create_run(dataset.id, {})
    cancelled = storage.request_cancel(queued.id)
    assert cancelled.state is RunState.CANCELLED and cancelled.finished_at is not None
    assert storage.claim_run("w", stale_after=60).id == running.id
    assert storage.request_cancel(running.id).state is RunState.RUNNING
    assert storage.heartbeat(running.id, "w").cancel_requested
    saved = storage.save_generation(running.id, "w", candidates=candidates([0]), checkpoint=Checkpoint(running.id, 1, {}),
                                    progress={}, best_score=None)
    assert saved.cancel_requested and saved.generation == 1  # the worker learns it when it saves
    storage.finish_run(running.id, "w", RunState.CANCELLED)
    with pytest.raises(ConflictError, match=f"run {running.id} is already cancelled"):
        storage.request_cancel(running.id)
    assert storage.claim_run("w2", stale_after=0) is None


def test_a_released_run_goes_back_to_the_queue_with_its_checkpoint(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.claim_run("w1", stale_after=60)
    save(storage, run.id, "w1", [0, 1], generation=0)
    storage.release_run(run.id, "w1")
    again = storage.get_run(run.id)
    assert again.state is RunState.QUEUED and again.worker_id is None
    resumed = storage.claim_run("w2", stale_after=60)
    assert resumed.attempts == 2 and storage.load_checkpoint(run.id).generation == 0


def test_runs_are_listed_by_dataset_and_state(storage, dataset):
    other = storage.create_dataset(pd.DataFrame({"x": [1.0]}))
    a = storage.create_run(dataset.id, {})
    b = storage.create_run(dataset.id, {})
    c = storage.create_run(other.id, {})
    storage.request_cancel(b.id)
    assert [r.id for r in storage.list_runs().items] == [c.id, b.id, a.id]
    assert [r.id for r in storage.list_runs(dataset_id=dataset.id).items] == [b.id, a.id]
    assert [r.id for r in storage.list_runs(state=RunState.QUEUED).items] == [c.id, a.id]
    assert storage.list_runs(limit=1).total == 3


def test_events_are_read_in_order_after_a_given_id(storage, dataset):
    run = storage.create_run(dataset.id, {})
    storage.add_events(run.id, [{"kind": "warning", "message": "LLM endpoint down"}, {"type": "llm_call", "tokens": 12}])
    events = storage.list_events(run.id)
    assert [e.kind for e in events] == ["queued", "warning", "llm_call"]
    assert events[1].payload["message"] == "LLM endpoint down"
    assert [e.kind for e in storage.list_events(run.id, after_id=events[1].id)] == ["llm_call"]
