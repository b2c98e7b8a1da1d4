"""SLDBench evaluation of one law source on one task, and the benchmark summary.

Every evaluator returns one row ``{"task", "r2", "nmse", "nmae", "n_constants",
"seconds"}`` scored on the task's test split exactly as SLDBench does (all groups
concatenated).  The CLI (``sld bench``) only loops over tasks and prints, so
other law sources (a discovered law) plug in as further evaluators.
"""
from __future__ import annotations

import math
import time
from typing import Iterable

from agent.errors import DataError
from agent.fitting import FitOptions, predict
from agent.problem import Table, make_table
from agent.scoring import benchmark_mean, score
from agent.search import refit_law
from tasks import TaskError, TaskSpec, load_split

CONSTANT_MODES = ("published", "refit")


def load_table(spec: TaskSpec, split: str) -> Table:
    """A split as validated arrays; data problems name the task and split."""
    df = load_split(spec.name, split)
    try:
        return make_table(df, spec.problem())
    except DataError as exc:
        raise DataError(f"{spec.name} ({split} split): {exc}") from None


def bench_human(spec: TaskSpec, constants: str = "published", seed: int = 0,
                fit_options: FitOptions | None = None) -> dict:
    """Score the task's human law on its test split.

    ``published``: the literature's constants per group.  ``refit``: the same
    form with constants fitted on the train split by our backend, the way every
    user dataset will be compared with its human law.
    """
    if constants not in CONSTANT_MODES:
        raise TaskError(f"unknown constants mode {constants!r}; choose one of {', '.join(CONSTANT_MODES)}")
    law = spec.law()
    test = load_table(spec, "test")
    train = load_table(spec, "train") if constants == "refit" else None
    start = time.perf_counter()
    if train is None:
        values = spec.human_law.constants
        missing = sorted(set(test.group_names) - set(values))
        if missing:
            raise TaskError(f"{spec.name}: no published constants for group(s) {', '.join(missing[:5])}")
    else:
        values = refit_law(law, train, seed=seed, options=fit_options).constants
    scores = score(test.y, predict(law, test, values, test.groups))
    return result_row(spec.name, scores.r2, scores.nmse, scores.nmae, law.n_constants,
                      time.perf_counter() - start)


def result_row(task: str, r2: float, nmse: float, nmae: float, n_constants: int, seconds: float) -> dict:
    return {"task": task, "r2": r2, "nmse": nmse, "nmae": nmae, "n_constants": n_constants,
            "seconds": round(seconds, 3)}


def summarize(rows: Iterable[dict]) -> dict:
    """The benchmark object: rows plus the raw mean and the mean with each task floored at -1.

    Non-finite numbers become ``None`` so the object is strict JSON.
    """
    rows = list(rows)
    raw, floored = benchmark_mean(r["r2"] if r["r2"] is not None else -math.inf for r in rows)
    return {"tasks": [{k: _finite_or_none(v) for k, v in r.items()} for r in rows],
            "mean_r2": _finite_or_none(raw), "mean_r2_floored": _finite_or_none(floored)}


def _finite_or_none(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def check_loss_for_tasks(specs: Iterable[TaskSpec], loss: str) -> None:
    """Refuse a loss that a task's training rows cannot take before any task is searched: a log loss
    on a target with values <= 0 would otherwise stop the bench at that task, its earlier searches lost."""
    from agent.plan import check_loss

    if loss in ("auto", "lsq"):  # losses every target can take: no split need be read for them
        return
    for spec in specs:
        problem = spec.problem()
        train = make_table(load_split(spec.name, "train"), problem)
        try:
            check_loss(loss, train.y, problem.targets)
        except DataError as exc:
            raise DataError(f"task {spec.name}: {exc}") from None


def bench_discovered(spec: TaskSpec, seed: int = 0, budget: int | None = None,
                     time_limit: float | None = None, workers: int = 2, with_human: bool = False,
                     work: float | None = None, loss: str = "auto") -> dict:
    """Run the offline search on the task's train split, then score the refitted law on test once."""
    from agent.plan import DiscoveryRequest, plan_discovery
    from app.discovery import discover

    given = {"budget": budget or None, "work_budget": work, "time_limit": time_limit}
    request = DiscoveryRequest.for_problem(spec.problem(), seed=seed, workers=workers, loss=loss,
                                           **{k: v for k, v in given.items() if v is not None})
    start = time.perf_counter()
    train = load_split(spec.name, "train")
    plan = plan_discovery(train, request)
    result = discover(plan.problem, train, config=plan.config, test=load_split(spec.name, "test"))
    test = result.test
    row = result_row(spec.name, test["r2"], test["nmse"], test["nmae"], result.final["n_constants"],
                     time.perf_counter() - start)
    row["law"] = result.final["law"]
    row["complexity"] = result.final["complexity"]  # nodes, beside the constants: how simple the report is
    row["fit_loss"] = result.final.get("fit_loss")
    row["candidates"] = result.search["candidates"]
    row["stop_reason"] = result.search["stop_reason"]
    if with_human and spec.human_law is not None:
        human = bench_human(spec, "refit", seed, FitOptions(loss=loss))
        row["human_refit_r2"] = human["r2"]
    return row
