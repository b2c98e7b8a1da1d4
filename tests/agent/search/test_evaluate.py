"""How one candidate is scored: fold errors, the folds' disagreement beyond the data, and the fit loss."""
import dataclasses

import numpy as np
import pandas as pd

from agent.fitting import FitOptions
from agent.problem import Problem, Table
from agent.search import Search, SearchConfig
from agent.search.evaluate import Selection, _standard_error_decades, _trimmed_nmse, evaluate_lines

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
    assert default["fit"]["method"] == "robust_log"  # positive targets: log residuals, Huber-polished where a run stands out
    assert robust["fit"]["method"] == "huber_log"
    assert np.isfinite(robust["score"])


def test_a_few_exploding_groups_out_of_many_do_not_decide_a_fold():
    sel = Selection(group_trim=0.2, row_trim=0.0)
    groups = np.repeat([f"g{k}" for k in range(12)], 2).astype(object)
    y = np.linspace(1.0, 3.0, 24).reshape(-1, 1)
    val = Table({"x": np.ones(24)}, y, groups)
    pred = y.copy()
    pred[np.isin(groups, ["g5", "g7"])] += 100.0  # ill-conditioned fits in two groups of twelve
    assert _trimmed_nmse(val, pred, sel, nmse=1e4) == 0.0
    pred[groups == "g9"] += 0.1                    # a third wrong group still counts
    assert 0.0 < _trimmed_nmse(val, pred, sel, nmse=1e4) < 0.1
    # with a few groups every group counts
    few = Table({"x": np.ones(24)}, y, np.repeat(["a", "b", "c"], 8).astype(object))
    assert _trimmed_nmse(few, pred, sel, nmse=7.0) == 7.0


def test_row_trimming_leaves_out_a_folds_few_pathological_rows():
    y = np.linspace(2.0, 3.0, 20).reshape(-1, 1)
    val = Table({"x": np.ones(20)}, y, np.full(20, "all", dtype=object))
    pred = y.copy()
    pred[[3, 11]] -= 2.0  # two overtrained runs whose loss rose again
    assert _trimmed_nmse(val, pred, Selection(row_trim=0.1), nmse=1.5) == 0.0
    assert _trimmed_nmse(val, pred, Selection(), nmse=1.5) == 1.5  # off by default


def test_exchangeable_kfold_folds_weigh_the_same_whatever_the_weighting():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 30)
    data = pd.DataFrame({"p": p, "loss": 2.0 + 0.5 * np.exp(-1.5 * p) + rng.normal(0, 0.01, 30)})
    problem = Problem(("p",), ("loss",), max_constants=4)  # no axis: k-fold over settings
    near = evaluate_lines(("loss = c0 + c1*p",), context(problem, data, fold_weights="near"), seed=0)
    uniform = evaluate_lines(("loss = c0 + c1*p",), context(problem, data, fold_weights="uniform"), seed=0)
    assert near["score"] == uniform["score"]


def test_the_fold_fitted_on_the_most_rows_counts_every_group():
    """Fold 0 fits on the most levels, like the final law: a group failing there is the law failing."""
    rows = []
    for g in range(12):
        for N in np.logspace(6, 9, 10):
            loss = 1.5 + 0.05 * g + 300.0 * N ** -0.3
            rows.append({"N": N, "group": f"g{g}", "loss": loss + (0.5 if g == 3 and N > 2e8 else 0.0)})
    data = pd.DataFrame(rows)
    problem = Problem(("N",), ("loss",), group="group", axis=("N",), max_constants=4)
    search = Search(problem, data, SearchConfig(budget=1, n_folds=1))
    ctx = search.context
    assert len(ctx.folds) == 1
    scores = [evaluate_lines(TRUE_FORM, dataclasses.replace(ctx, selection=dataclasses.replace(
        ctx.selection, group_trim=trim, disagreement_weight=0.0)), seed=0)["score"] for trim in (0.0, 0.2)]
    assert scores[0] == scores[1]


def test_with_one_fold_the_fit_on_every_row_is_the_second_opinion(power_law_problem, power_law_data):
    """Three axis levels leave one fold; its fit and the fit on all rows still disagree beyond the data."""
    search = Search(power_law_problem, power_law_data, SearchConfig(budget=1, n_folds=1))
    assert len(search.context.folds) == 1
    true = evaluate_lines(TRUE_FORM, search.context, seed=0)
    fragile = evaluate_lines(FRAGILE_FORM, search.context, seed=0)
    assert true["validation"]["fold_r2"] and len(true["validation"]["fold_r2"]) == 1
    assert 0 <= true["validation"]["disagreement"] < fragile["validation"]["disagreement"]


def test_a_law_that_turns_or_goes_negative_only_far_beyond_the_data_is_implausible(power_law_problem,
                                                                                    power_law_data):
    """The 2x-4x probes cannot see it; the 10x and 100x ones do."""
    from agent.expressions import parse_law
    from agent.search.evaluate import _implausibility

    ctx = context(power_law_problem, power_law_data)

    def law(text):  # as the search sees it: over the context's normalised inputs (same constants here)
        return ctx.units.fitted(parse_law(text, ("N",), ("loss",))).law

    true = law(TRUE_FORM)
    sane = {g: {"E": 1.7, "A": 0.5, "alpha": 0.3} for g in ("small", "large")}
    assert _implausibility(true, sane, ctx) == (0.0, [])
    # a small negative slope in log N: harmless at 4x, below zero by 100x
    drifting = law(("loss = E + A*(N/1e7)**(-alpha) - k*log(N/1e9)",))
    sinks = {g: {**sane[g], "k": 0.45} for g in sane}
    penalty, notes = _implausibility(drifting, sinks, ctx)
    assert penalty > 0 and any("change sign" in n for n in notes)
    # a bowl whose bottom lies at 8x the data: falls at 2x and 4x, rises by 10x
    bowl = law(("loss = E + A*(N/1e7)**(-alpha) + q*log(N/8e9)**2",))
    turns = {g: {**sane[g], "q": 0.02} for g in sane}
    penalty, notes = _implausibility(bowl, turns, ctx)
    assert penalty > 0 and any("turns around" in n for n in notes)


def accuracy_context(unit=1.0):
    """An accuracy between 0.2 and 0.45 over three decades of compute (``unit``: 100 for a percentage)."""
    C = np.logspace(18, 21, 10)
    acc = unit * (0.7 - 0.5 * np.exp(-(C / 1e21) ** 0.4))
    return Search(Problem(("C",), ("acc",), axis=("C",)), pd.DataFrame({"C": C, "acc": acc}),
                  SearchConfig(budget=1)).context


def test_a_rate_predicted_past_one_far_beyond_the_data_is_recorded_but_not_scored():
    """A rising power law through an accuracy passes 1 by 100x; a law saturating below 1 does not.  A
    percentage is no rate.  The screening score ignores it (the final choice weighs it: test_engine)."""
    from agent.expressions import parse_law
    from agent.search.evaluate import _rate_left

    for unit, is_rate in ((1.0, True), (100.0, False)):
        ctx = accuracy_context(unit)

        def rate_left(text, constants):  # as the search sees the law: over normalised inputs and target
            form = ctx.units.fitted(parse_law(text, ("C",), ("acc",)))
            return _rate_left(form.law, form.to_fitted({"all_data": constants}), ctx)

        assert not rate_left(("acc = top - (top - base)*exp(-(C/1e21)**k)",),
                             {"top": 0.7 * unit, "base": 0.2 * unit, "k": 0.4})
        assert rate_left(("acc = c0 + c1*(C/1e21)**a",), {"c0": 0.05 * unit, "c1": 0.4 * unit, "a": 0.2}) == is_rate
    out = evaluate_lines(("acc = c0 + c1*(C/1e21)**a",), accuracy_context(), seed=0)
    assert "rate_left" in out["validation"] and out["validation"]["implausibility"] == 0.0


def test_a_bowl_whose_optimum_moves_with_scale_is_plausible_though_fixed_settings_turn_around():
    """At one learning rate the loss of such a sweep rises again far out (its optimum moves away),
    but the best loss over the rates tried keeps falling: the trend is checked on that envelope."""
    from agent.expressions import parse_law
    from agent.search.evaluate import _implausibility

    text = "loss = (E + A*(N/1e8)**(-alpha))*(1 + q*(log(lr/0.003) - m - g*log(N/1e8))**2)"
    truth = {"E": 1.8, "A": 1.2, "alpha": 0.3, "q": 0.08, "m": 0.0, "g": -0.35}
    N, lr = np.meshgrid([1e7, 3e7, 1e8, 3e8], 0.003 * 2.0 ** np.arange(-3, 4))
    N, lr = N.ravel(), lr.ravel()
    level = truth["E"] + truth["A"] * (N / 1e8) ** -truth["alpha"]
    loss = level * (1 + truth["q"] * (np.log(lr / 0.003) - truth["g"] * np.log(N / 1e8)) ** 2)
    problem = Problem(("N", "lr"), ("loss",), axis=("N",), max_constants=6)
    ctx = Search(problem, pd.DataFrame({"N": N, "lr": lr, "loss": loss}), SearchConfig(budget=1)).context
    law = ctx.units.fitted(parse_law(text, ("N", "lr"), ("loss",))).law
    constants = {g: dict(truth) for g in ctx.table.group_names}
    from agent.fitting import predict
    pushed = predict(law, ctx.probes, constants, ctx.probes.groups)[:, 0].reshape(-1, 5)
    assert np.any(np.diff(pushed, axis=1) > 0), "some fixed learning rate must turn around, or this test is void"
    assert _implausibility(law, constants, ctx) == (0.0, [])


def test_the_score_is_a_pure_function_of_the_parts_a_candidate_records(power_law_problem, power_law_data):
    from agent.search.evaluate import rescored

    ctx = context(power_law_problem, power_law_data, disagreement_weight=1.0)
    out = evaluate_lines(FRAGILE_FORM, ctx, seed=0)
    again = rescored(out["validation"], out["complexity"], ctx.selection, ctx.selection.disagreement_weight)
    assert again == out["score"]
    assert rescored(out["validation"], out["complexity"], ctx.selection, 0.0) > out["score"]


def test_by_default_the_folds_spread_is_recorded_but_does_not_rank(power_law_problem, power_law_data):
    """Screening without the spread: on the development suite it kept the true forms, whose fit
    from the earliest origin is ill-posed on few rows, out of the finalists (Selection's comment)."""
    from agent.search.evaluate import rescored

    ctx = context(power_law_problem, power_law_data)
    out = evaluate_lines(FRAGILE_FORM, ctx, seed=0)
    assert out["validation"]["disagreement"] > 0
    assert out["score"] == rescored(out["validation"], out["complexity"], ctx.selection, 0.0)


def test_a_folds_standard_error_comes_from_the_spread_of_its_rows_or_of_its_groups():
    y = np.linspace(1.0, 3.0, 20)[:, None]
    one_group = np.full(20, "all", dtype=object)
    even = _standard_error_decades(Table({"x": np.ones(20)}, y, one_group), y + 0.1)
    one_row_off = np.where(np.arange(20)[:, None] == 0, y + 2.0, y + 0.1)
    uneven = _standard_error_decades(Table({"x": np.ones(20)}, y, one_group), one_row_off)
    assert even == 0.0 and uneven > 0.15  # one row carries the error: the mean is a shaky estimate
    # with three groups or more, a group is the unit: rows of one group share its extrapolation error
    groups = np.repeat(["a", "b", "c", "d"], 5).astype(object)
    per_group = _standard_error_decades(Table({"x": np.ones(20)}, y, groups), one_row_off)
    assert per_group > uneven
    assert _standard_error_decades(Table({"x": np.ones(1)}, y[:1], one_group[:1]), y[:1] + 1) is None


def test_a_final_law_is_plausible_near_the_data_only_when_finite_and_in_range_at_2x_and_4x():
    """Probe rows come in blocks of (1x, 2x, 4x, 10x, 100x); the final refit is held to the near ones."""
    from agent.search.evaluate import plausible_near

    y = np.array([[2.0], [3.0], [4.0]])  # observed span 2
    good = np.array([[2.1], [1.9], [1.8], [1.5], [1.2]])
    assert plausible_near(good, y)
    assert plausible_near(np.array([[2.1], [1.9], [1.8], [np.inf], [np.nan]]), y)  # far out: not this check's
    assert not plausible_near(np.array([[2.1], [np.inf], [1.8], [1.5], [1.2]]), y)  # overflows at 2x
    assert not plausible_near(np.array([[2.1], [1.9], [-0.5], [1.5], [1.2]]), y)  # 2.5 below the lowest at 4x


def test_a_loss_law_that_falls_through_zero_only_past_100x_is_recorded_as_leaving_its_sign():
    """``c0 - c1*log(N)`` is still positive at 100x but not at 1e6x; a power law over a floor keeps its
    sign at any scale.  A target with a value at or below zero is not checked.  The screening score
    ignores it (the final choice excludes such a law: test_choice, rule 5)."""
    from agent.expressions import parse_law
    from agent.search.evaluate import _leaves_sign

    N = np.logspace(7, 9, 12)
    for shift, checked in ((0.0, True), (-3.0, False)):  # -3: the target dips below zero
        data = pd.DataFrame({"N": N, "loss": 2.0 + 3.0 * (N / 1e7) ** -0.3 + shift})
        ctx = Search(Problem(("N",), ("loss",), axis=("N",)), data, SearchConfig(budget=1)).context

        def leaves(text, constants):
            form = ctx.units.fitted(parse_law(text, ("N",), ("loss",)))
            return _leaves_sign(form.law, form.to_fitted({"all_data": constants}), ctx)

        log_like = {"c0": 4.0, "c1": 0.35}  # 4 - 0.35*ln(N/1e9): 2.39 at 100x, 1.58 at 1e3x, -0.84 at 1e6x
        assert leaves(("loss = c0 - c1*log(N/1e9)",), log_like) == checked
        assert not leaves(("loss = c0 + c1*(N/1e9)**(-a)",), {"c0": 2.0, "c1": 1.5, "a": 0.3})
    out = evaluate_lines(("loss = c0 + c1*log(N/1e7)",), ctx, seed=0)
    assert "leaves_sign" in out["validation"]


def test_a_negative_target_may_pass_zero_at_the_horizon():
    """A loss less a baseline is negative where the model beats the baseline and positive where it does
    not: a bowl over such a target rises through zero far from its optimum, and that is no sign lost."""
    from agent.expressions import parse_law
    from agent.search.evaluate import _leaves_sign

    V = np.logspace(4, 5, 12)
    data = pd.DataFrame({"vocab": V, "normalized_loss": -3.0 * (1 - 0.05 * np.log(V / 3e4) ** 2)})
    ctx = Search(Problem(("vocab",), ("normalized_loss",), axis=("vocab",)), data, SearchConfig(budget=1)).context
    form = ctx.units.fitted(parse_law(("normalized_loss = -c0*(1 - q0*log(vocab/3e4)**2)",), ("vocab",),
                                      ("normalized_loss",)))
    bowl = form.to_fitted({"all_data": {"c0": 3.0, "q0": 0.05}})  # positive past ~90x the optimum
    assert not _leaves_sign(form.law, bowl, ctx)
