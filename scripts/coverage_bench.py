#!/usr/bin/env python
"""Do sld's 90 % intervals hold 4x beyond the data? (a benchmark on known truths, not a test)

Each instance is a problem of the synthetic suite (a known law with realistic noise) that has an
extrapolation axis and a truth sld can write.  Probe points are the training settings at the largest
axis value of each group, moved 4x further along the axis (split evenly over the axis columns when
there are several).  At each probe the true mean is known, and a new run is simulated by drawing the
problem's own noise (row and seed noise) on it.  Three checks, at the nominal level:

* confidence interval contains the true mean (where the curve lies);
* prediction interval contains the new run (where a new run lands: what a PI promises);
* prediction interval contains the true mean.

Laws, one or both:
* ``--data-seeds``: the true form refitted on the training rows (parameter uncertainty only), over
  several data seeds of the suite: the bootstrap and the delta method side by side;
* ``--from-suite FILE``: the laws `sld bench --suite synthetic --json [--data-seed S]` discovered,
  with the bootstrap and with the delta method (as the service stores it), each alone and pooled with
  the close finalists' forms (as the service and `sld predict` give it);
  (``--name-runs``: the checkpoint sweeps' intervals with their run column named, as a user who
  names it gets them; the law is the same, the search does not use runs);
* ``--checkpoints``: only the problems whose rows are checkpoints of a few runs, the true form
  refitted, with every row resampled as its own run and with the runs named (``Problem.run``).

An instance's coverage is the share of its probe predictions covered; the tables average instances.

    python scripts/coverage_bench.py --data-seeds 0 1 2 --from-suite suite0.json
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import zlib
from collections import defaultdict
from dataclasses import replace

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agent.errors import SldError  # noqa: E402
from agent.expressions import parse_law  # noqa: E402
from agent.fitting import fit_law  # noqa: E402
from agent.problem import Table, make_table  # noqa: E402
from agent.uncertainty import Member, bootstrap, interval, laplace  # noqa: E402
from tasks.synthetic.suite import get_draft, synthetic_suite  # noqa: E402

FACTOR = 4.0
CHECKS = ("ci_truth", "pi_new", "pi_truth")


def probes(problem, draft) -> tuple[pd.DataFrame, np.ndarray]:
    """Training settings at each group's largest axis value, moved FACTOR further; their true means."""
    p, train = problem.problem, problem.train
    key = np.prod(train[list(p.axis)].to_numpy(float), axis=1)
    labels = train[p.group].astype(str) if p.group else pd.Series("all_data", index=train.index)
    picked = []
    for label in labels.unique():
        mine = labels == label
        edge = train[mine & (key >= key[mine.to_numpy()].max() * (1 - 1e-9))]
        picked.append(edge.drop_duplicates(subset=list(p.inputs)))
    points = pd.concat(picked, ignore_index=True)
    for column in p.axis:
        points[column] = points[column] * FACTOR ** (1 / len(p.axis))
    truth = np.empty((len(points), len(p.targets)))
    point_labels = points[p.group].astype(str) if p.group else pd.Series("all_data", index=points.index)
    for label in point_labels.unique():
        rows = np.flatnonzero(point_labels == label)
        columns = {c: points[c].to_numpy(float)[rows] for c in p.inputs}
        truth[rows] = np.asarray(draft.mean(columns, draft.constants[label]), float).reshape(len(rows), -1)
    return points, truth


def new_runs(truth: np.ndarray, noise, seed: int, name: str) -> np.ndarray:
    """A new run at each probe, its noise drawn for this instance alone.  Seeded by the data seed only,
    every problem of a data seed drew the same first normal deviates (2.04 and -2.56 at seed 3): one
    draw for all, so coverage swung with the seed; the problem's name makes each instance's its own."""
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    factor = np.exp(rng.normal(0, noise.sigma, truth.shape) + rng.normal(0, noise.seed_sigma, (len(truth), 1)))
    return truth * factor


def coverage(law, table: Table, constants, points: Table, truth, new, method: str, level: float,
             others=()) -> dict:
    replicates = _replicates(law, table, constants, method)
    ci_lo, ci_hi = interval(law, points, replicates, level, "confidence", others=others)
    pi_lo, pi_hi = interval(law, points, replicates, level, "prediction", others=others)
    with np.errstate(all="ignore"):
        return {"ci_truth": float(np.mean((ci_lo <= truth) & (truth <= ci_hi))),
                "pi_new": float(np.mean((pi_lo <= new) & (new <= pi_hi))),
                "pi_truth": float(np.mean((pi_lo <= truth) & (truth <= pi_hi))),
                "pi_width": float(np.nanmedian((pi_hi - pi_lo) / np.abs(truth)))}


_last: list = []  # (law, table, method, replicates): a law is measured alone and then with its forms


def _replicates(law, table: Table, constants, method: str):
    """The law's replicates, drawn once for both measurements of one instance (seeded: the same either way)."""
    if _last and _last[0] is law and _last[1] is table and _last[2] == method:
        return _last[3]
    make = bootstrap if method == "bootstrap" else laplace
    _last[:] = [law, table, method, make(law, table, constants, n=200, seed=0)]
    return _last[3]


def instance_tables(problem, draft):
    law_problem = problem.problem
    table = make_table(problem.train, law_problem)
    points_df, truth = probes(problem, draft)
    points = make_table(points_df, law_problem, require_targets=False)
    return table, points, truth


def _true_form_instances(seeds, wanted=lambda problem: True):
    """(problem, seed, law, table, constants, points, truth, new runs) for each problem with an axis and a
    writable truth that ``wanted`` keeps, the true form refitted; an error row where that fit fails."""
    for seed in seeds:
        for problem in synthetic_suite(seed):
            if not problem.truth or not problem.problem.axis or not wanted(problem):
                continue
            draft = get_draft(problem.name, seed)
            p = problem.problem
            try:
                table, points, truth = instance_tables(problem, draft)
                law = parse_law(problem.truth, p.inputs, p.targets)
                constants = fit_law(law, table, seed=0).constants
            except (SldError, ValueError) as exc:
                yield {"problem": problem.name, "family": problem.family, "error": str(exc)}
                continue
            new = new_runs(truth, problem.noise, seed, problem.name)
            yield problem, seed, law, table, constants, points, truth, new


def true_form_rows(seeds, level):
    for item in _true_form_instances(seeds):
        if isinstance(item, dict):
            yield item
            continue
        problem, seed, law, table, constants, points, truth, new = item
        for method in ("bootstrap", "delta"):
            yield _measured(problem, seed, "true form", method, law, table, constants, points, truth, new, level)


def _has_checkpoints(problem) -> bool:
    runs = problem.train_runs
    return runs is not None and len(set(runs)) < len(runs)


def checkpoint_rows(seeds, level):
    """The checkpoint sweeps: intervals with rows as runs against intervals with the runs named."""
    for item in _true_form_instances(seeds, _has_checkpoints):
        if isinstance(item, dict):
            yield item
            continue
        problem, seed, law, table, constants, points, truth, new = item
        named = replace(table, runs=problem.train_runs)
        for method in ("bootstrap", "delta"):
            yield _measured(problem, seed, "true form, rows as runs", method, law, table, constants, points,
                            truth, new, level)
            yield _measured(problem, seed, "true form, runs named", method, law, named, constants, points,
                            truth, new, level)


def discovered_rows(path, level, name_runs=False):
    summary = json.load(open(path))
    data_seed = int(summary.get("suite_seed", 0))
    rows = summary["problems"]
    suite = {p.name: p for p in synthetic_suite(data_seed)}
    for row in rows:
        problem = suite.get(row.get("problem"))
        if problem is None or not row.get("constants") or not problem.problem.axis:
            continue
        p = problem.problem
        try:
            table, points, truth = instance_tables(problem, get_draft(problem.name, data_seed))
            law = parse_law(row["law"], p.inputs, p.targets)
            others = [Member(parse_law(a["law"], p.inputs, p.targets), a["constants"])
                      for a in row.get("alternatives", [])]
        except (SldError, ValueError) as exc:
            yield {"problem": problem.name, "family": problem.family, "error": str(exc)}
            continue
        if name_runs and _has_checkpoints(problem):
            table = replace(table, runs=problem.train_runs)  # as a user who names the run column
        new = new_runs(truth, problem.noise, data_seed, problem.name)
        for method in ("bootstrap", "delta"):
            yield _measured(problem, data_seed, "discovered", method, law, table, row["constants"], points, truth,
                            new, level)
            yield _measured(problem, data_seed, "discovered + forms", method, law, table, row["constants"], points,
                            truth, new, level, others)


def _measured(problem, seed, law_kind, method, law, table, constants, points, truth, new, level, others=()):
    start = time.perf_counter()
    out = {"problem": problem.name, "family": problem.family, "data_seed": seed, "law": law_kind, "method": method,
           "forms": 1 + len(others)}
    try:
        out.update(coverage(law, table, constants, points, truth, new, method, level, others))
    except SldError as exc:
        out["error"] = str(exc)
    out["seconds"] = round(time.perf_counter() - start, 2)
    return out


def report(rows: list[dict], level: float) -> None:
    done = [r for r in rows if "error" not in r]
    print(f"nominal level {level:.0%}; probes {FACTOR:g}x beyond the data; "
          f"{len(rows) - len(done)} instance(s) without an interval\n")
    print("| law | method | instances | CI contains truth | PI contains new run | PI contains truth | median PI width |")
    print("|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in done:
        by[(r["law"], r["method"])].append(r)
    for (law, method), rs in by.items():
        cells = [f"{statistics.mean(r[c] for r in rs):.1%}" for c in CHECKS]
        widths = [r["pi_width"] for r in rs if np.isfinite(r["pi_width"])]  # NaN: no probe had a finite band
        width = statistics.median(widths) if widths else float("nan")
        print(f"| {law} | {method} | {len(rs)} | " + " | ".join(cells) + f" | {width:.1%} |")
    print("\nBy family (PI contains the new run):\n")
    keys = list(by)
    print("| family | " + " | ".join(f"{law}, {method}" for law, method in keys) + " |")
    print("|---|" + "---|" * len(keys))
    for family in dict.fromkeys(r["family"] for r in done):
        cells = []
        for key in keys:
            rs = [r for r in by[key] if r["family"] == family]
            cells.append(f"{statistics.mean(r['pi_new'] for r in rs):.0%} ({len(rs)})" if rs else "-")
        print(f"| {family} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-seeds", type=int, nargs="*", default=[0, 1, 2])
    ap.add_argument("--from-suite", nargs="*", default=[], help="JSON of `sld bench --suite synthetic --json`")
    ap.add_argument("--checkpoints", action="store_true", help="only the checkpoint sweeps, rows vs runs resampled")
    ap.add_argument("--name-runs", action="store_true",
                    help="with --from-suite: name the run column of the checkpoint sweeps (their intervals count runs)")
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--json", help="write every instance's row here")
    args = ap.parse_args()
    if args.checkpoints:
        rows = list(checkpoint_rows(args.data_seeds, args.level))
        report(rows, args.level)
        return
    rows = list(true_form_rows(args.data_seeds, args.level))
    for path in args.from_suite:
        rows += list(discovered_rows(path, args.level, args.name_runs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    report(rows, args.level)


if __name__ == "__main__":
    main()
