"""Replay choice rules among a run's close finalists on a finished synthetic suite run.

``sld bench --suite synthetic --json`` records, per problem, the reported law and its close
finalists (``alternatives``), each refitted on all training rows.  This script asks, without a new
search, what other rules for picking one of them would have reported:

- ``reported``: the law the search reported (the literature form first among the close ones);
- ``consensus``: the member whose predictions beyond the data (each group's furthest training rows
  pushed 2x, 4x and 10x along the axis, the search's own probes) lie nearest the members' median,
  in median relative distance; with fewer than three members the reported law stays;
- ``median of members``: no single law; each test point predicted by the median of the members'
  predictions (model averaging, the form uncertainty's centre); with one member the reported law;
- ``best member (oracle)``: the member with the lowest test NMSE, the ceiling of any rule here.

Only training rows choose (probes are built from them); test rows only score, as the suite does.

    python scripts/consensus_replay.py s0.json s1.json s2.json --data-seeds 0 0 0   # search seeds 0-2 of one draw
"""
from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict

import numpy as np

from agent.errors import SldError
from agent.expressions import parse_law
from agent.fitting import predict
from agent.plan import plan_discovery
from agent.problem import axis_values, make_table
from agent.scoring import score
from agent.search.probes import FACTORS, build_probes
from app.suite import WIN_RATIO, search_request
from tasks.synthetic.suite import get_problem

CONSENSUS_FACTORS = (2.0, 4.0, 10.0)


def members(row: dict) -> list[tuple[list[str], dict]]:
    return [(row["law"], row["constants"])] + [(a["law"], a["constants"]) for a in row.get("alternatives") or []]


def predictions(lines, constants, problem, table) -> np.ndarray:
    law = parse_law(lines, problem.inputs, problem.targets)
    groups = table.groups if problem.group else np.full(len(table), next(iter(constants)), dtype=object)
    return predict(law, table, constants, groups)


def consensus_index(preds: list[np.ndarray], rows: np.ndarray) -> int:
    if len(preds) < 3:
        return 0
    stack = np.stack([p[rows] for p in preds])
    centre = np.nanmedian(stack, axis=0)
    with np.errstate(all="ignore"):
        distance = np.abs(stack - centre) / np.abs(centre)
    per_member = [float(np.nanmedian(d)) if np.isfinite(d).any() else math.inf for d in distance]
    return int(np.argmin(per_member))


def replay(row: dict, data_seed: int) -> dict | None:
    if not row.get("law"):
        return None
    sp = get_problem(row["problem"], data_seed)
    plan = plan_discovery(sp.train, search_request(sp))
    problem = plan.problem
    train = make_table(sp.train, problem)
    test = make_table(sp.test, problem)
    axis = axis_values(sp.train, problem) if problem.axis else None
    probes, _ = build_probes(sp.train, problem, train, axis)
    nmse, far, on_test = [], [], []
    for lines, constants in members(row):
        try:  # one entry per member in each list, or none in on_test: a member that fails scores inf
            member_test = predictions(lines, constants, problem, test)
            member_far = predictions(lines, constants, problem, probes) if probes is not None else None
        except SldError:
            nmse.append(math.inf)
            far.append(None)
            continue
        on_test.append(member_test)
        nmse.append(score(test.y, member_test).nmse)
        far.append(member_far)
    with np.errstate(all="ignore"):
        averaged = score(test.y, np.median(np.stack(on_test), axis=0)).nmse if on_test else math.inf
    usable = [i for i, p in enumerate(far) if p is not None]
    pick = 0
    if probes is not None and len(usable) >= 3 and 0 in usable:
        factor = np.tile(np.asarray(FACTORS), len(probes) // len(FACTORS))
        rows = np.isin(factor, CONSENSUS_FACTORS)
        pick = usable[consensus_index([far[i] for i in usable], rows)]
    best = row["best_textbook_nmse"] or 0.0
    win = (lambda v: bool(math.isfinite(v) and v <= WIN_RATIO * best)) if best > 0 else (lambda v: False)
    oracle = int(np.argmin(nmse))
    return {"problem": row["problem"], "family": row["family"], "members": len(nmse),
            "reported": win(nmse[0]), "consensus": win(nmse[pick]), "median": win(averaged), "oracle": win(nmse[oracle]),
            "picked": pick, "ratio_reported": nmse[0] / best if best else None,
            "ratio_consensus": nmse[pick] / best if best else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite_json", nargs="+")
    parser.add_argument("--data-seeds", type=int, nargs="+", default=None,
                        help="the suite data seed of each file (default 0, 1, ...)")
    args = parser.parse_args()
    seeds = args.data_seeds or list(range(len(args.suite_json)))
    results = []
    for path, seed in zip(args.suite_json, seeds):
        with open(path) as fh:
            for row in json.load(fh)["problems"]:
                out = replay(row, seed)
                if out is not None:
                    results.append(out | {"data_seed": seed})
    by_family = defaultdict(list)
    for r in results:
        by_family[r["family"]].append(r)
    rules = ("reported", "consensus", "median", "oracle")
    print("| family | problems | reported | consensus | median of members | best member (oracle) |")
    print("|---|---|---|---|---|---|")
    for family, rs in by_family.items():
        print(f"| {family} | {len(rs)} | " + " | ".join(str(sum(r[k] for r in rs))
                                                      for k in rules) + " |")
    print(f"| **all** | {len(results)} | " + " | ".join(f"**{sum(r[k] for r in results)}**"
                                                     for k in rules) + " |")
    changed = [r for r in results if r["picked"] != 0]
    ratios = [(r["ratio_reported"], r["ratio_consensus"]) for r in changed if r["ratio_reported"] and r["ratio_consensus"]]
    if ratios:
        logs = np.log10(np.array(ratios))
        print(f"\nconsensus changed the law on {len(changed)} problems; median log10 NMSE ratio to the oracle "
              f"textbook: reported {np.median(logs[:, 0]):.3f}, consensus {np.median(logs[:, 1]):.3f}")


if __name__ == "__main__":
    main()
