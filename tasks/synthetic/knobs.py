"""Laws with a knob beside the scale: hyperparameter bowls, vocabulary-like bowls, mixtures of experts.

hyper_bowl: loss = level(scale) * (1 + q*(log lr - m - g*log scale)^2 [+ q2*(log bsz - m2)^2]):
    a power-law level times a relative bowl whose optimum drifts with scale.
vocab_bowl: loss = E + A*N^-a [+ B*D^-b] + k*(log V - m - g*log N)^2: an additive bowl in a size
    input (vocabulary, depth) whose best value grows with the model.
moe: loss = E + A*N^-a * X^-(b - c*log N) over N and the number of experts X: the benefit of
    experts shrinks with size (interacting exponents, Clark et al. 2022), or its log-linear form.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tasks.synthetic import designs
from tasks.synthetic.common import Draw, per_group, reference, resolve, scaled
from tasks.synthetic.record import Draft, Noise


def hyper_bowl(draw: Draw, *, names=None, scale: str = "N", scale_range=(1e7, 1e9), scale_levels: int = 5,
               knobs: Sequence[str] = ("lr",), lr_range=(1e-4, 1e-1), lr_values: int = 7,
               bsz_values=(32, 64, 128, 256, 512, 1024, 2048), seeds: int = 1,
               groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    s, y = cols[scale], cols["y"]
    values = {"lr": designs.levels(*lr_range, lr_values), "bsz": np.asarray(bsz_values, dtype=float)}
    sizes = designs.levels(*scale_range, scale_levels)
    frame = designs.repeat_seeds(designs.grid(S=sizes, **{k: values[k] for k in knobs}), seeds)
    sref = reference(*scale_range)
    refs = {k: reference(values[k].min(), values[k].max()) for k in knobs}
    shared = {"alpha": draw.u(0.25, 0.4), "q_0": draw.u(0.01, 0.04), "m_0": draw.u(-0.5, 0.5),
              "g_0": draw.u(-0.5, -0.2) if knobs[0] == "lr" else draw.u(0.2, 0.5)}
    if len(knobs) > 1:
        shared.update({"q_1": draw.u(0.005, 0.02), "m_1": draw.u(-0.7, 0.7)})
    varying = {"L_inf": draw.u(1.6, 2.3), "A_s": draw.u(0.4, 1.0)}
    ss = scaled(s, sref)
    bowl = f"q_0*(log({scaled(cols[knobs[0]], refs[knobs[0]])}) - m_0 - g_0*log({ss}))**2"
    if len(knobs) > 1:
        bowl += f" + q_1*(log({scaled(cols[knobs[1]], refs[knobs[1]])}) - m_1)**2"
    truth = (f"{y} = (L_inf + A_s*{ss}**(-alpha))*(1 + {bowl})",)

    def mean(X, k):
        u = X[s] / sref
        dev = np.log(X[cols[knobs[0]]] / refs[knobs[0]]) - k["m_0"] - k["g_0"] * np.log(u)
        relative = 1 + k["q_0"] * dev ** 2
        if len(knobs) > 1:
            relative = relative + k["q_1"] * (np.log(X[cols[knobs[1]]] / refs[knobs[1]]) - k["m_1"]) ** 2
        return (k["L_inf"] + k["A_s"] * u ** -k["alpha"]) * relative

    frame = frame.rename(columns={"S": s, **{k: cols[k] for k in knobs}})
    what = (f"power-law level in {s} times a relative bowl in log {' and log '.join(cols[k] for k in knobs)}; "
            f"the optimum of {cols[knobs[0]]} drifts with {s}")
    return _draft("hyper_bowl", what, frame, (s, *(cols[k] for k in knobs)), cols, groups, draw, shared,
                  varying, truth, mean, noise, s, sizes, 6 if len(knobs) == 1 else 8)


def vocab_bowl(draw: Draw, *, names=None, bowl: str = "V", n_range=(1e7, 1e9), n_levels: int = 5,
               bowl_values=(4096, 8192, 16384, 32768, 65536, 131072, 262144), with_data: bool = False,
               groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    N, V, D, y = cols["N"], cols[bowl], cols["D"], cols["y"]
    sizes = designs.levels(*n_range, n_levels)
    frame = designs.grid(N=sizes, V=np.asarray(bowl_values, dtype=float), **({"D": [20.0, 80.0]} if with_data else {}))
    if with_data:
        frame["D"] = frame["D"] * frame["N"]  # tokens per parameter, as in compute-matched runs
    frame["_run"] = np.arange(len(frame))
    nref, vref = reference(*n_range), reference(min(bowl_values), max(bowl_values))
    dref = reference(20 * n_range[0], 80 * n_range[1])
    shared = {"alpha_n": draw.u(0.28, 0.4), "k_v": draw.u(0.006, 0.02), "m_v": draw.u(-0.4, 0.4),
              "g_v": draw.u(0.25, 0.5)}
    varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.4, 1.0)}
    if with_data:
        varying.update({"B_d": draw.u(0.3, 0.8), "beta_d": draw.u(0.25, 0.35)})
    sn = scaled(N, nref)
    data_term = f" + B_d*{scaled(D, dref)}**(-beta_d)" if with_data else ""
    truth = (f"{y} = L_inf + A_n*{sn}**(-alpha_n){data_term} + k_v*(log({scaled(V, vref)}) - m_v - g_v*log({sn}))**2",)

    def mean(X, k):
        u = X[N] / nref
        out = k["L_inf"] + k["A_n"] * u ** -k["alpha_n"]
        out = out + k["k_v"] * (np.log(X[V] / vref) - k["m_v"] - k["g_v"] * np.log(u)) ** 2
        return out + (k["B_d"] * (X[D] / dref) ** -k["beta_d"] if with_data else 0.0)

    frame = frame.rename(columns={"N": N, "V": V, "D": D})
    what = f"additive power law in {N}{' and ' + D if with_data else ''} plus a bowl in log {V} whose optimum grows with {N}"
    return _draft("vocab_bowl", what, frame, (N, V, *((D,) if with_data else ())), cols, groups, draw,
                  shared, varying, truth, mean, noise, N, sizes, 8 if with_data else 6)


def moe(draw: Draw, *, names=None, kind: str = "offset", n_range=(1e7, 1e9), n_levels: int = 5,
        experts=(1, 2, 4, 8, 16, 32, 64), groups: Sequence[str] | None = None, noise: Noise = Noise()) -> Draft:
    cols = resolve(names)
    N, X_, D, y = cols["N"], cols["E"], cols["D"], cols["y"]
    with_data = kind == "with_data"
    sizes = designs.levels(*n_range, n_levels)
    frame = designs.grid(N=sizes, E=np.asarray(experts, dtype=float), **({"D": [10.0, 40.0]} if with_data else {}))
    if with_data:
        frame["D"] = frame["D"] * frame["N"]
    frame["_run"] = np.arange(len(frame))
    nref, dref = reference(*n_range), reference(10 * n_range[0], 40 * n_range[1])
    sn = scaled(N, nref)
    shared = {"alpha_n": draw.u(0.06, 0.1) if kind == "log_linear" else draw.u(0.25, 0.38),
              "beta_e": draw.u(0.08, 0.15), "gamma_e": draw.u(0.005, 0.015)}
    if kind == "log_linear":  # log L = c - a log N - b log X + c' log N log X: no floor
        varying = {"c_0": draw.u(0.8, 1.2)}
        truth = (f"{y} = exp(c_0 - alpha_n*log({sn}) - beta_e*log({X_}) + gamma_e*log({sn})*log({X_}))",)
    else:
        varying = {"L_inf": draw.u(1.6, 2.3), "A_n": draw.u(0.5, 1.2)}
        data_term = ""
        if with_data:
            varying.update({"B_d": draw.u(0.3, 0.8), "beta_d": draw.u(0.25, 0.35)})
            data_term = f" + B_d*{scaled(D, dref)}**(-beta_d)"
        truth = (f"{y} = L_inf + A_n*{sn}**(-alpha_n)*{X_}**(-(beta_e - gamma_e*log({sn}))){data_term}",)

    def mean(X, k):
        u, e = np.log(X[N] / nref), np.log(X[X_])
        if kind == "log_linear":
            return np.exp(k["c_0"] - k["alpha_n"] * u - k["beta_e"] * e + k["gamma_e"] * u * e)
        out = k["L_inf"] + k["A_n"] * np.exp(-k["alpha_n"] * u - (k["beta_e"] - k["gamma_e"] * u) * e)
        return out + (k["B_d"] * (X[D] / dref) ** -k["beta_d"] if with_data else 0.0)

    frame = frame.rename(columns={"N": N, "E": X_, "D": D})
    what = f"mixture of experts: power law in {N} times {X_}^-(b - c*log {N})" + (
        ", log-linear form without a floor" if kind == "log_linear" else "") + (f", plus a data term in {D}" if with_data else "")
    return _draft("moe", what, frame, (N, X_, *((D,) if with_data else ())), cols, groups, draw, shared,
                  varying, truth, mean, noise, N, sizes, 8 if with_data else 6)


def _draft(family, what, frame, inputs, cols, groups, draw, shared, varying, truth, mean, noise, axis_col,
           sizes, cap) -> Draft:
    if groups:
        frame = designs.with_groups(frame, cols["group"], groups)
    return Draft(family=family, description=what + (f"; {len(groups)} groups ({cols['group']})" if groups else ""),
                 design=frame, inputs=tuple(inputs), targets=(cols["y"],), truth=truth,
                 constants=per_group(groups, shared, varying, draw), mean=mean, noise=noise,
                 group=cols["group"] if groups else None, axis=(axis_col,),
                 test_ratio=0.99 * sizes[1] / sizes[0], max_constants=cap)
