"""How one candidate is scored: fold errors, the folds' disagreement beyond the data, and the fit loss."""
import dataclasses

import numpy as np

from agent.fitting import FitOptions
from agent.search import Search, SearchConfig
from agent.search.evaluate import evaluate_lines

TRUE_FORM = ("loss = E + A*(N/1e7)**(-alpha)",)
# a law that fits the range but whose extrapolation hinges on where the fit starts
FRAGILE_FORM = ("loss = c0 + c1*log(N/1e7) + c2*log(N/1e7)**2 + c3*log(N/1e7)**3",)


def context(problem, data, **selection):
    search = Search(problem, data, SearchConfig(budget=1))
    ctx = search.context
    return dataclasses.replace(ctx, selection=dataclasses.replace(ctx.selection, **selection))


def test_the_folds_disagree_more_on_a_fragile_law_than_on_the_true_one(power_law_problem, power_law_data):
    ctx = context(power_law_problem, power_law_data)
    true = evaluate_lines(TRUE_FORM, ctx, seed=0)
    fragile = evaluate_lines(FRAGILE_FORM, ctx, seed=0)
    assert true["status"] == fragile["status"] == "ok"
    assert 0 <= true["validation"]["disagreement"] < fragile["validation"]["disagreement"]


def test_disagreement_is_added_to_each_folds_error_and_only_lowers_the_score(power_law_problem, power_law_data):
    without = evaluate_lines(FRAGILE_FORM, context(power_law_problem, power_law_data, disagreement_weight=0.0), 0)
    with_it = evaluate_lines(FRAGILE_FORM, context(power_law_problem, power_law_data, disagreement_weight=1.0), 0)
    assert with_it["validation"]["fold_r2"] == without["validation"]["fold_r2"]
    assert with_it["score"] < without["score"]


def test_a_candidate_records_the_fit_loss_it_was_scored_with(power_law_problem, power_law_data):
    ctx = context(power_law_problem, power_law_data)
    default = evaluate_lines(TRUE_FORM, ctx, seed=0)
    robust = evaluate_lines(TRUE_FORM, ctx, seed=0, options=FitOptions(loss="huber_log"))
    assert default["fit"]["method"] == "log"  # positive targets: log residuals
    assert robust["fit"]["method"] == "huber_log"
    assert np.isfinite(robust["score"])
