"""A fitted law linearised at its constants, and the small-sample corrections built on it.

Near its optimum a least-squares fit behaves like a linear regression on the Jacobian ``J`` of
the fitted quantity (log predictions for positive targets) in the constants.  Three textbook
small-sample facts follow, and scaling-law fits live in small samples (five model sizes, six
training runs):

* residuals are shrunk by the fit's own pull: a row's residual has variance ``s^2 (1 - h)``, ``h``
  its leverage, and a run's residuals ``s^2 (I - H_rr)``.  A new run's noise is drawn from the
  *leverage-adjusted* residuals (Davison & Hinkley 1997, eq. 6.9; by run blocks where runs are
  named), not the raw ones, which on a five-constant law fitted to six runs hide most of the
  run-to-run spread;
* the covariance of the constants: ``s^2 (J^T J)^-1``, or the cluster-robust sandwich by runs;
* an interval from ``d`` degrees of freedom takes a Student-t quantile, not a normal one, and a
  bootstrap's spread understates the variance by ``(m - d_lost)/m``: the *expanded* percentile
  interval (Hesterberg 2015) widens the replicates' spread by
  ``sqrt(m/(m - lost)) * t_{dof}/z`` (``spread_factor``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Mapping

import numpy as np
from scipy import stats

from agent.errors import FitError
from agent.expressions import Law
from agent.fitting import predict
from agent.problem import Table


@dataclass(frozen=True)
class Linearised:
    """One group's fit at its constants: residuals (row-major, one per row and target) and their Jacobian."""

    names: tuple[str, ...]
    center: np.ndarray
    jac: np.ndarray        # (residuals, constants)
    residual: np.ndarray   # fitted quantity of the data minus that of the law
    runs: np.ndarray | None  # one run label per residual, or None: every row its own run

    @property
    def dof(self) -> int:
        return self.residual.size - len(self.names)


def fitted_space(values: np.ndarray, log_space) -> np.ndarray:
    """The quantity the fit compared, row-major: logs for the targets fitted in log space."""
    with np.errstate(all="ignore"):
        return np.column_stack([np.log(values[:, j]) if log_space[j] else values[:, j]
                                for j in range(values.shape[1])]).ravel()


def linearise(law: Law, rows: Table, constants: Mapping[str, float], group: str, log_space) -> Linearised:
    """Central differences of the fitted quantity in each constant; FitError where not finite."""
    names = tuple(constants)
    center = np.array([constants[k] for k in names], dtype=float)
    residual = fitted_space(rows.y, log_space) - fitted_space(predict(law, rows, {group: constants}, rows.groups),
                                                              log_space)
    jac = np.empty((residual.size, len(names)))
    for k in range(len(names)):
        h = 1e-6 * max(abs(center[k]), 1e-3)
        up, down = center.copy(), center.copy()
        up[k] += h
        down[k] -= h
        f_up = fitted_space(predict(law, rows, {group: dict(zip(names, up))}, rows.groups), log_space)
        f_down = fitted_space(predict(law, rows, {group: dict(zip(names, down))}, rows.groups), log_space)
        jac[:, k] = (f_up - f_down) / (2 * h)
    if not (np.all(np.isfinite(jac)) and np.all(np.isfinite(residual))):
        raise FitError(f"the law is not differentiable at its constants in group {group!r}: use the bootstrap")
    runs = None if rows.runs is None else np.repeat(rows.runs, rows.y.shape[1])
    return Linearised(names, center, jac, residual, runs)


def covariance(lin: Linearised) -> np.ndarray:
    """``s^2 (J^T J)^-1``, or with runs the cluster-robust sandwich.

    With a handful of runs the plain sandwich (CR1) is far too sure of itself: a run's residuals
    are shrunk by its own pull on the fit.  CR3 undoes that pull, each run's residuals scaled by
    ``(I - J_r (J^T J)^-1 J_r^T)^-1`` (close to a jackknife over runs), written with the Woodbury
    identity so that a run of thousands of checkpoints costs a k x k solve.  On the suite's checkpoint
    sweeps (25 instances) its 90 % CIs held the true curve 48 % of the time against 34 % for CR1
    (BENCHMARKS.md): better, and still short of the bootstrap over runs.
    """
    jac, residual = lin.jac, lin.residual
    information = jac.T @ jac
    bread = np.linalg.pinv(information)
    if lin.runs is None:
        return float(residual @ residual) / lin.dof * bread
    labels, index = np.unique(lin.runs, return_inverse=True)
    if len(labels) < 2:
        raise FitError("the delta method needs at least 2 runs in each group (use the bootstrap)")
    scores = np.zeros((len(labels), jac.shape[1]))
    for k in range(len(labels)):
        j, e = jac[index == k], residual[index == k]
        # (I - J_r B J_r^T)^-1 e = e + J_r (J^T J - J_r^T J_r)^-1 J_r^T e: the other runs' information
        others = information - j.T @ j
        unpulled = e + j @ np.linalg.lstsq(others, j.T @ e, rcond=None)[0]
        scores[k] = j.T @ unpulled
    return (len(labels) - 1) / len(labels) * bread @ (scores.T @ scores) @ bread


MAX_LEVERAGE = 0.99  # a row (or run) the fit passes through carries no residual to rescale


def adjusted_residuals(lin: Linearised) -> np.ndarray:
    """The residuals with the fit's pull taken out: ``(I - H_rr)^(-1/2) e_r`` per run block (per row
    without runs), so that each has the noise's own variance.  ``H_rr = U S^2 U^T`` from the thin SVD
    of the run's rows of ``J (J^T J)^(-1/2)``, so a block costs O(rows k^2)."""
    information = lin.jac.T @ lin.jac
    vals, vecs = np.linalg.eigh((information + information.T) / 2)
    keep = vals > vals.max() * 1e-12 if vals.size and vals.max() > 0 else np.zeros_like(vals, dtype=bool)
    whitened = lin.jac @ (vecs[:, keep] / np.sqrt(vals[keep]))  # J B^(-1/2): its rows give the leverages
    if lin.runs is None:  # each residual its own block: e / sqrt(1 - h)
        leverage = np.clip(np.sum(whitened ** 2, axis=1), 0.0, MAX_LEVERAGE)
        return lin.residual / np.sqrt(1 - leverage)
    out = lin.residual.copy()
    for label in np.unique(lin.runs):
        rows = np.flatnonzero(lin.runs == label)
        u, s, _ = np.linalg.svd(whitened[rows], full_matrices=False)
        s2 = np.clip(s ** 2, 0.0, MAX_LEVERAGE)
        e = lin.residual[rows]
        out[rows] = e + u @ ((1 / np.sqrt(1 - s2) - 1) * (u.T @ e))
    return out


def spread_factor(dof: float, deflation: float, level: float) -> float:
    """How much to widen replicates' spread around their centre for an interval at ``level``:
    ``sqrt(deflation) * t_dof / z`` (Hesterberg's expanded percentile interval).  ``deflation``: how
    much the replicates understate the variance (m/(m - lost) for a bootstrap; 1 for draws whose
    covariance already counts the degrees of freedom); ``dof`` infinite: no t correction."""
    q = 1 - (1 - level) / 2
    t = stats.t.ppf(q, max(dof, 1.0)) if np.isfinite(dof) else stats.norm.ppf(q)
    return float(np.sqrt(max(deflation, 1.0)) * t / stats.norm.ppf(q))


def widen(values: np.ndarray, factor, log) -> np.ndarray:
    """``values`` (replicates first) spread ``factor`` times as far from their median, in log space
    where ``log`` (both broadcast against ``values``): the widening ``spread_factor`` gives."""
    if np.all(np.asarray(factor) == 1.0):
        return values
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point no replicate predicts stays NaN
        # log space only where every replicate is positive: a degenerate draw below zero stays in the sample
        log = np.asarray(log, dtype=bool) & np.all((values > 0) | np.isnan(values), axis=0)
        space = np.where(log, np.log(values), values)
        centre = np.nanmedian(space, axis=0)
        space = centre + factor * (space - centre)
        return np.where(log, np.exp(space), space)
