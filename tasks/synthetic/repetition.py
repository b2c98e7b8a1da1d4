"""Data-constrained training: repeated epochs of U unique tokens are worth less and less.

The effective data D' = U + U*R*(1 - exp(-(D/U - 1)/R)) for D > U (Muennighoff et al.
2023), enters an additive law in N and D'.  Designs: a few unique-data budgets, epochs
from a fraction of one to dozens, a few model sizes.  The input is either the tokens
seen (with the unique tokens) or the epoch count.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic import designs
from tasks.synthetic.common import Draw, per_group, reference, resolve, scaled
from tasks.synthetic.record import Draft, Noise


def data_repetition(draw: Draw, *, names=None, n_range=(1e7, 1e9), n_levels: int = 3,
                    u_range=(1e8, 1e10), u_levels: int = 3, epochs=(0.25, 0.5, 1, 2, 4, 8, 16, 32, 64),
                    use_epochs: bool = False, axis: str = "D", test_levels: int = 1, groups: Sequence[str] | None = None,
                    noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    N, U, y = cols["N"], cols["U"], cols["y"]
    second = cols["epochs"] if use_epochs else cols["D"]
    frame = designs.grid(N=designs.levels(*n_range, n_levels), U=designs.levels(*u_range, u_levels),
                         epochs=np.asarray(epochs, dtype=float))
    frame["D"] = frame["U"] * frame["epochs"]
    frame["_run"] = np.arange(len(frame))
    frame = frame.drop(columns="D" if use_epochs else "epochs")
    nref, dref = reference(*n_range), reference(u_range[0] * min(epochs), u_range[1] * max(epochs))
    shared = {"alpha_n": draw.u(0.28, 0.4), "beta_d": draw.u(0.25, 0.36), "r_star": draw.u(5.0, 25.0)}
    varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.3, 0.9), "B_d": draw.u(0.3, 0.9)}
    if use_epochs:
        helpers = (f"reps = max({second} - 1, 0)",
                   f"D_eff = {U}*min({second}, 1)*(1 + r_star*(1 - exp(-reps/r_star)))")
    else:
        helpers = (f"reps = max({second}/{U} - 1, 0)",
                   f"D_eff = min({second}, {U})*(1 + r_star*(1 - exp(-reps/r_star)))")
    truth = (*helpers, f"{y} = L_inf + A_n*{scaled(N, nref)}**(-alpha_n) + B_d*{scaled('D_eff', dref)}**(-beta_d)")

    def mean(X, k):
        tokens = X[second] * X[U] if use_epochs else X[second]
        unique = X[U]
        seen_once = np.minimum(tokens, unique)
        repeats = np.maximum(tokens / unique - 1.0, 0.0)
        effective = seen_once * (1 + k["r_star"] * (1 - np.exp(-repeats / k["r_star"])))
        return k["L_inf"] + k["A_n"] * (X[N] / nref) ** -k["alpha_n"] + k["B_d"] * (effective / dref) ** -k["beta_d"]

    frame = frame.rename(columns={"N": N, "U": U, "D": second, "epochs": second})
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    axis_col = {"D": second, "N": N}[axis]
    spacing = {"D": epochs[-1] / epochs[-2], "N": (n_range[1] / n_range[0]) ** (1 / max(n_levels - 1, 1))}[axis]
    what = (f"data-constrained additive law: repeated {'epochs' if use_epochs else 'tokens'} of {U} unique "
            f"tokens with diminishing returns, extrapolating in {axis_col}")
    return Draft(family="data_repetition", description=what + (f"; {len(groups)} groups" if groups else ""),
                 design=frame, inputs=(N, second, U), targets=(y,), truth=truth,
                 constants=per_group(groups, shared, varying, draw), mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=(axis_col,),
                 test_ratio=0.99 * spacing ** test_levels)
