#!/usr/bin/env python
"""Load benchmark of the service (a script, not a test).

Starts ``sld serve`` on the given database (PostgreSQL by default: the
production setting), prepares a dataset with a finished run, then lets N
concurrent clients hammer it for D seconds with a mix of ``GET
/datasets/{id}/best-law`` and ``POST /datasets/{id}/rows`` (small batches of
new rows).  Prints throughput, p50/p99 latency per operation and the errors.

    python scripts/load_bench.py --database-url postgresql+psycopg://sld:sld@localhost/sld_bench
    python scripts/load_bench.py --url http://127.0.0.1:8000      # an already running server

The clients run on the same machine as the server, so on a small machine
they take CPU from it: the numbers are a floor, not a ceiling.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import time
from collections import Counter, defaultdict

import h11
import httpx
import numpy as np

SLD = [sys.executable, "-c", "from app.cli import main; main()"]


def toy_rows(rng: random.Random, n: int) -> list[dict]:
    rows = []
    for _ in range(n):
        g = rng.choice(["a", "b"])
        E, A = (1.8, 300.0) if g == "a" else (2.1, 250.0)
        N = 10 ** rng.uniform(6, 9)
        rows.append({"N": N, "group": g, "loss": (E + A * N ** -0.3) * (1 + rng.gauss(0, 0.003))})
    return rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(database_url: str, api_workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "DATABASE_URL": database_url, "SLD_POLL_INTERVAL": "0.2"}
    proc = subprocess.Popen([*SLD, "serve", "--port", str(port), "--workers", "1", "--api-workers", str(api_workers),
                             "--log-level", "warning"], env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start")


def prepare(base: str) -> int:
    """A dataset with a finished run, so that best-law has something to return."""
    rng = random.Random(0)
    with httpx.Client(base_url=base, timeout=60) as http:
        ds = http.post("/datasets", json={"name": "load-bench", "rows": toy_rows(rng, 40)}).json()
        run = http.post("/runs", json={"dataset_id": ds["id"], "inputs": ["N"], "targets": ["loss"],
                                       "group": "group", "budget": 16}).json()
        while http.get(f"/runs/{run['id']}").json()["state"] not in ("done", "failed", "cancelled"):
            time.sleep(0.5)
        assert http.get(f"/datasets/{ds['id']}/best-law").status_code == 200
        return ds["id"]


class Connection:
    """One keep-alive HTTP/1.1 connection: h11's protocol state machine over asyncio streams.

    httpx's async client spent about 4.5 ms of CPU per request here, a whole core of a 2-core machine
    at 220 requests/s, so the benchmark measured its own clients.  h11 (the protocol layer under
    httpx) without the pool and the request models costs about 0.24 ms (20 clients on SQLite: 16 % of
    one core at 657 requests/s; a hand-written parser before it, 0.16 ms).
    """

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.http: h11.Connection | None = None

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        if self.writer is None or self.http.our_state is not h11.IDLE:
            self.close()
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
            self.http = h11.Connection(h11.CLIENT)
        headers = [("Host", f"{self.host}:{self.port}")]
        if body is not None:
            headers += [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        out = self.http.send(h11.Request(method=method, target=path, headers=headers))
        out += self.http.send(h11.Data(data=body)) if body else b""
        self.writer.write(out + self.http.send(h11.EndOfMessage()))
        try:
            status, data = None, bytearray()
            while True:
                event = self.http.next_event()
                if event is h11.NEED_DATA:
                    chunk = await self.reader.read(65536)
                    if not chunk and self.http.their_state is h11.SEND_RESPONSE:
                        raise ConnectionError("the server closed the connection")
                    self.http.receive_data(chunk)
                elif isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.Data):
                    data += event.data
                elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    break
        except BaseException:
            self.close()
            raise
        if self.http.our_state is h11.DONE and self.http.their_state is h11.DONE:
            self.http.start_next_cycle()  # keep-alive; otherwise the next request reconnects
        return status, bytes(data)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = self.http = None


async def client_loop(host: str, port: int, dataset_id: int, deadline: float, mix: float, rows: int,
                      seed: int, latencies: dict, errors: Counter) -> None:
    rng = random.Random(seed)
    conn = Connection(host, port)
    read_path, write_path = f"/datasets/{dataset_id}/best-law", f"/datasets/{dataset_id}/rows"
    while time.perf_counter() < deadline:
        op = "GET best-law" if rng.random() < mix else "POST rows"
        body = None if op == "GET best-law" else json.dumps({"rows": toy_rows(rng, rows)}).encode()
        t0 = time.perf_counter()
        try:
            status, data = await (conn.request("GET", read_path) if body is None
                                  else conn.request("POST", write_path, body))
            ok = status < 400
            if not ok:
                errors[f"{op}: HTTP {status} {data[:120]!r}"] += 1
        except (OSError, ConnectionError, h11.ProtocolError) as exc:
            ok = False
            errors[f"{op}: {type(exc).__name__}: {exc}"[:160]] += 1
        if ok:
            latencies[op].append(time.perf_counter() - t0)
    conn.close()


async def hammer(base: str, dataset_id: int, clients: int, duration: float, mix: float, rows: int):
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: Counter = Counter()
    url = httpx.URL(base)
    deadline = time.perf_counter() + duration
    await asyncio.gather(*(client_loop(url.host, url.port or 80, dataset_id, deadline, mix, rows, i, latencies, errors)
                           for i in range(clients)))
    return latencies, errors


def report(latencies, errors, duration: float, clients: int) -> None:
    total_ok = sum(len(v) for v in latencies.values())
    total_err = sum(errors.values())
    print(f"{clients} clients, {duration:g} s: {total_ok + total_err} requests, "
          f"{(total_ok + total_err) / duration:.1f} req/s, {total_err} errors")
    for op, values in sorted(latencies.items()) + [("all", [x for v in latencies.values() for x in v])]:
        if values:
            ms = np.array(values) * 1000
            print(f"  {op:13s} n={len(ms):6d}  {len(ms) / duration:7.1f} req/s  p50 {np.percentile(ms, 50):7.1f} ms"
                  f"  p99 {np.percentile(ms, 99):7.1f} ms  max {ms.max():7.1f} ms")
    for message, n in errors.most_common(5):
        print(f"  error x{n}: {message}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--database-url", default=os.environ.get("DATABASE_URL",
                                                             "postgresql+psycopg://sld:sld@localhost:5432/sld_test"))
    ap.add_argument("--url", help="benchmark a running server instead of starting one")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--mix", type=float, default=0.5, help="fraction of GET best-law (the rest POST rows)")
    ap.add_argument("--rows", type=int, default=10, help="rows per POST")
    ap.add_argument("--api-workers", type=int, default=1, help="uvicorn processes when starting the server")
    args = ap.parse_args()
    proc = None
    base = args.url
    if base is None:
        proc, base = start_server(args.database_url, args.api_workers)
    try:
        dataset_id = prepare(base)
        cpu = time.process_time()
        latencies, errors = asyncio.run(hammer(base, dataset_id, args.clients, args.duration, args.mix, args.rows))
        cpu = time.process_time() - cpu
        report(latencies, errors, args.duration, args.clients)
        print(f"  the clients used {cpu / args.duration:.0%} of one core")
        with httpx.Client(base_url=base) as http:
            print(f"  dataset {dataset_id} now has {http.get(f'/datasets/{dataset_id}').json()['n_rows']} rows")
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)


if __name__ == "__main__":
    main()
