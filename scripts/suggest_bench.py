#!/usr/bin/env python
"""Does `suggest` pick better next runs than the cheapest or random ones? (a benchmark, not a test)

Each instance draws a Chinchilla-type truth, loss = E + A*N**-a + B*D**-b with random constants,
and a design: a 6 x 6 grid of N in [1e7, 1e9] and D in [1e9, 1e11], cost 6*N*D, 1 % noise.  A
seeded 25 % of the design's runs is run first; then each strategy adds runs from the rest of the
design, one at a time, until the runs done (the seeded ones included) have cost a share of the
design's total cost, up to 70 % (the seeded quarter alone costs about a quarter):

* suggest: refit the law's form, draw its delta-method replicates, add the top-ranked run;
* cheapest: add the cheapest run left;
* random: add a random run left.

The error is the law's relative error at the target, N = 1e10 and D = 1e12 (10x past the design),
refitted on the runs each strategy chose.  Prints the median error against the budget spent, and,
as the floor no strategy can go below on average, the error with every run of the design.

    python scripts/suggest_bench.py --instances 24
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agent.errors import SldError  # noqa: E402
from agent.expressions import parse_law  # noqa: E402
from agent.fitting import fit_law, predict  # noqa: E402
from agent.problem import DEFAULT_GROUP, Problem, Table, make_table  # noqa: E402
from agent.suggest import ensemble, noise_of, suggest  # noqa: E402
from agent.uncertainty import laplace  # noqa: E402

LAW = parse_law("loss = E + A*(N/1e8)**(-a) + B*(D/1e10)**(-b)", ("N", "D"), ("loss",))
PROBLEM = Problem(("N", "D"), ("loss",))
TARGET = {"N": 1e10, "D": 1e12}
SPENT = (0.3, 0.4, 0.5, 0.6, 0.7)  # shares of the design's cost (seeded runs included) at which errors are reported


def table_of(df: pd.DataFrame) -> Table:
    t = make_table(df, PROBLEM, require_targets="loss" in df)
    return Table(t.X, t.y, np.full(len(t), DEFAULT_GROUP, dtype=object))


def error_at_target(rows: pd.DataFrame, true_value: float, seed: int):
    fitted = fit_law(LAW, table_of(rows), seed=seed)
    value = predict(LAW, table_of(pd.DataFrame([TARGET])), fitted.constants, np.array([DEFAULT_GROUP], dtype=object))
    return abs(float(value[0, 0]) - true_value) / true_value, fitted.constants


def instance(k: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(k)
    e, a_, b_ = rng.uniform(1.5, 2.0), rng.uniform(0.25, 0.4), rng.uniform(0.22, 0.35)
    amp_n, amp_d = rng.uniform(0.3, 0.8), rng.uniform(0.3, 0.8)

    def truth(n, d):
        return e + amp_n * (n / 1e8) ** -a_ + amp_d * (d / 1e10) ** -b_

    n, d = np.meshgrid(np.geomspace(1e7, 1e9, 6), np.geomspace(1e9, 1e11, 6))
    design = pd.DataFrame({"N": n.ravel(), "D": d.ravel()})
    design["loss"] = truth(design.N, design.D) * np.exp(rng.normal(0, 0.01, len(design)))
    cost = 6 * design.N.to_numpy() * design.D.to_numpy()
    start = list(rng.choice(len(design), size=len(design) // 4, replace=False))
    true_value = truth(TARGET["N"], TARGET["D"])
    out = {"all runs": [error_at_target(design, true_value, seed=k)[0]] * len(SPENT)}
    for strategy in ("suggest", "cheapest", "random"):
        chosen, spent, errors = list(start), float(cost[start].sum()), []
        pick_rng = np.random.default_rng(1000 + k)
        marks = list(SPENT)
        while marks:
            left = [i for i in range(len(design)) if i not in chosen]
            err, constants = error_at_target(design.iloc[chosen], true_value, seed=k)
            while marks and spent >= marks[0] * cost.sum():
                errors.append(err)
                marks.pop(0)
            if not marks or not left:
                break
            if strategy == "cheapest":
                nxt = min(left, key=lambda i: cost[i])
            elif strategy == "random":
                nxt = int(pick_rng.choice(left))
            else:
                try:
                    draws = laplace(LAW, table_of(design.iloc[chosen]), constants, n=200, seed=k)
                    ranked = suggest(ensemble(LAW, draws), table_of(design.iloc[left][["N", "D"]]),
                                     table_of(pd.DataFrame([TARGET])), cost[left], noise=noise_of(draws),
                                     log_space=draws.log_space, top=1)
                    nxt = left[ranked[0].index]
                except SldError:
                    nxt = min(left, key=lambda i: cost[i])  # no covariance yet: start cheap
            chosen.append(nxt)
            spent += cost[nxt]
        errors += [errors[-1] if errors else float("nan")] * (len(SPENT) - len(errors))
        out[strategy] = errors
        if strategy == "cheapest":
            out["cheapest runs at half"] = len(chosen) / len(design)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--instances", type=int, default=24)
    args = ap.parse_args()
    results = [instance(k) for k in range(args.instances)]
    print(f"{args.instances} instances; median relative error at N=1e10, D=1e12 once the runs done (the seeded 25 % "
          "included) have cost a share of the design's total cost\n")
    print("| strategy | " + " | ".join(f"{s:.0%} spent" for s in SPENT) + " |")
    print("|---|" + "---|" * len(SPENT))
    for strategy in ("suggest", "cheapest", "random", "all runs"):
        cells = [statistics.median(r[strategy][i] for r in results) for i in range(len(SPENT))]
        print(f"| {strategy} | " + " | ".join(f"{c:.2%}" for c in cells) + " |")
    cheap_share = statistics.median(r["cheapest runs at half"] for r in results)
    print(f"\n(when the cost reaches 70 %, the cheapest-first strategy has run {cheap_share:.0%} of the design's runs)")
    half = SPENT.index(0.5)
    wins = sum(r["suggest"][half] < min(r["cheapest"][half], r["random"][half]) for r in results)
    print(f"\nsuggest has the lowest error at half the cost on {wins} of {args.instances} instances", end="")
    for other in ("cheapest", "random"):
        print(f"; beats {other} on {sum(r['suggest'][half] < r[other][half] for r in results)}", end="")
    print()


if __name__ == "__main__":
    main()
