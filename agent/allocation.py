"""Compute-optimal allocation: for a budget C, the size and data that minimise a law's predicted loss.

Along the budget line C = k·N·D (k = 6 by default: the forward and backward
passes of a dense transformer) the loss is a function of N alone; it is
minimised in log N over the range the user allows (a bounded 1-D search, so
a law whose optimum runs off the range says so instead of extrapolating to
absurd sizes).  With a bootstrap, each replicate's optimum gives an interval
on N*, D* and the loss at the optimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from agent.errors import DataError
from agent.expressions import Law
from agent.fitting import predict
from agent.problem import Table
from agent.linearised import widen
from agent.uncertainty import Bootstrap

FLOPS_PER_PARAM_TOKEN = 6.0
EDGE = 1e-3  # relative distance in log N from a bound at which an optimum counts as on the edge


@dataclass(frozen=True)
class Allocation:
    budget: float
    size: float          # N*
    data: float          # D* = C / (k N*)
    loss: float          # the target at the optimum (the first target)
    on_edge: bool        # the optimum lies on the allowed range's edge: widen it or distrust it
    interval: dict = field(default_factory=dict)  # {"size": [lo, hi], "data": [...], "loss": [...]}

    def to_dict(self) -> dict:
        return {"budget": self.budget, "size": self.size, "data": self.data, "loss": self.loss,
                "on_edge": self.on_edge, **({"interval": self.interval} if self.interval else {})}


def optimal_allocation(law: Law, constants: Mapping[str, Mapping[str, float]], *, size: str, data: str,
                       budget: float, size_range: tuple[float, float], group: str | None = None,
                       fixed: Mapping[str, float] | None = None, flops_per: float = FLOPS_PER_PARAM_TOKEN,
                       boot: Bootstrap | None = None, level: float = 0.9) -> Allocation:
    """The optimum along C = flops_per·N·D; ``fixed`` values for the law's other inputs."""
    _check(law, size, data, budget, size_range, fixed or {})
    group = group or next(iter(constants))
    if group not in constants:
        raise DataError(f"the law has no constants for group {group!r} (groups: {', '.join(constants)})")
    n, loss, edge = _minimise(law, constants, size, data, budget, size_range, group, fixed or {}, flops_per)
    out = Allocation(budget, n, budget / (flops_per * n), loss, edge)
    if boot is None:
        return out
    draws = []
    for replicate in boot.replicates:
        if group in replicate:
            nb, lb = _grid_minimum(law, replicate, size, data, budget, size_range, group, fixed or {}, flops_per)
            if np.isfinite(lb):
                draws.append((nb, budget / (flops_per * nb), lb))
    if len(draws) >= 2:
        tail = (1 - level) / 2
        arr = np.array(draws)
        arr = widen(arr, boot.spread(group, level), np.all(arr > 0, axis=0))
        q = np.quantile(arr, [tail, 1 - tail], axis=0)
        out = Allocation(out.budget, out.size, out.data, out.loss, out.on_edge,
                         {k: [float(q[0, i]), float(q[1, i])] for i, k in enumerate(("size", "data", "loss"))})
    return out


def axis_caveat(axis: Sequence[str] | None, size: str, data: str) -> str | None:
    """A warning when the law was chosen along an axis that leaves the size or the data column out.

    An allocation moves along a budget line, size and data together, up to far beyond the data; a law
    validated along size alone was never checked where data grows.  On the allocation benchmark
    (``scripts/allocation_bench.py``, N x D grids) searching along both put N* within 25 % of the
    truth on 10 of 12 grids, along size alone on 7 and 8 of 12.  None when both are on the axis, or
    the axis is not known (a law file from before it was saved).
    """
    if axis is None:
        return None
    missing = [c for c in (size, data) if c not in axis]
    if not missing:
        return None
    along = ", ".join(axis) if axis else "no axis"
    return (f"the law was chosen on extrapolation along {along}, not along {' and '.join(missing)}; an "
            f"allocation moves along compute ({size} and {data} together): for this answer, search with both "
            f"on the axis (sld's default when both span a decade)")


def allocation_curve(law: Law, constants, budgets: Sequence[float], **kw) -> list[Allocation]:
    """N*(C), D*(C) and the loss at the optimum over a range of budgets."""
    return [optimal_allocation(law, constants, budget=float(c), **kw) for c in budgets]


def isoflop_profile(law: Law, constants, *, size: str, data: str, budget: float, size_range: tuple[float, float],
                    group: str | None = None, fixed: Mapping[str, float] | None = None,
                    flops_per: float = FLOPS_PER_PARAM_TOKEN, points: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """(sizes, predicted loss) along one budget line: the fitted IsoFLOP view, a check of the optimum
    by eye (its minimum is where ``optimal_allocation`` puts N*), not an estimator of its own."""
    _check(law, size, data, budget, size_range, fixed or {})
    group = group or next(iter(constants))
    sizes = np.geomspace(size_range[0], size_range[1], points)
    return sizes, _losses(law, constants, size, data, budget, sizes, group, fixed or {}, flops_per)


def _losses(law, constants, size, data, budget, sizes, group, fixed, flops_per) -> np.ndarray:
    """The law's first target along the budget line at ``sizes``, in one evaluation; inf where not finite."""
    n = len(sizes)
    X = {name: np.full(n, fixed.get(name, np.nan), dtype=float) for name in law.inputs}
    X[size], X[data] = np.asarray(sizes, float), budget / (flops_per * np.asarray(sizes, float))
    groups = np.full(n, group, dtype=object)
    with np.errstate(all="ignore"):
        values = predict(law, Table(X, np.full((n, len(law.targets)), np.nan), groups), constants, groups)[:, 0]
    return np.where(np.isfinite(values), values, np.inf)


def _grid_minimum(law, constants, size, data, budget, size_range, group, fixed, flops_per, points=257):
    """The optimum on a fine log grid, refined by the parabola through the best point and its neighbours:
    one evaluation per replicate (an interval needs hundreds of them)."""
    logs = np.linspace(np.log(size_range[0]), np.log(size_range[1]), points)
    values = _losses(law, constants, size, data, budget, np.exp(logs), group, fixed, flops_per)
    if not np.any(np.isfinite(values)):
        return float(np.exp(logs[0])), float("nan")
    k = int(np.argmin(values))
    if 0 < k < points - 1 and np.all(np.isfinite(values[k - 1:k + 2])):
        y0, y1, y2 = values[k - 1:k + 2]
        curvature = y0 - 2 * y1 + y2
        if curvature > 0:
            step = logs[1] - logs[0]
            log_n = logs[k] + 0.5 * step * (y0 - y2) / curvature
            return float(np.exp(log_n)), float(values[k])
    return float(np.exp(logs[k])), float(values[k])


def _minimise(law, constants, size, data, budget, size_range, group, fixed, flops_per):
    lo, hi = np.log(size_range[0]), np.log(size_range[1])

    def loss_at(log_n: float) -> float:
        n = np.exp(log_n)
        X = {name: np.array([fixed.get(name, np.nan)], dtype=float) for name in law.inputs}
        X[size], X[data] = np.array([n]), np.array([budget / (flops_per * n)])
        with np.errstate(all="ignore"):
            value = predict(law, Table(X, np.full((1, len(law.targets)), np.nan),
                                       np.array([group], dtype=object)), constants, np.array([group], dtype=object))[0, 0]
        return float(value) if np.isfinite(value) else np.inf

    # a coarse grid first: the bounded search then starts in the right valley of a non-convex curve
    grid = np.linspace(lo, hi, 65)
    values = np.array([loss_at(g) for g in grid])
    if not np.any(np.isfinite(values)):
        return float(np.exp(grid[0])), float("nan"), True
    k = int(np.argmin(values))
    a, b = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    best = minimize_scalar(loss_at, bounds=(a, b), method="bounded", options={"xatol": 1e-6})
    log_n = float(best.x) if best.fun <= values[k] else float(grid[k])
    edge = min(log_n - lo, hi - log_n) <= EDGE * max(hi - lo, 1e-12)
    return float(np.exp(log_n)), float(loss_at(log_n)), bool(edge)


def _check(law: Law, size: str, data: str, budget: float, size_range, fixed) -> None:
    for name, role in ((size, "size"), (data, "data")):
        if name not in law.inputs:
            raise DataError(f"the {role} column {name!r} is not an input of the law ({', '.join(law.inputs)})")
    if size == data:
        raise DataError("the size and data columns must differ")
    missing = [x for x in law.inputs if x not in (size, data) and x not in fixed]
    if missing:
        raise DataError(f"give a value for the law's other input(s): {', '.join(missing)}")
    if not (np.isfinite(budget) and budget > 0):
        raise DataError(f"the compute budget must be a positive number, not {budget}")
    lo, hi = size_range
    if not (0 < lo < hi and np.isfinite(hi)):
        raise DataError(f"the size range must be two positive numbers, low < high (got {lo}, {hi})")
