"""Training sweeps: points are claimed cheapest first, by one trainer each, and each adds exactly one row.

The dataset row and the point's ``done`` are one transaction that only the point's current owner
can make, so a trainer that went silent (and whose point another trainer took) adds nothing.
"""
from __future__ import annotations

import threading
from datetime import timedelta

import pandas as pd
import pytest

from agent.errors import DataError
from agent.storage import NotFoundError
from agent.storage.rdb import convert as cv

POINTS = [({"d_model": 64, "tokens": 1000}, 30.0), ({"d_model": 32, "tokens": 1000}, 10.0),
          ({"d_model": 48, "tokens": 1000}, 20.0)]


def row(loss: float, n: int = 100) -> pd.DataFrame:
    return pd.DataFrame([{"N": n, "D": 1000, "val_loss": loss, "device": "cpu"}])


REAL_NOW = cv.now


def later(monkeypatch, seconds: float) -> None:
    """The storage's clock ``seconds`` ahead of the real one."""
    moved = REAL_NOW() + timedelta(seconds=seconds)
    monkeypatch.setattr(cv, "now", lambda: moved)


def test_a_new_sweep_is_all_queued_and_has_no_dataset_until_its_first_row(storage):
    sweep = storage.create_sweep("grid", {"design": "grid"}, POINTS)
    assert sweep.counts == {"queued": 3, "running": 0, "done": 0, "failed": 0} and sweep.n_points == 3
    assert sweep.dataset_id is None and not sweep.finished
    assert [p.seq for p in storage.list_sweep_points(sweep.id)] == [0, 1, 2]
    with pytest.raises(ValueError, match="at least one point"):
        storage.create_sweep("empty", {}, [])


def test_points_are_claimed_cheapest_first_and_each_by_one_trainer(storage):
    sweep = storage.create_sweep("grid", {}, POINTS)
    claimed = []
    threads = [threading.Thread(target=lambda w=w: claimed.append(storage.claim_sweep_point(w, stale_after=60)))
               for w in ("t1", "t2", "t3", "t4")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = [p for p in claimed if p is not None]
    assert sorted(p.cost for p in got) == [10.0, 20.0, 30.0]  # every point once, the fourth trainer none
    assert len({p.worker_id for p in got}) == 3 and all(p.attempts == 1 for p in got)
    assert storage.get_sweep(sweep.id).counts["running"] == 3
    first = storage.create_sweep("again", {}, POINTS)
    assert storage.claim_sweep_point("t5", stale_after=60).spec == {"d_model": 32, "tokens": 1000}
    assert first.id != sweep.id
    listed = {r.id: r.counts for r in storage.list_sweeps().items}  # each sweep's own counts, counted at once
    assert listed == {sweep.id: {"queued": 0, "running": 3, "done": 0, "failed": 0},
                      first.id: {"queued": 2, "running": 1, "done": 0, "failed": 0}}


def test_the_first_row_makes_the_dataset_and_later_rows_join_it(storage):
    sweep = storage.create_sweep("loop", {}, POINTS[:2])
    a = storage.claim_sweep_point("t", stale_after=60)
    done = storage.finish_sweep_point(a.id, "t", row(2.5, 100))
    assert done.state == "done" and done.result == {"N": 100, "D": 1000, "val_loss": 2.5, "device": "cpu"}
    dataset_id = storage.get_sweep(sweep.id).dataset_id
    assert storage.get_dataset(dataset_id).source == f"sweep:{sweep.id}"
    b = storage.claim_sweep_point("t", stale_after=60)
    storage.finish_sweep_point(b.id, "t", row(2.2, 200))
    finished = storage.get_sweep(sweep.id)
    assert finished.dataset_id == dataset_id and finished.finished and finished.counts["done"] == 2
    assert storage.load_rows(dataset_id)["val_loss"].tolist() == [2.5, 2.2]
    storage.create_sweep("other", {}, POINTS[:1])  # no dataset yet: a law's page finds only its own sweep
    assert [s.id for s in storage.list_sweeps(dataset_id=dataset_id).items] == [sweep.id]
    assert storage.list_sweeps(dataset_id=dataset_id + 1).total == 0


def test_a_silent_trainer_loses_its_point_and_its_late_row_is_refused(storage, monkeypatch):
    sweep = storage.create_sweep("grid", {}, POINTS[:1])
    p = storage.claim_sweep_point("dead", stale_after=60)
    assert storage.claim_sweep_point("other", stale_after=60) is None  # still owned
    assert storage.heartbeat_sweep_point(p.id, "dead")
    later(monkeypatch, 61)
    again = storage.claim_sweep_point("other", stale_after=60)
    assert again.id == p.id and again.worker_id == "other" and again.attempts == 2
    assert not storage.heartbeat_sweep_point(p.id, "dead")
    assert storage.finish_sweep_point(p.id, "dead", row(9.9)) is None  # nothing written
    assert storage.get_sweep(sweep.id).dataset_id is None
    storage.finish_sweep_point(p.id, "other", row(2.0))
    assert storage.load_rows(storage.get_sweep(sweep.id).dataset_id)["val_loss"].tolist() == [2.0]
    assert storage.finish_sweep_point(p.id, "other", row(2.0)) is None  # a point adds one row, once


def test_a_heartbeat_keeps_a_long_run_its_trainers(storage, monkeypatch):
    storage.create_sweep("grid", {}, POINTS[:1])
    p = storage.claim_sweep_point("slow", stale_after=60)
    later(monkeypatch, 50)
    assert storage.heartbeat_sweep_point(p.id, "slow")
    later(monkeypatch, 100)  # 50 s after the heartbeat, 100 s after the claim
    assert storage.claim_sweep_point("other", stale_after=60) is None


def test_a_failed_point_is_queued_again_then_failed_after_its_attempts(storage):
    sweep = storage.create_sweep("grid", {}, POINTS[:1])
    for attempt in (1, 2):
        p = storage.claim_sweep_point("t", stale_after=60)
        assert storage.fail_sweep_point(p.id, "t", "out of memory", max_attempts=2).state == (
            "queued" if attempt == 1 else "failed")
    assert storage.claim_sweep_point("t", stale_after=60) is None
    final = storage.get_sweep(sweep.id)
    assert final.counts["failed"] == 1 and final.finished
    assert storage.list_sweep_points(sweep.id)[0].error == "out of memory"
    assert storage.fail_sweep_point(p.id, "someone", "x", max_attempts=2) is None


def test_a_row_that_does_not_fit_the_dataset_writes_nothing(storage):
    sweep = storage.create_sweep("grid", {}, POINTS[:2])
    a = storage.claim_sweep_point("t", stale_after=60)
    storage.finish_sweep_point(a.id, "t", row(2.5))
    b = storage.claim_sweep_point("t", stale_after=60)
    with pytest.raises(DataError):
        storage.finish_sweep_point(b.id, "t", pd.DataFrame([{"N": 1, "other": 2.0}]))
    assert storage.list_sweep_points(sweep.id)[b.seq].state == "running"  # still the trainer's to finish
    assert storage.get_dataset(storage.get_sweep(sweep.id).dataset_id).n_rows == 1


def test_a_tenant_sees_and_trains_only_its_own_sweeps(storage):
    team = storage.for_tenant("team")
    mine = team.create_sweep("mine", {}, POINTS[:1])
    rival = storage.for_tenant("rival")
    assert rival.claim_sweep_point("t", stale_after=60) is None and rival.list_sweeps().total == 0
    with pytest.raises(NotFoundError, match=f"sweep {mine.id} not found"):
        rival.get_sweep(mine.id)
    p = team.claim_sweep_point("t", stale_after=60)
    team.finish_sweep_point(p.id, "t", row(2.0))
    dataset = team.get_dataset(team.get_sweep(mine.id).dataset_id)
    assert dataset.tenant == "team"
    with pytest.raises(NotFoundError):
        rival.get_dataset(dataset.id)
