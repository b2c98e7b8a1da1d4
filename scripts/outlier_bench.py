#!/usr/bin/env python
"""Does a few bad runs' pull on the fitted law go away with the default loss? (a benchmark on known truths, not a test)

Every synthetic suite problem with an axis, positive targets and a writable truth: its true form is
refitted on the training rows with each loss and scored on the test rows (R², floored at -1).  Twice:
on the rows as the suite draws them (0.2-2 % noise, a few problems with 2-3 rows 4-12 % high), and
with a share of the training rows raised 5-30 % as runs that diverged or used a bad setting are (the
same rows and factors for every loss).

    python scripts/outlier_bench.py --data-seeds 0 1 2 --share 0.08
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from agent.errors import SldError  # noqa: E402
from agent.expressions import parse_law  # noqa: E402
from agent.fitting import FitOptions, fit_law, predict  # noqa: E402
from agent.problem import make_table  # noqa: E402
from agent.scoring import score  # noqa: E402
from tasks.synthetic.suite import synthetic_suite  # noqa: E402

LOSSES = ("log", "huber_log", "robust_log")


def contaminate(frame, targets, share: float, rng: np.random.Generator):
    """A copy with round(share * rows) rows (at least one) raised 5-30 % in every target."""
    out = frame.copy()
    if share <= 0:
        return out
    rows = rng.choice(len(out), max(1, int(round(share * len(out)))), replace=False)
    factor = 1.0 + rng.uniform(0.05, 0.30, len(rows))
    for t in targets:
        values = out[t].to_numpy(dtype=float, copy=True)
        values[rows] *= factor
        out[t] = values
    return out


def test_r2(law, train, test, loss: str) -> float:
    try:
        fitted = fit_law(law, train, seed=0, options=FitOptions(loss=loss))
        return max(score(test.y, predict(law, test, fitted.constants, test.groups)).r2, -1.0)
    except SldError:
        return -1.0


def run(data_seeds, share: float) -> dict:
    rows = []
    for ds in data_seeds:
        for sp in synthetic_suite(ds):
            p = sp.problem
            if not sp.truth or not p.axis or (sp.train[list(p.targets)] <= 0).any().any():
                continue
            law = parse_law(sp.truth, p.inputs, p.targets)
            test = make_table(sp.test, p)
            rng = np.random.default_rng([ds, len(sp.train)])
            for label, frame in (("as drawn", sp.train), ("bad runs", contaminate(sp.train, p.targets, share, rng))):
                train = make_table(frame, p)
                r2 = {loss: test_r2(law, train, test, loss) for loss in LOSSES}
                rows.append({"data_seed": ds, "problem": sp.name, "rows": label, **r2})
                print(f"{ds} {sp.name:26s} {label:9s} " + " ".join(f"{k}={v:+.3f}" for k, v in r2.items()), flush=True)
    return {"share": share, "rows": rows}


def table(result: dict) -> str:
    lines = ["| training rows | problems | " + " | ".join(f"mean test R² ({loss})" for loss in LOSSES)
             + " | robust_log better / worse than log by > 0.01 |", "|---" * (len(LOSSES) + 3) + "|"]
    for label in ("as drawn", "bad runs"):
        rows = [r for r in result["rows"] if r["rows"] == label]
        better = sum(r["robust_log"] > r["log"] + 0.01 for r in rows)
        worse = sum(r["robust_log"] < r["log"] - 0.01 for r in rows)
        shown = label if label == "as drawn" else f"{result['share']:.0%} raised 5-30 %"
        lines.append(f"| {shown} | {len(rows)} | " + " | ".join(f"{statistics.mean(r[loss] for r in rows):.3f}"
                                                              for loss in LOSSES) + f" | {better} / {worse} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--share", type=float, default=0.08, help="share of training rows raised (bad runs)")
    ap.add_argument("--json", help="write every row here")
    args = ap.parse_args()
    result = run(args.data_seeds, args.share)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)
    print(table(result))


if __name__ == "__main__":
    main()
