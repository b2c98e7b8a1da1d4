"""``sld bench --suite synthetic``: the search scored on known laws against textbook forms."""
from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

import app.cli.suite_cmd
from agent.expressions import parse_law
from agent.defaults import DEFAULT_WORK
from agent.plan import DiscoveryRequest
from app.suite import error_at_largest, score_textbooks, search_request, summarize_suite, textbook_forms
from tasks.synthetic import get_problem

RECORD_KEYS = {"problem", "family", "r2", "nmse", "err_at_largest", "best_textbook", "best_textbook_nmse", "ratio",
               "win", "n_constants", "complexity", "law", "seconds", "textbooks", "error"}


def test_the_search_runs_with_the_defaults_of_sld_discover_at_a_quarter_of_its_work():
    problem = get_problem("chinchilla_additive_01")
    asked = search_request(problem, seed=3)
    plain = DiscoveryRequest.for_problem(problem.problem)  # what sld discover asks with default options
    assert replace(asked, work_budget=plain.work_budget, workers=plain.workers, seed=0) == plain
    assert asked.work_budget == DEFAULT_WORK / 4 and asked.seed == 3
    assert search_request(problem, work=DEFAULT_WORK).work_budget == DEFAULT_WORK  # the full effort on request
    small = search_request(problem, budget=30, work=20_000, time_limit=0, workers=1)
    assert (small.budget, small.work_budget, small.time_limit, small.workers) == (30, 20_000, None, 1)


def test_textbook_forms_are_power_laws_in_each_input_spanning_decades_plus_the_truth():
    problem = get_problem("moe_02")  # inputs dense_params and E: a constant named E must not clash
    forms = textbook_forms(problem)
    assert set(forms) == {"power_dense_params", "power_E", "additive", "multiplicative", "truth"}
    assert forms["truth"] == problem.truth
    for lines in forms.values():
        law = parse_law(lines, problem.problem.inputs, problem.problem.targets)
        assert not set(law.constants) & set(problem.problem.inputs)
    assert parse_law(forms["additive"], ("dense_params", "E"), ("loss",)).n_constants == 5
    assert parse_law(forms["multiplicative"], ("dense_params", "E"), ("loss",)).n_constants == 4


def test_a_lr_knob_spans_decades_too_and_mixtures_get_a_linear_form_per_target():
    assert "power_lr" in textbook_forms(get_problem("hyper_bowl_01"))
    mixture = get_problem("mixture_02")
    forms = textbook_forms(mixture)
    assert set(forms) == {"linear", "truth"}
    assert [line.split(" = ")[0] for line in forms["linear"]] == list(mixture.problem.targets)


def test_the_truth_form_refitted_on_noiseless_rows_is_the_best_textbook_form():
    scores = score_textbooks(get_problem("power_offset_03", noiseless=True))
    assert scores["truth"]["nmse"] < 1e-8
    assert min(scores, key=lambda k: scores[k]["nmse"]) == "truth"
    assert scores["power_finetune_tokens"]["nmse"] > 100 * scores["truth"]["nmse"]  # the shift matters


def test_the_error_at_the_largest_test_point_averages_the_rows_tied_there():
    problem = get_problem("chinchilla_additive_01")  # a grid: the largest N holds several D
    y = problem.test[["loss"]].to_numpy()
    predicted = y.copy()
    at_max = problem.test["params"].to_numpy() == problem.test["params"].max()
    predicted[at_max, 0] *= 1.1
    predicted[~at_max, 0] *= 3.0  # rows short of the largest axis value do not count
    assert error_at_largest(problem, predicted) == pytest.approx(0.1)
    mixture = get_problem("mixture_01")  # no axis: the test row with the largest target
    y = mixture.test[["loss"]].to_numpy()
    predicted = y * 1.5
    predicted[np.argmax(y)] = y.max() * 0.98
    assert error_at_largest(mixture, predicted) == pytest.approx(0.02)


def row(name, family, r2, nmse, best, win, n_constants=4, complexity=15, err=0.01):
    return {"problem": name, "family": family, "r2": r2, "nmse": nmse, "err_at_largest": err,
            "best_textbook": "truth", "best_textbook_nmse": best, "ratio": nmse / best, "win": win,
            "n_constants": n_constants, "complexity": complexity, "law": ["y = a*x"], "seconds": 2.0,
            "textbooks": {}, "error": None}


def test_the_summary_gives_wins_and_medians_per_family_and_overall_as_strict_json():
    rows = [row("a_01", "a", 0.9, 0.1, 0.1, True, 3, 11, 0.01), row("a_02", "a", 0.5, 0.5, 0.1, False, 5, 21, 0.05),
            row("b_01", "b", 0.8, 0.2, 0.25, True, 6, 30, 0.03),
            {**row("b_02", "b", 0.0, 1.0, 1.0, False), "r2": None, "nmse": math.inf, "ratio": math.inf,
             "err_at_largest": None, "n_constants": None, "complexity": None, "law": None, "error": "no law"}]
    summary = summarize_suite(rows)
    json.dumps(summary, allow_nan=False)  # strict JSON: the failed problem's inf became null
    assert summary["problems"][3]["nmse"] is None and summary["problems"][3]["ratio"] is None
    assert summary["families"]["a"] == {"problems": 2, "wins": 1, "win_fraction": 0.5,
                                        "median_r2": pytest.approx(0.7), "median_err_at_largest": pytest.approx(0.03)}
    assert summary["families"]["b"]["median_r2"] is None  # (0.8 and a failure at -inf): the median is -inf
    overall = summary["overall"]
    assert (overall["problems"], overall["wins"], overall["win_fraction"]) == (4, 2, 0.5)
    assert overall["median_r2"] == pytest.approx(0.65)
    assert (overall["median_n_constants"], overall["median_complexity"]) == (5, 21)
    assert overall["seconds"] == 8.0


def test_suite_options_without_a_suite_or_with_unknown_names_are_one_line_errors(sld):
    result = sld("bench", "--family", "moe")
    assert result.exit_code == 2 and "need --suite synthetic" in result.stderr
    result = sld("bench", "--suite", "synthetic", "--problem", "chinchilla_99")
    assert result.exit_code == 2 and "unknown synthetic problem or family: chinchilla_99" in result.stderr
    result = sld("bench", "--suite", "natural")
    assert result.exit_code == 2 and "unknown suite 'natural'" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_table_shows_each_problem_and_the_per_family_summary(sld, monkeypatch):
    seen = []

    def fake_run(problem, **options):  # the printing and filtering are under test, not the search
        seen.append((problem.name, options["seed"], options["budget"]))
        return row(problem.name, problem.family, 0.95, 0.05, 0.05, True)

    monkeypatch.setattr(app.cli.suite_cmd, "run_problem", fake_run)
    result = sld("bench", "--suite", "synthetic", "--family", "moe", "--limit", "3", "--seed", "2", "--budget", "50")
    assert result.exit_code == 0, result.stderr
    assert seen == [("moe_01", 2, 50), ("moe_02", 2, 50), ("moe_03", 2, 50)]
    assert "moe_03" in result.stdout and "moe_04" not in result.stdout
    assert "Per family" in result.stdout and "3 (100%)" in result.stdout and "0.9500" in result.stdout


def test_another_data_seed_draws_other_constants_and_noise_for_the_same_problems(sld, monkeypatch):
    seen = []

    def fake_run(problem, **options):
        seen.append(problem.train.iloc[0].to_dict())
        return row(problem.name, problem.family, 0.95, 0.05, 0.05, True)

    monkeypatch.setattr(app.cli.suite_cmd, "run_problem", fake_run)
    for data_seed in ("0", "1", "1"):
        result = sld("bench", "--suite", "synthetic", "--problem", "moe_01", "--data-seed", data_seed, "--json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["suite_seed"] == int(data_seed)
    assert seen[0] != seen[1] and seen[1] == seen[2]


@pytest.mark.slow
def test_one_small_problem_with_a_tiny_budget_gives_a_well_formed_record(sld):
    result = sld("bench", "--suite", "synthetic", "--problem", "power_offset_01", "--budget", "30", "--work", "20000",
                 "--workers", "1", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)  # the whole of stdout is one JSON object
    assert set(out) == {"suite", "suite_seed", "seed", "loss", "problems", "families", "overall"}
    (record,) = out["problems"]
    assert RECORD_KEYS <= set(record) and record["error"] is None
    assert record["family"] == "power_offset" and record["candidates"] == 30
    problem = get_problem("power_offset_01")
    law = parse_law(record["law"], problem.problem.inputs, problem.problem.targets)
    assert (record["n_constants"], record["complexity"]) == (law.n_constants, law.complexity)
    assert record["r2"] == pytest.approx(1 - record["nmse"])
    assert record["ratio"] == pytest.approx(record["nmse"] / record["best_textbook_nmse"])
    assert record["win"] == (record["ratio"] <= 1.1)
    assert {"power_params", "truth"} <= set(record["textbooks"])
    assert 0 <= record["err_at_largest"] < 0.2
    assert out["overall"]["problems"] == 1 and out["families"]["power_offset"]["wins"] in (0, 1)


def test_a_suite_loss_fits_the_search_and_the_textbook_forms_alike():
    """`sld bench --suite synthetic --loss L`: the yardstick is fitted as the search is, so a loss is
    judged on the forms it produces, not on a different fit of the oracle."""
    problem = get_problem("power_offset_01")
    assert search_request(problem, loss="huber_log").loss == "huber_log"
    assert search_request(problem).loss == "auto"
    by_loss = {loss: score_textbooks(problem, 0, loss)["truth"]["nmse"] for loss in ("lsq", "log")}
    assert by_loss["lsq"] != pytest.approx(by_loss["log"], rel=1e-6)
