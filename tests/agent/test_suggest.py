"""Which run to do next, on a law whose truth is known: runs that pin the extrapolation win."""
import numpy as np
import pandas as pd
import pytest

from agent.errors import DataError
from agent.expressions import parse_law
from agent.fitting import fit_law
from agent.problem import DEFAULT_GROUP, Problem, Table, make_table
from agent.suggest import ensemble, noise_of, rank_runs, suggest
from agent.uncertainty import Member, laplace

LAW = parse_law("loss = E + A*(N/1e8)**(-a) + B*(D/1e10)**(-b)", ("N", "D"), ("loss",))
PROBLEM = Problem(("N", "D"), ("loss",))


def truth(n, d):
    return 1.7 + 0.5 * (n / 1e8) ** -0.34 + 0.6 * (d / 1e10) ** -0.28


def grid(ns, ds):
    n, d = np.meshgrid(ns, ds)
    return pd.DataFrame({"N": n.ravel(), "D": d.ravel()})


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    df = grid(np.geomspace(1e7, 3e8, 5), np.geomspace(1e9, 3e10, 5))
    df["loss"] = truth(df.N, df.D) * np.exp(rng.normal(0, 0.01, len(df)))
    table = make_table(df, PROBLEM)
    constants = fit_law(LAW, table, seed=0).constants
    return table, constants, laplace(LAW, table, constants, n=200, seed=0)


def points(df):
    t = make_table(df.assign(loss=1.0), PROBLEM, require_targets=False)
    return Table(t.X, t.y, np.full(len(t), DEFAULT_GROUP, dtype=object))


def test_runs_beyond_the_data_toward_the_target_narrow_it_most_per_cost(fitted):
    table, constants, draws = fitted
    candidates = grid([1e7, 3e8, 1e9], [1e9, 3e10, 1e11])
    target = points(pd.DataFrame({"N": [1e10], "D": [1e12]}))
    cost = 6 * candidates.N.to_numpy() * candidates.D.to_numpy()
    ranked = suggest(ensemble(LAW, draws), points(candidates), target, np.ones(len(candidates)),
                     noise=noise_of(draws), log_space=draws.log_space, top=len(candidates))
    best = candidates.iloc[ranked[0].index]
    assert best.N == 1e9 and best.D == 1e11  # at equal cost: the run closest to the target
    assert ranked[0].reduction > ranked[-1].reduction >= 0
    assert all(0 <= s.reduction <= 1 for s in ranked)
    per_cost = suggest(ensemble(LAW, draws), points(candidates), target, cost, noise=noise_of(draws),
                       log_space=draws.log_space, top=len(candidates))
    assert per_cost[0].score >= per_cost[1].score and "narrows" in per_cost[0].explanation


def test_a_run_inside_the_data_teaches_little(fitted):
    table, constants, draws = fitted
    both = points(pd.DataFrame({"N": [5e7, 3e9], "D": [5e9, 3e11]}))  # inside the data, then beyond it
    target = points(pd.DataFrame({"N": [1e10], "D": [1e12]}))
    ranked = suggest(ensemble(LAW, draws), both, target, np.ones(2), noise=noise_of(draws),
                     log_space=draws.log_space, top=2)
    assert [s.index for s in ranked] == [1, 0] and ranked[1].reduction < ranked[0].reduction / 2


def test_bad_costs_and_tiny_ensembles_are_refused(fitted):
    table, constants, draws = fitted
    cands, target = points(pd.DataFrame({"N": [1e9], "D": [1e11]})), points(pd.DataFrame({"N": [1e10], "D": [1e12]}))
    with pytest.raises(DataError, match="positive"):
        suggest(ensemble(LAW, draws), cands, target, np.array([0.0]), noise=[0.01], log_space=[True])
    with pytest.raises(DataError, match="at least 3"):
        suggest(ensemble(LAW, draws)[:2], cands, target, np.array([1.0]), noise=[0.01], log_space=[True])


def test_a_cost_that_is_not_a_number_is_named_by_run_and_column(fitted):
    table, constants, draws = fitted
    target = pd.DataFrame({"N": [1e10], "D": [1e12]})
    text = pd.DataFrame({"N": [1e9, "big"], "D": [1e11, 1e11]})
    with pytest.raises(DataError, match=r"candidate run 2: 'N' is not a number \('big'\)"):
        rank_runs(LAW, draws, text, target, cost_inputs=("N", "D"))
    with pytest.raises(DataError, match=r"candidate run 1: 'cost' is not a number \('cheap'\)"):
        rank_runs(LAW, draws, text.assign(N=1e9, cost=["cheap", 1.0]), target)


def test_other_forms_weigh_as_much_as_the_law_in_the_ensemble(fitted):
    table, constants, draws = fitted
    other = Member(LAW, {DEFAULT_GROUP: {**constants[DEFAULT_GROUP], "b": constants[DEFAULT_GROUP]["b"] * 0.8}})
    members = ensemble(LAW, draws, [other])
    assert len(members) == 2 * len(draws.replicates) and members[-1] is other
    # the repeated form is evaluated once: the ranking is the one of distinct copies of it
    copies = [Member(m.law, dict(m.constants)) if m is other else m for m in members]
    cands = points(pd.DataFrame({"N": [3e8, 3e9], "D": [3e10, 3e11]}))
    target = points(pd.DataFrame({"N": [1e10], "D": [1e12]}))
    args = dict(noise=noise_of(draws), log_space=draws.log_space, top=2)
    assert suggest(members, cands, target, np.ones(2), **args) == suggest(copies, cands, target, np.ones(2), **args)
