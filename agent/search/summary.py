"""A compact, JSON-able description of a dataset that proposers build forms from.

Only generic facts: ranges, positivity, whether a column spans decades (so it
enters laws through powers and logs), a reference scale (see ``units``: every
input enters laws as ``(x/reference)``, targets are fitted over theirs),
monotone trends, and which inputs look like data seen more than once (below).
"""
from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from agent.problem import Problem, Table
from agent.search.units import input_reference, target_reference


def summarize(problem: Problem, table: Table, *, rows_per_group: int = 3) -> dict:
    inputs = {}
    for name in problem.inputs:
        x = table.X[name]
        positive = bool(np.all(x > 0))
        decades = float(np.log10(x.max() / x.min())) if positive and x.min() > 0 else 0.0
        inputs[name] = {
            "min": float(x.min()), "max": float(x.max()), "positive": positive,
            "decades": round(decades, 3),
            "scale_like": positive and decades >= 0.6,
            "reference": input_reference(x),
            "distinct": int(len(np.unique(x))),
        }
    targets = {}
    for j, name in enumerate(problem.targets):
        y = table.y[:, j]
        trends = {}
        for i in problem.inputs:
            rho = _group_trend(table.X[i], y, table.groups)
            if rho is not None:
                trends[i] = round(rho, 3)
        targets[name] = {"min": float(y.min()), "max": float(y.max()), "positive": bool(np.all(y > 0)),
                         "reference": target_reference(y), "trend": trends}
    examples = {}
    for g in table.group_names[:6]:
        rows = np.flatnonzero(table.groups == g)[:rows_per_group]
        examples[g] = [
            {**{i: float(table.X[i][r]) for i in problem.inputs},
             **{t: float(table.y[r, j]) for j, t in enumerate(problem.targets)}}
            for r in rows
        ]
    return {
        "n_rows": len(table), "n_groups": len(table.group_names), "inputs": inputs,
        "targets": targets, "examples": examples, "max_constants": problem.max_constants,
        "repeated": repeated_data(problem, table, inputs),
    }


REPEATS_SHARE = 0.1   # rows on each side: at most one pass over the data, and at least MANY_PASSES
MANY_PASSES = 4.0
MAX_PASSES = 1e4      # an epoch count beyond this is a size, not a count of passes


def repeated_data(problem: Problem, table: Table, inputs: dict) -> list[dict]:
    """Inputs that may be data seen more than once: the design of a data-constrained sweep.

    ``{"seen": t, "pool": u, "mode": "tokens"}``: on at least a tenth of the rows t <= u (one pass
    or less over a pool of u unique items) and on at least a tenth t >= 4u (four passes or more).
    ``{"seen": e, "pool": u, "mode": "epochs"}``: e counts passes itself (at most one on a tenth of
    the rows, four or more on another tenth) over any other input u that spans decades.  A
    shape for repeated data (``library``) is seeded only where these hold, which they cannot on a
    sweep where nothing is repeated.
    """
    def straddles(ratio: np.ndarray) -> bool:
        return bool(np.mean(ratio <= 1.0 + 1e-9) >= REPEATS_SHARE and np.mean(ratio >= MANY_PASSES) >= REPEATS_SHARE)

    scale = [x for x in problem.inputs if inputs[x]["scale_like"]]
    out = []
    for seen in problem.inputs:
        x = table.X[seen]
        if inputs[seen]["positive"] and x.max() <= MAX_PASSES and straddles(x):
            out += [{"seen": seen, "pool": pool, "mode": "epochs"} for pool in scale if pool != seen]
    for seen in scale:
        for pool in scale:
            if pool != seen and straddles(table.X[seen] / table.X[pool]):
                out.append({"seen": seen, "pool": pool, "mode": "tokens"})
    return out


def _group_trend(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> float | None:
    """Median within-group Spearman correlation (None when x is constant everywhere)."""
    rhos = []
    for g in np.unique(groups):
        m = groups == g
        if len(np.unique(x[m])) < 3:
            continue
        rho = spearmanr(x[m], y[m]).statistic
        if np.isfinite(rho):
            rhos.append(rho)
    return float(np.median(rhos)) if rhos else None
