"""Which run to do next: candidate runs ranked by how much they would narrow the prediction a team
cares about, per unit of cost.

The uncertainty is an ensemble: the law's replicates (parameter uncertainty: the bootstrap's refits
or the delta method's draws) and, when given, other laws that fit nearly as well (form
uncertainty: the search's close finalists), each with its constants.  For a candidate run at ``x``
and a target point ``t`` in the same group, one more observation at ``x`` with noise variance
``s2`` narrows the variance of the prediction at ``t`` by (the linear-Gaussian update, as an
ensemble Kalman filter makes it)

    reduction(x, t) = Cov(f(t), f(x))**2 / (Var(f(x)) + s2)

where ``f`` is the ensemble's prediction (its log for a positive target, where the fit lives).
Candidates are ranked by the summed reduction over the target points divided by their cost
(6·N·D by default: training FLOPs).  A run that narrows nothing (its prediction is already sure, or
it does not co-vary with the target) scores zero whatever its cost.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from agent.errors import DataError
from agent.expressions import Law
from agent.fitting import predict
from agent.problem import Problem, Table, make_table
from agent.uncertainty import Bootstrap, Member


@dataclass(frozen=True)
class Suggestion:
    index: int              # row of the candidate table
    score: float            # variance reduction per unit cost
    reduction: float        # share of the target predictions' variance removed (0..1)
    cost: float
    explanation: str


def ensemble(law: Law, replicates: Bootstrap, others: Sequence[Member] = ()) -> list[Member]:
    """The law's replicates (parameter uncertainty) and ``others`` (form uncertainty) as one ensemble;
    each other form is repeated as often as there are replicates, so that every form weighs the same."""
    return [Member(law, r) for r in replicates.replicates] + [m for m in others for _ in replicates.replicates]


def suggest(members: Sequence[Member], candidates: Table, targets: Table, costs: np.ndarray, *,
            noise: Sequence[float], log_space: Sequence[bool], describe: Callable[[int], str] | None = None,
            top: int = 10) -> list[Suggestion]:
    """Rank candidate runs (rows of ``candidates``) for narrowing the predictions at ``targets``.

    ``noise``: per target column, the variance of one run's residual (in log space where
    ``log_space``); ``costs``: one positive cost per candidate."""
    if len(members) < 3:
        raise DataError("ranking runs needs an ensemble of at least 3 laws or replicates")
    costs = np.asarray(costs, dtype=float)
    if costs.shape != (len(candidates),) or not np.all(np.isfinite(costs)) or np.any(costs <= 0):
        raise DataError("every candidate run needs a positive, finite cost")
    at_x = _ensemble_predictions(members, candidates, log_space)   # (members, candidates, targets)
    at_t = _ensemble_predictions(members, targets, log_space)      # (members, target points, targets)
    same_group = candidates.groups[:, None] == targets.groups[None, :]  # (candidates, target points)
    dof = len(members) - 1
    total = np.zeros(len(candidates))
    prior = 0.0
    for j, s2 in enumerate(noise):
        x, t = _centred(at_x[:, :, j]), _centred(at_t[:, :, j])
        cov = np.where(same_group, (x.T @ t) / dof, 0.0)        # Cov(f(x), f(t)): (candidates, target points)
        var_x = np.sum(x * x, axis=0) / dof
        total += np.sum(cov ** 2, axis=1) / (var_x + max(float(s2), 1e-12))
        prior += float(np.sum(t * t) / dof)
    reduction = total / prior if prior > 0 else np.zeros_like(total)
    score = reduction / costs
    order = np.argsort(-score, kind="stable")[:top]
    describe = describe or (lambda i: f"candidate {i}")
    return [Suggestion(int(i), float(score[i]), float(reduction[i]), float(costs[i]),
                       f"{describe(int(i))}: narrows the target predictions' variance by {reduction[i]:.1%} "
                       f"for cost {costs[i]:.3g} ({reduction[i] / costs[i] * costs.min():.2%} per cheapest-run cost)")
            for i in order]


def noise_of(replicates: Bootstrap) -> list[float]:
    """Per target, the variance of one run's residual (log residuals for positive targets)."""
    return [float(np.var(np.asarray(r))) if len(r) > 1 else 0.0 for r in replicates.residuals]


def _ensemble_predictions(members: Sequence[Member], points: Table, log_space: Sequence[bool]) -> np.ndarray:
    out = np.full((len(members), len(points), len(log_space)), np.nan)
    first: dict[int, int] = {}  # a form repeated to weigh as much as the replicates is evaluated once
    for m, member in enumerate(members):
        if id(member) in first:
            out[m] = out[first[id(member)]]
            continue
        first[id(member)] = m
        rows = np.flatnonzero(np.isin(points.groups, list(member.constants)))
        if not len(rows):
            continue
        with np.errstate(all="ignore"):
            values = predict(member.law, points.take(rows), member.constants, points.groups[rows])
            for j, log in enumerate(log_space):
                out[m, rows, j] = np.log(values[:, j]) if log else values[:, j]
    return out


def _centred(values: np.ndarray) -> np.ndarray:
    """Deviations from the ensemble mean; members with no finite prediction count as no deviation."""
    mean = np.nanmean(values, axis=0) if np.any(np.isfinite(values)) else np.zeros(values.shape[1])
    dev = values - mean
    return np.where(np.isfinite(dev), dev, 0.0)


def _numbers(candidates: pd.DataFrame, column: str) -> np.ndarray:
    """A column of the candidate runs as floats; a value that is not a number is named (a missing one
    is NaN, refused with the costs)."""
    values = pd.to_numeric(candidates[column], errors="coerce")
    bad = values.isna() & candidates[column].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"candidate run {row + 1}: {column!r} is not a number ({candidates[column].iloc[row]!r})")
    return values.to_numpy(float)


def rank_runs(law: Law, replicates: Bootstrap, candidates: pd.DataFrame, targets: pd.DataFrame, *,
              group: str | None = None, cost_inputs: Sequence[str] = (), cost_factor: float = 6.0,
              top: int = 10, others: Sequence[Member] = ()) -> list[Suggestion]:
    """:func:`suggest` over tables of points: each candidate's cost is its ``cost`` column when it has
    one, else ``cost_factor`` times the product of ``cost_inputs`` (6·N·D: training FLOPs), else 1.
    Points name their group in ``group`` (a law with one group needs none)."""
    if not len(candidates) or not len(targets):
        raise DataError("give at least one candidate run and one target point")
    if "cost" in candidates.columns:
        costs = _numbers(candidates, "cost")
    elif cost_inputs:
        missing = [c for c in cost_inputs if c not in candidates.columns]
        if missing:
            raise DataError(f"the cost needs column(s) {', '.join(missing)} in every candidate run")
        costs = cost_factor * np.prod([_numbers(candidates, c) for c in cost_inputs], axis=0)
    else:
        costs = np.ones(len(candidates))
    groups = sorted(replicates.replicates[0])

    def table(points: pd.DataFrame) -> Table:
        t = make_table(points, Problem(law.inputs, law.targets, group=group if group in points else None),
                       require_targets=False)
        if group in points:
            return t
        if len(groups) > 1:
            raise DataError(f"the law has constants for {len(groups)} groups: give each point its {group or 'group'}")
        return Table(t.X, t.y, np.full(len(t), groups[0], dtype=object))

    def describe(i: int) -> str:
        row = candidates.iloc[i]
        return ", ".join(f"{c}={row[c]:.3g}" if isinstance(row[c], (int, float, np.number)) else f"{c}={row[c]}"
                         for c in [*law.inputs, *([group] if group in candidates else [])])

    return suggest(ensemble(law, replicates, others), table(candidates), table(targets), costs,
                   noise=noise_of(replicates), log_space=replicates.log_space, describe=describe, top=top)
