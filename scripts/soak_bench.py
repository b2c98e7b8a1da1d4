#!/usr/bin/env python
"""Soak benchmark of the service (a script, not a test): kill -9 a worker every minute under load.

Starts ``sld serve --workers 0`` (the API alone) and two ``sld worker`` processes on one database
(PostgreSQL: the production setting), keeps a stream of small discovery runs queued, and lets 20
clients post batches of rows for the whole duration.  Every ``--kill-every`` seconds one worker
(taking turns) is killed with SIGKILL and started again.  At the end it waits for every run to
finish and checks:

* no lost rows: every row of an acknowledged POST is in the dataset, and nothing else is;
* no duplicate or missing candidates: each run's candidate ids are exactly 0..n-1, n its budget
  plus its finalists, and the count its progress reports;
* every run finished (done).

    python scripts/soak_bench.py --database-url postgresql+psycopg://sld:sld@localhost/sld_soak
    python scripts/soak_bench.py --duration 120 --kill-every 20      # a short one
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import time

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from load_bench import SLD, free_port, toy_rows  # noqa: E402

RUN = {"inputs": ["N"], "targets": ["loss"], "group": "group", "budget": 60, "max_constants": 4}


def start(args: list[str], env: dict) -> subprocess.Popen:
    return subprocess.Popen([*SLD, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def poster(http: httpx.AsyncClient, dataset_id: int, deadline: float, seed: int, acked: list) -> None:
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        rows = toy_rows(rng, 5)
        try:
            r = await http.post(f"/datasets/{dataset_id}/rows", json={"rows": rows})
        except httpx.HTTPError:
            continue  # not acknowledged: it may or may not have been stored, so it is not counted either way
        if r.status_code == 200:
            acked.extend(round(row["loss"], 12) for row in rows)


async def queuer(http: httpx.AsyncClient, dataset_id: int, deadline: float, every: float, runs: list) -> None:
    while time.monotonic() < deadline:
        r = await http.post("/runs", json={"dataset_id": dataset_id, **RUN, "seed": len(runs)})
        if r.status_code == 202:
            runs.append(r.json()["id"])
        await asyncio.sleep(every)


async def killer(workers: list, env: dict, deadline: float, every: float, kills: list) -> None:
    turn = 0
    while time.monotonic() + every < deadline:
        await asyncio.sleep(every)
        victim = workers[turn % len(workers)]
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        workers[turn % len(workers)] = start(["worker", "--max-runs", "1000"], env)
        kills.append(time.monotonic())
        turn += 1


async def soak(base: str, env: dict, workers: list, args) -> tuple[list, list, list, int, int]:
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        runs_ds = (await http.post("/datasets", json={"name": "soak-runs", "rows": toy_rows(random.Random(0), 40)})).json()
        rows_ds = (await http.post("/datasets", json={"name": "soak-rows", "rows": toy_rows(random.Random(1), 4)})).json()
        deadline = time.monotonic() + args.duration
        acked, runs, kills = [], [], []
        await asyncio.gather(queuer(http, runs_ds["id"], deadline, args.queue_every, runs),
                             killer(workers, env, deadline, args.kill_every, kills),
                             *(poster(http, rows_ds["id"], deadline, i, acked) for i in range(args.clients)))
        return acked, runs, kills, rows_ds["id"], runs_ds["id"]


def check(base: str, database_url: str, acked: list, runs: list, rows_dataset: int, timeout: float) -> dict:
    from agent.storage.rdb import RDBStorage

    storage = RDBStorage(database_url)  # every stored row at once (the API pages them)
    try:
        stored = [round(x, 12) for x in storage.load_rows(rows_dataset)["loss"]]
    finally:
        storage.close()
    with httpx.Client(base_url=base, timeout=60) as http:
        deadline = time.monotonic() + timeout
        states = {}
        while time.monotonic() < deadline:
            states = {rid: http.get(f"/runs/{rid}").json() for rid in runs}
            if all(r["state"] in ("done", "failed", "cancelled") for r in states.values()):
                break
            time.sleep(2)
        bad_ids = 0
        for rid, run in states.items():
            ids, offset = [], 0
            while True:
                page = http.get(f"/runs/{rid}/candidates", params={"sort": "id", "order": "asc", "offset": offset,
                                                                   "limit": 1000}).json()
                ids.extend(c["id"] for c in page["items"])
                offset += len(page["items"])
                if not page["items"] or offset >= page["total"]:
                    break
            expected = run["progress"].get("candidates", 0) + run["progress"].get("finalists", 0)
            bad_ids += ids != list(range(len(ids))) or len(ids) != expected
    initial = 4
    return {"rows acknowledged": len(acked), "rows stored": len(stored) - initial,
            "rows lost": len(set(acked) - set(stored)),
            "rows stored but never acknowledged": len(stored) - initial - len(acked),
            "runs queued": len(runs), "runs done": sum(r["state"] == "done" for r in states.values()),
            "runs with missing or duplicate candidates": bad_ids,
            "attempts (claims) over all runs": sum(r.get("attempts", 1) for r in states.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--database-url", default=os.environ.get("DATABASE_URL",
                                                             "postgresql+psycopg://sld:sld@localhost/sld_soak"))
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--kill-every", type=float, default=60.0)
    ap.add_argument("--queue-every", type=float, default=20.0, help="seconds between queued runs")
    ap.add_argument("--clients", type=int, default=20)
    args = ap.parse_args()
    env = {**os.environ, "DATABASE_URL": args.database_url, "SLD_POLL_INTERVAL": "0.2", "SLD_STALE_AFTER": "5",
           "SLD_HEARTBEAT_INTERVAL": "1"}
    port = free_port()
    api = start(["serve", "--port", str(port), "--workers", "0", "--log-level", "warning"], env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    workers = [start(["worker", "--max-runs", "1000"], env) for _ in range(2)]
    t0 = time.monotonic()
    try:
        acked, runs, kills, rows_ds, _ = asyncio.run(soak(base, env, workers, args))
        result = check(base, args.database_url, acked, runs, rows_ds, timeout=600)
    finally:
        for p in [api, *workers]:
            p.terminate()
        for p in [api, *workers]:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
    print(f"soak: {args.duration:g} s, {len(kills)} workers killed with SIGKILL, {args.clients} clients posting rows, "
          f"{time.monotonic() - t0:.0f} s in all")
    for key, value in result.items():
        print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
