"""The loop of the field on one machine, for real: ``sld serve`` and ``sld train worker`` processes over HTTP.

A sweep is planned through the API, trainer workers claim and train its points on the CPU, their
rows become a dataset, and a discovery run on that dataset predicts the largest model it never saw.
A trainer killed with SIGKILL mid-run loses only its point, which is trained again, once.
"""
from __future__ import annotations

import os
import signal
import time

import httpx
import numpy as np
import pandas as pd
import pytest

from tests.app.test_service_e2e import free_port, start, stop, wait_for, wait_healthy

pytestmark = pytest.mark.slow


@pytest.fixture
def server(tmp_path, torch):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/sld.db", "SLD_POLL_INTERVAL": "0.2",
           "SLD_SWEEP_HEARTBEAT_INTERVAL": "0.5", "SLD_SWEEP_STALE_AFTER": "4"}
    proc = start(["serve", "--port", str(port), "--workers", "1", "--log-level", "warning"], env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, proc)
        with httpx.Client(base_url=base, timeout=30) as http:
            yield http, base, env
    finally:
        stop(proc)


def sweep_rows(http: httpx.Client, sweep_id: int, timeout: float) -> tuple[dict, pd.DataFrame]:
    sweep = wait_for(lambda: http.get(f"/sweeps/{sweep_id}").json(), lambda s: s["finished"], timeout)
    rows = http.get(f"/datasets/{sweep['dataset_id']}/rows", params={"limit": 500}).json()["items"]
    return sweep, pd.DataFrame(rows)


def test_a_trainer_killed_mid_run_loses_only_its_point(server):
    http, base, env = server
    tokens = 8 * 128 * 400  # a few seconds per point on one thread
    sweep = http.post("/sweeps", json={"n_params": [2e4], "tokens": [tokens], "seeds": [0, 1, 2]}).json()
    doomed = start(["train", "worker", "--server", base], env)
    try:
        point = wait_for(lambda: http.get(f"/sweeps/{sweep['id']}").json()["points"],
                         lambda ps: any(p["state"] == "running" for p in ps), 60)
        time.sleep(1.0)  # training, heartbeating
        doomed.send_signal(signal.SIGKILL)
        doomed.wait(10)
    finally:
        stop(doomed)
    killed = next(p for p in point if p["state"] == "running")
    survivor = start(["train", "worker", "--server", base, "--max-points", "3"], env)
    try:
        sweep, rows = sweep_rows(http, sweep["id"], 180)
    finally:
        log = stop(survivor)
    points = {p["id"]: p for p in http.get(f"/sweeps/{sweep['id']}").json()["points"]}
    assert sweep["counts"] == {"queued": 0, "running": 0, "done": 3, "failed": 0}, log
    assert points[killed["id"]]["attempts"] == 2  # claimed again after its heartbeat went stale
    assert len(rows) == 3 and sorted(rows["seed"]) == [0, 1, 2]  # every point once, none twice


# The 9-point CI grid, plus the next model size up as the held-out corner: the discovery run
# extrapolates along N to a model 2x larger than any it was fitted on (the N x D corner).
GRID_N, GRID_D, HELD_OUT_N = [25e3, 85e3, 2e5], [2.5e5, 5e5, 1e6], 4e5


def test_a_cpu_sweep_feeds_a_discovery_run_that_predicts_the_larger_model(server):
    http, base, env = server
    sweep = http.post("/sweeps", json={"name": "ci", "n_params": [*GRID_N, HELD_OUT_N], "tokens": GRID_D}).json()
    assert sweep["n_points"] == 12
    trainers = start(["train", "worker", "--server", base, "--jobs", "2", "--exit-when-idle"], env)
    try:
        sweep, rows = sweep_rows(http, sweep["id"], 900)
    finally:
        log = stop(trainers)
    assert sweep["counts"]["done"] == 12, log
    assert set(rows.columns) >= {"N", "N_total", "D", "C", "lr", "batch", "seed", "steps", "train_loss", "val_loss",
                                 "seconds", "tokens_per_s", "device", "torch", "python"}
    grid = rows[rows["N"] < rows["N"].max()].pivot_table(index="N", columns="D", values="val_loss")
    assert grid.shape == (3, 3)
    # seed noise is 0.03-0.09 nats, so trends are asserted on averages over the grid, not pair by pair
    assert np.all(np.diff(grid.mean(axis=1).to_numpy()) < 0), grid  # falls with N, averaged over D
    assert np.all(np.diff(grid.mean(axis=0).to_numpy()) < 0), grid  # falls with D, averaged over N

    largest = float(rows["N"].max())
    r = http.post("/runs", json={"dataset_id": sweep["dataset_id"], "inputs": ["N", "D"], "targets": ["val_loss"],
                                 "axis": ["N"], "test_split": {"column": "N", "at_least": largest}})
    assert r.status_code == 202, r.text
    run = wait_for(lambda: http.get(f"/runs/{r.json()['id']}").json(), lambda x: x["state"] in ("done", "failed"), 600)
    assert run["state"] == "done", run["error"]
    test = run["final"]["test"]
    assert test["n_rows"] == 3 and test["r2"] > 0.9, (run["final"]["law"], test)
