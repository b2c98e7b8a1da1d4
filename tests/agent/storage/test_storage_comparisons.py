"""Comparisons: queued by the API, claimed by exactly one worker, finished by their owner only."""
from __future__ import annotations

import threading
from datetime import timedelta

import pandas as pd
import pytest

from agent.storage import NotFoundError
from agent.storage.rdb import convert as cv

LAW = {"name": "mine", "lines": ["loss = a * N ** b"]}


@pytest.fixture
def run(storage):
    dataset = storage.create_dataset(pd.DataFrame({"N": [1.0, 2.0, 3.0], "loss": [3.0, 2.5, 2.2]}))
    return storage.create_run(dataset.id, {})


def test_a_queued_comparison_is_claimed_once_and_finished_by_its_worker(storage, run):
    queued = storage.create_comparison(run.id, LAW)
    assert (queued.state, queued.law, queued.result) == ("queued", LAW, None) and not queued.finished
    claimed = []
    threads = [threading.Thread(target=lambda w=w: claimed.append(storage.claim_comparison(w, stale_after=60)))
               for w in ("w1", "w2", "w3")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [c for c in claimed if c is not None]
    assert len(winners) == 1 and winners[0].state == "running"
    owner = winners[0].worker_id
    assert storage.finish_comparison(queued.id, "someone-else", result={"best": "x"}) is None
    done = storage.finish_comparison(queued.id, owner, result={"best": "mine", "value": float("nan")})
    assert done.state == "done" and done.finished and done.result == {"best": "mine", "value": None}
    assert storage.get_comparison(run.id, queued.id).result["best"] == "mine"


def test_a_comparison_that_fails_keeps_its_reason(storage, run):
    queued = storage.create_comparison(run.id, LAW)
    storage.claim_comparison("w", stale_after=60)
    failed = storage.finish_comparison(queued.id, "w", error="law 'mine' cannot be fitted")
    assert failed.state == "failed" and failed.error == "law 'mine' cannot be fitted" and failed.result is None


def test_a_comparison_whose_worker_went_silent_is_claimed_again(storage, run, monkeypatch):
    queued = storage.create_comparison(run.id, LAW)
    storage.claim_comparison("dead", stale_after=60)
    assert storage.claim_comparison("other", stale_after=60) is None
    later = cv.now() + timedelta(seconds=61)
    monkeypatch.setattr(cv, "now", lambda: later)
    again = storage.claim_comparison("other", stale_after=60)
    assert again.id == queued.id and again.worker_id == "other"
    assert storage.finish_comparison(queued.id, "dead", result={}) is None  # the silent worker writes nothing


def test_unknown_comparisons_and_other_tenants_comparisons_are_not_found(storage):
    team = storage.for_tenant("team")
    dataset = team.create_dataset(pd.DataFrame({"N": [1.0, 2.0], "loss": [3.0, 2.0]}))
    run = team.create_run(dataset.id, {})
    mine = team.create_comparison(run.id, LAW)
    assert mine.tenant == "team" and team.get_comparison(run.id, mine.id).id == mine.id
    with pytest.raises(NotFoundError, match=f"run {run.id} not found"):
        storage.for_tenant("rival").get_comparison(run.id, mine.id)
    with pytest.raises(NotFoundError, match=f"run {run.id} not found"):
        storage.for_tenant("rival").create_comparison(run.id, LAW)
    with pytest.raises(NotFoundError, match=f"run {run.id} has no comparison 99"):
        team.get_comparison(run.id, 99)
    team.request_cancel(run.id)
    team.delete_dataset(dataset.id)  # its runs go, and their comparisons with them
    assert storage.claim_comparison("w", stale_after=60) is None
