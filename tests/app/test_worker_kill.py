"""A worker killed mid-run (SIGKILL) loses nothing: another worker resumes from the last checkpoint
and the run ends with exactly the candidates of an uninterrupted run with the same seed."""
from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time

import psycopg
import pytest

from agent.storage import RunState
from app.services.runspec import resolve_run_spec
from app.schemas.runs import RunCreate
from tests.app.conftest import toy_rows

pytestmark = pytest.mark.slow

SLD = [sys.executable, "-c", "from app.cli import main; main()"]
BUDGET = 45


def comparable(candidates):
    """Everything but the wall-clock seconds each evaluation took."""
    return [{k: v for k, v in c.to_dict().items() if k != "seconds"} for c in candidates]


@contextlib.contextmanager
def run_row_locked(database_url: str, run_id: int):
    """(state, generation) of a run, read under a lock that holds off every write to its row."""
    if database_url.startswith("sqlite"):
        con = sqlite3.connect(database_url.split(":///", 1)[1], isolation_level=None, timeout=30)
        try:
            con.execute("BEGIN IMMEDIATE")  # the database's write lock: a worker's save waits
            yield con.execute("SELECT state, generation FROM runs WHERE id = ?", (run_id,)).fetchone()
            con.execute("ROLLBACK")
        finally:
            con.close()
    else:
        with psycopg.connect(database_url.replace("postgresql+psycopg", "postgresql", 1)) as con:
            yield con.execute("SELECT state, generation FROM runs WHERE id = %s FOR UPDATE", (run_id,)).fetchone()
            con.rollback()


def all_candidates(storage, run_id):
    return storage.list_candidates(run_id, order_by="id", descending=False, limit=1000).items


def test_a_killed_worker_is_replaced_and_the_run_ends_as_if_nothing_happened(storage, settings, worker,
                                                                            database_url):
    ds = storage.create_dataset(toy_rows())
    spec = resolve_run_spec(RunCreate(dataset_id=ds.id, inputs=["N"], targets=["loss"], group="group",
                                      max_constants=4, budget=BUDGET, seed=7), storage, settings)
    reference = storage.create_run(ds.id, spec)
    worker.run_once()  # uninterrupted, in this process
    assert storage.get_run(reference.id).state is RunState.DONE

    victim = storage.create_run(ds.id, spec)
    env = {**os.environ, "DATABASE_URL": database_url, "SLD_STALE_AFTER": "3", "SLD_HEARTBEAT_INTERVAL": "0.5",
           "SLD_POLL_INTERVAL": "0.1"}
    first = subprocess.Popen([*SLD, "worker", "--max-runs", "1"], env=env)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            # the worker is killed while the test holds the run's row: it cannot save another
            # generation (or finish) between the look and the kill
            with run_row_locked(database_url, victim.id) as (state, generation):
                if state == RunState.RUNNING.value and generation >= 1:
                    first.send_signal(signal.SIGKILL)
                    first.wait(timeout=10)
                    break
            time.sleep(0.1)
    finally:
        if first.poll() is None:
            first.kill()
    interrupted = storage.get_run(victim.id)
    assert interrupted.state is RunState.RUNNING, "the run must still be mid-way when its worker dies"
    saved = len(all_candidates(storage, victim.id))
    assert 0 < saved < BUDGET
    assert saved == interrupted.progress["candidates"]  # candidates and checkpoint were saved together

    second = subprocess.run([*SLD, "worker", "--max-runs", "1"], env=env, timeout=180, capture_output=True, text=True)
    assert second.returncode == 0, second.stdout + second.stderr

    resumed = storage.get_run(victim.id)
    assert resumed.state is RunState.DONE and resumed.attempts == 2
    assert resumed.worker_id != interrupted.worker_id
    claims = [e.payload for e in storage.list_events(victim.id) if e.kind == "claimed"]
    assert claims[-1]["resumed_from_worker"] == interrupted.worker_id
    expected = comparable(all_candidates(storage, reference.id))
    got = comparable(all_candidates(storage, victim.id))
    searched = [c for c in got if c["kind"] == "searched"]
    assert len(searched) == BUDGET and [c["id"] for c in got] == list(range(len(got)))  # finalists follow
    assert got == expected
    final_ref, final_got = storage.get_run(reference.id).final, resumed.final
    assert final_got["law"] == final_ref["law"] and final_got["constants"] == final_ref["constants"]
