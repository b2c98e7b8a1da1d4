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
