"""What a discovery run will do, decided once from the data and the request.

The CLI, the service (at submission; the worker reads the stored plan back)
and ``LawSearch`` are thin adapters: each turns what it was asked into a
:class:`DiscoveryRequest` and calls :func:`plan_discovery`.  So the same
data, request and seed give the same search, hence the same law, whichever
face was used.  The defaults live in ``agent.defaults``.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np
import pandas as pd

from agent.defaults import (AXIS_MIN_SPAN, DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEFAULT_WORK,
                            MIN_TRAIN_ROWS, default_cap)
from agent.errors import DataError
from agent.fitting import LOSSES
from agent.problem import Problem, make_table
from agent.search import SearchConfig
from agent.search.units import check_columns


@dataclass(frozen=True)
class HeldOut:
    """Held-out rows are never searched and are scored once at the end.

    They are the rows whose ``column`` equals ``value`` (compared as text), or, with ``at_least``,
    the rows whose numeric ``column`` is at least that (the largest models of a sweep, say).
    """

    column: str
    value: str = "test"
    at_least: float | None = None

    def split(self, df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        if self.at_least is not None:
            held = pd.to_numeric(df[self.column]) >= self.at_least
        else:
            held = df[self.column].astype(str) == str(self.value)
        return df[~held].reset_index(drop=True), df[held].reset_index(drop=True)


@dataclass(frozen=True)
class DiscoveryRequest:
    """What a user asks for.  ``axis=None`` means the default axis; a limit of 0 or None means no limit."""

    inputs: Sequence[str]
    targets: Sequence[str]
    group: str | None = None
    axis: Sequence[str] | None = None
    max_constants: int | None = None  # None: DEFAULT_CAP per target (``defaults.default_cap``)
    budget: int = DEFAULT_BUDGET
    work_budget: float | None = DEFAULT_WORK
    time_limit: float | None = DEFAULT_TIME_LIMIT
    seed: int = 0
    patience: int | None = None
    workers: int = 1               # processes evaluating candidates: the same seed gives the same laws
    scheduler: str | None = None   # or a Dask scheduler's address, with the same laws again
    description: str = ""
    held_out: HeldOut | None = None
    loss: str = "auto"             # how constants are fitted (agent.fitting.FitOptions); auto: robust_log
                                   # for positive targets, else lsq
    run: str | None = None         # the column naming each row's training run (checkpoints): ``Problem.run``

    @classmethod
    def for_problem(cls, problem: Problem, **search) -> "DiscoveryRequest":
        """A request for a problem already defined (a bundled task): its columns, axis and cap."""
        return cls(inputs=problem.inputs, targets=problem.targets, group=problem.group, axis=problem.axis,
                   max_constants=problem.max_constants, description=problem.description, run=problem.run,
                   **search)


@dataclass(frozen=True)
class DiscoveryPlan:
    """The problem, the whole search configuration and the held-out rows of one run."""

    problem: Problem
    config: SearchConfig
    held_out: HeldOut | None = None

    def split(self, df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(training rows, held-out test rows)."""
        return self.held_out.split(df) if self.held_out else (df, df.iloc[0:0])

    def with_workers(self, workers: int, scheduler: str | None = None) -> "DiscoveryPlan":
        """The same plan on another number of processes, or a Dask cluster (a property of the machine,
        not of the result)."""
        return replace(self, config=replace(self.config, workers=workers, scheduler=scheduler))


def plan_discovery(data: pd.DataFrame, request: DiscoveryRequest) -> DiscoveryPlan:
    """Check the request against the data and resolve every default; DataError names the problem."""
    r = request
    _check_limits(r)
    inputs, targets = list(r.inputs), list(r.targets)
    named = [*inputs, *targets, *([r.group] if r.group else []), *(r.axis or []),
             *([r.held_out.column] if r.held_out else []), *([r.run] if r.run else [])]
    for col in named:
        if col not in data.columns:
            raise DataError(f"column {col!r} is not in the data (columns: {', '.join(map(str, data.columns))})")
    if r.group is not None and r.group in (*inputs, *targets):
        raise DataError(f"the group column {r.group!r} cannot also be an input or a target")
    stray = [a for a in r.axis or () if a not in inputs]
    if stray:
        raise DataError(f"axis column(s) {', '.join(stray)} must be among the inputs")
    train = r.held_out.split(data)[0] if r.held_out else data
    table = make_table(train, Problem(tuple(inputs), tuple(targets), group=r.group, run=r.run))  # names bad values
    if len(table) < MIN_TRAIN_ROWS:
        raise DataError(f"only {len(table)} training row(s); a run needs at least {MIN_TRAIN_ROWS}")
    axis = list(r.axis) if r.axis is not None else default_axis(table.X, inputs)
    problem = Problem(tuple(inputs), tuple(targets), group=r.group, axis=tuple(axis),
                      max_constants=default_cap(len(targets)) if r.max_constants is None else r.max_constants,
                      description=r.description, run=r.run)
    check_columns(problem, table)  # a constant column: refused here, not after a futile search
    check_loss(r.loss, table.y, targets)
    config = SearchConfig(budget=r.budget, work_budget=r.work_budget or None, time_limit=r.time_limit or None,
                          seed=r.seed, patience=r.patience, workers=r.workers,
                          scheduler=r.scheduler).with_loss(r.loss)
    return DiscoveryPlan(problem, config, r.held_out)


def _check_limits(r: DiscoveryRequest) -> None:
    """Counts and limits a search can run with, before anything is read (a budget of -3 once searched
    nothing and blamed the constant cap; a negative seed was a traceback from numpy)."""
    def whole(value) -> bool:
        return isinstance(value, (int, np.integer)) and not isinstance(value, bool)

    if not whole(r.budget) or r.budget < 1:
        raise DataError(f"the budget must be a whole number of candidate laws, at least 1 (got {r.budget!r})")
    if r.max_constants is not None and (not whole(r.max_constants) or r.max_constants < 1):
        raise DataError(f"the constant cap must be a whole number, at least 1 (got {r.max_constants!r})")
    if not whole(r.seed) or r.seed < 0:
        raise DataError(f"the seed must be a whole number, 0 or more (got {r.seed!r})")
    if r.patience is not None and (not whole(r.patience) or r.patience < 1):
        raise DataError(f"patience must be a whole number of generations, at least 1 (got {r.patience!r})")
    for name, value in (("work budget", r.work_budget), ("time limit", r.time_limit)):
        if value is not None and not (isinstance(value, (int, float, np.number)) and np.isfinite(value) and value >= 0):
            raise DataError(f"the {name} must be a finite number, 0 (no limit) or more (got {value!r})")


def check_loss(loss: str, y: np.ndarray, targets: Sequence[str]) -> None:
    """A loss the data can take: a log loss needs every target positive (before a search, not after)."""
    if loss not in ("auto", *LOSSES):
        raise DataError(f"unknown loss {loss!r}; choose one of auto, {', '.join(LOSSES)}")
    if loss in ("auto", "lsq"):
        return
    for j, name in enumerate(targets):
        bad = int(np.sum(y[:, j] <= 0))
        if bad:
            raise DataError(f"loss {loss!r} fits log residuals, but target {name!r} has {bad} value(s) <= 0 "
                            "in the training rows; use loss 'lsq' (or 'auto')")


def default_axis(columns: dict[str, np.ndarray], inputs: Sequence[str]) -> list[str]:
    """A compute proxy: the inputs whose values are all positive and span at least a decade."""
    return [c for c in inputs
            if np.all(columns[c] > 0) and columns[c].max() / columns[c].min() >= AXIS_MIN_SPAN]
