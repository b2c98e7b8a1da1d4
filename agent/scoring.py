"""Metrics exactly as SLDBench's evaluator computes them.

Rows of all groups are concatenated; each metric is computed per target
column and then averaged over the columns.  Variance uses ddof 0.

- NMSE = MSE / Var(y)
- NMAE = MAE / mean(|y - mean(y)|)
- R²   = 1 - NMSE
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

R2_FLOOR = -1.0


@dataclass(frozen=True)
class Scores:
    r2: float
    nmse: float
    nmae: float
    n_rows: int

    def to_dict(self) -> dict:
        return asdict(self)


def score(y_true: np.ndarray, y_pred: np.ndarray) -> Scores:
    """Score predictions; both arrays are (n_rows,) or (n_rows, n_targets)."""
    y_true = _as_2d(y_true)
    y_pred = _as_2d(y_pred)
    if y_true.shape != y_pred.shape:
        raise ValueError(f"shape mismatch: truth {y_true.shape} vs prediction {y_pred.shape}")
    if len(y_true) == 0:
        raise ValueError("cannot score zero rows")
    if not np.all(np.isfinite(y_pred)):
        return Scores(r2=float("-inf"), nmse=float("inf"), nmae=float("inf"), n_rows=len(y_true))
    with np.errstate(all="ignore"):  # a wild prediction overflows to inf: a valid, terrible score
        err = y_true - y_pred
        mse = np.mean(err**2, axis=0)
        mae = np.mean(np.abs(err), axis=0)
        var = np.var(y_true, axis=0)
        mad = np.mean(np.abs(y_true - y_true.mean(axis=0)), axis=0)
        nmse = float(np.mean(mse / var))
        nmae = float(np.mean(mae / mad))
    return Scores(r2=1.0 - nmse, nmse=nmse, nmae=nmae, n_rows=len(y_true))


def floored(r2: float, floor: float = R2_FLOOR) -> float:
    """The benchmark floors each task's R² before averaging (a NaN counts as the floor)."""
    return floor if not np.isfinite(r2) else max(r2, floor)


def benchmark_mean(r2_values: Iterable[float]) -> tuple[float, float]:
    """(raw mean, floored mean) over tasks."""
    values = list(r2_values)
    raw = float(np.mean(values)) if values else float("nan")
    return raw, float(np.mean([floored(v) for v in values])) if values else float("nan")


def _as_2d(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    return a.reshape(-1, 1) if a.ndim == 1 else a
