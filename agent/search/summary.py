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
            # below the one target on every row and reaching into its range (so in its units, not a
            # share or a count below every loss): a loss given as an input (a teacher's) may be its floor
            "floor": len(problem.targets) == 1 and bool(np.all(x < table.y[:, 0])
                                                        and x.max() > table.y[:, 0].min()),
        }
    targets = {}
    for j, name in enumerate(problem.targets):
        y = table.y[:, j]
        trends = {}
        for i in problem.inputs:
            rho = input_trend(table, problem.inputs, i, y)
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


MIN_SLICES = 2  # slices (every other input fixed) with three values or more that make the trend


def input_trend(table: Table, inputs: tuple[str, ...], name: str, y: np.ndarray) -> float | None:
    """How the target moves with one input where every other input is held fixed.

    On a grid, the rows of one group that share every other input's value (a
    slice) show the input's own effect: on an N x D grid the loss falls with
    D at every N, but over all rows D explains little of the loss beside N
    (a rank correlation of about -0.4), which read as an optimum inside the
    range and seeded bowls in the data size.  Per slice (the mean target at
    each value of the input): the rank correlation where the slice's lowest
    and highest values sit at its ends, 0 where one of them lies inside (an
    optimum: a learning rate's bowl whose optimum is near one end still turns,
    though its correlation is strong); the median over slices.  Designs
    without such slices (random settings, one value per row) keep the
    within-group correlation over all rows.
    """
    x = table.X[name]
    others = [table.X[o] for o in inputs if o != name]
    if others:
        keys = np.stack([np.unique(col, return_inverse=True)[1] for col in others], axis=1)
        group_codes = np.unique(table.groups, return_inverse=True)[1]
        slices = np.unique(np.column_stack([group_codes, keys]), axis=0, return_inverse=True)[1].ravel()
        order = np.argsort(slices, kind="stable")
        bounds = np.flatnonzero(np.diff(slices[order])) + 1
        trends = [t for rows in np.split(order, bounds)
                  if len(rows) >= 3 and (t := _slice_trend(x[rows], y[rows])) is not None]
        if len(trends) >= MIN_SLICES:
            return float(np.median(trends))
    return _group_trend(x, y, table.groups)


def _slice_trend(x: np.ndarray, y: np.ndarray) -> float | None:
    """One slice's trend (see ``input_trend``); None with fewer than three values of the input."""
    levels, at = np.unique(x, return_inverse=True)
    if len(levels) < 3:
        return None
    means = np.bincount(at, weights=y) / np.bincount(at)
    ends = (0, len(levels) - 1)
    if int(np.argmin(means)) not in ends or int(np.argmax(means)) not in ends:
        return 0.0
    rho = spearmanr(levels, means).statistic
    return float(rho) if np.isfinite(rho) else None


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


def is_rate(lo, hi, one=1.0):
    """Whether a target whose observed values run from ``lo`` to ``hi`` is a rate (an accuracy, a win
    rate, an error rate: every value in [0, 1]); ``one`` is 1 over the target's reference where the
    values are normalised.  Elementwise for arrays (one entry per target)."""
    return (lo >= 0) & (hi <= one)
