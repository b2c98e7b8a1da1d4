"""Multi-start constant fitting, per group, with variable projection.

Practice of careful scaling-law fits (Hoffmann et al., Epoch AI's replication,
Porian et al.): many starts (Sobol points), positive scale constants in log
space, constants that enter linearly solved exactly inside the loop, and a
final polish of all constants with the chosen loss.
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from agent.errors import FitError
from agent.expressions import Law
from agent.fitting.structure import Block, analyse, evaluate_basis
from agent.problem import Table

LOSSES = ("lsq", "log", "huber_log", "robust_log")
# One unit of work is one model evaluation; on 2-core x86 machines an evaluation costs about as
# much fixed overhead as 600 rows of arithmetic, so work tracks seconds for small and large data.
ROWS_PER_WORK_UNIT = 600.0
_BAD = 1e3  # residual used where a prediction is not finite: steers the optimiser away


@dataclass(frozen=True)
class FitOptions:
    """How constants are fitted.

    loss: ``lsq`` (raw residuals, scaled per target), ``log`` (residuals of log
    predictions; positive targets only), ``huber_log`` (Huber loss with delta 1e-3
    on log residuals, as in Besiroglu et al.'s Chinchilla replication) or
    ``robust_log`` (the log fit; where one of its residuals stands out, more than
    3.5 noise scales read from their MAD, it is polished again with Huber's loss at
    delta = 1.345 noise scales: the log fit itself under Gaussian noise, and a few
    bad runs no longer pull the law).  ``auto`` uses ``robust_log`` where every target is
    positive and ``lsq`` otherwise.
    """

    loss: str = "auto"
    starts: int = 0           # Sobol points per block; 0 = 16 per nonlinear constant, 32..256
    local: int = 0            # best starts refined by least squares; 0 = 4 + 2 per nonlinear constant
    max_nfev: int = 300       # function evaluations per local refinement
    max_work: float | None = 80_000.0  # work units per group and block: past it no further local
                              # refinement starts; a budget counted in model evaluations, so the
                              # same seed gives the same constants on a fast or a loaded machine
    time_limit: float = 60.0  # seconds per group: a safety net only (a fit it stops is not reproducible)
    raw_range: tuple[float, float] = (-3.0, 3.0)
    log10_range: tuple[float, float] = (-4.0, 10.0)
    tolerance: float = 1e-8   # ftol/xtol/gtol of each local refinement


@dataclass(frozen=True)
class FitResult:
    constants: dict[str, dict[str, float]]
    loss: float
    seconds: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    work: float = 0.0   # model evaluations (+ rows/600 each): a deterministic measure of effort


def fit_law(law: Law, table: Table, *, seed: int = 0, options: FitOptions = FitOptions(),
            warm: Mapping[str, Mapping[str, float]] | None = None) -> FitResult:
    """Fit the law's constants separately for every group of ``table``.

    ``warm``: constants per group from an earlier fit of the same law (on other
    rows, or with less effort), tried as one more start beside the seeded ones.
    Laws with many nonlinear constants have several basins; a refit that starts
    where the search already found a good one cannot end in a worse one by bad luck.
    """
    with warnings.catch_warnings():
        # candidate laws overflow and divide by zero all the time; non-finite
        # residuals are handled explicitly, so numpy/scipy chatter is noise
        warnings.simplefilter("ignore", RuntimeWarning)
        return _fit_law(law, table, seed, options, warm or {})


def resolve_loss(loss: str, y: np.ndarray) -> str:
    """The loss ``auto`` stands for on these targets: ``robust_log`` if all are positive, else ``lsq``."""
    if loss == "auto":
        return "robust_log" if np.all(np.asarray(y) > 0) else "lsq"
    return loss


def _fit_law(law: Law, table: Table, seed: int, options: FitOptions, warm) -> FitResult:
    if options.loss not in (*LOSSES, "auto"):
        raise FitError(f"unknown loss {options.loss!r}; choose one of {', '.join(LOSSES)}, auto")
    start = time.perf_counter()
    loss = resolve_loss(options.loss, table.y)
    if loss != "lsq" and np.any(table.y <= 0):
        raise FitError(f"loss {loss!r} needs positive targets; use loss 'lsq'")
    blocks = analyse(law)
    constants: dict[str, dict[str, float]] = {}
    total = 0.0
    work = [0.0]
    for g_index, group in enumerate(table.group_names):
        rows = np.flatnonzero(table.groups == group)
        sub = table.take(rows)
        values: dict[str, float] = {}
        deadline = time.perf_counter() + options.time_limit
        for b_index, block in enumerate(blocks):
            rng_seed = [seed, g_index, b_index]
            fitted, objective = _fit_block(law, block, sub, loss, options, rng_seed, deadline, work,
                                           warm.get(group))
            values.update(fitted)
            total += objective
        constants[group] = {c: values[c] for c in law.constants}
    return FitResult(constants=constants, loss=total / max(len(constants), 1),
                     seconds=time.perf_counter() - start, work=work[0])


def predict(law: Law, X, constants: dict[str, dict[str, float]], groups) -> np.ndarray:
    """Predict rows (n_rows, n_targets); each row uses the constants of its group."""
    X = X.X if isinstance(X, Table) else X
    groups = np.asarray(groups, dtype=object)
    unknown = sorted(set(groups.tolist()) - set(constants))
    if unknown:
        raise FitError(f"no constants for group(s) {', '.join(map(str, unknown[:5]))}")
    per_row = {}
    for c in law.constants:
        lookup = {g: vals[c] for g, vals in constants.items()}
        per_row[c] = np.array([lookup[g] for g in groups], dtype=float)
    return law.evaluate(X, per_row)


# ---------------------------------------------------------------- internals


class _Objective:
    """Residual functions for one block of one group."""

    def __init__(self, law: Law, block: Block, table: Table, loss: str):
        self.law, self.block, self.loss = law, block, loss
        self.X = table.X
        self.y = table.y[:, list(block.target_index)]
        scale = self.y.std(axis=0)
        scale[scale == 0] = 1.0
        self.scale = scale  # raw residuals are scaled per target (lsq, and the projected refinement)
        if loss != "lsq":
            self.log_y = np.log(self.y)
        self.fns = [law.predictor(j) for j in block.target_index]
        self.work = 0.0
        self.delta = 1e-3  # Huber's delta on log residuals (huber_log)
        self.inputs = [table.X[i] for i in law.inputs]

    def predict(self, values: dict[str, float]) -> np.ndarray:
        self.work += 1 + len(self.y) * len(self.fns) / ROWS_PER_WORK_UNIT
        args = [*self.inputs, *(values.get(c, 0.0) for c in self.law.constants)]
        n = len(self.y)
        with np.errstate(all="ignore"):
            return np.column_stack(
                [np.broadcast_to(np.asarray(fn(*args), dtype=float), (n,)) for fn in self.fns]
            )

    def jacobian(self, values: dict[str, float], pred: np.ndarray, names, positive) -> np.ndarray:
        """d residuals / d params, analytically (params are log values for positive constants)."""
        args = [*self.inputs, *(values.get(c, 0.0) for c in self.law.constants)]
        n = len(self.y)
        index = {c: k for k, c in enumerate(self.law.constants)}
        cols = []
        with np.errstate(all="ignore"):
            grads = [self.law.jacobian(j)(*args) for j in self.block.target_index]
            for name, pos in zip(names, positive):
                k = index[name]
                d = np.column_stack([np.broadcast_to(np.asarray(g[k], dtype=float), (n,)) for g in grads])
                if pos:
                    d = d * values[name]
                d = d / self.scale if self.loss == "lsq" else d / pred
                cols.append(d.ravel())
        J = np.column_stack(cols) if cols else np.zeros((n * len(self.fns), 0))
        return np.where(np.isfinite(J), J, 0.0)

    def residuals(self, pred: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            if self.loss == "lsq":
                r = (pred - self.y) / self.scale
            else:
                r = np.log(pred) - self.log_y
        r = np.where(np.isfinite(r), r, _BAD)
        return r.ravel()

    def cost(self, r: np.ndarray) -> float:
        if self.loss == "huber_log":
            a = np.abs(r)
            d = self.delta
            return float(np.mean(np.where(a <= d, 0.5 * a * a, d * (a - 0.5 * d))))
        return float(np.mean(r * r))


def _fit_block(law, block, table, loss, options, rng_seed, deadline, work, warm=None):
    obj = _Objective(law, block, table, "log" if loss == "robust_log" else loss)
    try:
        result = _fit_block_with(obj, block, options, rng_seed, deadline, warm)
        if loss == "robust_log":
            result = _robust_polish(obj, block, result, options, deadline)
        return result
    finally:
        work[0] += obj.work


def _fit_block_with(obj, block, options, rng_seed, deadline, warm=None):
    names = block.nonlinear
    to_values, to_params = _transforms(block)

    def varpro(params):
        """Values of all constants: nonlinear from params, linear solved exactly."""
        values = to_values(params)
        if block.linear:
            values.update(_solve_linear(block, obj, values))
        return values

    if not names:
        values = varpro(np.empty(0))
        return _finite_or_fail(obj, _polish(obj, block, values, options, deadline))

    n_starts = options.starts or int(np.clip(16 * len(names), 32, 256))
    n_local = options.local or 4 + 2 * len(names)
    sampler = qmc.Sobol(d=len(names), scramble=True, seed=np.random.default_rng(rng_seed))
    unit = sampler.random_base2(max(1, int(np.ceil(np.log2(max(2, n_starts))))))
    starts = [_default_start(block)] + _warm_start(block, warm, to_params) + [_from_unit(block, u, options)
                                                                           for u in unit]
    screened = []
    for p in starts:
        values = varpro(p)
        r = obj.residuals(obj.predict(values))
        screened.append((float(np.mean(r * r)), p))
    screened.sort(key=lambda t: t[0])

    best = None
    for _, p0 in screened[:n_local]:
        spent = options.max_work is not None and obj.work > options.max_work
        if best is not None and (spent or time.perf_counter() > deadline):
            break
        p = _refine_nonlinear(obj, block, varpro, p0, options)
        values, objective = _polish(obj, block, varpro(p), options, deadline)
        if best is None or objective < best[1]:
            best = (values, objective)
    if best is None or not np.isfinite(best[1]):
        raise FitError("no start gave finite predictions")
    return _finite_or_fail(obj, best)


HUBER_TUNING = 1.345  # Huber's constant: 95 % efficiency under Gaussian noise
OUTLIER_Z = 3.5  # Iglewicz and Hoaglin's cut on the modified z-score |r| / MAD-scale


def _robust_polish(obj, block, result, options, deadline):
    """Polish a log fit again with Huber's loss where a residual stands out from the rest.

    A run that diverged or used a bad setting sits 5-30 % above the law; least squares bends the
    law towards it.  The noise scale comes from the median absolute residual (an outlier cannot
    inflate it); a residual beyond 3.5 scales flags an outlier, and then Huber's loss with delta
    1.345 scales (95 % efficient under Gaussian noise) weighs rows past delta linearly.  Without a
    flagged row the log fit is kept as it is, so clean data fit exactly as before.
    """
    values, _ = result
    r = obj.residuals(obj.predict(values))
    n, p = len(r), len(block.constants)
    if n <= p:  # an exact fit: no residuals to learn the noise from
        return result
    # the MAD's robust noise scale, widened for the constants the residuals were fitted with
    sigma = 1.4826 * float(np.median(np.abs(r))) * np.sqrt(n / (n - p))
    if not np.isfinite(sigma) or sigma <= 0 or np.max(np.abs(r)) <= OUTLIER_Z * sigma:
        return result  # no row stands out: the log fit stays
    obj.loss, obj.delta = "huber_log", HUBER_TUNING * sigma
    return _finite_or_fail(obj, _polish(obj, block, values, options, deadline))


def _finite_or_fail(obj, result):
    """A fit whose predictions on its own rows are not all finite rejects the law."""
    values, _ = result
    pred = obj.predict(values)
    if not np.all(np.isfinite(pred)):
        raise FitError(f"no start gave finite predictions on every fit row: {_non_finite(pred)}")
    return result


def _non_finite(pred: np.ndarray) -> str:
    """What went wrong, for the user: overflow (inf) or undefined values (NaN), on how many rows."""
    inf, nan = np.isinf(pred).any(axis=1), np.isnan(pred).any(axis=1)
    if inf.sum() >= nan.sum():
        return f"overflow (infinite predictions) on {int(inf.sum())} of {len(pred)} rows"
    return (f"undefined predictions (NaN: a log or fractional power of a negative number, or 0/0) "
            f"on {int(nan.sum())} of {len(pred)} rows")


def _refine_nonlinear(obj, block, varpro, p0, options):
    """Least squares on the projected residual (linear constants re-solved each call)."""
    def resid(p):
        return obj.residuals(obj.predict(varpro(p))) if obj.loss == "lsq" else _raw_resid(obj, varpro(p))

    try:
        sol = least_squares(resid, p0, method="trf", max_nfev=options.max_nfev, x_scale="jac",
                            **_tolerances(options))
        return sol.x
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return p0


def _raw_resid(obj, values):
    """Variable projection solves linear constants in raw space; refine there too."""
    pred = obj.predict(values)
    with np.errstate(all="ignore"):
        r = (pred - obj.y) / obj.scale
    return np.where(np.isfinite(r), r, _BAD).ravel()


def _polish(obj, block, values, options, deadline):
    """Refine every constant of the block jointly with the chosen loss."""
    to_values, to_params = _transforms(block, include_linear=True)
    p0 = to_params(values)

    names = block.constants
    positive = [c in block.positive for c in names]
    cache = {}

    def resid(p):
        values = to_values(p)
        pred = obj.predict(values)
        cache["p"], cache["values"], cache["pred"] = p.copy(), values, pred
        return obj.residuals(pred)

    def jac(p):
        if "p" not in cache or not np.array_equal(cache["p"], p):
            resid(p)
        return obj.jacobian(cache["values"], cache["pred"], names, positive)

    start_cost = obj.cost(resid(p0))
    if time.perf_counter() < deadline and len(p0):
        kw = {"loss": "huber", "f_scale": obj.delta} if obj.loss == "huber_log" else {}
        try:
            sol = least_squares(resid, p0, jac=jac, method="trf", max_nfev=options.max_nfev,
                                x_scale="jac", **_tolerances(options), **kw)
            cost = obj.cost(resid(sol.x))
            if np.isfinite(cost) and cost <= start_cost:
                return to_values(sol.x), cost
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            pass
    return values, start_cost


def _tolerances(options: FitOptions) -> dict:
    t = options.tolerance
    return {"ftol": t, "xtol": t, "gtol": t}


def _solve_linear(block, obj, values):
    obj.work += 1 + len(obj.y) * (1 + len(block.linear)) / ROWS_PER_WORK_UNIT
    nonlin = [values[c] for c in block.nonlinear]
    B = evaluate_basis(block, obj.X, obj.law.inputs, nonlin)
    if not np.all(np.isfinite(B)):
        return {c: 0.0 for c in block.linear}
    y = obj.y[:, 0] - B[:, 0]
    A = B[:, 1:]
    try:
        coef, *_ = np.linalg.lstsq(A, y, rcond=1e-12)
    except np.linalg.LinAlgError:
        return {c: 0.0 for c in block.linear}
    return dict(zip(block.linear, map(float, coef)))


def _transforms(block: Block, include_linear: bool = False):
    names = block.constants if include_linear else block.nonlinear
    positive = [c in block.positive for c in names]

    def to_values(p):
        return {c: (float(np.exp(v)) if pos else float(v)) for c, v, pos in zip(names, p, positive)}

    def to_params(values):
        return np.array([np.log(max(values[c], 1e-300)) if pos else values[c]
                         for c, pos in zip(names, positive)], dtype=float)

    return to_values, to_params


def _warm_start(block: Block, warm, to_params) -> list[np.ndarray]:
    """The earlier fit's nonlinear constants as a start, where it has usable values for all."""
    if not warm or any(c not in warm or not np.isfinite(warm[c]) or (c in block.positive and warm[c] <= 0)
                       for c in block.nonlinear):
        return []
    return [to_params(warm)]


def _default_start(block: Block) -> np.ndarray:
    # 0 in log space (=1) for scales; 0.5 for raw nonlinear constants (typical exponent)
    return np.array([0.0 if c in block.positive else 0.5 for c in block.nonlinear])


def _from_unit(block: Block, u: np.ndarray, options: FitOptions) -> np.ndarray:
    lo_r, hi_r = options.raw_range
    lo_l, hi_l = options.log10_range
    return np.array([
        (lo_l + v * (hi_l - lo_l)) * np.log(10) if c in block.positive else lo_r + v * (hi_r - lo_r)
        for c, v in zip(block.nonlinear, u)
    ])
