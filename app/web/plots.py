"""What the dashboard's plots show, as plain data: one ``PlotSpec`` per plot, drawn by uPlot in the
page and written out as a table beside it (the plot's text alternative).

Everything here is evaluation and down-sampling, never fitting: a page asks for it in a request.
Down-sampling keeps each series to ``MAX_POINTS`` rows by an even stride over the rows sorted by x,
so a 100,000-row dataset plots as fast as a small one and still shows its whole range.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from agent.expressions import Law
from agent.fitting import predict as predict_rows
from agent.problem import DEFAULT_GROUP, Problem, Table, make_table
from agent.storage import CandidatePoint
from agent.uncertainty import Bootstrap, interval

MAX_POINTS = 2_000   # per series
PLOT_POINTS = 6_000  # per plot, shared among its series (a page's weight grows with what it plots)
MAX_GROUPS = 8       # groups drawn at once; the page offers the others one at a time
EXTEND = 10.0        # a law's curve runs out to this many times the largest axis value
CURVE_POINTS = 120
BAND_LEVEL = 0.9


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float | None]
    style: str = "points"  # or "line", or "band" (an interval's edge, drawn dashed)
    key: str = ""  # series with one key share a colour (a group's splits and its law's curve)


@dataclass
class PlotSpec:
    title: str
    x_label: str
    y_label: str
    log_x: bool
    log_y: bool
    series: list[Series] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def table(self, max_rows: int = 200) -> tuple[list[str], list[list[str]], int]:
        """(header, rows, total rows): the plot's points as a table, long format, at most ``max_rows``."""
        rows = [[s.label, _fmt(x), _fmt(y)] for s in self.series for x, y in zip(s.x, s.y)]
        return ["series", self.x_label, self.y_label], rows[:max_rows], len(rows)


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.6g}"


def _finite_list(values: np.ndarray) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in np.asarray(values, dtype=float)]


def _share(n_series: int) -> int:
    return max(100, min(MAX_POINTS, PLOT_POINTS // max(n_series, 1)))


def _thin(order: np.ndarray, limit: int = MAX_POINTS) -> np.ndarray:
    """At most ``limit`` of these row indices, evenly spread (the first and last kept)."""
    if len(order) <= limit:
        return order
    return order[np.unique(np.linspace(0, len(order) - 1, limit).round().astype(int))]


def _log_ok(values: np.ndarray) -> bool:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return bool(len(values) and np.all(values > 0) and values.max() / values.min() >= 10)


def groups_of(df: pd.DataFrame, group: str | None) -> list[str]:
    if not group or group not in df.columns:
        return [DEFAULT_GROUP]
    return sorted(df[group].astype(str).unique().tolist())


def _rows_of(df: pd.DataFrame, group: str | None, name: str) -> pd.DataFrame:
    return df if not group or group not in df.columns else df[df[group].astype(str) == name]


def dataset_plot(df: pd.DataFrame, target: str, x: str, group: str | None,
                 groups: Sequence[str] | None = None) -> PlotSpec:
    """The target against one input, a series per group."""
    chosen = list(groups) if groups is not None else groups_of(df, group)[:MAX_GROUPS]
    spec = PlotSpec(f"{target} against {x}", x, target, _log_ok(df[x]), _log_ok(df[target]))
    for name in chosen:
        part = _rows_of(df, group, name)
        xs, ys = part[x].to_numpy(float), part[target].to_numpy(float)
        keep = _thin(np.argsort(xs, kind="stable"), _share(len(chosen)))
        spec.series.append(Series(name, _finite_list(xs[keep]), _finite_list(ys[keep]), key=name))
    return spec


def law_plots(law: Law, constants: dict[str, dict[str, float]], problem: Problem,
              rows: dict[str, pd.DataFrame], axis: str, target: str,
              groups: Sequence[str], replicates: Bootstrap | None = None) -> tuple[PlotSpec, PlotSpec]:
    """(data with the law's curve, residuals): ``rows`` maps a split's name (fit, validation, test)
    to its rows.  Per group the curve runs along ``axis`` from the smallest value to ``EXTEND`` times
    the largest, the other inputs held at the largest run's: of the rows furthest along the axis,
    the one whose other inputs are largest (the frontier a user extrapolates from).  With the run's
    stored ``replicates``, a 90 % confidence band runs beside the curve."""
    every = pd.concat(list(rows.values()), ignore_index=True)
    positive = bool(np.all(every[axis].to_numpy(float) > 0))  # the curve spans 10x at least: log when it can
    data = PlotSpec(f"{target} against {axis}, and the law out to {EXTEND:g}x", axis, target,
                    positive, _log_ok(every[target]))
    residuals = PlotSpec(f"relative residual against {axis}", axis, f"(predicted - {target}) / |{target}|",
                         data.log_x, False)
    for name in groups:
        if name not in constants:
            continue
        for split, part in rows.items():
            part = _rows_of(part, problem.group, name)
            if not len(part):
                continue
            keep = _thin(np.argsort(part[axis].to_numpy(float), kind="stable"), _share(len(groups) * len(rows)))
            part = part.iloc[keep]
            xs, ys = part[axis].to_numpy(float), part[target].to_numpy(float)
            label = f"{name}: {split}" if len(groups) > 1 else split
            data.series.append(Series(label, _finite_list(xs), _finite_list(ys), key=name))
            pred = _predict(law, constants, problem, part, name, target)
            residuals.series.append(Series(label, _finite_list(xs), _finite_list((pred - ys) / np.abs(ys)),
                                           key=name))
        curve = _curve(law, constants, problem, _rows_of(every, problem.group, name), axis, target, name)
        if curve is not None:
            points, ys, held = curve
            xs = _finite_list(points[axis].to_numpy(float))
            prefix = f"{name}: " if len(groups) > 1 else ""
            data.series.append(Series(f"{prefix}law", xs, ys, style="line", key=name))
            if replicates is not None:
                table = make_table(points, Problem(problem.inputs, problem.targets), require_targets=False)
                table = Table(table.X, table.y, np.full(len(table), name, dtype=object))
                lo, hi = interval(law, table, replicates, BAND_LEVEL, "confidence")
                j = list(law.targets).index(target)
                data.series.append(Series(f"{prefix}{BAND_LEVEL:.0%} band, low", xs, _finite_list(lo[:, j]),
                                          style="band", key=name))
                data.series.append(Series(f"{prefix}{BAND_LEVEL:.0%} band, high", xs, _finite_list(hi[:, j]),
                                          style="band", key=name))
            if held:
                data.note = f"curves at {held}"
    return data, residuals


def _predict(law: Law, constants, problem: Problem, part: pd.DataFrame, name: str, target: str) -> np.ndarray:
    table = make_table(part, Problem(problem.inputs, problem.targets), require_targets=False)
    with np.errstate(all="ignore"):
        values = predict_rows(law, table, constants, np.full(len(table), name, dtype=object))
    return values[:, list(law.targets).index(target)]


def _curve(law: Law, constants, problem: Problem, part: pd.DataFrame, axis: str, target: str, name: str):
    if not len(part):
        return None
    xs = part[axis].to_numpy(float)
    lo, hi = float(np.nanmin(xs)), float(np.nanmax(xs)) * EXTEND
    grid = np.geomspace(lo, hi, CURVE_POINTS) if lo > 0 else np.linspace(lo, hi, CURVE_POINTS)
    others = [c for c in problem.inputs if c != axis]
    frontier = part[xs == np.nanmax(xs)].sort_values(others, ascending=False) if others else part
    largest = frontier.iloc[0]
    points = pd.DataFrame({c: np.full(CURVE_POINTS, largest[c]) for c in problem.inputs})
    points[axis] = grid
    pred = _predict(law, constants, problem, points, name, target)
    held = ", ".join(f"{c} = {float(largest[c]):.3g}" for c in others)
    return points, _finite_list(pred), held


def pareto_plot(points: Sequence[CandidatePoint]) -> PlotSpec:
    """Validation error (1 - R²) against complexity: every candidate, and the front of the best."""
    ok = [p for p in points if p.status == "ok" and p.r2 is not None and np.isfinite(p.r2)]
    spec = PlotSpec("error against complexity", "complexity (nodes)", "validation 1 - R²", False, True)
    if not ok:
        return spec
    x = np.array([p.complexity for p in ok], dtype=float)
    err = np.maximum(1.0 - np.array([p.r2 for p in ok], dtype=float), 1e-12)
    keep = _thin(np.argsort(x, kind="stable"))
    spec.series.append(Series("candidates", _finite_list(x[keep]), _finite_list(err[keep]), key="candidates"))
    front_x, front_y, best = [], [], np.inf
    for c in np.unique(x):
        e = float(err[x == c].min())
        if e < best:
            best = e
            front_x.append(float(c))
            front_y.append(e)
    spec.series.append(Series("Pareto front", front_x, front_y, style="line", key="front"))
    return spec


def progress_plot(points: Sequence[CandidatePoint]) -> PlotSpec:
    """The best validation score so far against candidates evaluated, overall and per proposer."""
    spec = PlotSpec("best score against candidates evaluated", "candidates evaluated", "best validation score",
                    False, False)
    if not points:
        return spec
    proposers = sorted({p.proposer for p in points})
    scores = np.array([p.score if p.score is not None else -np.inf for p in points], dtype=float)
    index = np.arange(1, len(points) + 1, dtype=float)
    keep = _thin(np.arange(len(points)))
    for label, mask in [("all", np.ones(len(points), bool))] + [
            (name, np.array([p.proposer == name for p in points])) for name in proposers]:
        best = np.maximum.accumulate(np.where(mask, scores, -np.inf))
        spec.series.append(Series(label, _finite_list(index[keep]), _finite_list(best[keep]), style="line",
                                  key=label))
    return spec
