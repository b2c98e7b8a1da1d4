"""``sld train``: train one point locally, plan a sweep on a server, and run trainer workers.

torch is the optional extra ``.[train]``: without it, every ``sld train`` command says how to
install it (planning a sweep needs no torch, but a sweep nobody can train is a mistake worth a word).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Optional

import httpx
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.cli import cli
from trainer import ServiceRefused, require_torch

train_app = typer.Typer(help="Train small language models: one point, a sweep on a server, trainer workers.",
                        no_args_is_help=True)
cli.add_typer(train_app, name="train")

SERVER = typer.Option("http://127.0.0.1:8000", "--server", envvar="SLD_SERVER", help="The sld service's URL.")
TOKEN = typer.Option(None, "--token", envvar="SLD_TOKEN", help="An API token with write scope (sld token create).")
CORPUS = typer.Option("stdlib", "--corpus", help="Training text: stdlib, or stdlib+torch for more than a few "
                      "tens of millions of tokens.")
EVAL = typer.Option(64, "--eval-sequences", min=1, max=8192, help="Held-out sequences that score each run.")


def _numbers(text: str | None) -> list[float]:
    try:
        return [float(v) for v in (text or "").split(",") if v.strip()]
    except ValueError:
        raise typer.BadParameter(f"expected comma-separated numbers, got {text!r}") from None


@train_app.command("run")
def run_cmd(
    params: Optional[float] = typer.Option(None, "--params", help="Target non-embedding parameters (picks the shape)."),
    d_model: Optional[int] = typer.Option(None, "--d-model", help="Width (a multiple of 16), with --n-layers."),
    n_layers: Optional[int] = typer.Option(None, "--n-layers"),
    tokens: float = typer.Option(..., "--tokens", help="Tokens (bytes) to train on."),
    lr: Optional[float] = typer.Option(None, "--lr", help="Peak learning rate (default 3e-3*(96/d)^0.75)."),
    batch: int = typer.Option(8, "--batch"),
    seed: int = typer.Option(0, "--seed", min=0),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
    threads: int = typer.Option(1, "--threads", help="CPU threads for this run."),
    compile_model: bool = typer.Option(False, "--compile", help="torch.compile the model."),
    corpus: str = CORPUS, eval_sequences: int = EVAL,
):
    """Train one point here and print its row as JSON."""
    require_torch()
    from trainer.spec import TrainSpec
    from trainer.train import train

    options = dict(tokens=int(tokens), lr=lr, batch=batch, seed=seed, device=device, threads=threads,
                   compile=compile_model, corpus=corpus, eval_sequences=eval_sequences)
    try:
        if d_model is not None and n_layers is not None:
            spec = TrainSpec(d_model=d_model, n_layers=n_layers, **options)
        elif params is not None:
            spec = TrainSpec.for_params(params, **options)
        else:
            raise typer.BadParameter("give --params, or --d-model with --n-layers")
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(json.dumps(train(spec).to_row()))


@train_app.command("sweep")
def sweep_cmd(
    params: str = typer.Option(..., "--params", help="Model sizes, comma-separated: 25e3,85e3,2e5."),
    tokens: Optional[str] = typer.Option(None, "--tokens", help="Grid: tokens per run, comma-separated."),
    budgets: Optional[str] = typer.Option(None, "--budgets", help="IsoFLOP: training FLOPs (6ND), comma-separated."),
    lrs: Optional[str] = typer.Option(None, "--lrs", help="Learning rates to cross (default: each width's own)."),
    seeds: str = typer.Option("0", "--seeds"),
    batch: int = typer.Option(8, "--batch"),
    context: int = typer.Option(128, "--context", help="Sequence length in bytes."),
    device: str = typer.Option("auto", "--device", help="auto, cpu or cuda."),
    corpus: str = CORPUS, eval_sequences: int = EVAL,
    name: str = typer.Option("", "--name"),
    watch: bool = typer.Option(False, "--watch", help="Show progress until every point is done."),
    server: str = SERVER, token: Optional[str] = TOKEN,
):
    """Plan a sweep on the server (a grid with --tokens, IsoFLOP with --budgets); trainer workers train it."""
    require_torch()
    body = {"name": name, "design": "isoflop" if budgets else "grid", "n_params": _numbers(params),
            "tokens": _numbers(tokens), "budgets": _numbers(budgets), "seeds": [int(s) for s in _numbers(seeds)],
            "batch_sizes": [batch], "lrs": _numbers(lrs) or [None], "context": context, "device": device,
            "corpus": corpus, "eval_sequences": eval_sequences}
    with _client(server, token) as client:
        sweep = _ok(client.post("/sweeps", json=body))
        typer.echo(f"sweep {sweep['id']}: {sweep['n_points']} runs queued; train them with "
                   f"`sld train worker --server {server}`")
        if watch:
            _watch(client, sweep["id"])


@train_app.command("status")
def status_cmd(sweep_id: int = typer.Argument(...), watch: bool = typer.Option(False, "--watch"),
               server: str = SERVER, token: Optional[str] = TOKEN):
    """A sweep's progress and its rows so far."""
    with _client(server, token) as client:
        if watch:
            _watch(client, sweep_id)
        sweep = _ok(client.get(f"/sweeps/{sweep_id}"))
    console = Console(soft_wrap=True)
    console.print(f"sweep {sweep['id']} {sweep['name']!r}: {sweep['counts']}, dataset {sweep['dataset_id']}", highlight=False)
    for p in sweep["points"]:
        r = p["result"] or {}
        loss = f"val {r['val_loss']:.4f} in {r['seconds']:.0f} s" if r else p["state"]
        console.print(f"  {p['seq']:3d} d={p['spec']['d_model']:<4} L={p['spec']['n_layers']:<2} "
                      f"D={p['spec']['tokens']:<10.3g} {loss}", highlight=False)


@train_app.command("worker")
def worker_cmd(
    server: str = SERVER, token: Optional[str] = TOKEN,
    jobs: int = typer.Option(1, "--jobs", min=1, help="Points trained side by side (processes, one thread each)."),
    device: Optional[str] = typer.Option(None, "--device", help="Override the points' device: cpu or cuda."),
    threads: int = typer.Option(1, "--threads", min=1, help="CPU threads per point."),
    exit_when_idle: bool = typer.Option(False, "--exit-when-idle", help="Stop when no point is left to claim."),
    max_points: Optional[int] = typer.Option(None, "--max-points", help="Stop after this many points."),
):
    """Claim sweep points from the server, cheapest first, train them and post their rows."""
    require_torch()
    if jobs > 1:
        args = ["train", "worker", "--server", server, "--threads", str(threads)]
        args += (["--device", device] if device else []) + (["--exit-when-idle"] if exit_when_idle else [])
        args += ["--max-points", str(max_points)] if max_points is not None else []
        _fan_out(jobs, args, token)
        return
    from trainer.worker import TrainerWorker

    worker = TrainerWorker(server, token=token, device=device, threads=threads, log=lambda m: typer.echo(m))
    try:
        done = worker.run(max_points=max_points, exit_when_idle=exit_when_idle)
    except httpx.TransportError as exc:
        raise ServiceRefused(f"cannot reach the service at {server}: {exc}") from None
    typer.echo(f"trainer {worker.worker_id}: {done} point(s) trained")


def _fan_out(jobs: int, args: list[str], token: str | None) -> None:
    """``jobs`` single-job workers as child processes; stops them all when one is interrupted."""
    env = {**os.environ, **({"SLD_TOKEN": token} if token else {})}  # not on a command line others can read
    children = [subprocess.Popen([sys.executable, "-c", "from app.cli import main; main()", *args], env=env)
                for _ in range(jobs)]
    try:
        codes = [c.wait() for c in children]
    except KeyboardInterrupt:
        for c in children:
            c.terminate()
        codes = [c.wait() for c in children]
    if any(codes):
        raise SystemExit(max(codes))


def _client(server: str, token: str | None) -> httpx.Client:
    return httpx.Client(base_url=server.rstrip("/"), timeout=30.0,
                        headers={"Authorization": f"Bearer {token}"} if token else {})


def _ok(answer: httpx.Response) -> dict:
    if answer.status_code >= 400:
        raise ServiceRefused(f"the service answered {answer.status_code}: {answer.json().get('detail', answer.text)}")
    return answer.json()


def _watch(client: httpx.Client, sweep_id: int) -> None:
    sweep = _ok(client.get(f"/sweeps/{sweep_id}"))
    with Progress(TextColumn(f"sweep {sweep_id}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"),
                  TimeElapsedColumn()) as bar:
        task = bar.add_task("", total=sweep["n_points"])
        while True:
            counts = sweep["counts"]
            bar.update(task, completed=counts["done"] + counts["failed"],
                       description=f"{counts['running']} training, {counts['failed']} failed, "
                                   f"dataset {sweep['dataset_id']}")
            if sweep["finished"]:
                return
            time.sleep(2.0)
            sweep = _ok(client.get(f"/sweeps/{sweep_id}"))
