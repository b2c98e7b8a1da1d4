"""Distillation: a student's loss falls towards its teacher's, and the teacher's loss is an input.

distillation: L = t + t^-c * (A*N^-a + B*D^-b), ``N`` and ``D`` the student's size and tokens and
``t`` the teacher's loss.  Busbridge et al. 2025's distillation law in the regime where the teacher
is stronger than its students: the student cannot pass its teacher, and the better the teacher the
further above it a student stays (``t**-c``; their capacity-gap factor, which matters when students
outgrow their teacher, is left out).
The teacher's loss spans no decade, so the search enters it linearly: its ``input_floor`` seed writes
``t**-c`` as ``exp(b*t)`` and lets the floor's coefficient free, so no seed is this law.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic.common import Draw, per_group, reference, resolve, scaled
from tasks.synthetic.nd_designs import crossed_grid, crossed_grid_draft
from tasks.synthetic.record import Draft, Noise


def distillation(draw: Draw, *, names=None, n_range=(1e8, 1e10), n_levels: int = 5, d_levels: int = 4,
                 d_per_n: tuple[float, float] = (5, 100), teachers: Sequence[float] = (2.2, 2.5, 2.8, 3.1),
                 groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    """Every student of an N x D grid distilled from each teacher; the largest student is the test level."""
    cols = resolve({"N": "student_params", "D": "student_tokens", "s": "teacher_loss", "y": "student_loss",
                    **(names or {})})
    N, D, T, y = cols["N"], cols["D"], cols["s"], cols["y"]
    d, frame = crossed_grid(n_range, n_levels, d_per_n, d_levels, teachers)
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    sn, sd = scaled(N, nref), scaled(D, dref)
    shared = {"alpha_n": draw.u(0.27, 0.38), "beta_d": draw.u(0.25, 0.35), "c_t": draw.u(0.5, 2.0)}
    varying = {"A_n": draw.u(0.6, 1.5), "B_d": draw.u(0.4, 1.2)}
    truth = (f"{y} = {T} + {T}**(-c_t)*(A_n*{sn}**(-alpha_n) + B_d*{sd}**(-beta_d))",)

    def mean(X, k):
        t = np.asarray(X[T], dtype=float)
        return t + t ** -k["c_t"] * (k["A_n"] * (X[N] / nref) ** -k["alpha_n"] + k["B_d"] * (X[D] / dref) ** -k["beta_d"])

    what = f"a student's loss falling towards its teacher's ({T}), over the student's {N} and {D}"
    return crossed_grid_draft("distillation", what, cols, d, frame, truth, per_group(groups, shared, varying, draw),
                              mean, noise, groups)
