"""How sure a law's predictions are: a bootstrap over runs, and intervals from it.

Practitioners decide with intervals (the Chinchilla replication and Porian et
al. bootstrap their fits).  Runs are resampled with replacement *within each
group* (a group keeps its size, so every group still has constants), and each
replicate is refitted warm-started from the point estimate with a light fit:
the replicates explore the basin the law was found in, not other basins.

A run is a row, unless the table names each row's run (``Problem.run``): the
checkpoints of one training run share its seed's offset and its schedule's
bend, so resampling them one by one treats one draw as many.  Then the
bootstrap resamples whole runs, and the delta method sums the Jacobian's scores
per run (the cluster-robust sandwich covariance).  On the synthetic suite's
checkpoint sweeps (25 instances, the true form refitted) 90 % confidence
intervals held the true curve 20 % of the time with rows resampled and 70 %
with runs resampled (BENCHMARKS.md).

Two intervals are kept apart:

* **confidence**: where the law's curve lies, given the finite runs (the
  spread of the replicates' predictions);
* **prediction**: where a new run would land, adding the run-to-run noise
  (each replicate's prediction times a residual drawn from the fit's own
  residuals: log residuals for positive targets, raw ones otherwise).

Few runs make both too narrow, and two textbook small-sample corrections undo that
(``agent.linearised``): the replicates' spread widens by ``sqrt(m/(m - lost)) t/z`` (the expanded
percentile interval), and a new run's noise is drawn from leverage-adjusted residuals (by run
blocks where runs are named), not from residuals the fit has pulled towards itself.

Form uncertainty joins both when other laws are given (the search's close finalists, which the
validation tail could not tell apart): each form gets the chosen law's parameter spread around
its own prediction, and the forms are pooled with equal weight.  Beyond the data, where the forms
disagree, the interval widens by their disagreement.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from agent.errors import DataError, FitError
from agent.expressions import Law
from agent.fitting import FitOptions, fit_law, predict
from agent.linearised import Linearised, adjusted_residuals, covariance, linearise, spread_factor, widen
from agent.problem import Table

BOOTSTRAP_FIT = FitOptions(starts=2, local=1, max_nfev=150, max_work=20_000, time_limit=10.0)
KINDS = ("confidence", "prediction")


@dataclass(frozen=True)
class Member:
    """One law of an ensemble and its constants per group (a close finalist, a replicate)."""

    law: Law
    constants: Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class Bootstrap:
    """Constants per replicate (each a mapping group -> name -> value) and the fit's residuals.

    ``dof`` and ``deflation`` per group say how far the replicates' spread must widen for an interval
    (``agent.linearised.spread_factor``): a group without them is taken as it is (records stored
    before they existed)."""

    replicates: tuple[dict[str, dict[str, float]], ...]
    residuals: tuple[tuple[float, ...], ...]   # per target: log residuals (positive) or raw ones
    log_space: tuple[bool, ...]                # per target
    dof: Mapping[str, float] = field(default_factory=dict)
    deflation: Mapping[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"replicates": list(self.replicates), "residuals": [list(r) for r in self.residuals],
                "log_space": list(self.log_space), "dof": dict(self.dof), "deflation": dict(self.deflation)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "Bootstrap":
        return cls(tuple(d["replicates"]), tuple(tuple(map(float, r)) for r in d["residuals"]),
                   tuple(bool(b) for b in d["log_space"]),
                   {str(g): float(v) for g, v in (d.get("dof") or {}).items()},
                   {str(g): float(v) for g, v in (d.get("deflation") or {}).items()})

    def spread(self, group: str, level: float) -> float:
        """The factor that widens this group's replicates around their centre at ``level``."""
        if group not in self.dof:
            return 1.0
        return spread_factor(self.dof[group], self.deflation.get(group, 1.0), level)


def bootstrap(law: Law, table: Table, constants: Mapping[str, Mapping[str, float]], *, n: int = 100,
              seed: int = 0, options: FitOptions = BOOTSTRAP_FIT, loss: str = "auto") -> Bootstrap:
    """``n`` refits of the law on runs resampled within groups, warm-started from ``constants``.

    ``loss``: the loss the constants were fitted with (a law's ``fit_loss``): every refit uses it too.
    """
    if n < 2:
        raise DataError("a bootstrap needs at least 2 replicates")
    if loss != "auto":
        options = replace(options, loss=loss)
    rng = np.random.default_rng(seed)
    by_group = [_units(table, np.flatnonzero(table.groups == g)) for g in table.group_names]
    replicates = []
    for b in range(n):
        rows = np.concatenate([_draw(units, rng) for units in by_group])
        try:
            fitted = fit_law(law, table.take(rows), seed=seed + b, options=options, warm=constants)
        except FitError:
            continue  # a resample no fit can describe (e.g. all one level): it carries no information
        replicates.append(fitted.constants)
    if len(replicates) < 2:
        raise FitError("the bootstrap could not refit the law on resampled runs")
    pred = predict(law, table, constants, table.groups)
    log_space = _log_space(table, pred, loss)
    dof, deflation = {}, {}
    for group, units in zip(table.group_names, by_group):
        if group in constants:
            # resampled units understate the variance by the degrees of freedom the fit took from them:
            # runs, G/(G-1) (the cluster bootstrap); rows, m/(m-k) (as s^2 divides by m - k)
            m = len(units) if table.runs is not None else len(units) * table.y.shape[1]
            lost = 1 if table.runs is not None else len(constants[group])
            dof[group] = float(max(m - lost, 1))
            deflation[group] = m / dof[group]
    noise = _noise(table, pred, log_space, _linearised(law, table, constants, log_space, strict=False))
    return Bootstrap(tuple(replicates), noise, log_space, dof, deflation)


def _units(table: Table, rows: np.ndarray) -> np.ndarray | list[np.ndarray]:
    """The resampling units among ``rows``: the rows themselves, or a list of each run's rows."""
    if table.runs is None:
        return rows
    labels, index = np.unique(table.runs[rows], return_inverse=True)
    return [rows[index == k] for k in range(len(labels))]


def _draw(units: np.ndarray | list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """One resample with replacement, as many units as there are (a group keeps its number of runs)."""
    if isinstance(units, np.ndarray):
        return rng.choice(units, size=len(units), replace=True)
    return np.concatenate([units[k] for k in rng.choice(len(units), size=len(units), replace=True)])


def laplace(law: Law, table: Table, constants: Mapping[str, Mapping[str, float]], *, n: int = 200,
            seed: int = 0, loss: str = "auto") -> Bootstrap:
    """The fast alternative to :func:`bootstrap`: replicates drawn from the fit's linearised
    (delta-method) covariance, ``s^2 (J^T J)^-1`` per group, in seconds where refits take minutes.

    ``J`` is the Jacobian of the fitted quantity (the log of the prediction for positive targets,
    as the log losses fit them; the raw prediction for ``loss`` lsq) in the constants, by central
    differences; ``s^2`` the residual variance over the group's degrees of freedom.  It assumes the
    fit's basin is nearly quadratic: where the bootstrap and it disagree, trust the bootstrap.

    With runs named (``table.runs``), the covariance is the cluster-robust sandwich
    ``B^-1 M B^-1`` with ``B = J^T J`` and ``M`` the sum over runs of each run's score
    times its transpose, in its small-sample form for few runs (CR3, ``agent.linearised``).
    """
    if n < 2:
        raise DataError("the delta method needs at least 2 draws")
    rng = np.random.default_rng(seed)
    pred = predict(law, table, constants, table.groups)
    log_space = _log_space(table, pred, loss)
    draws: dict[str, list[dict[str, float]]] = {}
    dof: dict[str, float] = {}
    linearised = _linearised(law, table, constants, log_space, strict=True)
    for group, lin in linearised.items():
        if lin.dof <= 0:
            raise FitError(f"group {group!r} has {lin.residual.size // table.y.shape[1]} runs for {len(lin.names)} "
                           "constants: too few for the delta method (use the bootstrap)")
        cov = covariance(lin)
        # a symmetric square root that tolerates a singular covariance (a constant the data do not pin)
        vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
        root = vecs * np.sqrt(np.clip(vals, 0.0, None))
        samples = lin.center + rng.standard_normal((n, len(lin.names))) @ root.T
        draws[group] = [dict(zip(lin.names, map(float, row))) for row in samples]
        # the covariance already divides by the degrees of freedom (CR3: by runs): only the t quantile
        dof[group] = float(lin.dof if lin.runs is None else len(np.unique(lin.runs)) - 1)
    replicates = tuple({g: draws[g][b] for g in draws} for b in range(n))
    return Bootstrap(replicates, _noise(table, pred, log_space, linearised), log_space, dof, {g: 1.0 for g in dof})


def _linearised(law: Law, table: Table, constants: Mapping[str, Mapping[str, float]], log_space,
                strict: bool) -> dict[str, Linearised]:
    """Each group's linearised fit; a group that cannot be linearised raises (``strict``) or is left out."""
    out = {}
    for group in table.group_names:
        if group not in constants:
            continue
        rows = table.take(np.flatnonzero(table.groups == group))
        try:
            out[group] = linearise(law, rows, constants[group], group, log_space)
        except FitError:
            if strict:
                raise
    return out


def _noise(table: Table, pred: np.ndarray, log_space,
           linearised: Mapping[str, Linearised]) -> tuple[tuple[float, ...], ...]:
    """Per target, the residuals a new run's noise is drawn from: leverage-adjusted (``agent.linearised``)
    in each group the law could be linearised in, raw elsewhere."""
    with np.errstate(all="ignore"):
        raw = np.column_stack([(np.log(table.y[:, j]) - np.log(pred[:, j])) if log_space[j]
                               else (table.y[:, j] - pred[:, j]) for j in range(table.y.shape[1])])
    for group, lin in linearised.items():
        if lin.dof > 0:
            raw[table.groups == group] = adjusted_residuals(lin).reshape(-1, table.y.shape[1])
    return tuple(tuple(map(float, raw[:, j])) for j in range(raw.shape[1]))


def _log_space(table: Table, pred: np.ndarray, loss: str) -> tuple[bool, ...]:
    """Per target: are the residuals (and the noise drawn from them) relative ones?  Yes where the fit
    was on log residuals (every loss but lsq) and targets and predictions are positive."""
    return tuple(bool(loss != "lsq" and np.all(table.y[:, j] > 0) and np.all(pred[:, j] > 0))
                 for j in range(table.y.shape[1]))


def interval(law: Law, points: Table, boot: Bootstrap, level: float = 0.9, kind: str = "confidence",
             seed: int = 0, others: Sequence[Member] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) arrays (n_points, n_targets) at ``level``, ``kind`` confidence or prediction;
    ``others``: other forms (form uncertainty), pooled with the law as the module says."""
    if not 0 < level < 1:
        raise DataError(f"the interval level must be between 0 and 1, not {level}")
    if kind not in KINDS:
        raise DataError(f"unknown interval kind {kind!r}; choose one of {', '.join(KINDS)}")
    draws = _replicate_predictions(law, points, boot)
    spread = {g: boot.spread(g, level) for g in set(points.groups.tolist())}
    factors = np.array([spread[g] for g in points.groups.tolist()])
    draws = widen(draws, factors[None, :, None], np.array(boot.log_space, dtype=bool))
    if others:
        draws = _with_forms(draws, points, boot.log_space, others)
    if kind == "prediction":
        rng = np.random.default_rng(seed)
        for j, res in enumerate(boot.residuals):
            noise = rng.choice(np.asarray(res), size=draws.shape[:2], replace=True)
            draws[:, :, j] = draws[:, :, j] * np.exp(noise) if boot.log_space[j] else draws[:, :, j] + noise
    tail = (1 - level) / 2
    with np.errstate(all="ignore"):
        lo, hi = np.nanquantile(draws, [tail, 1 - tail], axis=0)
    return lo, hi


def constant_intervals(boot: Bootstrap, level: float = 0.9) -> dict[str, dict[str, list[float]]]:
    """Per group and constant: [lo, hi] over the replicates (exponents, offsets, scales alike)."""
    tail = (1 - level) / 2
    out: dict[str, dict[str, list[float]]] = {}
    for group in boot.replicates[0]:
        names = boot.replicates[0][group]
        out[group] = {}
        for name in names:
            values = np.array([r[group][name] for r in boot.replicates if group in r and name in r[group]])
            values = values[np.isfinite(values)]
            if len(values):
                values = widen(values, boot.spread(group, level), bool(np.all(values > 0)))
                out[group][name] = [float(np.quantile(values, tail)), float(np.quantile(values, 1 - tail))]
    return out


def _replicate_predictions(law: Law, points: Table, boot: Bootstrap) -> np.ndarray:
    """(replicates, points, targets); NaN where a replicate has no constants for a point's group."""
    out = np.full((len(boot.replicates), len(points), len(law.targets)), np.nan)
    for b, constants in enumerate(boot.replicates):
        rows = np.flatnonzero(np.isin(points.groups, list(constants)))
        if len(rows):
            with np.errstate(all="ignore"):
                out[b, rows] = predict(law, points.take(rows), constants, points.groups[rows])
    return out


def _with_forms(draws: np.ndarray, points: Table, log_space: Sequence[bool], others: Sequence[Member]) -> np.ndarray:
    """The replicates' spread around their median, moved onto each other form's prediction; all forms stacked."""
    log = np.array(log_space, dtype=bool)
    with np.errstate(all="ignore"):
        space = np.where(log, np.log(draws), draws)
        centre = np.nanmedian(space, axis=0) if np.any(np.isfinite(space)) else np.full(draws.shape[1:], np.nan)
        deviation = space - centre
        stacks = [draws]
        for member in others:
            rows = np.flatnonzero(np.isin(points.groups, list(member.constants)))
            own = np.full(draws.shape[1:], np.nan)
            if len(rows):
                own[rows] = predict(member.law, points.take(rows), member.constants, points.groups[rows])
            own_space = np.where(log, np.log(own), own)
            moved = own_space + deviation
            stacks.append(np.where(log, np.exp(moved), moved))
    return np.concatenate(stacks, axis=0)
