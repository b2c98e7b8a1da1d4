"""Sweep designs expand into training specs, cheapest first: a sweep can be fitted while it runs."""
from __future__ import annotations

import pytest

from trainer.design import SweepDesign, plan_points
from trainer.shapes import shape_for
from trainer.spec import TrainSpec, default_lr


def test_a_grid_trains_every_size_on_every_token_budget_cheapest_first():
    specs = plan_points(SweepDesign("grid", n_params=(2e5, 25e3, 85e3), tokens=(1e6, 2.5e5, 5e5)))
    assert len(specs) == 9
    assert [s.cost for s in specs] == sorted(s.cost for s in specs)
    assert {(s.d_model, s.tokens) for s in specs} == {(shape_for(n).d_model, int(d)) for n in (2e5, 25e3, 85e3)
                                                     for d in (1e6, 2.5e5, 5e5)}


def test_an_isoflop_design_spends_each_budget_on_every_size_and_drops_sizes_too_big_for_it():
    budgets = (1e12, 1e13)
    specs = plan_points(SweepDesign("isoflop", n_params=(2e4, 2e5, 2e6), budgets=budgets))
    for spec in specs:
        assert any(abs(spec.cost / c - 1) < 0.01 for c in budgets)  # 6·N·D on the budget (steps round down)
    assert len(specs) == 6  # the largest, 2e6 parameters on 1e12 FLOPs, still gets ~80 steps
    small = plan_points(SweepDesign("isoflop", n_params=(2e4, 2e7), budgets=(2e10,)))
    assert [s.d_model for s in small] == [shape_for(2e4).d_model]  # 2e7 params get < 1 step of 1024 tokens


def test_learning_rates_batches_and_seeds_cross_the_design():
    specs = plan_points(SweepDesign("grid", n_params=(25e3,), tokens=(2.5e5,), lrs=(None, 1e-3), seeds=(0, 1)))
    assert sorted((s.learning_rate, s.seed) for s in specs) == sorted(
        [(default_lr(specs[0].d_model), 0), (default_lr(specs[0].d_model), 1), (1e-3, 0), (1e-3, 1)])


def test_a_design_that_plans_nothing_is_refused():
    with pytest.raises(ValueError, match="plans no run"):
        plan_points(SweepDesign("isoflop", n_params=(1e7,), budgets=(1e9,)))
    with pytest.raises(ValueError, match="unknown sweep design"):
        plan_points(SweepDesign("random", n_params=(1e5,)))


def test_a_spec_round_trips_and_refuses_unknown_or_impossible_options():
    spec = TrainSpec.for_params(1e5, 5e5, seed=3)
    assert TrainSpec.from_dict(spec.to_dict()) == spec
    with pytest.raises(ValueError, match="unknown training option"):
        TrainSpec.from_dict({**spec.to_dict(), "dropout": 0.1})
    with pytest.raises(ValueError, match="less than one step"):
        TrainSpec(d_model=32, n_layers=1, tokens=100)
    with pytest.raises(ValueError, match="multiple of 16"):
        TrainSpec(d_model=30, n_layers=1, tokens=10_000)
    with pytest.raises(ValueError, match="unknown corpus 'wikipedia'"):
        TrainSpec(d_model=32, n_layers=1, tokens=10_000, corpus="wikipedia")
    with pytest.raises(ValueError, match="eval_sequences must be at least 1"):
        TrainSpec(d_model=32, n_layers=1, tokens=10_000, eval_sequences=0)
