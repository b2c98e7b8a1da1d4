"""Designs over model size N and data D, the axis each implies, and how far the test reaches.

``grid``: a full N x D grid, extrapolating in N.  ``isoflop``: IsoFLOP profiles,
extrapolating in compute (the product N*D).  ``checkpoints``: fixed-N sweeps over
D (each run evaluated along its schedule), extrapolating in N.  With ``n_levels``
4 or 5 the training rows hold only 3-4 levels of the axis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from tasks.synthetic import designs
from tasks.synthetic.common import columns
from tasks.synthetic.record import Draft, Noise


@dataclass(frozen=True)
class NDDesign:
    kind: str
    frame: pd.DataFrame   # role columns N, D (+ _run, _progress)
    axis: tuple[str, ...]  # roles
    test_ratio: float
    n_range: tuple[float, float]
    d_range: tuple[float, float]


def nd_design(kind: str, n_lo: float, n_hi: float, *, n_levels: int = 6, d_per_n: tuple[float, float] = (5, 200),
              d_levels: int = 6, per_run: int = 8, test_levels: int = 1) -> NDDesign:
    """A design whose largest ``test_levels`` axis levels are the test rows (at least 2x beyond)."""
    if kind == "grid":
        sizes = designs.levels(n_lo, n_hi, n_levels)
        n_mid = np.sqrt(n_lo * n_hi)
        data = designs.levels(n_mid * d_per_n[0], n_mid * d_per_n[1], d_levels)
        frame = designs.grid(N=sizes, D=data)
        frame["_run"] = np.arange(len(frame))
        axis, spacing = ("N",), sizes[1] / sizes[0]
    elif kind == "isoflop":
        budgets = designs.levels(6 * n_lo * n_lo * 20, 6 * n_hi * n_hi * 20, n_levels)
        frame = designs.isoflop(budgets, per_budget=per_run, spread=6.0).drop(columns="C")
        frame["_run"] = np.arange(len(frame))
        axis, spacing = ("N", "D"), budgets[1] / budgets[0]
    elif kind == "checkpoints":
        sizes = designs.levels(n_lo, n_hi, n_levels)
        tpp = np.sqrt(d_per_n[0] * d_per_n[1])
        frame = designs.checkpoints(sizes, sizes * tpp, per_run=per_run)
        axis, spacing = ("N",), sizes[1] / sizes[0]
    else:
        raise ValueError(f"unknown N x D design {kind!r}")
    if spacing ** test_levels < 2.0:
        raise ValueError(f"{kind}: levels {spacing:.2f}x apart cannot put the test 2x beyond the training range")
    return NDDesign(kind, frame, axis, 0.99 * spacing ** test_levels,
                    (float(frame.N.min()), float(frame.N.max())), (float(frame.D.min()), float(frame.D.max())))


def crossed_grid(n_range, n_levels: int, d_per_n, d_levels: int, values: Sequence[float]):
    """An N x D grid with every run at every value of a third input ``s`` (N, then D, then s: the grid's
    order); the largest size is the test level."""
    d = nd_design("grid", *n_range, n_levels=n_levels, d_per_n=d_per_n, d_levels=d_levels)
    frame = d.frame.drop(columns="_run").merge(pd.DataFrame({"s": np.asarray(values, dtype=float)}), how="cross")
    frame["_run"] = np.arange(len(frame))
    return d, frame


def crossed_grid_draft(family: str, what: str, cols, d, frame, truth, constants, mean, noise: Noise,
                       groups: Sequence[str] | None) -> Draft:
    """The draft of a ``crossed_grid`` problem: its columns named, groups added, N the axis."""
    frame = frame.rename(columns={"N": cols["N"], "D": cols["D"], "s": cols["s"]})
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    return Draft(family=family, description=what + (f"; {len(groups)} groups ({cols['group']})" if groups else ""),
                 design=frame, inputs=columns(cols, ("N", "D", "s")), targets=(cols["y"],), truth=truth,
                 constants=constants, mean=mean, noise=noise, group=cols["group"] if groups else None,
                 axis=(cols["N"],), test_ratio=d.test_ratio, max_constants=6)
