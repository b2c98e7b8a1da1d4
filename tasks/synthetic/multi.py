"""Laws with several targets, and data mixtures with no scale axis.

mixture: domain proportions p1..p3 (summing to 1) -> losses, L = c + k*exp(sum t_i p_i) or one
    exp(c + sum t_i p_i) per domain (data mixing laws, Ye et al. 2024); test = held-out mixtures.
multi_target: two targets of the same runs sharing inputs: loss and a downstream accuracy that
    is a logistic function of it or of compute, two domains' losses sharing exponents, or the
    loss at two context lengths.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic import designs
from tasks.synthetic.common import Draw, columns, per_group, reference, rename, resolve, round4, scaled
from tasks.synthetic.nd_designs import nd_design
from tasks.synthetic.record import Draft, Noise

MIXTURE_KINDS = ("single", "two_domains", "own_share")


def mixture(draw: Draw, *, names=None, parts: Sequence[str] = ("p1", "p2", "p3"), kind: str = "single",
            settings: int = 30, seeds: int = 1, groups: Sequence[str] | None = None,
            noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    frame = designs.repeat_seeds(designs.simplex(settings, len(parts), draw.rng), seeds)
    frame = frame.rename(columns={f"p{i + 1}": p for i, p in enumerate(parts)})
    p1, p2 = parts[0], parts[1]  # the last share is implied by the others
    if kind == "single":
        targets = (cols["y"],)
        shared = {"t_1": draw.u(-1.5, -0.3), "t_2": draw.u(-1.0, 0.3)}
        varying = {"c_0": draw.u(1.5, 2.5), "k_0": draw.u(0.5, 1.0)}
        truth = (f"{targets[0]} = c_0 + k_0*exp(t_1*{p1} + t_2*{p2})",)

        def mean(X, k):
            return k["c_0"] + k["k_0"] * np.exp(k["t_1"] * X[p1] + k["t_2"] * X[p2])
    elif kind == "two_domains":
        targets = tuple(cols.get(f"y{i}", f"loss_{i}") for i in ("a", "b"))
        shared = {"t_a1": draw.u(-0.8, -0.3), "t_a2": draw.u(-0.3, 0.2),
                  "t_b1": draw.u(-0.3, 0.2), "t_b2": draw.u(-0.8, -0.3)}
        varying = {"c_a": draw.u(0.7, 1.2), "c_b": draw.u(0.7, 1.2)}
        truth = tuple(f"{t} = exp(c_{s} + t_{s}1*{p1} + t_{s}2*{p2})" for t, s in zip(targets, "ab"))

        def mean(X, k):
            return np.column_stack([np.exp(k[f"c_{s}"] + k[f"t_{s}1"] * X[p1] + k[f"t_{s}2"] * X[p2]) for s in "ab"])
    elif kind == "own_share":  # each domain's loss falls with its own share of the mixture
        targets = tuple(f"loss_{p}" for p in parts)
        shared = {f"t_{i}": draw.u(0.2, 0.8) for i in range(len(parts))}
        varying = {f"c_{i}": draw.u(0.7, 1.2) for i in range(len(parts))}
        truth = tuple(f"{t} = exp(c_{i} - t_{i}*{p})" for i, (t, p) in enumerate(zip(targets, parts)))

        def mean(X, k):
            return np.column_stack([np.exp(k[f"c_{i}"] - k[f"t_{i}"] * X[p]) for i, p in enumerate(parts)])
    else:
        raise ValueError(f"unknown mixture kind {kind!r}; choose one of {', '.join(MIXTURE_KINDS)}")
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    what = (f"data mixture ({', '.join(parts)}) -> {', '.join(targets)}, no scale axis; test = held-out mixtures"
            + (f"; {len(groups)} groups ({cols['group']})" if groups else ""))
    return Draft(family="mixture", description=what, design=frame, inputs=tuple(parts), targets=targets,
                 truth=truth, constants=per_group(groups, shared, varying, draw), mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=(), holdout=0.25)


def multi_target(draw: Draw, *, names=None, kind: str = "loss_acc", n_range=(1e7, 1e10), design: str = "grid",
                 x_range=(1e18, 1e23), groups: Sequence[str] | None = None, noise: Noise = Noise(),
                 **design_kw) -> Draft:
    cols = resolve(names)
    y, y2 = cols["y"], cols["y2"]
    if kind == "loss_acc_compute":
        return _loss_acc_compute(draw, cols, x_range, groups, noise)
    d = nd_design(design, *n_range, **design_kw)
    N, D = cols["N"], cols["D"]
    nref, dref = reference(*d.n_range), reference(*d.d_range)
    sn, sd = scaled(N, nref), scaled(D, dref)
    if kind == "loss_acc":  # accuracy is a logistic function of the loss itself, above chance (0.25)
        shared = {"alpha_n": draw.u(0.28, 0.4), "beta_d": draw.u(0.25, 0.35), "k_a": draw.u(2.0, 4.0)}
        varying = {"L_inf": draw.u(1.6, 2.1), "A_n": draw.u(0.4, 0.9), "B_d": draw.u(0.4, 0.9),
                   "m_a": draw.u(2.4, 2.8)}
        level = f"L_inf + A_n*{sn}**(-alpha_n) + B_d*{sd}**(-beta_d)"
        truth = (f"level = {level}", f"{y} = level", f"{y2} = 0.25 + 0.75/(1 + exp(k_a*(level - m_a)))")
        targets, cap = (y, y2), 8

        def mean(X, k):
            lv = k["L_inf"] + k["A_n"] * (X[N] / nref) ** -k["alpha_n"] + k["B_d"] * (X[D] / dref) ** -k["beta_d"]
            return np.column_stack([lv, 0.25 + 0.75 / (1 + np.exp(k["k_a"] * (lv - k["m_a"])))])
    elif kind == "two_domains":  # two domains' losses share both exponents
        targets = tuple(cols.get(key, default) for key, default in (("ya", "loss_a"), ("yb", "loss_b")))
        shared = {"alpha_n": draw.u(0.28, 0.4), "beta_d": draw.u(0.25, 0.35)}
        varying = {f"{c}_{s}": draw.u(*bounds) for s in "ab" for c, bounds in
                   (("E", (1.2, 2.4)), ("A", (0.3, 1.0)), ("B", (0.3, 1.0)))}
        truth = tuple(f"{t} = E_{s} + A_{s}*{sn}**(-alpha_n) + B_{s}*{sd}**(-beta_d)" for t, s in zip(targets, "ab"))
        cap = 8

        def mean(X, k):
            n, dd = (X[N] / nref) ** -k["alpha_n"], (X[D] / dref) ** -k["beta_d"]
            return np.column_stack([k[f"E_{s}"] + k[f"A_{s}"] * n + k[f"B_{s}"] * dd for s in "ab"])
    else:
        raise ValueError(f"unknown multi-target kind {kind!r}")
    frame = rename(d.frame, cols)
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    what = f"two targets ({', '.join(targets)}) sharing {N} and {D}, {d.kind} design"
    return Draft(family="multi_target", description=what + (f"; {len(groups)} groups" if groups else ""),
                 design=frame, inputs=(N, D), targets=targets, truth=truth,
                 constants=per_group(groups, shared, varying, draw), mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=columns(cols, d.axis), test_ratio=d.test_ratio,
                 max_constants=cap)


def _loss_acc_compute(draw: Draw, cols, x_range, groups, noise) -> Draft:
    """Loss as a power law in compute, accuracy as a logistic in log compute above chance: one C, two targets."""
    C, y, y2 = cols["C"], cols["y"], cols["y2"]
    values = designs.levels(*x_range, 16)
    frame = designs.repeat_seeds(designs.grid(C=values), 2).rename(columns={"C": C})
    ref = reference(*x_range)
    sc = scaled(C, ref)
    ratio = (values[1] / values[0]) ** 2
    train_hi = np.log(x_range[1] / ratio / ref)
    shared = {"alpha_c": draw.u(0.12, 0.25), "k_a": draw.u(0.5, 1.0)}
    varying = {"L_inf": draw.u(1.5, 2.2), "A_c": draw.u(0.4, 0.8), "acc_hi": draw.u(0.7, 0.9),
               "m_a": round4(draw.u(0.5, 0.9) * train_hi)}
    truth = (f"{y} = L_inf + A_c*{sc}**(-alpha_c)", f"{y2} = 0.25 + (acc_hi - 0.25)/(1 + exp(-k_a*(log({sc}) - m_a)))")

    def mean(X, k):
        u = X[C] / ref
        return np.column_stack([k["L_inf"] + k["A_c"] * u ** -k["alpha_c"],
                                0.25 + (k["acc_hi"] - 0.25) / (1 + np.exp(-k["k_a"] * (np.log(u) - k["m_a"])))])
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    return Draft(family="multi_target", description=f"loss (power law) and accuracy (logistic in log {C}) of the same runs",
                 design=frame, inputs=(C,), targets=(y, y2), truth=truth,
                 constants=per_group(groups, shared, varying, draw), mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=(C,), test_ratio=0.99 * ratio)
