"""Any units, same law: the search sees normalised numbers, so a change of units changes nothing
but the reference scales written in the law (issue 18)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.errors import DataError, LawError
from agent.expressions import parse_law
from agent.fitting import FitOptions
from agent.problem import Problem, make_table
from agent.search import Search, SearchConfig, Selection
from agent.search.evaluate import SEARCH_FIT
from agent.search.failures import empty_search_message
from agent.search.proposers.offline import OfflineProposer
from agent.search.records import Proposal
from agent.search.summary import summarize
from agent.search.units import Units, input_reference, target_reference

# a search small enough to run a dozen times in a test: the seed library, two finalists
CHEAP = SearchConfig(budget=24, seed=0, workers=1, finalists=2, finalist_fit=SEARCH_FIT,
                     final_fit=FitOptions(starts=16, local=2, max_nfev=100),
                     selection=Selection(prior_finalists=False))

magnitudes = st.floats(min_value=1e-3, max_value=1e3)
columns = st.lists(st.floats(min_value=-1e3, max_value=1e3).filter(lambda v: abs(v) > 1e-3),
                   min_size=2, max_size=12).filter(lambda v: len(set(v)) > 1)


def units_of(df: pd.DataFrame, inputs=("x",), targets=("y",)) -> Units:
    problem = Problem(inputs, targets)
    return Units.from_summary(problem, summarize(problem, make_table(df, problem)))


# ------------------------------------------------------------------ references and rows

@settings(max_examples=60, deadline=None, derandomize=True)
@given(columns, st.integers(-20, 20))
def test_references_move_by_exactly_the_power_of_ten_the_data_move_by(values, k):
    def digits_and_exponent(v):
        mantissa, exponent = f"{v:.1e}".split("e")
        return mantissa, int(exponent)

    x = np.array(values)
    for reference in (input_reference, target_reference):
        mantissa, exponent = digits_and_exponent(reference(x))
        assert digits_and_exponent(reference(x * 10.0**k)) == (mantissa, exponent + k)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(columns, columns, st.integers(-20, 20), st.integers(-3, 3))
def test_the_search_sees_the_same_numbers_in_any_units(xs, ys, k, k_target):
    n = min(len(xs), len(ys))
    df = pd.DataFrame({"x": xs[:n], "y": ys[:n]})
    scaled = pd.DataFrame({"x": df["x"] * 10.0**k, "y": df["y"] * 10.0**k_target})
    rows, rows_scaled = units_of(df).normalise_frame(df), units_of(scaled).normalise_frame(scaled)
    assert np.array_equal(rows.to_numpy(), rows_scaled.to_numpy())


def test_positive_inputs_are_divided_by_a_round_geometric_mean_others_by_a_power_of_ten():
    assert input_reference(np.geomspace(1e18, 3e20, 12)) == 1.7e19
    assert input_reference(np.array([0.0, 25.0, 100.0])) == 100.0     # epochs, from 0
    assert input_reference(np.array([-10.0, -4.0])) == 10.0           # log learning rates
    assert input_reference(np.array([0.0, 0.5, 1.0])) == 1.0          # a proportion stays as it is
    assert target_reference(np.array([1.5, 4.2])) == 1.0              # a loss stays as it is
    assert target_reference(np.array([-3e-4, 2e-4])) == 1e-4


# ------------------------------------------------------------------ laws

def test_the_inner_law_is_the_same_whatever_the_reference_written_in_the_text():
    flops = Units({"C": 1.7e19}, {"loss": 1.0}, frozenset({"C"}))
    exaflops = Units({"C": 17.0}, {"loss": 1.0}, frozenset({"C"}))
    a = flops.inner(parse_law("loss = E + A*(C/1.7e+19)**(-a) + b*log(C/1.7e+19)", ["C"], ["loss"]))
    b = exaflops.inner(parse_law("loss = E + A*(C/17)**(-a) + b*log(C/17)", ["C"], ["loss"]))
    assert a.lines == b.lines == ("loss = A/C**a + E + b*log(C)",)
    assert a.complexity == b.complexity


def test_a_mutated_law_is_written_back_in_user_units_and_parses_to_the_same_inner_law():
    units = Units({"C": 1.7e19, "lr": 1e-8}, {"loss": 1.0}, frozenset({"C", "lr"}))
    inner = parse_law("loss = E + A*(C + k)**(-a)*exp(b*lr)", ["C", "lr"], ["loss"])
    lines = units.render(["loss"], inner.expressions)
    assert "(C/1.7e+19)" in lines[0] and "(lr/1e-08)" in lines[0]
    assert units.inner(parse_law(lines, ["C", "lr"], ["loss"])).expressions == inner.expressions


def test_constants_that_carry_the_target_scale_are_the_only_ones_converted():
    units = Units({"N": 1.0}, {"loss": 1e4}, frozenset({"N"}))
    form = units.fitted(parse_law("loss = E + A*N**(-a)", ["N"], ["loss"]))
    assert form.scale == {"A": 1e4, "E": 1e4}                       # the exponent keeps its value
    assert form.to_user({"g": {"E": 1.5, "A": 3.0, "a": 0.3}}) == {"g": {"E": 15000.0, "A": 30000.0, "a": 0.3}}
    # in exp(c + ...) the constant c carries the scale as its log
    law = parse_law("loss = exp(c + b*log(N))", ["N"], ["loss"])
    form = units.fitted(law)
    assert form.scale == {} and form.shift == {"c": pytest.approx(np.log(1e4))}
    assert form.law.expressions == law.expressions  # fitted as it is, to the normalised target
    # no constant can absorb it in a power of a sum: the fitted form is divided by the scale instead
    form = units.fitted(parse_law("loss = (c1*N**(-a) + c2)**e", ["N"], ["loss"]))
    assert form.scale == form.shift == {} and "/10000" in form.law.lines[0]


def test_where_no_constant_carries_the_target_scale_the_text_carries_it_and_the_fit_divides_it_out():
    def fitted_form_of(units, text):
        return units.fitted(parse_law(text, ["N"], ["loss"]))

    inner = parse_law("loss = (c0 + exp(-b*N))*(1 + q*N**2)", ["N"], ["loss"]).expressions
    for ref in (1e-3, 1.0, 10.0, 1e4):
        units = Units({"N": 3.2e7}, {"loss": ref}, frozenset({"N"}))
        lines = units.render(["loss"], inner)
        assert lines[0].startswith(f"loss = {ref:g}*(") == (ref != 1.0)
        form = fitted_form_of(units, lines)
        assert form.law.expressions == inner and form.scale == form.shift == {}


def test_laws_with_references_from_1e_minus_30_to_1e30_parse_and_print_back():
    law = parse_law("y = c*(x/1.7e+26)**(-a) + d*(x/1e-30)", ["x"], ["y"])
    units = Units({"x": 1.7e26}, {"y": 1.0}, frozenset({"x"}))
    again = parse_law(units.render(["y"], units.inner(law).expressions), ["x"], ["y"])
    assert units.inner(again).expressions == units.inner(law).expressions
    assert r"\left(\frac{x}{1.7 \cdot 10^{26}}\right)" in law.latex()


# ------------------------------------------------------------------ refusals and empty searches

def test_a_constant_column_is_refused_before_the_search_with_what_to_do():
    df = pd.DataFrame({"N": np.geomspace(1e6, 1e9, 8), "vocab": 32000.0, "loss": np.linspace(3, 2, 8)})
    with pytest.raises(DataError, match="'vocab' has the same value .* leave it out of the inputs"):
        Search(Problem(("N", "vocab"), ("loss",)), df, CHEAP)
    df["loss"] = 2.5
    with pytest.raises(DataError, match="target 'loss' has the same value"):
        Search(Problem(("N",), ("loss",)), df, CHEAP)


def test_an_axis_of_two_values_is_refused_but_an_input_of_two_values_is_welcome():
    df = pd.DataFrame({"N": np.repeat([1e8, 1e9], 4), "flag": np.tile([0.0, 1.0], 4), "loss": np.linspace(3, 2, 8)})
    with pytest.raises(DataError, match=r"the axis \(N\) has only 2 distinct values.* add runs at more values"):
        Search(Problem(("N", "flag"), ("loss",), axis=("N",)), df, CHEAP)
    df["N"] = np.geomspace(1e8, 1e9, 8)
    assert Search(Problem(("N", "flag"), ("loss",), axis=("N",)), df, CHEAP).summary["inputs"]["flag"]["distinct"] == 2


def test_a_value_too_large_to_compute_with_is_refused_by_column_and_row_but_flops_are_welcome():
    df = pd.DataFrame({"C": np.geomspace(1e18, 1e25, 8), "loss": np.linspace(3, 2, 8)})
    Search(Problem(("C",), ("loss",)), df, CHEAP)  # FLOPs are far below the limit
    diverged = df.assign(loss=df["loss"].where(df.index != 5, 1e308))  # a run that overflowed
    with pytest.raises(DataError, match=r"column 'loss' holds 1e\+308 \(row 6\).* drop the row"):
        Search(Problem(("C",), ("loss",)), diverged, CHEAP)
    with pytest.raises(DataError, match=r"column 'C' holds -1e\+200 \(row 1\)"):
        Search(Problem(("C",), ("loss",)), df.assign(C=df["C"].where(df.index != 0, -1e200)), CHEAP)


def test_an_empty_search_says_which_stage_failed_how_often_and_why():
    class Failed:
        def __init__(self, reason):
            self.reason = reason

    overflow = "fit: no start gave finite predictions on every fit row: overflow (infinite predictions) on {} of 9 rows"
    message = empty_search_message([Failed(overflow.format(3)), Failed(overflow.format(5)),
                                    Failed("parse: line 1: law has 9 constants, more than the cap of 8")], None, 8)
    assert message.startswith("no candidate could be fitted among 3: 2 failed at fit (most often: ")
    assert "overflow" in message and "1 failed at parse" in message
    assert "raise the constant cap" in empty_search_message([], "no new proposals", 1)


class Overflowing(OfflineProposer):
    """Proposes only a law that overflows whatever its constants."""

    def seeds_left(self, context):
        return 1

    def propose(self, context, n, rng):
        return [Proposal(("y = c + exp(exp(exp(k*x + 10)))",), self.name)]


def test_a_search_whose_every_law_fails_to_fit_says_why():
    df = pd.DataFrame({"x": np.linspace(1, 2, 8), "y": np.linspace(1, 2, 8)})
    search = Search(Problem(("x",), ("y",), max_constants=2), df, CHEAP, proposers=[(Overflowing(), 1.0)])
    search.step()
    with pytest.raises(LawError, match=r"among 1: 1 failed at fit \(most often: .*overflow"):
        search.finalize()


# ------------------------------------------------------------------ the search, in any units

def dataset(law: str) -> tuple[Problem, pd.DataFrame]:
    """A tiny noisy dataset from a known law; ``x`` is the input a unit change applies to."""
    rng = np.random.default_rng(0)
    if law == "power":        # a loss curve: positive input over decades, positive target
        x = np.geomspace(1e6, 1e9, 8)
        y = (1.8 + 300 * x ** -0.3) * (1 + rng.normal(0, 0.003, 8))
    elif law == "saturation":  # an input from 0 (epochs, warmup)
        x = np.linspace(0, 40, 8)
        y = (2.0 + np.exp(-0.08 * x)) * (1 + rng.normal(0, 0.003, 8))
    else:                      # negative inputs, a target that crosses zero (a log-likelihood delta)
        x = np.linspace(-3, 2, 8)
        y = 0.4 - 0.8 * x + 0.3 * x ** 2 + rng.normal(0, 0.01, 8)
    axis = ("x",) if law == "power" else ()
    return Problem(("x",), ("y",), axis=axis, max_constants=4), pd.DataFrame({"x": x, "y": y})


def discovered(problem: Problem, df: pd.DataFrame):
    search = Search(problem, df, CHEAP)
    final = search.run()
    fitted = search.units.fitted(parse_law(final.lines, problem.inputs, problem.targets))
    return final, fitted.law.lines


_BASE: dict = {}


def base(law: str):
    if law not in _BASE:
        problem, df = dataset(law)
        _BASE[law] = (problem, df, *discovered(problem, df))
    return _BASE[law]


def assert_same_law(law: str, k_input: int, k_target: int):
    problem, df, final, lines = base(law)
    scaled = pd.DataFrame({"x": df["x"] * 10.0**k_input, "y": df["y"] * 10.0**k_target})
    final_scaled, lines_scaled = discovered(problem, scaled)
    assert lines_scaled == lines  # the same law, up to the reference scales written in it
    expected = final.predict(df)[:, 0] * 10.0**k_target
    np.testing.assert_allclose(final_scaled.predict(scaled)[:, 0], expected, rtol=1e-6)
    further = pd.DataFrame({"x": [df["x"].max() * 3]})  # beyond the data too
    np.testing.assert_allclose(final_scaled.predict(further * 10.0**k_input)[:, 0],
                               final.predict(further)[:, 0] * 10.0**k_target, rtol=1e-6)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.sampled_from(["power", "saturation", "signed"]), st.integers(-20, 20))
def test_an_input_in_other_units_gives_the_same_law_and_predictions(law, k):
    assert_same_law(law, k, 0)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(st.sampled_from(["power", "saturation", "signed"]), st.integers(-3, 3))
def test_a_target_in_other_units_gives_the_same_law_and_predictions(law, k):
    assert_same_law(law, 0, k)


@pytest.mark.slow
def test_compute_in_flops_finds_the_law_found_with_compute_in_exaflops():
    """The issue's example: FLOPs from 1e18 to 3e20 failed outright; 1e18 FLOPs worked."""
    rng = np.random.default_rng(0)
    rows = []
    for task, (b, a, c0, d, c1) in {"t1": (0.9, 2.6, 0.05, 3e19, 0.3), "t2": (1.1, 3.0, 0.04, 6e19, 0.25)}.items():
        for C in np.geomspace(1e18, 3e20, 12):
            loss = (b + a * C ** -c0 * (1 + C / d) ** -c1) * np.exp(rng.normal(0, 0.005))
            rows.append({"compute": C, "task": task, "loss": loss})
    flops = pd.DataFrame(rows)
    exaflops = flops.assign(compute=flops["compute"] / 1e18)
    problem = Problem(("compute",), ("loss",), group="task", axis=("compute",), max_constants=8)
    config = SearchConfig(budget=60, seed=0, workers=1)
    in_flops, in_exaflops = Search(problem, flops, config).run(), Search(problem, exaflops, config).run()
    assert "(compute/1.7e+19)" in in_flops.lines[0]
    assert in_flops.lines[0].replace("(compute/1.7e+19)", "(compute/17)") == in_exaflops.lines[0]
    assert in_flops.validation["r2"] == in_exaflops.validation["r2"] > 0.9
    np.testing.assert_allclose(in_flops.predict(flops, group="task"), in_exaflops.predict(exaflops, group="task"),
                               rtol=1e-6)
