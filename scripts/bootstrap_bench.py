#!/usr/bin/env python
"""Benchmark of the bootstrap (a script, not a test): 200 resamples of a 5-constant law on 300 rows.

The law is Chinchilla's additive form, E + A/N^a + B/D^b, on an N x D sweep of 300 runs with 1 %
noise; the point estimate is fitted first, then ``agent.uncertainty.bootstrap`` refits it on 200
resamples (warm-started from it), and the delta method (``laplace``) draws as many replicates from
the analytic Jacobian, for comparison.  Prints the seconds of each, in one process, one core.

    python scripts/bootstrap_bench.py
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agent.expressions import parse_law  # noqa: E402
from agent.fitting import fit_law  # noqa: E402
from agent.problem import Problem, make_table  # noqa: E402
from agent.uncertainty import bootstrap, interval, laplace  # noqa: E402

LAW = "loss = E + A*(N/1e8)**(-a) + B*(D/1e10)**(-b)"


def truth(N, D):
    return 1.7 + 0.9 * (N / 1e8) ** -0.34 + 0.6 * (D / 1e10) ** -0.28


def sweep(n_rows: int = 300, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    N = np.exp(rng.uniform(np.log(1e7), np.log(1e9), n_rows))
    D = np.exp(rng.uniform(np.log(1e9), np.log(1e11), n_rows))
    loss = truth(N, D) * np.exp(rng.normal(0, 0.01, n_rows))
    return pd.DataFrame({"N": N, "D": D, "loss": loss})


def main() -> None:
    problem = Problem(("N", "D"), ("loss",))
    table = make_table(sweep(), problem)
    law = parse_law(LAW, problem.inputs, problem.targets)
    t0 = time.perf_counter()
    point = fit_law(law, table, seed=0).constants
    t_fit = time.perf_counter() - t0
    far = make_table(pd.DataFrame({"N": [4e9], "D": [4e11]}), problem, require_targets=False)
    print(f"point fit: {t_fit:.2f} s ({law.n_constants} constants, {len(table)} rows); "
          f"the truth at 4x N and D: {truth(4e9, 4e11):.4f}")
    for name, method in (("bootstrap", bootstrap), ("delta method", laplace)):
        t0 = time.perf_counter()
        draws = method(law, table, point, n=200, seed=0)
        seconds = time.perf_counter() - t0
        lo, hi = interval(law, far, draws, level=0.9)
        print(f"{name}: 200 replicates in {seconds:.2f} s ({len(draws.replicates)} kept); "
              f"90 % interval at 4x N and D: [{lo[0, 0]:.4f}, {hi[0, 0]:.4f}]")


if __name__ == "__main__":
    main()
