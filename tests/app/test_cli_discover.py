"""`sld discover --csv` and `sld predict` on data generated from a known law."""
import json

import numpy as np
import pandas as pd
import pytest

TRUE = dict(E=1.69, A=406.4, alpha=0.34, B=410.7, beta=0.28)


def chinchilla(N, D):
    return TRUE["E"] + TRUE["A"] * N ** -TRUE["alpha"] + TRUE["B"] * D ** -TRUE["beta"]


@pytest.fixture
def sweep(tmp_path):
    """A small-scale sweep (train) and a 10x larger held-out scale (test), 0.3% noise."""
    rng = np.random.default_rng(0)
    N, D = np.meshgrid(np.logspace(7, 8.5, 6), np.logspace(9, 10.5, 6))
    train = pd.DataFrame({"N": N.ravel(), "D": D.ravel()})
    train["loss"] = chinchilla(train.N, train.D) * (1 + rng.normal(0, 0.003, len(train)))
    big = pd.DataFrame({"N": [3e9, 1e9, 5e9], "D": [1e11, 3e11, 2e11]})
    train_csv, points_csv = tmp_path / "sweep.csv", tmp_path / "points.csv"
    train.to_csv(train_csv, index=False)
    big.to_csv(points_csv, index=False)
    return train_csv, points_csv, big


@pytest.mark.slow
def test_discover_on_a_csv_recovers_a_law_that_extrapolates_within_one_percent(sld, sweep, tmp_path):
    train_csv, points_csv, big = sweep
    law_json = tmp_path / "law.json"
    result = sld("discover", "--csv", str(train_csv), "--inputs", "N,D", "--target", "loss", "--cap", "5",
                 "--budget", "120", "--time-limit", "0", "--workers", "1", "--json", "--save", str(law_json))
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert set(payload) >= {"law", "constants", "inputs", "targets", "validation", "test", "selection"}
    assert payload["inputs"] == ["N", "D"] and payload["targets"] == ["loss"]
    # beside the law: how many finalists were as good, and how far apart they predict beyond the data
    assert payload["selection"]["close_finalists"] >= 1 and payload["selection"]["margin"] > 0
    predicted = sld("predict", "--law", str(law_json), "--csv", str(points_csv))
    assert predicted.exit_code == 0, predicted.stderr
    out = pd.read_csv(__import__("io").StringIO(predicted.stdout))
    truth = chinchilla(big.N, big.D).to_numpy()
    assert np.max(np.abs(out["loss"].to_numpy() / truth - 1)) < 0.01


@pytest.mark.parametrize("content, args, message", [
    ("N,loss\n1,2\n2,3\n", ["--inputs", "N,D", "--target", "loss"], "column 'D' is not in the data"),
    ("N,loss\n1,2\n2,nan\n4,1\n", ["--inputs", "N", "--target", "loss"], "NaN"),
    ("N,loss\n1,2\nabc,3\n4,1\n", ["--inputs", "N", "--target", "loss"], "not numeric"),
    ("N,loss\n1,2\n2,3\n4,1\n", ["--inputs", "N", "--target", "loss", "--axis", "T"], "column 'T' is not in the data"),
    ("N,loss\n1,2\n2,3\n4,1\n", ["--inputs", "N", "--target", "loss", "--run", "run_id"],
     "column 'run_id' is not in the data"),
    ("N,loss\n1,2\n", ["--inputs", "N"], "--target"),
    # refused before the search, saying what to do (issue 18)
    ("N,vocab,loss\n1,5,2\n2,5,3\n4,5,1\n8,5,0.5\n", ["--inputs", "N,vocab", "--target", "loss"],
     "input 'vocab' has the same value (5) in every row, so no law can learn its effect; leave it out"),
    ("N,loss\n1,2\n2,2\n4,2\n8,2\n", ["--inputs", "N", "--target", "loss"],
     "target 'loss' has the same value (2) in every row: there is nothing to fit"),
    ("N,loss\n1,2\n1,2.1\n10,1\n10,1.1\n", ["--inputs", "N", "--target", "loss"],
     "the axis (N) has only 2 distinct values; validating extrapolation along it needs at least 3"),
    ("N,loss\n1,2\n2,-1\n4,1\n8,0.5\n", ["--inputs", "N", "--target", "loss", "--loss", "log"],
     "loss 'log' fits log residuals, but target 'loss' has 1 value(s) <= 0 in the training rows; use loss 'lsq'"),
])
def test_bad_input_gets_one_clear_line(sld, tmp_path, content, args, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = sld("discover", "--csv", str(path), *args, "--budget", "5")
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_loss_is_chosen_on_the_command_line_and_reported_with_the_law(sld, sweep):
    train_csv, _, _ = sweep
    args = ("discover", "--csv", str(train_csv), "--inputs", "N,D", "--target", "loss", "--budget", "5",
            "--workers", "1", "--json")
    for loss, fitted in (("lsq", "lsq"), ("huber_log", "huber_log"), ("auto", "robust_log")):
        result = sld(*args, "--loss", loss)
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["fit_loss"] == fitted
    unknown = sld(*args, "--loss", "l1")
    assert unknown.exit_code == 2 and "'l1' is not one of" in unknown.stderr


def test_checkpoints_name_their_run_and_the_bootstrap_resamples_whole_runs(sld, tmp_path):
    """Four runs, six checkpoints each, every checkpoint of a run off by that run's seed: with --run the
    saved law names the column, and its constants' intervals are wider than with every row a run."""
    rng = np.random.default_rng(0)
    sizes = np.repeat([1e7, 3e7, 1e8, 3e8, 1e9], 6)
    tokens = np.concatenate([20 * n * np.geomspace(0.1, 1.0, 6) for n in (1e7, 3e7, 1e8, 3e8, 1e9)])
    run = np.repeat(np.arange(5), 6)
    loss = chinchilla(sizes, tokens) * np.exp(rng.normal(0, 0.02, 5)[run] + rng.normal(0, 0.001, 30))
    path = tmp_path / "checkpoints.csv"
    pd.DataFrame({"N": sizes, "D": tokens, "run": [f"r{r}" for r in run], "loss": loss}).to_csv(path, index=False)
    widths = {}
    for extra in ((), ("--run", "run")):
        law_json = tmp_path / f"law{len(extra)}.json"
        args = ("discover", "--csv", str(path), "--inputs", "N,D", "--target", "loss", "--budget", "5",
                "--workers", "1", "--bootstrap", "30", "--json", "--save", str(law_json), *extra)
        result = sld(*args)
        assert result.exit_code == 0, result.stderr
        payload = json.loads(law_json.read_text())
        assert payload.get("run") == (extra[1] if extra else None)
        bands = payload["constant_intervals"]["all_data"]
        widths[bool(extra)] = np.median([hi - lo for lo, hi in bands.values()])
    assert widths[True] > 1.5 * widths[False]  # 2.7x here
    refused = sld("discover", "parallel_scaling_law", "--run", "run")
    assert refused.exit_code == 2 and "--run names a column of your own CSV" in refused.stderr


def test_a_missing_csv_and_a_task_plus_csv_are_refused(sld, tmp_path):
    assert "does not exist" in sld("discover", "--csv", str(tmp_path / "nope.csv"), "--inputs", "N",
                                   "--target", "y").stderr
    assert "either a bundled TASK or --csv" in sld("discover").stderr


def test_predict_refuses_a_file_that_is_not_a_law(sld, tmp_path):
    bad = tmp_path / "law.json"
    bad.write_text("{\"hello\": 1}")
    pts = tmp_path / "p.csv"
    pts.write_text("N\n1\n")
    result = sld("predict", "--law", str(bad), "--csv", str(pts))
    assert result.exit_code == 2 and "not a law JSON" in result.stderr


def test_a_reported_law_tied_to_an_inputs_reference_scale_says_so():
    from rich.console import Console

    from app.cli.discover_cmd import _report_selection
    console = Console(record=True, width=200)
    _report_selection({"close_finalists": 1, "margin": 0.2, "reference_dependent": ["tokens"]}, console)
    assert "depends on the reference scale of tokens" in console.export_text()
    console = Console(record=True, width=200)
    _report_selection({"close_finalists": 1, "margin": 0.2}, console)
    assert "reference scale" not in console.export_text()


def test_the_choice_line_names_the_rule_that_picked_the_law():
    from rich.console import Console

    from app.cli.discover_cmd import _report_selection
    for rule, says in [("literature form first", "the best-scoring literature form"), ("simplest", "the simplest")]:
        console = Console(record=True, width=200)
        _report_selection({"close_finalists": 4, "margin": 0.2, "rule": rule}, console)
        assert f"4 finalist(s) within 0.2 decades of the best, reported {says}" in console.export_text()
