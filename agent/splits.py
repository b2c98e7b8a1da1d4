"""Fit / validate splits carved from the training rows.  The test split never enters here.

Along an extrapolation axis, validation is the tail: the rows furthest along the
axis, per group, as whole axis levels (ties stay together).  Selection uses
several nested folds (rolling origin): fold k fits on everything below cut k
and validates on the rows from cut k up.  A law that extrapolates well from
every origin is preferred over one that happens to fit the last tail.

Without an axis (mixtures and similar designs), or with too few levels on it
for a tail (three or fewer: see ``_window``), validation is k-fold over the
distinct input settings: the same setting in different groups lands in the same
fold, so a fold really holds out unseen settings.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fold:
    fit: np.ndarray       # row indices
    validate: np.ndarray  # row indices
    ordered: bool = True  # a rolling-origin tail (fold 0 nearest the data); False: one of k exchangeable folds


def tail_folds(axis: np.ndarray, groups: np.ndarray, *, n_folds: int = 3,
               tail_fraction: float = 0.2, min_fit: int = 3) -> list[Fold]:
    """Rolling-origin folds along ``axis``, nearest tail first.

    Fold 0 validates on the last ``tail_fraction`` of each group's axis levels
    and fits on everything below.  Each further fold moves the origin back
    (by a tenth of the levels, at least one) with the same horizon, so every
    fold asks the same question - extrapolate h levels ahead - from a different
    origin, and a law must answer it consistently.
    """
    axis = np.asarray(axis, dtype=float)
    groups = np.asarray(groups, dtype=object)
    folds = []
    for k in range(n_folds):
        fit_rows, val_rows = [], []
        for g in dict.fromkeys(groups.tolist()):
            rows = np.flatnonzero(groups == g)
            window = _window(axis[rows], k, tail_fraction, min_fit)
            if window is None:
                if k == 0:
                    fit_rows.append(rows)
                continue
            lo, hi = window
            values = axis[rows]
            fit_rows.append(rows[values < lo])
            val_rows.append(rows[(values >= lo) & (values < hi)])
        fit = np.sort(np.concatenate(fit_rows)) if fit_rows else np.array([], int)
        val = np.sort(np.concatenate(val_rows)) if val_rows else np.array([], int)
        if len(val) and len(fit):
            folds.append(Fold(fit, val))
    return _dedupe(folds)


def _window(values: np.ndarray, k: int, frac: float, min_fit: int, min_fit_levels: int = 2,
            min_first_fit_levels: int = 3):
    """[lo, hi) axis bounds of fold k's validation levels, or None if the fold is impossible.

    The fit part keeps at least ``min_fit_levels`` levels: with a single level the
    law's dependence on the axis cannot be fitted at all.  The nearest fold (k = 0,
    weight 1, the stand-in for the final law) keeps ``min_first_fit_levels``: the
    literature's laws spend three constants on the axis (a floor, a scale, an
    exponent), so on two levels they pass through any two points and the
    extrapolation to the third measures how ill-posed the fit was, not the law.
    On the synthetic suite's 3-level designs the true form's one fold scored an
    NMSE of 4, 1e27 or non-finite; a design whose nearest fold cannot keep three
    levels validates on k-fold over settings instead (``make_folds``).  Earlier
    origins weigh 1/4 and 1/9 and may fit on two: requiring three there too won
    the same on the suite and lost 3 of 12 grids in the allocation benchmark
    (README, "How selection constants are chosen").
    """
    levels = np.unique(values)
    horizon = max(1, int(round(len(levels) * frac)))
    step = max(1, int(round(len(levels) * 0.1)))
    end = len(levels) - k * step          # exclusive index of the window's last level
    start = end - horizon
    need = min_first_fit_levels if k == 0 else min_fit_levels
    if start < need or np.sum(values < levels[start]) < min_fit:
        return None
    hi = levels[end] if end < len(levels) else np.inf
    return float(levels[start]), float(hi)


def kfold_by_setting(X: dict[str, np.ndarray], inputs, *, n_folds: int = 5, seed: int = 0) -> list[Fold]:
    """K-fold over distinct input settings (shared across groups)."""
    keys = np.array([hash(tuple(np.round(X[c][i], 12) for c in inputs)) for i in range(len(X[inputs[0]]))])
    unique = np.unique(keys)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(unique))
    n_folds = max(2, min(n_folds, len(unique)))
    assignment = dict(zip(unique[order], np.arange(len(unique)) % n_folds))
    fold_of_row = np.array([assignment[k] for k in keys])
    return [Fold(np.flatnonzero(fold_of_row != f), np.flatnonzero(fold_of_row == f), ordered=False)
            for f in range(n_folds)]


def make_folds(axis: np.ndarray | None, groups: np.ndarray, X, inputs, *, seed: int = 0,
               n_folds: int = 3) -> list[Fold]:
    """The folds a search validates on: rolling-origin tails, or k-fold without an axis."""
    if axis is None:
        return kfold_by_setting(X, inputs, n_folds=max(n_folds, 3), seed=seed)
    folds = tail_folds(axis, groups, n_folds=n_folds)
    if not folds:
        return kfold_by_setting(X, inputs, n_folds=5, seed=seed)
    return folds


def _dedupe(folds: list[Fold]) -> list[Fold]:
    seen, out = set(), []
    for f in folds:
        key = f.validate.tobytes()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
