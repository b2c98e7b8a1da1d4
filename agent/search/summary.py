"""A compact, JSON-able description of a dataset that proposers build forms from.

Only generic facts: ranges, positivity, whether a column spans decades (so it
enters laws through powers and logs), a reference scale (see ``units``: every
input enters laws as ``(x/reference)``, targets are fitted over theirs), and
monotone trends.
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
    }


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
