"""Probes: the points beyond the training range where extrapolations are checked."""
import numpy as np
import pandas as pd

from agent.problem import Problem, axis_values, make_table
from agent.search.probes import build_horizon, build_probes


def probes_for(df, problem):
    table = make_table(df, problem)
    return build_probes(df, problem, table, axis_values(df, problem))


def test_a_positive_axis_is_pushed_to_twice_and_four_times_its_largest_values():
    df = pd.DataFrame({"N": np.logspace(6, 9, 10), "loss": np.linspace(3, 2, 10)})
    probes, monotone = probes_for(df, Problem(("N",), ("loss",), axis=("N",)))
    assert np.allclose(probes.X["N"][:3], [1e9, 2e9, 4e9])
    assert monotone == {0: -1}  # loss falls along N, so it must keep falling beyond


def test_an_axis_that_is_already_a_log_is_shifted_by_fractions_of_its_span_not_whole_spans():
    df = pd.DataFrame({"log_flops": np.linspace(-1.0, 2.0, 10), "score": np.linspace(-0.5, -0.1, 10)})
    probes, _ = probes_for(df, Problem(("log_flops",), ("score",), axis=("log_flops",)))
    # span 3: one doubling is a quarter span further, two doublings half a span
    assert np.allclose(probes.X["log_flops"][:3], [2.0, 2.75, 3.5])


def test_no_axis_means_no_probes():
    df = pd.DataFrame({"p": np.linspace(0.1, 0.9, 9), "loss": np.linspace(2, 3, 9)})
    assert probes_for(df, Problem(("p",), ("loss",))) == (None, {})


def test_the_horizon_pushes_the_same_rows_a_thousand_and_a_million_times_further_and_leaves_the_rest():
    df = pd.DataFrame({"N": np.logspace(6, 9, 10), "D": np.logspace(8, 10, 10), "loss": np.linspace(3, 2, 10)})
    problem = Problem(("N", "D"), ("loss",), axis=("N",))
    table = make_table(df, problem)
    horizon = build_horizon(problem, table, axis_values(df, problem))
    assert np.allclose(horizon.X["N"][:2], [1e12, 1e15])
    assert np.allclose(horizon.X["D"][:2], [1e10, 1e10])  # not on the axis: as observed
    assert build_horizon(Problem(("N", "D"), ("loss",)), table, None) is None
