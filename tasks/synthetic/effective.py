"""The additive law over an effective size: an input that is no scale changes what a parameter is worth.

effective_size: L = E + A*(N*f(s))^-a + B*D^-b, where ``s`` is no size and spans no decade:
- ``sparsity``: the share of weights pruned, f(s) = (1 - s)^r (Frantar et al. 2023 fit the size
  term's coefficient as a function of sparsity);
- ``precision``: bits per weight, f(P) = 1 - exp(-P/g) (Kumar et al. 2024's effective parameter count).

Both keep Chinchilla's two power terms; only the size term's coefficient moves with ``s``.  Sparsity
holds zero, so the search enters it linearly; bits of 3-16 span over 4x, so it treats them as a scale.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic.common import Draw, per_group, reference, resolve, scaled
from tasks.synthetic.nd_designs import crossed_grid, crossed_grid_draft
from tasks.synthetic.record import Draft, Noise

MODIFIERS = {"sparsity": (0.0, 0.5, 0.75, 0.875), "precision": (3.0, 4.0, 6.0, 8.0, 16.0)}


def effective_size(draw: Draw, *, names=None, modifier: str = "sparsity", n_range=(1e7, 1e10), n_levels: int = 6,
                   d_levels: int = 4, d_per_n: tuple[float, float] = (5, 100), values: Sequence[float] | None = None,
                   groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    """A grid over size, data and the modifier; the largest size is the test level."""
    cols = resolve({"s": modifier, **(names or {})})
    N, D, S, y = cols["N"], cols["D"], cols["s"], cols["y"]
    d, frame = crossed_grid(n_range, n_levels, d_per_n, d_levels, values or MODIFIERS[modifier])
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    sn, sd = scaled(N, nref), scaled(D, dref)
    shared = {"alpha_n": draw.u(0.27, 0.38), "beta_d": draw.u(0.25, 0.35)}
    if modifier == "sparsity":
        shared["rho"] = draw.u(0.4, 0.9)
        worth = f"(1 - {S})**rho"
    else:
        shared["g_p"] = draw.u(1.5, 3.5)
        worth = f"(1 - exp(-{S}/g_p))"
    varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.4, 1.0), "B_d": draw.u(0.3, 0.8)}
    truth = (f"{y} = L_inf + A_n*({sn}*{worth})**(-alpha_n) + B_d*{sd}**(-beta_d)",)

    def mean(X, k):
        s = np.asarray(X[S], dtype=float)
        f = (1 - s) ** k["rho"] if modifier == "sparsity" else 1 - np.exp(-s / k["g_p"])
        return k["L_inf"] + k["A_n"] * (X[N] / nref * f) ** -k["alpha_n"] + k["B_d"] * (X[D] / dref) ** -k["beta_d"]

    what = f"additive law over an effective size, {N}*f({S}) ({modifier}), and {D}"
    return crossed_grid_draft("effective_size", what, cols, d, frame, truth, per_group(groups, shared, varying, draw),
                              mean, noise, groups)

