"""The reported law is written as the literature writes it: the exponential of a sum of logs is a
product of powers, with the same constants and the same predictions."""
import numpy as np
import pandas as pd
import pytest

from agent.expressions import parse_law
from agent.problem import Problem, make_table
from agent.search.final import refit_final
from agent.search.records import Candidate
from agent.search.units import Units
from agent.search.writing import as_powers, literature_writing
from agent.fitting import FitOptions

INPUTS = ("E", "N")
UNITS = Units({"E": 29.0, "N": 7.3e7}, {"loss": 1.0})


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"E": rng.uniform(1, 64, 30), "N": rng.uniform(1e7, 1e9, 30), "loss": rng.uniform(2, 3, 30)})
    return make_table(frame, Problem(INPUTS, ("loss",)))


def written(line: str, constants: dict, rows, units=UNITS):
    law = parse_law([line], INPUTS, ("loss",))
    return literature_writing(law, {"all_data": constants}, rows, units)


def test_a_sum_of_logs_in_an_exponential_is_reported_as_powers_of_the_scaled_inputs(rows):
    law, complexity = written("loss = c0 + c1*exp(b0*log((E/29)) + b1*log((N/7.3e+07)))",
                              {"c0": 1.5, "c1": 0.8, "b0": -0.1, "b1": -0.2}, rows)
    assert law.lines == ("loss = c0 + c1*(E/29)**b0*(N/7.3e+07)**b1",)
    assert complexity < UNITS.inner(parse_law(["loss = c0 + c1*exp(b0*log(E) + b1*log(N))"], INPUTS, ("loss",))).complexity


def test_what_is_not_a_log_of_an_input_stays_in_the_exponential(rows):
    law, _ = written("loss = exp(c0 + b0*log((N/7.3e+07)))", {"c0": 1.5, "b0": -0.1}, rows)
    assert law.lines == ("loss = (N/7.3e+07)**b0*exp(c0)",)


@pytest.mark.parametrize("line", [
    "loss = c0 + c1*exp(-k0*(N/7.3e+07)**a0)",                     # no log inside
    "loss = c0 + c1*exp(b0*log((N/7.3e+07))*log((E/29)))",          # a product of logs is no power law
    "loss = c0 + c1*(N/7.3e+07)**(-a0)",                             # already powers
])
def test_laws_that_are_not_an_exponential_of_logs_are_left_as_they_are(line, rows):
    constants = {"c0": 1.5, "c1": 1.0, "k0": 0.1, "a0": 0.2, "b0": 0.1}
    law = parse_law([line], INPUTS, ("loss",))
    assert written(line, {c: constants[c] for c in law.constants}, rows) is None


def test_the_rewriting_keeps_every_prediction(rows):
    line = "loss = x1*((N/7.3e+07) + x2)**x0 + exp(b0*log((N/7.3e+07)) + c0)"
    constants = {"all_data": {"x1": 1.0, "x2": 0.5, "x0": -0.3, "b0": -0.1, "c0": 0.1}}
    before = parse_law([line], INPUTS, ("loss",))
    after, _ = literature_writing(before, constants, rows, UNITS)
    assert "exp(b0" not in after.lines[0]
    np.testing.assert_allclose(after.evaluate(rows.X, constants["all_data"]),
                               before.evaluate(rows.X, constants["all_data"]), rtol=1e-12)


def test_the_rewrite_is_symbolic_only_for_inputs():
    import sympy as sp
    N, k0, b0 = sp.symbols("N k0 b0")
    assert as_powers(sp.exp(b0 * sp.log(k0)), ["N"]) == sp.exp(b0 * sp.log(k0))
    assert as_powers(sp.exp(b0 * sp.log(N)), ["N"]) == N ** b0


def test_the_final_refit_reports_the_power_writing_with_the_fitted_constants():
    rng = np.random.default_rng(1)
    n = np.geomspace(1e7, 1e9, 12)
    frame = pd.DataFrame({"N": n, "loss": 1.7 + 40.0 * n ** -0.3 * np.exp(rng.normal(0, 0.002, 12))})
    problem = Problem(("N",), ("loss",), axis=("N",))
    table = make_table(frame, problem)
    units = Units({"N": 1e8}, {"loss": 1.0})
    best = Candidate(id=3, generation=0, lines=("loss = c0 + c1*exp(b0*log((N/1e+08)))",), proposer="test", status="ok")
    final = refit_final(best, problem, table, FitOptions(loss="log"), seed=0, units=units)
    assert final.lines == ("loss = c0 + c1*(N/1e+08)**b0",)
    constants = final.constants["all_data"]
    assert constants["b0"] == pytest.approx(-0.3, abs=0.02)
    np.testing.assert_allclose(final.predict(frame), frame[["loss"]].to_numpy(), rtol=0.01)
