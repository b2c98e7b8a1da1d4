#!/usr/bin/env python
"""Benchmark of the dashboard's heaviest pages (a script, not a test): server time per request.

Builds a database holding a dataset of 100,000 rows (an N x D sweep in 4 groups) and a finished run
with 10,000 candidates (each a different law text, so MathML is rendered afresh, not cached), then
requests each page many times through the app in-process (no network: this is the server's own
time) and prints p50/p95 per page.  Leaderboard requests walk through every page of the
candidates, sorted four ways.

    python scripts/dashboard_bench.py                          # SQLite in a temp folder
    python scripts/dashboard_bench.py --database-url postgresql+psycopg://sld:sld@localhost/sld_bench
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastapi.testclient import TestClient  # noqa: E402

from agent.search.records import Candidate  # noqa: E402
from agent.storage import Checkpoint, RunState  # noqa: E402
from agent.storage.rdb import RDBStorage  # noqa: E402
from app.core.config import Settings  # noqa: E402
from app.main import create_app  # noqa: E402
from app.schemas.runs import RunCreate  # noqa: E402
from app.services.runspec import resolve_run_spec  # noqa: E402

GROUPS = {"g1": (1.7, 400.0, 410.0), "g2": (1.8, 350.0, 600.0), "g3": (1.9, 500.0, 380.0), "g4": (2.0, 420.0, 500.0)}


def sweep(n_rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    per = n_rows // len(GROUPS)
    parts = []
    for g, (e, a, b) in GROUPS.items():
        n = np.exp(rng.uniform(np.log(1e7), np.log(1e10), per))
        d = np.exp(rng.uniform(np.log(1e9), np.log(1e12), per))
        loss = (e + a * n ** -0.34 + b * d ** -0.28) * np.exp(rng.normal(0, 0.005, per))
        parts.append(pd.DataFrame({"N": n, "D": d, "group": g, "loss": loss}))
    return pd.concat(parts, ignore_index=True)


def build(storage: RDBStorage, settings: Settings, n_rows: int, n_candidates: int) -> int:
    t0 = time.perf_counter()
    ds = storage.create_dataset(sweep(n_rows), name="bench sweep")
    spec = resolve_run_spec(RunCreate(dataset_id=ds.id, inputs=["N", "D"], targets=["loss"], group="group",
                                      axis=["N"]), storage, settings)
    run = storage.create_run(ds.id, spec)
    storage.claim_run("bench", stale_after=3600)
    constants = {g: {"c0": e, "c1": a * 1e8 ** -0.34, "a0": 0.34, "c2": b * 1e10 ** -0.28, "b0": 0.28}
                 for g, (e, a, b) in GROUPS.items()}
    rng = np.random.default_rng(1)
    batch = 1_000
    for start in range(0, n_candidates, batch):
        made = []
        for i in range(start, min(start + batch, n_candidates)):
            shift = i / 10_000  # a different law text for every candidate
            lines = (f"loss = c0 + c1*(N/1e+08)**(-a0) + c2*(D/1e+10)**(-b0 - {shift:.4f})",)
            r2 = float(1 - 10 ** rng.uniform(-4, 0))
            made.append(Candidate(id=i, generation=i // 100, lines=lines, proposer="offline", status="ok",
                                  canonical=lines[0], parent_ids=(i - 1,) if i else (), n_constants=5,
                                  complexity=int(15 + rng.integers(0, 30)), constants=constants,
                                  validation={"r2": r2}, score=float(np.log10(1 - r2 + 1e-9) * -1),
                                  meta={"operator": "mutate"}))
        storage.save_generation(run.id, "bench", candidates=made, checkpoint=Checkpoint(run.id, start // batch, {}),
                                progress={"candidates": start + len(made)}, best_score=4.0)
    lines = ["loss = c0 + c1*(N/1e+08)**(-a0) + c2*(D/1e+10)**(-b0 - 0.0000)"]
    final = {"law": lines, "constants": constants, "candidate_id": 0, "validation": {"r2": 0.999},
             "lineage": [], "score": 4.0}
    storage.finish_run(run.id, "bench", RunState.DONE, final=final, progress={"candidates": n_candidates},
                       best_score=4.0)
    print(f"built: {n_rows} rows, {n_candidates} candidates in {time.perf_counter() - t0:.1f} s")
    return run.id


def timed(client: TestClient, paths: list[str]) -> list[float]:
    out = []
    for path in paths:
        t0 = time.perf_counter()
        r = client.get(path)
        out.append(1000 * (time.perf_counter() - t0))
        assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--database-url")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--requests", type=int, default=40)
    args = ap.parse_args()
    url = args.database_url or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    settings = Settings(database_url=url)
    storage = RDBStorage(url)
    run_id = build(storage, settings, args.rows, args.candidates)
    ds_id = storage.get_run(run_id).dataset_id
    n = args.requests
    pages = {
        "leaderboard": [f"/ui/runs/{run_id}/leaderboard?sort={s}&offset={(k * 997) % args.candidates}"
                        for k, s in zip(range(n), ["score", "complexity", "r2", "id"] * n)],
        "law": [f"/ui/runs/{run_id}/law" if k % 2 == 0 else f"/ui/runs/{run_id}/law?group=g{k % 4 + 1}"
                for k in range(n)],
        "run (progress)": [f"/ui/runs/{run_id}"] * n,
        "dataset": [f"/ui/datasets/{ds_id}"] * n,
    }
    with TestClient(create_app(settings, storage)) as client:
        for p in pages.values():
            timed(client, p[:2])  # warm-up: imports, connection pool
        print(f"| page | requests | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|")
        for name, paths in pages.items():
            ms = sorted(timed(client, paths))
            p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
            print(f"| {name} | {len(ms)} | {statistics.median(ms):.0f} | {p95:.0f} | {ms[-1]:.0f} |")
    storage.close()


if __name__ == "__main__":
    main()
