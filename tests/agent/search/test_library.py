"""The seed library: generic shapes over whatever inputs a dataset has, within the constant cap."""
import numpy as np
import pandas as pd

from agent.expressions import parse_law
from agent.problem import Problem, make_table
from agent.search.library import seed_laws
from agent.search.summary import summarize


def sweep_problem(cap=12):
    """Loss falls with size and is a bowl in a learning-rate-like input whose optimum moves with size."""
    rng = np.random.default_rng(0)
    rows = []
    for size in np.logspace(7, 9, 5):
        for lr in np.logspace(-4, -2, 7):
            best = -6.0 - 0.3 * np.log(size / 1e8)
            loss = 2.0 + 300 * size ** -0.3 + 0.02 * (np.log(lr) - best) ** 2 + rng.normal(0, 1e-3)
            rows.append({"size": size, "lr": lr, "loss": loss})
    df = pd.DataFrame(rows)
    problem = Problem(("size", "lr"), ("loss",), axis=("size",), max_constants=cap)
    return problem, summarize(problem, make_table(df, problem))


def test_every_seed_law_parses_and_an_input_with_an_optimum_gets_a_bowl():
    problem, summary = sweep_problem(cap=6)
    laws = seed_laws(problem, summary)
    for _, lines in laws:
        parse_law(lines, problem.inputs, problem.targets)  # raises on anything outside the grammar
    assert summary["inputs"]["size"]["scale_like"] and summary["inputs"]["lr"]["scale_like"]
    assert "hybrid_power_bowl[size,lr]" in dict(laws)


def test_a_bowl_input_gets_an_expanded_quadratic_whose_optimum_can_drift_with_scale():
    problem, summary = sweep_problem(cap=12)
    shapes = dict(seed_laws(problem, summary))
    plain = shapes["hybrid_power_bowl[size,lr]"][0]
    drift = shapes["hybrid_power_bowl_drift[size,lr]"][0]
    assert "log((lr/0.001))**2" in plain and "- m" not in plain  # linear in its bowl constants
    assert "log((lr/0.001))*log((size/1e+08))" in drift
    assert parse_law((drift,), problem.inputs, problem.targets).n_constants <= 12


def test_drift_terms_stop_at_the_constant_cap():
    problem, summary = sweep_problem(cap=6)
    for label, lines in seed_laws(problem, summary):
        if label.startswith("hybrid_power_bowl_drift"):
            assert parse_law(lines, problem.inputs, problem.targets).n_constants <= 6


def two_scale_two_setting_problem(cap=12):
    """Loss falls with model and data size; learning rate and batch size each have an optimum."""
    rng = np.random.default_rng(1)
    rows = []
    for n in np.logspace(8, 9, 3):
        for d in np.logspace(9, 11, 3):
            for lr in np.logspace(-4, -2, 5):
                for bsz in (64, 256, 1024):
                    level = 1.5 + 1000 * n ** -0.3 + 1000 * d ** -0.3
                    w = (np.log(lr) + 7 + 0.2 * np.log(n / 1e8)) ** 2 + (np.log(bsz) - 5.5) ** 2
                    rows.append({"n": n, "d": d, "lr": lr, "bsz": bsz,
                                 "loss": level * (1 + 0.003 * w) + rng.normal(0, 1e-3)})
    df = pd.DataFrame(rows)
    problem = Problem(("lr", "bsz", "n", "d"), ("loss",), axis=("n", "d"), max_constants=cap)
    return problem, summarize(problem, make_table(df, problem))


def test_settings_with_optima_get_a_relative_bowl_with_cross_terms_and_drifting_centres():
    problem, summary = two_scale_two_setting_problem(cap=12)
    shapes = {label: lines[0] for label, lines in seed_laws(problem, summary)
              if label.startswith("level_times_bowl") and label.endswith("[lr,bsz,n,d]")}
    assert len(shapes) == 12  # additive and pow-sum levels x the ways two drift slots can be spent
    assert len(set(shapes.values())) == 12
    pow_sum = shapes["level_times_bowl_pow_sum_0[lr,bsz,n,d]"]
    assert pow_sum.startswith("loss = (c0*(n/") and ")**e0*(1 + q0*(log((lr/" in pow_sum
    assert "- m1)" in pow_sum or "- m1 -" in pow_sum  # centred: the optimum is a constant of its own
    for text in shapes.values():
        law = parse_law((text,), problem.inputs, problem.targets)
        assert law.n_constants == 12
        assert text.count(")*(log((bsz/") == 1  # the lr x bsz cross term of the quadratic form


def test_a_tight_cap_leaves_the_relative_bowl_without_drift_or_out():
    problem, summary = two_scale_two_setting_problem(cap=10)
    shapes = {label: lines[0] for label, lines in seed_laws(problem, summary)
              if label.startswith("level_times_bowl") and label.endswith("[lr,bsz,n,d]")}
    assert set(shapes) == {"level_times_bowl_0[lr,bsz,n,d]", "level_times_bowl_pow_sum_0[lr,bsz,n,d]"}
    assert all(" - g" not in text for text in shapes.values())
    problem, summary = two_scale_two_setting_problem(cap=9)
    assert not any(label.startswith("level_times_bowl") and label.endswith("[lr,bsz,n,d]")
                   for label, _ in seed_laws(problem, summary))
