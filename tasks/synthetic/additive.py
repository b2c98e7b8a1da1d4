"""Two-input pre-training laws over model size N and data D.

chinchilla_additive: L = E + A/N^a + B/D^b (Hoffmann et al. 2022).
kaplan_pow_sum: L = ((Nc/N)^(aN/aD) + Dc/D)^aD (Kaplan et al. 2020), optionally over an offset E.
drifting_exponent: the additive law whose data exponent moves with model size, b(N) = b + g*log N.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic.common import Draw, columns, per_group, reference, rename, resolve, round4, scaled
from tasks.synthetic.designs import with_groups
from tasks.synthetic.nd_designs import NDDesign, nd_design
from tasks.synthetic.record import Draft, Noise


def chinchilla_additive(draw: Draw, *, names=None, design: str = "grid", n_range=(1e7, 1e10),
                        groups: Sequence[str] | None = None, noise: Noise = Noise(), **design_kw) -> Draft:
    cols = resolve(names)
    d = nd_design(design, *n_range, **design_kw)
    N, D, y = cols["N"], cols["D"], cols["y"]
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    shared = {"alpha_n": draw.u(0.27, 0.40), "beta_d": draw.u(0.25, 0.36)}
    varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.3, 1.0), "B_d": draw.u(0.3, 1.0)}
    truth = (f"{y} = L_inf + A_n*{scaled(N, nref)}**(-alpha_n) + B_d*{scaled(D, dref)}**(-beta_d)",)

    def mean(X, k):
        return k["L_inf"] + k["A_n"] * (X[N] / nref) ** -k["alpha_n"] + k["B_d"] * (X[D] / dref) ** -k["beta_d"]

    return _nd_draft("chinchilla_additive", "additive law E + A/N^a + B/D^b", d, cols, groups, draw,
                     shared, varying, truth, mean, noise)


def kaplan_pow_sum(draw: Draw, *, names=None, design: str = "grid", n_range=(1e6, 1e9), offset: bool = False,
                   groups: Sequence[str] | None = None, noise: Noise = Noise(), **design_kw) -> Draft:
    cols = resolve(names)
    d = nd_design(design, *n_range, **design_kw)
    N, D, y = cols["N"], cols["D"], cols["y"]
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    if offset:  # the modern reading: an irreducible loss plus the pow-sum, with Chinchilla-like exponents
        a_n, a_d, level, floor = draw.u(0.25, 0.40), draw.u(0.25, 0.40), draw.u(0.5, 1.0), draw.u(1.6, 2.2)
    else:       # the original: no floor, small exponents, loss ~3 at the reference scale
        a_n, a_d, level, floor = draw.u(0.07, 0.09), draw.u(0.09, 0.11), draw.u(2.6, 3.4), 0.0
    total, share = level ** (1.0 / a_d), draw.u(0.35, 0.65)
    shared = {"alpha_n": a_n, "alpha_d": a_d}
    varying = {"n_c": round4((total * share) ** (a_d / a_n)), "d_c": round4(total * (1 - share))}
    if offset:
        varying["L_inf"] = floor
    core = f"((n_c/{scaled(N, nref)})**(alpha_n/alpha_d) + d_c/{scaled(D, dref)})**alpha_d"
    truth = (f"{y} = L_inf + {core}" if offset else f"{y} = {core}",)

    def mean(X, k):
        pow_sum = ((k["n_c"] / (X[N] / nref)) ** (k["alpha_n"] / k["alpha_d"]) + k["d_c"] / (X[D] / dref)) ** k["alpha_d"]
        return pow_sum + (k["L_inf"] if offset else 0.0)

    what = "Kaplan pow-sum ((Nc/N)^(aN/aD) + Dc/D)^aD" + (" over an irreducible loss" if offset else "")
    return _nd_draft("kaplan_pow_sum", what, d, cols, groups, draw, shared, varying, truth, mean, noise)


def drifting_exponent(draw: Draw, *, names=None, design: str = "grid", n_range=(1e7, 1e10),
                      groups: Sequence[str] | None = None, noise: Noise = Noise(), **design_kw) -> Draft:
    cols = resolve(names)
    d = nd_design(design, *n_range, **design_kw)
    N, D, y = cols["N"], cols["D"], cols["y"]
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    shared = {"alpha_n": draw.u(0.25, 0.38), "beta_d": draw.u(0.25, 0.35),
              "gamma": round4(draw.sign() * draw.u(0.012, 0.03))}
    varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.3, 0.9), "B_d": draw.u(0.4, 1.0)}
    sn, sd = scaled(N, nref), scaled(D, dref)
    truth = (f"{y} = L_inf + A_n*{sn}**(-alpha_n) + B_d*{sd}**(-(beta_d + gamma*log({sn})))",)

    def mean(X, k):
        n, dd = X[N] / nref, X[D] / dref
        return k["L_inf"] + k["A_n"] * n ** -k["alpha_n"] + k["B_d"] * dd ** -(k["beta_d"] + k["gamma"] * np.log(n))

    return _nd_draft("drifting_exponent", "additive law whose data exponent drifts with N: b(N) = b + g*log N",
                     d, cols, groups, draw, shared, varying, truth, mean, noise)


def _nd_draft(family, what, d: NDDesign, cols, groups, draw, shared, varying, truth, mean, noise,
              max_constants: int = 6) -> Draft:
    constants = per_group(groups, shared, varying, draw)
    frame = rename(d.frame, cols)
    if groups:
        frame = with_groups(frame, cols["group"], groups)
    kind = {("N",): "extrapolating in N", ("N", "D"): "extrapolating in compute N*D"}[d.axis]
    kind = f"{d.kind} design, {kind}"
    grouped = f"; {len(groups)} groups ({cols['group']}) share the exponents" if groups else ""
    return Draft(family=family, description=f"{what}, {kind}{grouped}", design=frame,
                 inputs=columns(cols, ("N", "D")), targets=(cols["y"],), truth=truth, constants=constants,
                 mean=mean, noise=noise, group=cols["group"] if groups else None,
                 axis=columns(cols, d.axis), test_ratio=d.test_ratio, max_constants=max_constants)
