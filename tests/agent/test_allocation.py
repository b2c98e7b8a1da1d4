"""Compute-optimal allocation along C = 6·N·D: the textbook optimum, edges and bad requests."""
import numpy as np
import pytest

from agent.allocation import allocation_curve, axis_caveat, optimal_allocation
from agent.errors import DataError
from agent.expressions import parse_law

CHINCHILLA = parse_law(["loss = E + A/N**a + B/D**b"], ("N", "D"), ("loss",))
HOFFMANN = {"all_data": {"E": 1.69, "A": 406.4, "a": 0.34, "B": 410.7, "b": 0.28}}


def closed_form(c, E, A, a, B, b):
    """Hoffmann et al.'s optimum: N* = G (C/6)^(b/(a+b)), G = (aA / bB)^(1/(a+b))."""
    G = (a * A / (b * B)) ** (1 / (a + b))
    return G * (c / 6) ** (b / (a + b))


@pytest.mark.parametrize("budget", [1e19, 1e21, 1e23])
def test_the_optimum_of_the_chinchilla_form_is_the_closed_form_one(budget):
    out = optimal_allocation(CHINCHILLA, HOFFMANN, size="N", data="D", budget=budget, size_range=(1e6, 1e13))
    expected = closed_form(budget, **HOFFMANN["all_data"])
    assert out.size == pytest.approx(expected, rel=1e-3)
    assert out.size * out.data * 6 == pytest.approx(budget)
    assert not out.on_edge


def test_an_optimum_outside_the_allowed_sizes_is_flagged_not_extrapolated():
    out = optimal_allocation(CHINCHILLA, HOFFMANN, size="N", data="D", budget=1e23, size_range=(1e6, 1e8))
    assert out.on_edge and out.size == pytest.approx(1e8, rel=1e-6)


def test_the_curve_grows_both_size_and_data_with_the_budget():
    curve = allocation_curve(CHINCHILLA, HOFFMANN, [1e19, 1e20, 1e21, 1e22], size="N", data="D",
                             size_range=(1e6, 1e13))
    assert np.all(np.diff([a.size for a in curve]) > 0) and np.all(np.diff([a.data for a in curve]) > 0)
    assert np.all(np.diff([a.loss for a in curve]) < 0)


def test_a_law_with_other_inputs_needs_their_values_and_named_columns_must_be_inputs():
    law = parse_law(["loss = E + A/N**a + B/D**b + q*log(lr/3e-4)**2"], ("N", "D", "lr"), ("loss",))
    consts = {"all_data": {**HOFFMANN["all_data"], "q": 0.01}}
    with pytest.raises(DataError, match="lr"):
        optimal_allocation(law, consts, size="N", data="D", budget=1e21, size_range=(1e6, 1e13))
    fine = optimal_allocation(law, consts, size="N", data="D", budget=1e21, size_range=(1e6, 1e13),
                              fixed={"lr": 3e-4})
    assert fine.size == pytest.approx(closed_form(1e21, **HOFFMANN["all_data"]), rel=1e-3)
    with pytest.raises(DataError, match="tokens"):
        optimal_allocation(CHINCHILLA, HOFFMANN, size="N", data="tokens", budget=1e21, size_range=(1e6, 1e13))


def test_replicates_give_an_interval_around_the_optimum_and_the_isoflop_view_bottoms_out_there():
    from agent.allocation import isoflop_profile
    from agent.uncertainty import Bootstrap
    rng = np.random.default_rng(0)
    base = HOFFMANN["all_data"]
    replicates = tuple({"all_data": {**base, "a": base["a"] * (1 + 0.03 * rng.standard_normal()),
                                     "b": base["b"] * (1 + 0.03 * rng.standard_normal())}} for _ in range(100))
    boot = Bootstrap(replicates, ((0.0, 0.01),), (True,))
    out = optimal_allocation(CHINCHILLA, HOFFMANN, size="N", data="D", budget=1e23, size_range=(1e6, 1e14),
                             boot=boot)
    lo, hi = out.interval["size"]
    assert lo < out.size < hi and hi / lo > 1.2  # the exponents' spread moves N*
    one = optimal_allocation(CHINCHILLA, {"all_data": replicates[0]["all_data"]}, size="N", data="D", budget=1e23,
                             size_range=(1e6, 1e14))
    from agent.allocation import _grid_minimum
    fast, _ = _grid_minimum(CHINCHILLA, replicates[0], "N", "D", 1e23, (1e6, 1e14), "all_data", {}, 6.0)
    assert fast == pytest.approx(one.size, rel=0.01)  # the replicates' fast optimum agrees with the careful one
    sizes, losses = isoflop_profile(CHINCHILLA, HOFFMANN, size="N", data="D", budget=1e23, size_range=(1e8, 1e13))
    assert sizes[np.argmin(losses)] == pytest.approx(out.size, rel=0.6)  # 25 points: within one grid step
    # replicates from few runs (five degrees of freedom): the interval widens as the constants' do, in log space
    from dataclasses import replace

    from agent.linearised import spread_factor
    few = optimal_allocation(CHINCHILLA, HOFFMANN, size="N", data="D", budget=1e23, size_range=(1e6, 1e14),
                             boot=replace(boot, dof={"all_data": 5.0}, deflation={"all_data": 1.2}))
    f_lo, f_hi = few.interval["size"]
    assert np.log(f_hi / f_lo) == pytest.approx(spread_factor(5, 1.2, 0.9) * np.log(hi / lo), rel=0.05)


def test_a_law_chosen_along_size_alone_is_flagged_for_an_allocation():
    """An allocation moves along compute; a law validated along N only was never checked where D grows."""
    assert axis_caveat(("N", "D"), "N", "D") is None
    assert axis_caveat(None, "N", "D") is None  # a law file from before the axis was recorded
    assert "along N, not along D" in axis_caveat(("N",), "N", "D")
    assert "along no axis, not along N and D" in axis_caveat((), "N", "D")
