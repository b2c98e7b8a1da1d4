"""Worker faults: a lost database is waited out (longer each time, with jitter), never a crash or a failed
run; a cancel that comes during the last generation still ends the run cancelled; an embedded worker
does not outlive ``sld serve`` killed with SIGKILL."""
from __future__ import annotations

import os
import random
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy.exc import OperationalError

from agent.storage import ConflictError, RunState
from app.core.config import Settings
from app.schemas.runs import RunCreate
from app.services.runspec import resolve_run_spec
from app.worker import Worker
from app.worker_faults import Backoff
from tests.app.conftest import toy_rows
from tests.app.test_core_errors import proxied  # noqa: F401  (a PostgreSQL storage behind a cuttable proxy)
from tests.app.test_service_e2e import free_port, start, stop, wait_healthy

BUDGET = 16


def queue_run(storage, settings, dataset_id=None) -> int:
    if dataset_id is None:
        dataset_id = storage.create_dataset(toy_rows()).id
    spec = resolve_run_spec(RunCreate(dataset_id=dataset_id, inputs=["N"], targets=["loss"], group="group",
                                      max_constants=4, budget=BUDGET), storage, settings)
    return storage.create_run(dataset_id, spec).id


def lost_connection() -> OperationalError:
    return OperationalError("INSERT INTO candidates ...", {}, Exception("server closed the connection unexpectedly"))


def test_backoff_doubles_up_to_its_cap_with_jitter_and_starts_again_after_a_success():
    backoff = Backoff(1.0, 8.0, random.Random(0))
    delays = [backoff.next() for _ in range(6)]
    for delay, (low, high) in zip(delays, [(0.5, 1), (1, 2), (2, 4), (4, 8), (4, 8), (4, 8)]):
        assert low <= delay <= high
    assert len(set(delays)) == 6  # jittered: workers that lost the database together retry apart
    backoff.reset()
    assert 0.5 <= backoff.next() <= 1


@pytest.mark.postgres
@pytest.mark.slow
def test_a_worker_waits_out_a_lost_database_without_crashing_then_executes_runs(proxied):  # noqa: F811
    storage, proxy = proxied
    settings = Settings(database_url="unused://", poll_interval=0.05, db_retry_max=0.4, heartbeat_interval=0.2)
    dataset_id = storage.create_dataset(toy_rows()).id
    worker = Worker(storage, settings, worker_id="patient")
    tries = []  # each poll asks first for queued comparisons, then for a run
    claim = storage.claim_comparison
    storage.claim_comparison = lambda *a, **kw: (tries.append(time.monotonic()), claim(*a, **kw))[1]
    thread = threading.Thread(target=worker.run_forever, daemon=True)
    thread.start()
    try:
        time.sleep(0.3)
        proxy.cut()
        cut_at = time.monotonic()
        time.sleep(2.0)
        assert thread.is_alive(), "the worker must not exit when the database is lost"
        during = [t for t in tries if t > cut_at]
        assert 3 <= len(during) <= 12  # polling every 0.05 s would be 40 tries: it waited longer each time
        proxy.resume()
        run_id = queue_run(storage, settings, dataset_id)
        deadline = time.monotonic() + 180
        while storage.get_run(run_id).state is not RunState.DONE:
            assert time.monotonic() < deadline, "the run did not finish after the database came back"
            time.sleep(0.1)
    finally:
        worker.stop.set()
        thread.join(timeout=60)
    assert not thread.is_alive()


def test_a_database_lost_mid_run_does_not_fail_the_run_it_resumes(storage, settings, monkeypatch):
    worker = Worker(storage, settings.model_copy(update={"db_retry_max": 0.2}), worker_id="w")
    run_id = queue_run(storage, settings)
    save, calls = storage.save_generation, []

    def flaky_save(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the connection drops while the second generation is saved
            raise lost_connection()
        return save(*args, **kwargs)

    monkeypatch.setattr(storage, "save_generation", flaky_save)
    assert worker.run_forever(max_runs=1) == 1
    run = storage.get_run(run_id)
    assert run.state is RunState.DONE and run.error is None and run.attempts == 2
    kinds = [e.kind for e in storage.list_events(run_id)]
    assert kinds.count("released") == 1 and kinds[-1] == "done"
    ids = [c.id for c in storage.list_candidates(run_id, order_by="id", descending=False, limit=1000).items]
    assert ids == list(range(len(ids))) and len(ids) >= BUDGET  # resumed from the checkpoint: no gap, no twin


def test_a_cancel_during_the_last_generation_ends_the_run_cancelled(storage, settings, worker, monkeypatch):
    run_id = queue_run(storage, settings)
    save = storage.save_generation

    def cancel_while_the_last_generation_is_saved(*args, **kwargs):
        if kwargs["progress"]["candidates"] >= BUDGET and not storage.get_run(run_id).cancel_requested:
            storage.request_cancel(run_id)
        return save(*args, **kwargs)

    monkeypatch.setattr(storage, "save_generation", cancel_while_the_last_generation_is_saved)
    worker.run_once()
    run = storage.get_run(run_id)
    assert run.state is RunState.CANCELLED and run.final["law"]  # the best law so far is still reported
    assert [e.kind for e in storage.list_events(run_id)][-1] == "cancelled"


def test_a_cancel_while_the_final_law_is_refitted_is_not_lost(storage, settings, worker, monkeypatch):
    run_id = queue_run(storage, settings)
    finish = storage.finish_run

    def cancel_just_before_the_end(run, wid, state, **kwargs):
        storage.request_cancel(run)  # the user's click lands after the last generation was saved
        return finish(run, wid, state, **kwargs)

    monkeypatch.setattr(storage, "finish_run", cancel_just_before_the_end)
    worker.run_once()
    assert storage.get_run(run_id).state is RunState.CANCELLED


def test_a_cancel_after_the_end_is_refused_not_silently_dropped(storage):
    ds = storage.create_dataset(toy_rows())
    run = storage.create_run(ds.id, {})
    storage.claim_run("w", stale_after=30)
    assert storage.finish_run(run.id, "w", RunState.DONE).state is RunState.DONE
    with pytest.raises(ConflictError, match="is already done"):
        storage.request_cancel(run.id)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                pass
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent (now init) has not reaped it yet


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the worker process through /proc")
def test_the_embedded_worker_exits_when_sld_serve_is_killed_with_sigkill(tmp_path):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/serve.db", "SLD_POLL_INTERVAL": "0.2"}
    server = start(["serve", "--port", str(port), "--workers", "1", "--log-level", "warning"], env)
    workers: list[int] = []
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        deadline = time.monotonic() + 30
        while not workers and time.monotonic() < deadline:
            workers = [p for p in _children(server.pid) if b"app.worker" in Path(f"/proc/{p}/cmdline").read_bytes()]
            time.sleep(0.1)
        assert len(workers) == 1, "sld serve should have started one worker process"
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
        deadline = time.monotonic() + 20
        while _alive(workers[0]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(workers[0]), "the worker outlived sld serve"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        stop(server)
