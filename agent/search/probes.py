"""Points beyond the training range along the axis, for plausibility checks."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from agent.problem import Problem, Table

FACTORS = (1.0, 2.0, 4.0)
MONOTONE_RHO = 0.9


def build_probes(df: pd.DataFrame, problem: Problem, table: Table, axis: np.ndarray | None):
    """Per group: the row furthest along the axis, then the axis columns pushed 2x and 4x.

    Returns (probe table or None, {target index: +1/-1} for targets monotone along the axis).
    """
    if axis is None or not set(problem.axis) <= set(problem.inputs):
        return None, {}
    X = {k: [] for k in problem.inputs}
    groups = []
    for g in table.group_names:
        rows = np.flatnonzero(table.groups == g)
        last = rows[np.argmax(axis[rows])]
        for f in FACTORS:
            for name in problem.inputs:
                v = table.X[name][last]
                if name in problem.axis:
                    col = table.X[name]
                    v = v * f if np.all(col > 0) else v + (f - 1) * (col.max() - col.min())
                X[name].append(v)
            groups.append(g)
    probes = Table({k: np.array(v, dtype=float) for k, v in X.items()},
                   np.full((len(groups), len(problem.targets)), np.nan), np.array(groups, dtype=object))
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
