"""API fixtures: the app on SQLite and on PostgreSQL, an in-process worker, toy data from a known law."""
from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from app.core.config import LLMEndpoint, Settings
from app.main import create_app
from app.worker import Worker
from tests.agent.storage.conftest import database_url, postgres_database, storage  # noqa: F401

TRUE_LAW = {"a": (1.8, 300.0), "b": (2.1, 250.0)}  # loss = E + A * N ** -0.3 per group


def toy_rows(seed: int = 0, noise: float = 0.003, sizes=None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = np.geomspace(1e6, 1e9, 10) if sizes is None else sizes
    rows = [{"N": float(n), "group": g, "loss": float((E + A * n ** -0.3) * np.exp(rng.normal(0, noise)))}
            for g, (E, A) in TRUE_LAW.items() for n in sizes]
    return pd.DataFrame(rows)


def toy_csv(**kw) -> bytes:
    buf = io.StringIO()
    toy_rows(**kw).to_csv(buf, index=False)
    return buf.getvalue().encode()


@pytest.fixture
def settings(database_url):
    # One LLM endpoint where nothing listens (the discard port), so LLM runs fall back to offline.
    # The token table is asked on every request (no cache): tests create and revoke tokens between
    # requests and expect them to count at once (test_api_auth pins the cache itself).
    return Settings(database_url=database_url, max_payload_bytes=100_000, heartbeat_interval=0.2,
                    stale_after=30, poll_interval=0.05, default_budget=20, compare_time_limit=10,
                    auth_cache_seconds=0, llm_endpoints={"local": LLMEndpoint(base_url="http://127.0.0.1:9/v1")})


@pytest.fixture
def client(settings, storage):
    with TestClient(create_app(settings, storage)) as c:
        yield c


@pytest.fixture
def worker(storage, settings):
    """Executes one queued run in-process: ``worker.run_once()``."""
    return Worker(storage, settings, worker_id="test-worker")


@pytest.fixture
def dataset_id(client):
    r = client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, data={"name": "toy"})
    assert r.status_code == 201, r.text
    return r.json()["id"]


class _RecordingStorage:
    """The test's storage as the worker sees it, keeping each write the worker makes to a run."""

    WRITES = ("save_generation", "finish_run")

    def __init__(self, storage):
        self._storage, self.writes = storage, []

    def __getattr__(self, name):
        attr = getattr(self._storage, name)
        if name not in self.WRITES:
            return attr

        def recorded(*args, **kwargs):
            self.writes.append((name, args, kwargs))
            return attr(*args, **kwargs)
        return recorded


_FINISHED: dict[str, list] = {}  # a run's spec and rows -> the writes its worker made, once per session


def _finished_key(storage, settings: Settings, run_id: int) -> str:
    run = storage.get_run(run_id)
    rows = pd.util.hash_pandas_object(storage.load_rows(run.dataset_id), index=False)
    return "\n".join((json.dumps({k: v for k, v in run.spec.items() if k != "dataset_id"}, sort_keys=True),
                      str(rows.sum()), settings.model_dump_json(exclude={"database_url"})))


def _replay(storage, worker: Worker, run_id: int, writes: list) -> None:
    """The worker's writes, in order, to another run of the same spec and rows: what the search would
    write again (it is deterministic for a seed), without searching again."""
    claimed = storage.claim_run(worker.worker_id, stale_after=worker.settings.stale_after)
    assert claimed is not None and claimed.id == run_id
    for name, (_, wid, *rest), kwargs in writes:
        if "checkpoint" in kwargs:
            kwargs = kwargs | {"checkpoint": dataclasses.replace(kwargs["checkpoint"], run_id=run_id)}
        getattr(storage, name)(run_id, wid, *rest, **kwargs)


@pytest.fixture
def done_run(client, storage, settings, dataset_id):
    """A finished run on the toy dataset (budget 16, seed 0).

    The first test of the session that asks for it runs the worker for real; the others get the
    same run by replaying that worker's writes (the same spec, rows and seed give the same search),
    each into its own database, SQLite or PostgreSQL: the search is tested elsewhere, what is
    tested here is the service around a finished run.
    """
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                   "group": "group", "max_constants": 4, "budget": 16})
    assert r.status_code == 202, r.text
    run_id = r.json()["id"]
    key = _finished_key(storage, settings, run_id)
    if key in _FINISHED:
        _replay(storage, Worker(storage, settings, worker_id="test-worker"), run_id, _FINISHED[key])
    else:
        recording = _RecordingStorage(storage)
        Worker(recording, settings, worker_id="test-worker").run_once()
        _FINISHED[key] = recording.writes
    run = client.get(f"/runs/{run_id}").json()
    assert run["state"] == "done", run
    return run
