"""``sld bench``: score laws on the SLDBench tasks with the benchmark's own protocol."""
from __future__ import annotations

import json
import time
from enum import Enum
from typing import List, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from agent.fitting import FitOptions
from app.bench import bench_discovered, bench_human, check_loss_for_tasks, summarize
from app.cli import cli
from app.cli.discover_cmd import LOSS_HELP, Loss
from tasks import all_tasks, get_task


class Laws(str, Enum):
    human = "human"
    discovered = "discovered"
    both = "both"


class Constants(str, Enum):
    published = "published"
    refit = "refit"


@cli.command("bench")
def bench(
    laws: Laws = typer.Option(
        Laws.human, "--laws",
        help="'human': each task's law from the literature; 'discovered': run the offline search per task; "
             "'both': the search plus the refitted human law beside it.",
    ),
    constants: Constants = typer.Option(
        Constants.published, "--constants",
        help="'published': the literature's constants; 'refit': the same form fitted on the train split by sld.",
    ),
    task: Optional[List[str]] = typer.Option(
        None, "--task", "-t", help="Only this task (repeatable; a name or a task spec .json). Default: all bundled tasks.",
    ),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed for everything random (fit starts, the search)."),
    budget: Optional[int] = typer.Option(None, "--budget", help="Candidate laws per task (discovered/both)."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Safety net: search seconds per task (discovered/both)."),
    work: Optional[float] = typer.Option(None, "--work", help="Search effort per task in model evaluations (reproducible; discovered/both)."),
    workers: int = typer.Option(2, "--workers", help="Processes evaluating candidates (discovered/both)."),
    loss: Loss = typer.Option("auto", "--loss", help=LOSS_HELP + " With --suite the textbook forms are fitted "
                                                                 "with it too."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table."),
    suite: Optional[str] = typer.Option(
        None, "--suite", help="'synthetic': search the generated problems whose law is known, against textbook forms "
                              "(instead of the SLDBench tasks).",
    ),
    family: Optional[List[str]] = typer.Option(None, "--family", help="With --suite: only this law family (repeatable)."),
    problem: Optional[List[str]] = typer.Option(None, "--problem", help="With --suite: only this problem (repeatable)."),
    limit: Optional[int] = typer.Option(None, "--limit", help="With --suite: at most this many problems."),
    data_seed: Optional[int] = typer.Option(None, "--data-seed", min=0, help="With --suite: draw the problems' constants "
                                            "and noise from this seed (default 0; --seed varies the search)."),
):
    """Score laws on the test split of each task (R², NMSE, NMAE; groups concatenated) and their mean.

    The mean is reported raw and with each task's R² floored at -1, as the SLDBench paper does.
    With --suite synthetic: search each synthetic problem as `sld discover --csv` does by default.
    """
    if suite is not None or family or problem or limit is not None or data_seed is not None:
        from agent.errors import DataError
        from app.cli.suite_cmd import run_suite

        if suite is None:
            raise DataError("--family, --problem, --limit and --data-seed need --suite synthetic")
        if task:
            raise DataError("--task names an SLDBench task; with --suite use --problem or --family")
        run_suite(suite, seed=seed, families=family, problems=problem, limit=limit, budget=budget, work=work,
                  time_limit=time_limit, workers=workers, as_json=as_json, data_seed=data_seed, loss=loss.value)
        return
    specs = [get_task(name) for name in task] if task else all_tasks()
    check_loss_for_tasks(specs, loss.value)
    err = Console(stderr=True)
    rows = []
    start = time.perf_counter()
    with err.status("") as status:
        for spec in specs:
            if laws is Laws.human:
                status.update(f"{laws.value} laws, {constants.value} constants: {spec.name}")
                rows.append(bench_human(spec, constants.value, seed, FitOptions(loss=loss.value)))
            else:
                status.update(f"searching laws (seed {seed}): {spec.name}")
                rows.append(bench_discovered(spec, seed, budget, time_limit, workers,
                                             with_human=laws is Laws.both, work=work, loss=loss.value))
    summary = summarize(rows)
    if laws is not Laws.human or constants is Constants.refit:  # published constants are fitted by no one
        summary["loss"] = loss.value
    if laws is Laws.both:
        human = [r.get("human_refit_r2") for r in rows]
        summary["human_refit_mean_r2_floored"] = summarize(
            [{"r2": h if h is not None else float("-inf")} for h in human])["mean_r2_floored"]
        summary["wins_over_human"] = sum(1 for r, h in zip(rows, human)
                                         if h is not None and r["r2"] is not None and r["r2"] > h)
    if as_json:
        typer.echo(json.dumps(summary))
        return
    title = (f"{laws.value} laws, {constants.value} constants" if laws is Laws.human
             else f"{laws.value} laws, seed {seed}")
    _print_table(summary, title, time.perf_counter() - start)


def _fmt(value, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def _print_table(summary: dict, title: str, seconds: float) -> None:
    with_human = "human_refit_mean_r2_floored" in summary
    rows = [[r["task"], _fmt(r["r2"], ".4f"), _fmt(r["nmse"], ".3g"), _fmt(r["nmae"], ".3g"),
             str(r["n_constants"]), _fmt(r["seconds"], ".2f")]
            + ([_fmt(r.get("human_refit_r2"), ".4f")] if with_human else []) for r in summary["tasks"]]
    extra = [""] if with_human else []
    means = [["mean R² (raw)", _fmt(summary["mean_r2"], ".4f"), "", "", "", f"{seconds:.2f}"] + extra,
             ["mean R², floored at -1", _fmt(summary["mean_r2_floored"], ".4f"), "", "", "", ""]
             + ([_fmt(summary["human_refit_mean_r2_floored"], ".4f")] if with_human else [])]

    table = Table(title=f"SLDBench test split: {title}", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", overflow="fold")
    columns = ("R²", "NMSE", "NMAE", "consts", "sec") + (("human refit R²",) if with_human else ())
    for i, col in enumerate(columns, start=1):
        # Numbers must never be cut; the task names wrap instead on narrow terminals.
        width = max(len(col), *(len(r[i]) for r in rows + means))
        table.add_column(col, justify="right", no_wrap=True, min_width=width)
    for r in rows:
        table.add_row(*r)
    table.add_section()
    for r in means:
        table.add_row(*r)
    Console().print(table, highlight=False)
    if with_human:
        Console().print(f"The discovered law beats the refitted human law on {summary['wins_over_human']} "
                        f"of {len(rows)} tasks.", highlight=False)
