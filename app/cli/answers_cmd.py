"""The answers a team acts on, for the CLI: intervals on predictions and compute-optimal allocation.

The maths lives in ``agent.uncertainty`` and ``agent.allocation``; this module
reads and writes the law JSON of ``sld discover --save`` and prints.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import typer
from rich.console import Console

from agent.allocation import allocation_curve, axis_caveat
from agent.errors import DataError
from agent.problem import Problem, make_table
from agent.search import FinalLaw
from agent.uncertainty import Bootstrap, bootstrap, constant_intervals, interval as law_interval, laplace
from app.cli import cli
from app.discovery import require_file
from app.services.laws import normalize_constants
from app.services.uncertainty import stored_forms

DEFAULT_LEVEL = 0.9


UNCERTAINTY = {"bootstrap": bootstrap, "delta": laplace}


def bootstrap_payload(payload: dict, problem: Problem, train: pd.DataFrame, n: int, seed: int,
                      method: str = "bootstrap") -> dict:
    """Replicates of the reported law's constants (refits on resampled runs, or draws from the delta
    method's covariance) and its constants' intervals, for the law JSON."""
    if method not in UNCERTAINTY:
        raise DataError(f"unknown uncertainty method {method!r}; choose one of {', '.join(UNCERTAINTY)}")
    final = FinalLaw.from_dict(payload)
    boot = UNCERTAINTY[method](final.law(), make_table(train, problem), final.constants, n=n, seed=seed,
                               loss=final.fit_loss or "auto")
    return {"bootstrap": boot.to_dict(), "uncertainty_method": method,
            "constant_intervals": constant_intervals(boot, DEFAULT_LEVEL), "interval_level": DEFAULT_LEVEL}


def load_law_json(law: Path) -> tuple[dict, FinalLaw]:
    """(the JSON, the law) of a file written by ``sld discover --save``; DataError names what is wrong."""
    require_file(law, "law file")
    try:
        payload = json.loads(law.read_text())
        final = FinalLaw.from_dict(payload)
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        reason = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise DataError(f"{law.name} is not a law JSON from `sld discover`: {reason}") from None
    # the law parses and every constant is a finite number, or the file is refused by name
    return payload, replace(final, constants=normalize_constants(final.constants, final.law()))


def _stored_bootstrap(payload: dict, source: str) -> Bootstrap:
    if not payload.get("bootstrap"):
        raise DataError(f"{source} has no bootstrap: rerun `sld discover ... --bootstrap 100 --save {source}`")
    return Bootstrap.from_dict(payload["bootstrap"])


def law_forms(payload: dict, final: FinalLaw) -> list:
    """The close finalists saved beside the law (form uncertainty)."""
    return stored_forms(payload, final.inputs, final.targets)


def add_intervals(out: pd.DataFrame, payload: dict, final: FinalLaw, points: pd.DataFrame, group: str | None,
                  level: float, kind: str, source: str) -> pd.DataFrame:
    boot = _stored_bootstrap(payload, source)
    table = make_table(points, Problem(final.inputs, final.targets, group=group), require_targets=False)
    if group is None:
        table = type(table)(table.X, table.y, np.full(len(table), next(iter(final.constants)), dtype=object))
    lo, hi = law_interval(final.law(), table, boot, level=level, kind=kind, others=law_forms(payload, final))
    for j, t in enumerate(final.targets):
        out[f"{t}_lo"], out[f"{t}_hi"] = lo[:, j], hi[:, j]
    return out


@cli.command("optimal")
@cli.command("allocate")
def allocate_cmd(
    law: Path = typer.Option(..., "--law", help="A law JSON from `sld discover --save` with a size and a data input."),
    size: str = typer.Option(..., "--size", help="The law's model-size column (N)."),
    data: str = typer.Option(..., "--data", help="The law's data column (D, tokens)."),
    budget: str = typer.Option(..., "--budget", "--compute",
                               help="Compute budget(s) in FLOPs, comma-separated: 1e21 or 1e19,1e21,1e23."),
    size_range: str = typer.Option(..., "--size-range", help="The sizes you would train, LOW,HIGH (e.g. 1e7,1e12): "
                                   "the optimum is searched there and flagged when it sits on an edge."),
    flops_per: float = typer.Option(6.0, "--flops-per", help="k in C = k*N*D (6: forward and backward passes)."),
    fixed: Optional[str] = typer.Option(None, "--set", help="Values for the law's other inputs: lr=3e-4,bsz=256."),
    group: Optional[str] = typer.Option(None, "--group", help="Which group's constants (default: the first)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
):
    """For each budget, the size and data that minimise the law's prediction along C = k*N*D.

    With a law saved with --bootstrap, each answer carries a 90 % interval.
    """
    payload, final = load_law_json(law)
    budgets = [_number(b, "--budget") for b in budget.split(",") if b.strip()]
    lo_hi = [_number(v, "--size-range") for v in size_range.split(",")]
    if len(lo_hi) != 2:
        raise DataError("--size-range takes two numbers, LOW,HIGH")
    values = {}
    for item in (fixed or "").split(","):
        if item.strip():
            name, _, value = item.partition("=")
            values[name.strip()] = _number(value, f"--set {name.strip()}")
    boot = Bootstrap.from_dict(payload["bootstrap"]) if payload.get("bootstrap") else None
    rows = [a.to_dict() for a in allocation_curve(final.law(), final.constants, budgets, size=size, data=data,
                                                  size_range=tuple(lo_hi), group=group, fixed=values,
                                                  flops_per=flops_per, boot=boot)]
    caveat = axis_caveat(final.axis, size, data)
    if as_json:
        typer.echo(json.dumps({"size": size, "data": data, "flops_per": flops_per, "allocations": rows,
                               "warnings": [caveat] if caveat else []}))
        return
    console = Console()
    if caveat:
        Console(stderr=True).print(f"[yellow]warning:[/] {caveat}", highlight=False)
    for r in rows:
        line = (f"C={r['budget']:.3g}: {size}*={r['size']:.4g}, {data}*={r['data']:.4g}, "
                f"{final.targets[0]}={r['loss']:.4g}")
        if r.get("interval"):
            iv = r["interval"]
            line += f"  (90 %: {size} {iv['size'][0]:.3g}-{iv['size'][1]:.3g}, {data} {iv['data'][0]:.3g}-{iv['data'][1]:.3g})"
        if r["on_edge"]:
            line += "  [optimum on the edge of --size-range: widen it or distrust it]"
        console.print(line, highlight=False)


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise DataError(f"{what}: {text.strip()!r} is not a number") from None
    if not np.isfinite(value):
        raise DataError(f"{what}: {text.strip()!r} is not a finite number")
    return value
