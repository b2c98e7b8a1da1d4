"""Experimental designs of scaling studies, and the train/test split along the axis.

Designs return the input columns under role names (``N``, ``D``, ``lr``, ...);
the family builders rename them to the problem's column names.  ``_run`` marks
rows that are checkpoints of one run; ``_progress`` where a checkpoint sits in it.
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pandas as pd


def levels(lo: float, hi: float, n: int) -> np.ndarray:
    """n values spaced evenly in log between lo and hi, rounded to 3 significant digits."""
    return np.array([float(f"{v:.3g}") for v in np.geomspace(lo, hi, n)])


def grid(**axes: Sequence[float]) -> pd.DataFrame:
    """Every combination of the given values (a full factorial design)."""
    names = list(axes)
    rows = list(itertools.product(*(axes[k] for k in names)))
    return pd.DataFrame(rows, columns=names, dtype=float)


def isoflop(budgets: Sequence[float], per_budget: int, spread: float = 8.0,
            tokens_per_param: float = 20.0) -> pd.DataFrame:
    """IsoFLOP profiles: for each compute budget C, model sizes around the compute-optimal one, D = C/(6N)."""
    rows = []
    for c in budgets:
        n_opt = np.sqrt(c / (6.0 * tokens_per_param))
        for n in np.geomspace(n_opt / spread, n_opt * spread, per_budget):
            n = float(f"{n:.3g}")
            rows.append({"N": n, "D": float(f"{c / (6.0 * n):.4g}"), "C": c})
    return pd.DataFrame(rows)


def checkpoints(sizes: Sequence[float], final_tokens: Sequence[float], per_run: int,
                first_fraction: float = 0.05) -> pd.DataFrame:
    """Fixed-N sweeps over D: each run of size N is evaluated at checkpoints up to its final token count."""
    rows = []
    for run, (n, d_final) in enumerate(zip(sizes, final_tokens)):
        positions = np.geomspace(first_fraction, 1.0, per_run)
        for k, frac in enumerate(positions):
            rows.append({"N": float(n), "D": float(f"{d_final * frac:.4g}"), "_run": run,
                         "_progress": k / (per_run - 1) if per_run > 1 else 1.0})
    return pd.DataFrame(rows)


def simplex(n: int, parts: int, rng: np.random.Generator, concentration: float = 1.0,
            decimals: int = 3) -> pd.DataFrame:
    """Mixture proportions: the pure and half-half mixtures plus Dirichlet draws; rows sum to 1."""
    fixed = [np.eye(parts)[i] for i in range(parts)]
    fixed += [(np.eye(parts)[i] + np.eye(parts)[j]) / 2 for i, j in itertools.combinations(range(parts), 2)]
    draws = rng.dirichlet(np.full(parts, concentration), size=max(n - len(fixed), 0))
    p = np.round(np.vstack([*fixed, *draws])[:n], decimals)
    p[:, -1] = np.round(1.0 - p[:, :-1].sum(axis=1), decimals)  # exact sums after rounding
    p = np.clip(p, 0.0, 1.0)
    return pd.DataFrame(p, columns=[f"p{i + 1}" for i in range(parts)]).drop_duplicates().reset_index(drop=True)


def with_groups(design: pd.DataFrame, column: str, labels: Sequence[str]) -> pd.DataFrame:
    """The same design repeated for every group label; runs stay distinct across groups."""
    parts = []
    for i, label in enumerate(labels):
        part = design.copy()
        part[column] = label
        if "_run" in part:
            part["_run"] = part["_run"] + i * (int(design["_run"].max()) + 1)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def repeat_seeds(design: pd.DataFrame, seeds: int) -> pd.DataFrame:
    """Each setting trained ``seeds`` times: the rows repeat, each repeat its own run."""
    parts = []
    for s in range(seeds):
        part = design.copy()
        part["_run"] = np.arange(len(design)) + s * len(design)
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def axis_position(design: pd.DataFrame, axis: Sequence[str]) -> np.ndarray:
    """Log of the product of the axis columns (positive by construction of every design)."""
    return np.sum([np.log(design[c].to_numpy(dtype=float)) for c in axis], axis=0)


def split_along_axis(design: pd.DataFrame, axis: Sequence[str], ratio: float) -> np.ndarray:
    """Test rows: those within ``ratio``x of the largest axis value; training rows lie below.

    Every test row is beyond the training range, and the largest lies at least
    ``ratio`` times beyond every training row.
    """
    position = axis_position(design, axis)
    is_test = position > position.max() - np.log(ratio) + 1e-9
    if is_test.all() or not is_test.any():
        raise ValueError(f"the design does not extend {ratio}x beyond its training range along {axis}")
    return is_test


def holdout_settings(design: pd.DataFrame, inputs: Sequence[str], share: float,
                     rng: np.random.Generator) -> np.ndarray:
    """Without an axis: hold out a share of the distinct input settings (all their rows) as test."""
    keys = design[list(inputs)].round(12).apply(tuple, axis=1)
    settings = keys.drop_duplicates().to_numpy()
    n_test = max(1, int(round(share * len(settings))))
    chosen = set(rng.choice(len(settings), size=n_test, replace=False).tolist())
    held = {settings[i] for i in chosen}
    return keys.isin(held).to_numpy()
