"""The real thing: ``sld serve`` as a process on a free port, driven over HTTP like a user with curl.

SQLite: the README's main job (API + embedded worker).  PostgreSQL: the API
alone plus two ``sld worker`` processes sharing the queue.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from tests.app.conftest import toy_csv

pytestmark = pytest.mark.slow

SLD = [sys.executable, "-c", "from app.cli import main; main()"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args, env) -> subprocess.Popen:
    return subprocess.Popen([*SLD, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def stop(proc: subprocess.Popen) -> str:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.stdout.read() if proc.stdout else ""


def wait_healthy(base: str, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"sld serve exited: {server.stdout.read()}")
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError("sld serve did not answer /health in time")


def poll_until_finished(http: httpx.Client, run_id: int, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    seen_progress = []
    while time.monotonic() < deadline:
        run = http.get(f"/runs/{run_id}").json()
        seen_progress.append(run["progress"].get("candidates", 0))
        if run["state"] in ("done", "failed", "cancelled"):
            run["seen_progress"] = seen_progress
            return run
        time.sleep(0.3)
    raise AssertionError(f"run {run_id} did not finish: {run}")


def wait_for(read, finished, timeout: float = 120):
    """``read()`` again until ``finished`` says so (a worker answers queued work between polls)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = read()
        if finished(value):
            return value
        time.sleep(0.3)
    raise AssertionError(f"still not finished: {value}")


def upload(http: httpx.Client) -> int:
    ds = http.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, data={"name": "toy"})
    assert ds.status_code == 201, ds.text
    return ds.json()["id"]


def queue(http: httpx.Client, dataset_id: int, seed: int = 0, budget: int = 20) -> int:
    r = http.post("/runs", json={"dataset_id": dataset_id, "inputs": ["N"], "targets": ["loss"],
                                 "group": "group", "max_constants": 4, "budget": budget, "seed": seed})
    assert r.status_code == 202 and r.json()["state"] == "queued", r.text
    return r.json()["id"]


def read_results(http: httpx.Client, run: dict) -> None:
    assert run["state"] == "done", run
    assert run["progress"]["candidates"] == run["spec"]["config"]["budget"]
    best = http.get(f"/datasets/{run['dataset_id']}/best-law").json()
    assert best["final"] and set(best["constants"]) == {"a", "b"}
    queued = http.post(f"/runs/{run['id']}/compare", json={"name": "human", "lines": ["loss = E + A * N ** -0.3"]})
    assert queued.status_code == 202, queued.text
    job = wait_for(lambda: http.get(queued.json()["url"]).json(), lambda j: j["state"] in ("done", "failed"))
    assert job["state"] == "done" and [law["name"] for law in job["result"]["laws"]] == ["discovered", "human"]
    pred = http.post("/predict", json={"run_id": run["id"], "points": [{"N": 1e10, "group": "a"}]})
    assert pred.json()["predictions"][0]["loss"] == pytest.approx(1.8 + 300 * 1e10 ** -0.3, rel=0.02)


def test_sld_serve_on_sqlite_takes_a_csv_to_a_law(tmp_path):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/sld.db", "SLD_POLL_INTERVAL": "0.2"}
    server = start(["serve", "--port", str(port), "--workers", "1", "--log-level", "warning"], env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            run = poll_until_finished(http, queue(http, upload(http)))
            read_results(http, run)
            assert run["worker_id"] and run["attempts"] == 1
            assert len(set(run["seen_progress"])) > 1  # progress was visible while it ran
    finally:
        log = stop(server)
    assert server.returncode is not None
    assert "Traceback" not in log, log


def test_sld_serve_with_two_workers_on_postgresql(postgres_database):
    from agent.storage.testing import empty_tables

    empty_tables(postgres_database)
    port = free_port()
    env = {**os.environ, "DATABASE_URL": postgres_database, "SLD_POLL_INTERVAL": "0.2"}
    server = start(["serve", "--port", str(port), "--workers", "0", "--log-level", "warning"], env)
    workers = start(["worker", "--processes", "2"], env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            dataset_id = upload(http)
            ids = [queue(http, dataset_id, seed=s) for s in (0, 1)]
            runs = [poll_until_finished(http, i) for i in ids]
            for run in runs:
                read_results(http, run)
        assert runs[0]["worker_id"] != runs[1]["worker_id"]  # the two workers shared the queue
    finally:
        worker_log = stop(workers)
        log = stop(server)
    assert "Traceback" not in log + worker_log, log + worker_log
