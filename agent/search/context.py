"""What every evaluation of a run shares: the normalised rows it validates on, its folds and probes,
how candidates are fitted and ranked.  Built once per run by :meth:`EvaluationContext.build`
(a comparison with any other law builds the same one); pickled once per worker process."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from agent.fitting import FitOptions
from agent.problem import Problem, Table, axis_values, make_table
from agent.search.probes import build_horizon, build_probes
from agent.search.selection import Selection
from agent.search.units import Units
from agent.splits import Fold, make_folds

if TYPE_CHECKING:
    from agent.search.config import SearchConfig

# Effort is bounded by work (model evaluations), never by the clock: time limits are safety nets.
SEARCH_FIT = FitOptions(starts=8, local=1, max_nfev=80, max_work=20_000, time_limit=30.0, tolerance=1e-6)  # screening
# the top few: six local refinements, not three, because a finalist's score must be its form's, not
# its fit's luck (on SLDBench sft one seed's three refinements missed the best basin of a form in one
# fold, 1.73 against 1.91 decades, and a worse, simpler law was reported)
FINALIST_FIT = FitOptions(starts=64, local=6, max_nfev=200, max_work=50_000, time_limit=30.0,
                          tolerance=1e-8)


@dataclass
class EvaluationContext:
    """Everything a worker process needs; pickled once per pool."""

    problem: Problem
    table: Table
    folds: list[Fold]
    probes: Table | None = None          # extrapolated points (no targets)
    monotone: dict = field(default_factory=dict)  # target index -> +1/-1 trend along the axis
    fit_options: FitOptions = SEARCH_FIT
    selection: Selection = Selection()
    units: Units | None = None           # how ``table`` was normalised (None: it was not)
    horizon: Table | None = None         # the probes' rows pushed 1e3x and 1e6x (``evaluate._leaves_sign``)

    @classmethod
    def build(cls, problem: Problem, train_df: pd.DataFrame, table: Table, units: Units,
              config: "SearchConfig") -> "EvaluationContext":
        """The context of a search over ``train_df`` (``table`` is its table in user units):
        a seeded sample of groups, normalised, with its folds and plausibility probes."""
        search_df = units.normalise_frame(sample_groups(train_df, problem, table, config.max_groups, config.seed))
        search_table = make_table(search_df, problem)
        axis = axis_values(search_df, problem)
        folds = make_folds(axis, search_table.groups, search_table.X, list(problem.inputs), seed=config.seed,
                           n_folds=config.n_folds)
        probes, monotone = build_probes(search_df, problem, search_table, axis)
        return cls(problem, search_table, folds, probes, monotone, config.fit, config.selection, units,
                   build_horizon(problem, search_table, axis))


def sample_groups(df: pd.DataFrame, problem: Problem, table: Table, max_groups: int, seed: int) -> pd.DataFrame:
    """With many groups, rank laws on a seeded sample of them: every group is one more
    fit per fold, and a dozen groups already tell good forms from bad ones."""
    names = table.group_names
    if problem.group is None or len(names) <= max_groups:
        return df
    keep = set(np.random.default_rng(seed).choice(names, size=max_groups, replace=False))
    return df[df[problem.group].astype(str).isin(keep)].reset_index(drop=True)
