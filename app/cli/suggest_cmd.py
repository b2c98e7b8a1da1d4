"""``sld suggest``: which runs to do next, from a law saved with its replicates (``--bootstrap``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import pandas as pd
import typer
from rich.console import Console

from agent.errors import DataError
from agent.suggest import rank_runs
from app.cli import cli
from app.cli.answers_cmd import _number, _stored_bootstrap, law_forms, load_law_json
from app.discovery import read_csv


@cli.command("suggest")
def suggest_cmd(
    law: Path = typer.Option(..., "--law", help="A law JSON from `sld discover --save --bootstrap N`."),
    csv: Path = typer.Option(..., "--csv", help="Candidate runs: the law's inputs (a group column, an optional cost)."),
    target: list[str] = typer.Option(..., "--target", help="Where you need the prediction: N=7e10,D=1.4e12 "
                                     "(repeatable; add group=NAME for a law with groups)."),
    cost: Optional[str] = typer.Option(None, "--cost", help="A run's cost is --flops-per times the product of "
                                       "these inputs (N,D: training FLOPs), unless the CSV has a 'cost' column."),
    flops_per: float = typer.Option(6.0, "--flops-per", help="k in cost = k*N*D."),
    group: Optional[str] = typer.Option(None, "--group", help="The column naming each point's group."),
    top: int = typer.Option(10, "--top", help="How many runs to list."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a list."),
):
    """Rank candidate runs by how much they narrow the prediction at the targets, per unit cost."""
    payload, final = load_law_json(law)
    boot = _stored_bootstrap(payload, str(law))
    candidates = read_csv(csv)
    targets = pd.DataFrame([_point(t, group) for t in target])
    ranked = rank_runs(final.law(), boot, candidates, targets, group=group,
                       cost_inputs=[c.strip() for c in (cost or "").split(",") if c.strip()],
                       cost_factor=flops_per, top=top, others=law_forms(payload, final))
    if as_json:
        typer.echo(json.dumps([{"row": s.index + 1, "score": s.score, "reduction": s.reduction, "cost": s.cost,
                                "explanation": s.explanation} for s in ranked]))
        return
    console = Console()
    for k, s in enumerate(ranked, 1):
        console.print(f"{k}. row {s.index + 1}: {s.explanation}", highlight=False)


def _point(text: str, group: str | None) -> dict:
    point = {}
    for item in text.split(","):
        name, _, value = item.partition("=")
        name = name.strip()
        if not name or not value.strip():
            raise DataError(f"--target takes NAME=VALUE pairs, comma-separated, not {text!r}")
        point[name] = value.strip() if name == group else _number(value, f"--target {name}")
    return point
