"""``sld bench --suite synthetic``: run the synthetic suite and print a table per problem and per family."""
from __future__ import annotations

import json

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from agent.errors import DataError
from app.suite import WIN_RATIO, run_problem, summarize_suite

SUITES = ("synthetic",)


def run_suite(suite: str, *, seed: int, families: list[str] | None, problems: list[str] | None,
              limit: int | None, budget: int | None, work: float | None, time_limit: float | None,
              workers: int, as_json: bool, data_seed: int | None = None, loss: str = "auto") -> None:
    from tasks.synthetic import SUITE_SEED, UnknownProblem, synthetic_suite

    if suite not in SUITES:
        raise DataError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if limit is not None and limit < 1:
        raise DataError("--limit must be at least 1")
    try:
        data_seed = SUITE_SEED if data_seed is None else data_seed
        chosen = synthetic_suite(data_seed, names=problems, families=families)
    except UnknownProblem as exc:
        raise DataError(f"unknown synthetic problem or family: {exc.args[0]} (see tasks/synthetic/catalog.py)") from None
    chosen = chosen[:limit] if limit else chosen
    rows = []
    with Console(stderr=True).status("") as status:
        for i, problem in enumerate(chosen, start=1):
            status.update(f"searching laws (seed {seed}): {problem.name} ({i}/{len(chosen)})")
            rows.append(run_problem(problem, seed=seed, budget=budget, work=work, time_limit=time_limit,
                                    workers=workers, loss=loss))
    summary = {"suite": suite, "suite_seed": data_seed, "seed": seed, "loss": loss, **summarize_suite(rows)}
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        _print(summary)


def _fmt(value, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def _print(summary: dict) -> None:
    console = Console()
    table = Table(title=f"Synthetic suite, seed {summary['seed']}: the discovered law on test vs the best "
                        f"textbook form (win: NMSE ≤ {WIN_RATIO}x)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    columns = ("problem", "R²", "NMSE", "err@max", "best textbook", "its NMSE", "ratio", "win", "consts", "nodes", "sec")
    rows = [[r["problem"], _fmt(r["r2"], ".4f"), _fmt(r["nmse"], ".3g"), _fmt(r["err_at_largest"], ".2%"),
             r["best_textbook"], _fmt(r["best_textbook_nmse"], ".3g"), _fmt(r["ratio"], ".2f"),
             "yes" if r["win"] else "no", _fmt(r["n_constants"], "d"), _fmt(r["complexity"], "d"),
             _fmt(r["seconds"], ".1f")] for r in summary["problems"]]
    table.add_column(columns[0], overflow="fold")
    for i, name in enumerate(columns[1:], start=1):
        if i == 4:
            table.add_column(name, overflow="fold")
            continue
        # Numbers must never be cut; the names wrap instead on narrow terminals.
        width = max(len(name), *(len(r[i]) for r in rows)) if rows else len(name)
        table.add_column(name, justify="right", no_wrap=True, min_width=width)
    for row in rows:
        table.add_row(*row)
    console.print(table, highlight=False)
    for r in summary["problems"]:
        if r["error"]:
            console.print(f"[yellow]{r['problem']}:[/] {r['error']}", highlight=False)
    families = Table(title="Per family", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for i, name in enumerate(("family", "problems", "wins", "median R²", "median err@max")):
        families.add_column(name, justify="left" if i == 0 else "right", no_wrap=True)
    every = [*summary["families"].items(), ("all", summary["overall"])]
    for i, (family, agg) in enumerate(every):
        if i == len(every) - 1:
            families.add_section()
        families.add_row(family, str(agg["problems"]), f"{agg['wins']} ({_fmt(agg['win_fraction'], '.0%')})",
                         _fmt(agg["median_r2"], ".4f"), _fmt(agg["median_err_at_largest"], ".2%"))
    console.print(families, highlight=False)
    o = summary["overall"]
    console.print(f"Reported laws: median {_fmt(o['median_n_constants'], 'g')} constants, "
                  f"median {_fmt(o['median_complexity'], 'g')} nodes; {o['seconds']:.0f} s in all.", highlight=False)
