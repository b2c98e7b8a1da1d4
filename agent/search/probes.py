"""Points beyond the training range along the axis, for plausibility checks."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from agent.problem import Problem, Table

NEAR_FACTORS = (1.0, 2.0, 4.0)   # where fits from different origins are compared (the disagreement)
FAR_FACTORS = (10.0, 100.0)      # where only asymptotic sanity is checked: finite, sign kept, monotone
FACTORS = NEAR_FACTORS + FAR_FACTORS
# where a law must still give a target its sign (a loss stays positive): six orders of magnitude, as
# far as anyone extrapolates.  A power law over a floor keeps its sign at any scale; a log, or a power
# with a negative coefficient and exponent (what a fit makes of a bend it cannot follow), falls
# through zero somewhere, and past 100x only such a law does
HORIZON_FACTORS = (1e3, 1e6)
MONOTONE_RHO = 0.5   # |median within-group Spearman| along the axis that counts as a trend
ROWS_PER_GROUP = 5   # the rows furthest along the axis, each pushed further


def build_probes(df: pd.DataFrame, problem: Problem, table: Table, axis: np.ndarray | None):
    """Per group: the rows furthest along the axis, each with the axis columns pushed 2x, 4x, 10x, 100x.

    Probe rows come in blocks of ``len(FACTORS)``, one block per pushed row;
    ``near_rows`` tells the 1x/2x/4x ones apart.

    Returns (probe table or None, {target index: +1/-1} for targets monotone along the axis).
    """
    if not _can_push(problem, axis):
        return None, {}
    probes = pushed_rows(problem, table, axis, FACTORS)
    monotone = {}
    for j in range(len(problem.targets)):
        rhos = []
        for g in table.group_names:
            m = table.groups == g
            if len(np.unique(axis[m])) >= 3:
                rho = spearmanr(axis[m], table.y[m, j]).statistic
                if np.isfinite(rho):
                    rhos.append(rho)
        if rhos and abs(np.median(rhos)) >= MONOTONE_RHO and np.all(np.sign(rhos) == np.sign(np.median(rhos))):
            monotone[j] = int(np.sign(np.median(rhos)))
    return probes, monotone


def build_horizon(problem: Problem, table: Table, axis: np.ndarray | None) -> Table | None:
    """The probes' rows pushed to the horizon (``HORIZON_FACTORS``); None without an axis."""
    return pushed_rows(problem, table, axis, HORIZON_FACTORS) if _can_push(problem, axis) else None


def _can_push(problem: Problem, axis: np.ndarray | None) -> bool:
    """Whether rows can be pushed along the axis: there is one, and it is made of inputs."""
    return axis is not None and set(problem.axis) <= set(problem.inputs)


def pushed_rows(problem: Problem, table: Table, axis: np.ndarray, factors) -> Table:
    """Per group, the ``ROWS_PER_GROUP`` rows furthest along the axis, each with the axis columns
    pushed by every factor in turn (blocks of ``len(factors)`` rows; no targets)."""
    X = {k: [] for k in problem.inputs}
    groups = []
    for g in table.group_names:
        rows = np.flatnonzero(table.groups == g)
        for last in rows[np.argsort(-axis[rows], kind="stable")[:ROWS_PER_GROUP]]:
            for f in factors:
                for name in problem.inputs:
                    X[name].append(_pushed(table.X[name], last, f) if name in problem.axis
                                   else table.X[name][last])
                groups.append(g)
    return Table({k: np.array(v, dtype=float) for k, v in X.items()},
                 np.full((len(groups), len(problem.targets)), np.nan), np.array(groups, dtype=object))


def near_rows(n_rows: int) -> np.ndarray:
    """Mask of the probe rows at the near factors (1x, 2x, 4x) in a probe table of ``n_rows``."""
    block = np.array([f in NEAR_FACTORS for f in FACTORS])
    return np.tile(block, n_rows // len(FACTORS))


SHIFT_PER_DOUBLING = 0.25  # spans of an additive axis that stand for one doubling of a positive one


def _pushed(col: np.ndarray, row: int, factor: float) -> float:
    """The row's axis value pushed beyond the data: scaled if positive, else shifted.

    An axis that is not positive (already a log, say) is shifted by a quarter of
    its span per doubling: 2x and 4x become +0.25 and +0.5 spans, about as far
    as a doubling reaches on an axis spanning a few decades, not whole spans.
    """
    v = col[row]
    if np.all(col > 0):
        return v * factor
    return v + np.log2(factor) * SHIFT_PER_DOUBLING * (col.max() - col.min())
