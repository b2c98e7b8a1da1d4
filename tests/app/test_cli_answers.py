"""`sld predict --interval` and `sld allocate`: the answers a training team acts on, from a saved law."""
import json

import numpy as np
import pandas as pd
import pytest

from agent.expressions import parse_law
from agent.fitting import fit_law
from agent.problem import Problem, make_table
from agent.uncertainty import bootstrap

LINES = ["loss = E + A*(N/1e8)**(-a) + B*(D/1e10)**(-b)"]


@pytest.fixture(scope="module")
def saved_law(tmp_path_factory):
    """A law JSON as `sld discover --bootstrap 40 --save` writes it, fitted on a small N x D grid."""
    rng = np.random.default_rng(0)
    N, D = np.meshgrid(np.geomspace(1e7, 1e9, 5), np.geomspace(2e8, 2e10, 5))
    df = pd.DataFrame({"N": N.ravel(), "D": D.ravel()})
    df["loss"] = (1.69 + 406.4 * df.N ** -0.34 + 410.7 * df.D ** -0.28) * np.exp(rng.normal(0, 0.005, len(df)))
    problem = Problem(("N", "D"), ("loss",))
    law = parse_law(LINES, problem.inputs, problem.targets)
    table = make_table(df, problem)
    constants = fit_law(law, table, seed=0).constants
    payload = {"law": LINES, "inputs": ["N", "D"], "targets": ["loss"], "constants": constants,
               "validation": {}, "group": None}
    folder = tmp_path_factory.mktemp("law")
    plain = folder / "plain.json"
    plain.write_text(json.dumps(payload))
    with_boot = folder / "boot.json"
    payload["bootstrap"] = bootstrap(law, table, constants, n=40, seed=0).to_dict()
    with_boot.write_text(json.dumps(payload))
    points = folder / "points.csv"
    pd.DataFrame({"N": [1e9, 1e10, 1e11], "D": [2e10, 2e11, 2e12]}).to_csv(points, index=False)
    return plain, with_boot, points


def test_predict_gives_intervals_that_widen_with_distance_and_prediction_ones_are_wider(sld, saved_law):
    _, law, points = saved_law
    conf = sld("predict", "--law", str(law), "--csv", str(points), "--interval", "0.9")
    pred = sld("predict", "--law", str(law), "--csv", str(points), "--interval", "0.9", "--kind", "prediction")
    assert conf.exit_code == 0 and pred.exit_code == 0, conf.stderr + pred.stderr
    c = pd.read_csv(__import__("io").StringIO(conf.stdout))
    p = pd.read_csv(__import__("io").StringIO(pred.stdout))
    assert np.all(c.loss_lo <= c.loss) and np.all(c.loss <= c.loss_hi)
    assert np.all(np.diff(c.loss_hi - c.loss_lo) > 0)  # further out, less sure
    assert np.all(p.loss_hi - p.loss_lo > c.loss_hi - c.loss_lo)


def test_an_interval_without_a_bootstrap_says_how_to_get_one(sld, saved_law):
    plain, _, points = saved_law
    result = sld("predict", "--law", str(plain), "--csv", str(points), "--interval", "0.9")
    assert result.exit_code == 2 and "--bootstrap" in result.stderr


def test_allocate_finds_the_textbook_optimum_with_an_interval(sld, saved_law):
    _, law, _ = saved_law
    result = sld("allocate", "--law", str(law), "--size", "N", "--data", "D", "--budget", "1e20,1e22",
                 "--size-range", "1e6,1e13", "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)["allocations"]
    assert [r["budget"] for r in rows] == [1e20, 1e22]
    for r in rows:
        assert r["size"] * r["data"] * 6 == pytest.approx(r["budget"])
        assert r["interval"]["size"][0] <= r["size"] <= r["interval"]["size"][1]
    assert rows[1]["size"] > rows[0]["size"] and rows[1]["loss"] < rows[0]["loss"]
    same = sld("optimal", "--law", str(law), "--size", "N", "--data", "D", "--compute", "1e20,1e22",
               "--size-range", "1e6,1e13", "--json")  # the spelling of the same command
    assert same.exit_code == 0 and json.loads(same.stdout)["allocations"] == rows


def test_allocate_warns_when_the_law_was_never_validated_along_the_data_column(sld, saved_law, tmp_path):
    plain, _, _ = saved_law
    args = ["--size", "N", "--data", "D", "--budget", "1e20", "--size-range", "1e6,1e13", "--json"]
    assert json.loads(sld("allocate", "--law", str(plain), *args).stdout)["warnings"] == []  # axis not recorded
    for axis, warned in ((["N", "D"], False), (["N"], True)):
        law = tmp_path / "law.json"
        law.write_text(json.dumps({**json.loads(plain.read_text()), "axis": axis}))
        out = json.loads(sld("allocate", "--law", str(law), *args).stdout)
        assert bool(out["warnings"]) == warned and all("not along D" in w for w in out["warnings"])
    shown = sld("allocate", "--law", str(law), *args[:-1])
    assert shown.exit_code == 0 and "not along D" in shown.stderr


@pytest.mark.parametrize("args, message", [
    (["--size", "N", "--data", "tokens"], "tokens"),
    (["--size", "N", "--data", "D", "--size-range", "1e9"], "two numbers"),
    (["--size", "N", "--data", "D", "--budget", "lots"], "not a number"),
])
def test_allocate_names_bad_requests(sld, saved_law, args, message):
    _, law, _ = saved_law
    base = {"--budget": "1e21", "--size-range": "1e6,1e13"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = ["allocate", "--law", str(law)] + [x for kv in base.items() for x in kv]
    result = sld(*argv)
    assert result.exit_code == 2 and message in result.stderr


def test_discover_can_make_its_replicates_with_the_delta_method_in_seconds(saved_law):
    """`sld discover --bootstrap N --uncertainty delta`: the law JSON gets draws, not refits, and says so."""
    from agent.errors import DataError
    from app.cli.answers_cmd import bootstrap_payload

    plain, _, _ = saved_law
    payload = json.loads(plain.read_text())
    rng = np.random.default_rng(1)
    N, D = np.meshgrid(np.geomspace(1e7, 1e9, 5), np.geomspace(2e8, 2e10, 5))
    train = pd.DataFrame({"N": N.ravel(), "D": D.ravel()})
    train["loss"] = (1.69 + 406.4 * train.N ** -0.34 + 410.7 * train.D ** -0.28) * np.exp(rng.normal(0, 0.005, 25))
    out = bootstrap_payload(payload, Problem(("N", "D"), ("loss",)), train, 200, 0, "delta")
    assert out["uncertainty_method"] == "delta" and len(out["bootstrap"]["replicates"]) == 200
    lo, hi = out["constant_intervals"]["all_data"]["a"]
    assert lo < payload["constants"]["all_data"]["a"] < hi
    with pytest.raises(DataError, match="unknown uncertainty method 'laplace'"):
        bootstrap_payload(payload, Problem(("N", "D"), ("loss",)), train, 10, 0, "laplace")


def test_suggest_ranks_candidate_runs_per_flop_and_needs_a_bootstrap(sld, saved_law, tmp_path):
    plain, with_boot, _ = saved_law
    candidates = tmp_path / "next.csv"
    pd.DataFrame({"N": [1e8, 2e9, 2e9], "D": [2e9, 4e10, 2e9]}).to_csv(candidates, index=False)
    r = sld("suggest", "--law", str(with_boot), "--csv", str(candidates), "--target", "N=7e10,D=1.4e12",
            "--cost", "N,D", "--json")
    assert r.exit_code == 0, r.stderr
    ranked = json.loads(r.stdout)
    assert sorted(s["row"] for s in ranked) == [1, 2, 3]
    assert [s["cost"] for s in ranked if s["row"] == 2] == [6 * 2e9 * 4e10]
    assert all(a["score"] >= b["score"] for a, b in zip(ranked, ranked[1:]))
    missing = sld("suggest", "--law", str(plain), "--csv", str(candidates), "--target", "N=7e10,D=1.4e12")
    assert missing.exit_code == 2 and "--bootstrap" in missing.stderr
