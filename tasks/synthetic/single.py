"""Laws in one scale input x (model size, data, compute, width): sweeps along x, repeated seeds.

power_offset: L = E + A*x^-a, or with a shifted input A*(x + s)^-a (fine-tuning data laws).
broken_power: a smoothly broken power law E + A*x^-c0*(1 + x/xb)^-c1 (Caballero et al. 2022).
saturating: an accuracy-like target, logistic in log x or a 1 - exp decay towards a ceiling.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from tasks.synthetic import designs
from tasks.synthetic.common import Draw, per_group, reference, resolve, round4, scaled
from tasks.synthetic.record import Draft, Noise


def power_offset(draw: Draw, *, names=None, role: str = "N", x_range=(1e6, 1e9), n_levels: int = 7,
                 seeds: int = 3, shifted: bool = False, groups: Sequence[str] | None = None,
                 noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    frame, ratio = _sweep(draw, x_range, n_levels, seeds)
    x, y = cols[role], cols["y"]
    ref = reference(*x_range)
    varying = {"L_inf": draw.u(1.0, 2.5), "A_x": draw.u(0.3, 1.0), "alpha": draw.u(0.2, 0.6)}
    if shifted:
        varying["s_0"] = draw.lu(0.03, 0.3)
    sx = scaled(x, ref)
    term = f"({sx} + s_0)" if shifted else sx
    truth = (f"{y} = L_inf + A_x*{term}**(-alpha)",)

    def mean(X, k):
        base = X[x] / ref + (k["s_0"] if shifted else 0.0)
        return k["L_inf"] + k["A_x"] * base ** -k["alpha"]

    what = "power law with an offset, E + A*(x + s)^-a" if shifted else "power law with an offset, E + A*x^-a"
    return _draft("power_offset", f"{what} in {x}", frame, cols, role, groups, draw, {}, varying, truth,
                  mean, noise, ratio)


def broken_power(draw: Draw, *, names=None, role: str = "C", x_range=(1e17, 1e22), n_points: int = 24,
                 seeds: int = 1, groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    frame, ratio = _sweep(draw, x_range, n_points, seeds)
    x, y = cols[role], cols["y"]
    ref = reference(*x_range)
    lo, hi_train = np.log(x_range[0] / ref), np.log(x_range[1] / ratio / ref)
    # the break in the upper half of the training range (in log), where the data show both slopes;
    # A_x sets the reducible loss at the largest training x, so the test still moves
    c_0, c_1, x_b = draw.u(0.05, 0.15), draw.u(0.2, 0.4), round4(np.exp(lo + draw.u(0.45, 0.8) * (hi_train - lo)))
    top = np.exp(hi_train)
    shared = {"c_0": c_0, "c_1": c_1, "x_b": x_b}
    varying = {"L_inf": draw.u(1.2, 2.0), "A_x": round4(draw.u(0.3, 0.6) / (top ** -c_0 * (1 + top / x_b) ** -c_1))}
    sx = scaled(x, ref)
    truth = (f"{y} = L_inf + A_x*{sx}**(-c_0)*(1 + {sx}/x_b)**(-c_1)",)

    def mean(X, k):
        u = X[x] / ref
        return k["L_inf"] + k["A_x"] * u ** -k["c_0"] * (1 + u / k["x_b"]) ** -k["c_1"]

    return _draft("broken_power", f"smoothly broken power law in {x}, the break inside the training range",
                  frame, cols, role, groups, draw, shared, varying, truth, mean, noise, ratio)


def saturating(draw: Draw, *, names=None, role: str = "C", kind: str = "logistic", x_range=(1e18, 1e24),
               n_levels: int = 13, seeds: int = 1, groups: Sequence[str] | None = None,
               noise: Noise = Noise(0.01)) -> Draft:
    cols = resolve({"y": "accuracy", **(names or {})})
    frame, ratio = _sweep(draw, x_range, n_levels, seeds)
    x, y = cols[role], cols["y"]
    ref = reference(*x_range)
    sx = scaled(x, ref)
    train_hi = np.log(x_range[1] / ratio / ref)
    if kind == "logistic":  # midpoint in the upper part of the training range: the turn is visible
        shared = {"k_s": draw.u(0.5, 1.0)}
        varying = {"acc_lo": draw.u(0.22, 0.3), "acc_hi": draw.u(0.75, 0.92),
                   "m_s": round4(draw.u(0.3, 0.9) * train_hi)}
        truth = (f"{y} = acc_lo + (acc_hi - acc_lo)/(1 + exp(-k_s*(log({sx}) - m_s)))",)

        def mean(X, k):
            return k["acc_lo"] + (k["acc_hi"] - k["acc_lo"]) / (1 + np.exp(-k["k_s"] * (np.log(X[x] / ref) - k["m_s"])))
        what = "logistic in log x between a floor and a ceiling"
    elif kind == "decay":
        shared = {"kappa": draw.u(0.3, 0.7)}
        # the scale x_0 near the largest x: still rising at the test rows, not yet saturated
        varying = {"top": draw.u(0.7, 0.9), "base": draw.u(0.05, 0.2), "x_0": round4(draw.u(0.3, 1.0) * x_range[1] / ref)}
        truth = (f"{y} = top - (top - base)*exp(-({sx}/x_0)**kappa)",)

        def mean(X, k):
            return k["top"] - (k["top"] - k["base"]) * np.exp(-((X[x] / ref) / k["x_0"]) ** k["kappa"])
        what = "1 - exp decay towards a ceiling"
    else:
        raise ValueError(f"unknown saturating kind {kind!r}")
    return _draft("saturating", f"accuracy-like target, {what}, in {x}", frame, cols, role, groups, draw,
                  shared, varying, truth, mean, noise, ratio)


def _sweep(draw: Draw, x_range, n_levels: int, seeds: int) -> tuple[pd.DataFrame, float]:
    """Levels of x, each run ``seeds`` times; the test holds the top two or more levels, 2.5-10x beyond.

    A single test level would leave the test variance to noise alone, and R² meaningless.
    """
    values = designs.levels(*x_range, n_levels)
    frame = designs.repeat_seeds(pd.DataFrame({"x": values}), seeds)
    spacing = values[1] / values[0]
    counts = [k for k in range(2, n_levels // 2) if 2.5 <= spacing ** k <= 10.0]
    if not counts:
        raise ValueError(f"levels {spacing:.2f}x apart cannot put two test levels 2.5-10x beyond the training range")
    return frame, 0.99 * spacing ** int(draw.rng.choice(counts))


def _draft(family, what, frame, cols, role, groups, draw, shared, varying, truth, mean, noise, ratio) -> Draft:
    constants = per_group(groups, shared, varying, draw)
    frame = frame.rename(columns={"x": cols[role]})
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    grouped = f"; {len(groups)} groups ({cols['group']})" if groups else ""
    return Draft(family=family, description=what + grouped, design=frame, inputs=(cols[role],),
                 targets=(cols["y"],), truth=truth, constants=constants, mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=(cols[role],), test_ratio=ratio)
