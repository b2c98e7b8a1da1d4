"""``sld discover`` and ``sld predict``: find a law for a task or a CSV, and use it."""
from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from agent.defaults import DEFAULT_BUDGET, DEFAULT_CAP, DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.errors import DataError
from agent.fitting import LOSSES
from agent.plan import DiscoveryRequest, plan_discovery
from agent.search.proposers.mix import ProposerMix
from app.cli import cli
from app.cli.answers_cmd import add_intervals, bootstrap_payload, load_law_json
from app.discovery import discover, read_csv

MAX_GROUPS_SHOWN = 12
# how constants are fitted; the choices are agent.fitting's (typer lists them in --help)
Loss = Enum("Loss", {name: name for name in ("auto", *LOSSES)}, type=str)
LOSS_HELP = ("How constants are fitted: 'auto' (robust_log for positive targets, else lsq), 'log' (log residuals), "
             "'robust_log' (log, re-fitted with Huber's loss where a run stands out), 'huber_log' (Huber on log "
             "residuals, delta 1e-3) or 'lsq' (raw residuals). Every fit of the run uses it, and so do the laws "
             "it is compared with.")


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


@cli.command("discover")
def discover_cmd(
    task: Optional[str] = typer.Argument(None, help="A bundled task name (see `sld tasks list`) or a task spec .json."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Discover on your own CSV instead of a bundled task."),
    inputs: Optional[str] = typer.Option(None, "--inputs", help="Input columns, comma-separated (with --csv)."),
    target: Optional[str] = typer.Option(None, "--target", help="Target column(s), comma-separated (with --csv)."),
    group: Optional[str] = typer.Option(None, "--group", help="Group column: one law form, constants per group."),
    run: Optional[str] = typer.Option(None, "--run", help="Run column, where rows are checkpoints of a few training "
                                      "runs: --bootstrap then resamples whole runs (with --csv)."),
    axis: Optional[str] = typer.Option(None, "--axis", help="Extrapolation axis column(s); default: the positive inputs spanning a decade."),
    cap: Optional[int] = typer.Option(None, "--cap", help=f"Most constants a law may have, per group (with --csv); default {DEFAULT_CAP} per target."),
    loss: Loss = typer.Option("auto", "--loss", help=LOSS_HELP),
    seed: int = typer.Option(0, "--seed", help="Seed: the same seed gives the same run."),
    budget: int = typer.Option(DEFAULT_BUDGET, "--budget", help="Candidate laws to evaluate."),
    work: float = typer.Option(DEFAULT_WORK, "--work", help="Search effort in model evaluations (0 = no limit); reproducible."),
    time_limit: float = typer.Option(DEFAULT_TIME_LIMIT, "--time-limit", help="Safety net in seconds (0 = none); a run it stops is not reproducible."),
    workers: int = typer.Option(2, "--workers", help="Processes evaluating candidates."),
    dask_scheduler: Optional[str] = typer.Option(None, "--dask-scheduler", envvar="SLD_DASK_SCHEDULER",
                                                 help="Evaluate candidates on this Dask cluster (tcp://host:8786) "
                                                 "instead; the same seed gives the same laws."),
    llm: Optional[str] = typer.Option(None, "--llm", help="Also propose laws with this LLM (OpenAI-compatible model name)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)."),
    llm_weight: float = typer.Option(0.7, "--llm-weight", help="Share of proposals asked of the LLM."),
    llm_max_calls: Optional[int] = typer.Option(40, "--llm-max-calls", help="End the LLM's turns after this many calls (0 = no cap); the offline proposer then takes its share."),
    llm_max_cost: Optional[float] = typer.Option(None, "--llm-max-cost", help="End the LLM's turns past this cost (USD); the run goes on offline."),
    save: Optional[Path] = typer.Option(None, "--save", help="Write the result JSON here (usable by `sld predict --law`)."),
    bootstrap: int = typer.Option(0, "--bootstrap", help="Refit the law on this many resamples of the runs "
                                  "(within groups) for intervals in `sld predict --interval` and `sld allocate`."),
    uncertainty: str = typer.Option("bootstrap", "--uncertainty", help="How --bootstrap N replicates are made: "
                                    "'bootstrap' (refits, slow, trustworthy) or 'delta' (draws from the fit's "
                                    "linearised covariance, seconds)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a report."),
):
    """Search for the law that extrapolates best, then report it.

    Candidates are ranked on validation rows carved from the training data along
    the extrapolation axis.  For a bundled task the test split is scored once,
    at the end, beside the human law refitted with the same backend.
    """
    if (task is None) == (csv is None):
        raise DataError("give either a bundled TASK or --csv FILE (with --inputs and --target)")
    if run and csv is None:
        raise DataError("--run names a column of your own CSV (with --csv); a bundled task has no run column")
    test = human = None
    search = dict(budget=budget, work_budget=work, time_limit=time_limit, seed=seed, workers=workers,
                  scheduler=dask_scheduler, loss=loss.value)
    if csv is not None:
        if not inputs or not target:
            raise DataError("--csv needs --inputs a,b and --target y")
        train = read_csv(csv)
        request = DiscoveryRequest(_split(inputs), _split(target), group=group, axis=_split(axis),
                                   max_constants=cap, run=run, **search)
    else:
        from tasks import get_task, load_split

        spec = get_task(task)
        train, test = load_split(spec.name, "train"), load_split(spec.name, "test")
        request = DiscoveryRequest.for_problem(spec.problem(), **search)
        human = spec.human_law.lines if spec.human_law else None
    plan = plan_discovery(train, request)
    problem = plan.problem
    budgets = {k: v for k, v in {"max_calls": llm_max_calls or None, "max_cost_usd": llm_max_cost}.items()
               if v is not None}
    proposers = _proposers(llm, base_url, llm_weight, seed, budgets)
    err = Console(stderr=True)
    with Progress(TextColumn("[bold]searching"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TextColumn("{task.fields[best]}"), TimeElapsedColumn(), console=err, transient=True) as bar:
        job = bar.add_task("search", total=budget, best="")

        def tick(search):
            p = search.progress
            best = "" if p["best_validation_r2"] is None else f"best validation R² {p['best_validation_r2']:.4f}"
            # whichever budget binds first drives the bar
            done = max(p["candidates"] / budget, (p["work"] / work) if work else 0.0)
            bar.update(job, completed=min(done, 1.0) * budget, best=best)

        for expected in ProposerMix(proposers).plan(max(plan.config.budget - plan.config.first_generation, 0)):
            caps = ", ".join(f"{k} {expected[k]}" for k in ("max_calls", "max_total_tokens", "max_cost_usd")
                             if expected[k] is not None)
            err.print(f"{expected['proposer']}: about {expected['expected_calls']} calls for "
                      f"{expected['expected_proposals']} proposals, up to {expected['max_tokens_per_call']} "
                      f"completion tokens each{'; caps: ' + caps if caps else ''}", highlight=False)
        result = discover(problem, train, config=plan.config, proposers=proposers, test=test,
                          human_lines=human, on_generation=tick)
    shown = set()
    for event in result.events:
        message = event.get("message")
        if event.get("type") in ("warning", "budget") and message not in shown:
            shown.add(message)  # a down endpoint warns once per island per generation; say it once
            err.print(f"[yellow]warning:[/] {message}", highlight=False)
    payload = result.to_json()
    payload["group"] = problem.group
    if problem.run:
        payload["run"] = problem.run
    if bootstrap:
        payload.update(bootstrap_payload(payload, problem, train, bootstrap, seed, uncertainty))
    if save:
        save.write_text(json.dumps(payload, indent=1))
    if as_json:
        typer.echo(json.dumps(payload))
    else:
        _report(payload, Console())


def _proposers(llm, base_url, weight, seed, budgets):
    if not llm:
        return None
    from agent.llm import make_llm_proposer
    from agent.search import OfflineProposer

    if not 0 < weight <= 1:
        raise DataError("--llm-weight must be in (0, 1]")
    llm_proposer = make_llm_proposer(llm, base_url=base_url, seed=seed, **budgets)
    out = [(llm_proposer, weight)]
    if weight < 1:
        out.append((OfflineProposer(), 1 - weight))
    return out


def _report(p: dict, console: Console) -> None:
    console.print("[bold]Best law[/]")
    for line in p["law"]:
        console.print(f"  {line}", highlight=False)
    console.print(f"  LaTeX: {p['latex']}", highlight=False)
    console.print(f"  {p['n_constants']} constants per group, complexity {p['complexity']}")
    groups = list(p["constants"].items())
    console.print(f"[bold]Constants[/] ({len(groups)} group(s))")
    for g, values in groups[:MAX_GROUPS_SHOWN]:
        console.print(f"  {g}: " + ", ".join(f"{k}={v:.6g}" for k, v in values.items()), highlight=False)
    if len(groups) > MAX_GROUPS_SHOWN:
        console.print(f"  ... {len(groups) - MAX_GROUPS_SHOWN} more (use --json)")
    v = p["validation"]
    console.print(f"[bold]Validation[/] (extrapolation tail of the training rows): R² {v['r2']:.4f}, "
                  f"NMSE {v['nmse']:.4g}; per fold R² " + ", ".join(f"{r:.4f}" for r in v.get("fold_r2", [])))
    _report_selection(p.get("selection") or {}, console)
    s = p["search"]
    console.print(f"[bold]Search[/]: {s['candidates']} laws in {s['generation']} generations, "
                  f"{s['rejected']} rejected, {s['seconds']:.1f}s, stopped by {s['stop_reason']}")
    for name, usage in p.get("usage", {}).items():
        console.print(f"  {name}: " + ", ".join(f"{k}={v}" for k, v in usage.items()), highlight=False)
    if p.get("test"):
        console.print(f"[bold]Test[/] (scored once, after the search): R² {p['test']['r2']:.4f}, "
                      f"NMSE {p['test']['nmse']:.4g}")
    if p.get("human"):
        console.print(f"[bold]Human law, refitted the same way[/]: R² {p['human']['r2']:.4f}")


def _report_selection(sel: dict, console: Console) -> None:
    """The close finalists and how far apart they predict beyond the data: the form's own uncertainty."""
    if not sel:
        return
    # rule 2 of agent.search.choice: the best-scoring literature form among the close ones, or the simplest
    which = ("the best-scoring literature form among them (the best law if none is one)"
             if sel.get("rule") == "literature form first" else "the simplest of them")
    line = (f"[bold]Choice[/]: {sel.get('close_finalists', 1)} finalist(s) within {sel.get('margin', 0):g} "
            f"decades of the best, reported {which}")
    spread = sel.get("spread") or {}
    parts = [f"{spread[k]:.1%} at {k}" for k in ("2x", "4x", "10x") if spread.get(k) is not None]
    if parts:
        line += "; their predictions spread " + ", ".join(parts) + " the largest axis value"
    console.print(line, highlight=False)
    if sel.get("reference_dependent"):
        console.print(f"[yellow]Note[/]: the law's form depends on the reference scale of "
                      f"{', '.join(sel['reference_dependent'])} (its constants cannot absorb a change of units): "
                      "a literature form written so, or no finalist was free of that", highlight=False)


@cli.command("predict")
def predict_cmd(
    law: Path = typer.Option(..., "--law", help="A law JSON (from `sld discover --json` or --save)."),
    csv: Path = typer.Option(..., "--csv", help="Points to predict: a CSV with the law's input columns."),
    interval: Optional[float] = typer.Option(None, "--interval", help="Also give <target>_lo and <target>_hi at this "
                                             "level, e.g. 0.9 (needs a law saved with --bootstrap)."),
    kind: str = typer.Option("confidence", "--kind", help="'confidence': where the law's curve lies; 'prediction': "
                             "where a new run would land (adds the runs' own noise)."),
):
    """Predict the law's targets at new points; prints the points with predictions as CSV."""
    payload, final = load_law_json(law)
    points = read_csv(csv)
    group = payload.get("group")
    if group and group not in points.columns and len(final.constants) > 1:
        raise DataError(f"the law has constants per {group!r}; add a {group!r} column to {csv.name}")
    use_group = group if group and group in points.columns else None
    pred = final.predict(points, group=use_group)
    out = points.copy()
    for j, t in enumerate(final.targets):
        out[f"{t}_predicted" if t in out.columns else t] = pred[:, j]
    if interval is not None:
        out = add_intervals(out, payload, final, points, use_group, interval, kind, law.name)
    if not np.all(np.isfinite(pred)):
        Console(stderr=True).print("[yellow]warning:[/] some predictions are not finite (outside the law's domain)")
    out.to_csv(sys.stdout, index=False)
