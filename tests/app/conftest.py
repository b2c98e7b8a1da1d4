"""API fixtures: the app on SQLite and on PostgreSQL, an in-process worker, toy data from a known law."""
from __future__ import annotations

import io

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
    return Settings(database_url=database_url, max_payload_bytes=100_000, heartbeat_interval=0.2,
                    stale_after=30, poll_interval=0.05, default_budget=20, compare_time_limit=10,
                    llm_endpoints={"local": LLMEndpoint(base_url="http://127.0.0.1:9/v1")})


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


@pytest.fixture
def done_run(client, worker, dataset_id):
    """A finished run on the toy dataset (budget 16, seed 0)."""
    r = client.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                   "group": "group", "max_constants": 4, "budget": 16})
    assert r.status_code == 202, r.text
    worker.run_once()
    run = client.get(f"/runs/{r.json()['id']}").json()
    assert run["state"] == "done", run
    return run
