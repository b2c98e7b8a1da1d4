#!/usr/bin/env python
"""The closed loop of the field on one machine, through the API: sweep -> dataset -> run -> law -> predict.

Starts ``sld serve`` (SQLite, one embedded worker) and ``sld train worker --jobs J``, posts an
N x D grid sweep, waits for every row, then queues a discovery run with N as the axis that holds
out the largest model (``test_split: {column: N, at_least: max N}``), and predicts that model's
val loss at every D with a 90 % prediction interval.  Prints the sweep, the law and predicted
against real loss, and writes everything as JSON.

    python scripts/closed_loop_bench.py                       # the README's CPU sweep (~15 min, 2 cores)
    python scripts/closed_loop_bench.py --params 25e3,85e3,2e5,4e5 --tokens 2.5e5,5e5,1e6   # a short one
    python scripts/closed_loop_bench.py --device cuda --batch 128 --corpus stdlib+torch --eval-sequences 2048 \
        --params 4e5,1e6,2.5e6,6e6,2.5e7 --tokens 1.25e7,2.5e7,5e7,1e8 --jobs 4 --peak-tflops 989

Rows are written to ``--out`` as they arrive, so a sweep cut off by ``--sweep-timeout`` (or by a
lost machine) still leaves its finished runs, and the discovery runs on those.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import httpx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_bench import SLD, free_port  # noqa: E402

PARAMS = "25e3,6e4,1.3e5,2.8e5,6e5"
TOKENS = "5e5,1e6,2e6,4e6"


def wait_until(fn, timeout: float, every: float = 2.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(every)
    raise TimeoutError("gave up waiting")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default=PARAMS)
    ap.add_argument("--tokens", default=TOKENS)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--device", default=None)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--corpus", default="stdlib")
    ap.add_argument("--eval-sequences", type=int, default=1024,
                    help="held-out sequences per run: the real loss the prediction is checked against is "
                         "measured on this many x context bytes (64, the service's default, is 8 KB)")
    ap.add_argument("--sweep-timeout", type=float, default=6 * 3600,
                    help="seconds; then the discovery runs on the rows finished so far")
    ap.add_argument("--peak-tflops", type=float, default=None,
                    help="the accelerator's peak (bf16 dense) to report model FLOPs utilization against")
    ap.add_argument("--seed", type=int, default=0, help="the discovery run's seed")
    ap.add_argument("--out", default="closed_loop.json")
    ap.add_argument("--rows-from", default=None, help="a previous --out: post its sweep's rows as the dataset "
                    "instead of training them again (to re-run the discovery on the same data)")
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix="sld-loop-")
    port = free_port()
    env = {**os.environ, "SLD_DATABASE_URL": f"sqlite:///{workdir}/sld.db", "SLD_EMBEDDED_WORKERS": "1"}
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([*SLD, "serve", "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=open(f"{workdir}/serve.log", "w"))
    trainers = None
    try:
        http = httpx.Client(base_url=url, timeout=60)
        wait_until(lambda: _up(http), 60, 0.5)
        if args.rows_from:
            previous = json.load(open(args.rows_from))
            sweep, sweep_seconds = previous["sweep"], previous["sweep_seconds"]
            dataset = http.post("/datasets", json={"name": "closed loop (stored rows)", "rows": previous["rows"]})
            rows, sweep = previous["rows"], {**sweep, "dataset_id": dataset.json()["id"]}
        else:
            sweep = http.post("/sweeps", json={"name": "closed loop", "n_params": _floats(args.params),
                                               "tokens": _floats(args.tokens), "batch_sizes": [args.batch],
                                               "context": args.context, "corpus": args.corpus,
                                               "eval_sequences": args.eval_sequences,
                                               "device": args.device or "auto"}).json()
            if "id" not in sweep:
                raise SystemExit(f"the sweep was refused: {sweep}")
            started = time.monotonic()
            trainers = subprocess.Popen([*SLD, "train", "worker", "--server", url, "--jobs", str(args.jobs),
                                         "--exit-when-idle", *(["--device", args.device] if args.device else [])],
                                        env=env, stdout=open(f"{workdir}/trainers.log", "w"), stderr=subprocess.STDOUT)
            sweep = _follow(http, sweep["id"], args, started)
            sweep_seconds = time.monotonic() - started
            rows = _rows(http, sweep)
        largest = max(r["N"] for r in rows)
        run = http.post("/runs", json={"dataset_id": sweep["dataset_id"], "inputs": ["N", "D"],
                                       "targets": ["val_loss"], "axis": ["N"], "seed": args.seed,
                                       "test_split": {"column": "N", "at_least": largest}}).json()
        if "id" not in run:
            raise SystemExit(f"the run was refused: {run}")
        started = time.monotonic()
        run = wait_until(lambda: _run_done(http, run["id"]), 3600, 2)
        run_seconds = time.monotonic() - started
        held = sorted((r for r in rows if r["N"] == largest), key=lambda r: r["D"])
        predicted = http.post("/predict", json={"run_id": run["id"], "points": [{"N": r["N"], "D": r["D"]} for r in held],
                                                "interval": 0.9, "kind": "prediction"}).json()
        if "predictions" not in predicted:
            raise SystemExit(f"run {run['id']} ({run['state']}): {(run.get('final') or {}).get('law')}; "
                             f"the prediction was refused: {predicted}")
        report = _report(sweep, rows, run, held, predicted, sweep_seconds, run_seconds, args)
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"\nwritten {args.out}")
    finally:
        for p in (trainers, server):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(10)


def _report(sweep, rows, run, held, predicted, sweep_seconds, run_seconds, args) -> dict:
    print(f"sweep: {len(rows)} runs in {sweep_seconds / 60:.1f} min ({args.jobs} at once)")
    if rows:  # the runs share the device: their FLOPs over the sweep's wall time is what the device did
        flops = sum(r["C_detailed"] for r in rows) / sweep_seconds
        print(f"whole sweep: {flops / 1e12:.2f} TFLOP/s" + (f", MFU {100 * flops / 1e12 / args.peak_tflops:.1f} %"
                                                              if args.peak_tflops else ""))
    peak = args.peak_tflops
    print("| N | N_total | D | val loss | train loss | seconds | tokens/s | TFLOP/s | MFU |\n"
          "|---|---|---|---|---|---|---|---|---|")
    for r in sorted(rows, key=lambda r: (r["N"], r["D"])):
        tflops = r["flops_per_s"] / 1e12
        mfu = f"{100 * tflops / peak:.1f} %" if peak else "-"
        print(f"| {r['N']:,} | {r['N_total']:,} | {r['D']:,} | {r['val_loss']:.4f} | {r['train_loss']:.4f} | "
              f"{r['seconds']:.1f} | {r['tokens_per_s']:,.0f} | {tflops:.2f} | {mfu} |")
    final = run.get("final") or {}
    print(f"\nrun {run['id']} ({run['state']}, {run_seconds:.0f} s, {run['progress'].get('candidates')} candidates): "
          f"{final.get('law')}; test R2 on the held-out model {final.get('test', {}).get('r2')}")
    print("\n| N (held out) | D | real val loss | predicted | 90 % prediction interval | relative error |\n"
          "|---|---|---|---|---|---|")
    out = []
    for r, p in zip(held, predicted["predictions"]):
        err = (p["val_loss"] - r["val_loss"]) / r["val_loss"]
        out.append({"N": r["N"], "D": r["D"], "real": r["val_loss"], "predicted": p["val_loss"],
                    "lo": p.get("val_loss_lo"), "hi": p.get("val_loss_hi"), "relative_error": err})
        print(f"| {r['N']:,} | {r['D']:,} | {r['val_loss']:.4f} | {p['val_loss']:.4f} | "
              f"[{p.get('val_loss_lo', float('nan')):.4f}, {p.get('val_loss_hi', float('nan')):.4f}] | {100 * err:+.2f} % |")
    return {"sweep": sweep, "rows": rows, "sweep_seconds": sweep_seconds, "run": {k: run[k] for k in ("id", "state", "final", "progress")},
            "run_seconds": run_seconds, "predictions": out}


def _rows(http, sweep) -> list[dict]:
    if sweep["dataset_id"] is None:
        return []
    return http.get(f"/datasets/{sweep['dataset_id']}/rows", params={"limit": 500}).json()["items"]


def _follow(http, sweep_id, args, started) -> dict:
    """Wait for the sweep, writing its rows to ``--out`` whenever more are done; at the timeout, what is done."""
    written = -1
    while True:
        sweep = http.get(f"/sweeps/{sweep_id}").json()
        done = sweep["counts"]["done"]
        if done != written:
            rows = _rows(http, sweep)
            with open(args.out, "w") as f:
                json.dump({"sweep": sweep, "rows": rows, "sweep_seconds": time.monotonic() - started, "partial": True},
                          f, indent=1)
            print(f"{time.monotonic() - started:6.0f} s: {done} of {sweep['n_points']} runs done", flush=True)
            written = done
        if sweep["finished"]:
            return sweep
        if time.monotonic() - started > args.sweep_timeout:
            print(f"sweep timeout: going on with the {done} runs done", flush=True)
            return sweep
        time.sleep(5)


def _up(http):
    try:
        return http.get("/health").status_code == 200
    except httpx.TransportError:
        return False


def _finished(http, sweep_id):
    sweep = http.get(f"/sweeps/{sweep_id}").json()
    return sweep if sweep["finished"] else None


def _run_done(http, run_id):
    run = http.get(f"/runs/{run_id}").json()
    return run if run["state"] in ("done", "failed", "cancelled") else None


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


if __name__ == "__main__":
    main()
