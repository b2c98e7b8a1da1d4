"""The seed library: generic shapes over whatever inputs a dataset has, within the constant cap."""
import numpy as np
import pandas as pd
import pytest

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


def data_constrained_sweep(epochs_column=False):
    """Tokens drawn from a few pools of unique data, from a quarter pass to 32 passes, at three sizes;
    the loss follows Muennighoff et al.'s effective data (repeats worth less with every pass)."""
    rows = []
    for n in (1e7, 1e8, 1e9):
        for unique in (1e8, 1e9, 1e10):
            for passes in (0.25, 0.5, 1, 2, 4, 8, 16, 32):
                tokens = unique * passes
                effective = min(tokens, unique) * (1 + 10 * (1 - np.exp(-max(passes - 1, 0) / 10)))
                loss = 1.8 + 0.5 * (n / 1e8) ** -0.3 + 0.6 * (effective / 1e9) ** -0.3
                rows.append({"n": n, "unique": unique, ("epochs" if epochs_column else "tokens"):
                             passes if epochs_column else tokens, "loss": loss})
    df = pd.DataFrame(rows)
    inputs = ("n", "epochs" if epochs_column else "tokens", "unique")
    problem = Problem(inputs, ("loss",), max_constants=6)
    return problem, summarize(problem, make_table(df, problem)), df


def test_tokens_seen_from_a_pool_of_unique_data_get_a_data_constrained_seed_that_fits_the_truth():
    from agent.fitting import fit_law, predict
    problem, summary, df = data_constrained_sweep()
    assert {"seen": "tokens", "pool": "unique", "mode": "tokens"} in summary["repeated"]
    laws = dict(seed_laws(problem, summary))
    lines = laws["data_repetition[tokens/unique:tokens]"]
    law = parse_law(lines, problem.inputs, problem.targets, max_constants=6)
    table = make_table(df, problem)
    fitted = fit_law(law, table, seed=0)
    rel = np.abs(predict(law, table, fitted.constants, table.groups)[:, 0] / table.y[:, 0] - 1)
    assert rel.max() < 1e-3  # the seed's form holds the truth: a careful fit recovers it


def test_the_designs_seeds_come_right_after_the_shapes_over_every_input():
    """Seeds are proposed in order until a budget stops the search: on a 72-row repetition sweep of
    the development suite the data-constrained form came last of 115, after every single input and
    pair, and was never fitted."""
    problem, summary, _ = data_constrained_sweep()
    labels = [label for label, _ in seed_laws(problem, summary)]
    everything = f"[{','.join(problem.inputs)}]"
    block = [label for label in labels if label.endswith(everything)]
    design = [label for label in labels if label.startswith("data_repetition")]
    assert len(labels) > 100 and block and design
    assert labels[:len(block) + len(design)] == block + design
    assert len(set(labels)) == len(labels)


def test_with_the_epochs_recorded_beside_tokens_and_pool_the_data_constrained_seed_leaves_them_out():
    """Over all four inputs the seed adds a power term for the epochs: 8 constants, over the cap.  The
    seed over the three that make the epochs holds the truth within the cap."""
    from agent.fitting import fit_law, predict
    _, _, df = data_constrained_sweep()
    df["epochs"] = df.tokens / df.unique
    problem = Problem(("n", "tokens", "unique", "epochs"), ("loss",), max_constants=6)
    summary = summarize(problem, make_table(df, problem))
    laws = dict(seed_laws(problem, summary))
    full = parse_law(laws["data_repetition[tokens/unique:tokens]"], problem.inputs, problem.targets)
    assert full.n_constants > 6
    law = parse_law(laws["data_repetition[tokens/unique:tokens;n,tokens,unique]"], problem.inputs, problem.targets,
                    max_constants=6)
    table = make_table(df, problem)
    fitted = fit_law(law, table, seed=0)
    assert np.abs(predict(law, table, fitted.constants, table.groups)[:, 0] / table.y[:, 0] - 1).max() < 1e-3


def test_an_epoch_count_over_a_pool_gets_the_epoch_form_of_the_seed():
    problem, summary, _ = data_constrained_sweep(epochs_column=True)
    assert {"seen": "epochs", "pool": "unique", "mode": "epochs"} in summary["repeated"]
    text = dict(seed_laws(problem, summary))["data_repetition[epochs/unique:epochs]"][0]
    assert "min(epochs, 1)" in text and "max(epochs - 1, 0)" in text and "(n/" in text


def test_a_sweep_where_nothing_is_repeated_gets_no_data_constrained_seed():
    problem, summary = sweep_problem()
    assert summary["repeated"] == []
    assert not any(label.startswith("data_repetition") for label, _ in seed_laws(problem, summary))


def test_a_size_like_setting_gets_an_additive_bowl_whose_optimum_moves_with_size():
    """``level + q*(log v - m - g*log N)**2``: the vocabulary (or depth) penalty is the same at any loss level."""
    problem, summary = sweep_problem(cap=6)
    text = dict(seed_laws(problem, summary))["level_plus_bowl_0[size,lr]"][0]
    assert text == ("loss = c1 + c0*(size/1e+08)**(-a0) + q0*(log((lr/0.001)) - m0 - g0*log((size/1e+08)))**2")
    assert parse_law((text,), problem.inputs, problem.targets).n_constants == 6


def test_two_scale_inputs_get_the_log_bilinear_product_of_routed_models():
    problem, summary = two_scale_two_setting_problem(cap=12)
    text = dict(seed_laws(problem, summary))["interacting_product[n,d]"][0]
    assert text == "loss = c1 + c0*(n/3.2e+08)**(-a0)*(d/1e+10)**(-(a1 + g0*log((n/3.2e+08))))"


def two_target_sweep():
    rows = []
    for n in np.logspace(7, 9, 4):
        for d in np.logspace(9, 11, 4):
            level = 1.8 + 0.6 * (n / 1e8) ** -0.3 + 0.5 * (d / 1e10) ** -0.28
            rows.append({"n": n, "d": d, "loss": level, "acc": 0.95 - 2.0 * np.exp(-0.9 * level)})
    df = pd.DataFrame(rows)
    problem = Problem(("n", "d"), ("loss", "acc"), max_constants=8)
    return problem, summarize(problem, make_table(df, problem)), df


def test_targets_of_the_same_runs_get_seeds_that_share_exponents_or_a_level():
    from agent.fitting import fit_law, predict
    from agent.search.library import is_prior_shape
    problem, summary, df = two_target_sweep()
    shapes = dict(seed_laws(problem, summary))
    shared = shapes["additive_power+shared_exponents[n,d]"]
    assert [line.count("**(-a0)") for line in shared] == [1, 1]  # one exponent, both targets
    assert parse_law(shared, problem.inputs, problem.targets).n_constants == 8  # 5 + 5 would not fit
    level = shapes["shared_level+additive_power[loss]"]
    assert level[1:] == ("loss = level", "acc = c3 + c4*exp(-k0*level)")
    assert is_prior_shape("shared_level+additive_power[loss]") and is_prior_shape("additive_power+shared_exponents[n]")
    law = parse_law(level, problem.inputs, problem.targets, max_constants=8)
    table = make_table(df, problem)
    fitted = fit_law(law, table, seed=0)
    rel = np.abs(predict(law, table, fitted.constants, table.groups) / table.y - 1)
    assert rel.max() < 1e-3  # accuracy follows the loss: one level explains both targets


def rate_sweep(scale=1.0, error=False):
    """Loss, and a 4-way multiple-choice accuracy (or its error rate) that is a sigmoid of the loss."""
    rows = []
    for n in np.logspace(7, 9, 5):
        for d in np.logspace(9, 11, 5):
            level = 1.8 + 0.6 * (n / 1e8) ** -0.3 + 0.5 * (d / 1e10) ** -0.28
            acc = 0.25 + 0.75 / (1 + np.exp(3.0 * (level - 2.4)))
            rows.append({"n": n, "d": d, "loss": level, "acc": scale * (1 - acc if error else acc)})
    df = pd.DataFrame(rows)
    problem = Problem(("n", "d"), ("loss", "acc"), max_constants=8)
    return problem, summarize(problem, make_table(df, problem)), df


def test_a_rate_that_follows_the_loss_gets_a_sigmoid_link_bounded_by_one():
    from agent.fitting import fit_law, predict
    from agent.search.library import is_prior_shape
    from agent.search.units import Units
    problem, summary, df = rate_sweep()
    label = "shared_level+additive_power[loss]+rate_sigmoid"
    lines = dict(seed_laws(problem, summary))[label]
    # seeds are over the normalised target: accuracy is fitted in tenths, so its ceiling of 1 is 10
    assert summary["targets"]["acc"]["reference"] == 0.1
    assert lines[1:] == ("loss = level", "acc = c3 + (10 - c3)/(1 + exp(k0*(level - m0)))")
    assert is_prior_shape(label)
    units = Units.from_summary(problem, summary)
    law = parse_law(units.with_target_scales(lines, problem.inputs), problem.inputs, problem.targets, max_constants=8)
    table = make_table(df, problem)
    fitted = fit_law(law, table, seed=0)
    rel = np.abs(predict(law, table, fitted.constants, table.groups) / table.y - 1)
    assert rel.max() < 1e-3  # the chance level is fitted; the ceiling is what a rate can reach


def test_an_error_rate_falls_to_zero_and_a_percentage_is_not_a_rate():
    problem, summary, _ = rate_sweep(error=True)
    lines = dict(seed_laws(problem, summary))["shared_level+additive_power[loss]+rate_sigmoid"]
    assert lines[2] == "acc = c3/(1 + exp(-k0*(level - m0)))"
    problem, summary, _ = rate_sweep(scale=100.0)  # accuracy in percent: no bound is known
    assert not any(label.endswith("+rate_sigmoid") for label, _ in seed_laws(problem, summary))


def test_one_target_gets_no_shared_seeds():
    problem, summary = sweep_problem()
    assert not any("+" in label for label, _ in seed_laws(problem, summary))


def test_without_cross_terms_the_bowl_spends_the_freed_constant_on_a_moving_optimum():
    problem, summary = two_scale_two_setting_problem(cap=10)
    shapes = dict(seed_laws(problem, summary))
    crossed = shapes["level_times_bowl_0[lr,bsz,n,d]"][0]
    assert " - g" not in crossed  # 10 constants: the cross term leaves none for a drift
    diagonal = {label: lines[0] for label, lines in shapes.items()
                if label.startswith("level_times_diagonal_bowl") and label.endswith("[lr,bsz,n,d]")}
    assert len(diagonal) == 4  # one drifting centre: which setting, with which scale input
    for text in diagonal.values():
        assert text.count(" - g0*log(") == 1 and ")*(log((bsz/" not in text
        assert parse_law((text,), problem.inputs, problem.targets).n_constants == 10


def test_a_single_setting_gets_no_separate_diagonal_bowl():
    problem, summary = sweep_problem(cap=6)
    assert not any(label.startswith("level_times_diagonal") for label, _ in seed_laws(problem, summary))


def test_the_data_mixing_law_is_a_literature_form():
    from agent.search.library import is_prior_shape
    assert is_prior_shape("exp_log_linear[p1,p2]") and is_prior_shape("offset_exp_linear[p1,p2]")
    assert not is_prior_shape("log_quadratic[p1,p2]")


def test_the_routed_model_product_comes_with_and_without_a_floor():
    problem, summary = two_scale_two_setting_problem(cap=12)
    shapes = dict(seed_laws(problem, summary))
    assert shapes["interacting_product_no_floor[n,d]"][0] == (
        "loss = c0*(n/3.2e+08)**(-a0)*(d/1e+10)**(-(a1 + g0*log((n/3.2e+08))))")
    assert shapes["interacting_product[n,d]"][0].startswith("loss = c1 + c0*(n/3.2e+08)**(-a0)*")


def chinchilla_grid():
    """An N x D grid of a Chinchilla law: the loss falls with D at every N, though N explains most of it."""
    rows = [{"N": n, "D": d, "loss": 1.7 + 400 * n ** -0.34 + 410 * d ** -0.28}
            for n in np.logspace(7, 10, 6) for d in np.logspace(9, 11, 6)]
    problem = Problem(("N", "D"), ("loss",), axis=("N",), max_constants=8)
    return problem, summarize(problem, make_table(pd.DataFrame(rows), problem))


def test_on_a_grid_an_input_trends_where_the_others_are_held_fixed():
    problem, summary = chinchilla_grid()
    # over all rows D's rank correlation with the loss is weak (N dominates); in every slice it is -1
    assert summary["targets"]["loss"]["trend"] == {"N": -1.0, "D": -1.0}
    assert not any("bowl" in label for label, _ in seed_laws(problem, summary))  # no optimum in D to seed


def test_a_bowl_whose_optimum_sits_near_one_end_still_turns():
    # at every size the loss falls over six of the seven learning rates, then rises: an optimum
    rows = [{"size": size, "lr": lr, "loss": 2.0 + 300 * size ** -0.3 + 0.05 * (np.log10(lr) + 2.3) ** 2}
            for size in np.logspace(7, 9, 4) for lr in np.logspace(-4, -2, 7)]
    problem = Problem(("size", "lr"), ("loss",), axis=("size",), max_constants=8)
    summary = summarize(problem, make_table(pd.DataFrame(rows), problem))
    assert summary["targets"]["loss"]["trend"] == {"size": -1.0, "lr": 0.0}
    assert "hybrid_power_bowl[size,lr]" in dict(seed_laws(problem, summary))


def test_without_slices_an_input_trends_over_all_rows():
    sizes = np.logspace(7, 9, 9)
    rows = pd.DataFrame({"size": sizes, "lr": np.logspace(-4, -2, 9)[::-1], "loss": 2.0 + 300 * sizes ** -0.3})
    problem = Problem(("size", "lr"), ("loss",), axis=("size",))
    summary = summarize(problem, make_table(rows, problem))  # every row its own setting: no slice to hold
    assert summary["targets"]["loss"]["trend"] == {"size": -1.0, "lr": 1.0}


def sparse_sweep(cap=6):
    """N x D x sparsity: pruning a share s of the weights leaves an effective size N*(1 - s)**0.7."""
    rows = pd.DataFrame([{"N": n, "D": d, "s": s, "loss": 1.7 + 400 * (n * (1 - s) ** 0.7) ** -0.34 + 410 * d ** -0.28}
                         for n in np.logspace(7, 9, 5) for d in np.logspace(9, 11, 4) for s in (0.0, 0.5, 0.75)])
    problem = Problem(("N", "D", "s"), ("loss",), axis=("N",), max_constants=cap)
    table = make_table(rows, problem)
    return problem, summarize(problem, table), table


def seed_nmse(problem, table, shapes, labels) -> dict[str, float]:
    """Each named seed fitted on every row of ``table``: its NMSE there."""
    from agent.fitting import fit_law, predict
    from agent.scoring import score
    out = {}
    for label in labels:
        law = parse_law(shapes[label], problem.inputs, problem.targets)
        out[label] = score(table.y, predict(law, table, fit_law(law, table, seed=0).constants, table.groups)).nmse
    return out


def test_an_input_spanning_no_decade_beside_sizes_gets_the_effective_size_forms():
    """Sparsity or precision changes what a parameter is worth: only the size term's coefficient moves,
    as exp(b*s) or linearly; without such an input (Chinchilla's N x D grid) the forms are not seeded."""
    from agent.search.library import is_prior_shape
    problem, summary, _ = sparse_sweep()
    assert not summary["inputs"]["s"]["scale_like"] and summary["inputs"]["N"]["scale_like"]
    shapes = dict(seed_laws(problem, summary))
    assert shapes["effective_size[N,D,s]"][0] == (
        "loss = c1 + c0*exp(b0*s)*(N/1e+08)**(-a0) + c2*(D/1e+10)**(-a1)")
    assert shapes["effective_size_linear[N,D,s]"][0] == (
        "loss = c1 + (c0 + b0*s)*(N/1e+08)**(-a0) + c2*(D/1e+10)**(-a1)")
    assert is_prior_shape("effective_size[N,D,s]") and is_prior_shape("effective_size_linear[N,D,s]")
    grid_problem, grid_summary = chinchilla_grid()
    assert not any(label.startswith("effective_size") for label, _ in seed_laws(grid_problem, grid_summary))


def test_the_effective_size_form_fits_a_pruned_sweep_that_the_additive_law_cannot():
    problem, summary, table = sparse_sweep()
    shapes = dict(seed_laws(problem, summary))
    # the additive law over (N, D, s) adds b*s to the loss
    nmse = seed_nmse(problem, table, shapes, ("effective_size[N,D,s]", "additive_power[N,D,s]"))
    assert nmse["effective_size[N,D,s]"] < nmse["additive_power[N,D,s]"] / 5, nmse


def test_a_share_of_the_weights_enters_as_a_power_of_what_is_left():
    """Sparsity confined to [0, 1): the literature's effective size N*(1 - s)**r is seeded as written, and it
    recovers the pruned sweep where the generic exp(b*s) writing leaves an error; a learning rate in (0, 1)
    that spans decades is a scale, not a share."""
    from agent.search.library import is_prior_shape
    problem, summary, table = sparse_sweep()
    shapes = dict(seed_laws(problem, summary))
    assert shapes["effective_size_share[N,D,s]"][0] == (
        "loss = c0 + c1*(1 - s)**b0*(N/1e+08)**(-a0) + c2*(D/1e+10)**(-a1)")
    assert is_prior_shape("effective_size_share[N,D,s]")
    nmse = seed_nmse(problem, table, shapes, ("effective_size_share[N,D,s]", "effective_size[N,D,s]"))
    assert nmse["effective_size_share[N,D,s]"] < 1e-12 < nmse["effective_size[N,D,s]"], nmse
    rows = pd.DataFrame([{"N": n, "lr": lr, "loss": 2.0 + 300 * n ** -0.3 + 0.05 * np.log10(lr / 1e-3) ** 2}
                         for n in np.logspace(7, 9, 4) for lr in np.logspace(-4, -1, 5)])
    lr_problem = Problem(("N", "lr"), ("loss",), axis=("N",))
    lr_summary = summarize(lr_problem, make_table(rows, lr_problem))
    assert not any(label.startswith("effective_size_share") for label, _ in seed_laws(lr_problem, lr_summary))


def distillation_rows():
    """Students of sizes N on D tokens, each taught by a teacher whose loss t is an input: the student's
    loss falls towards t, and the better the teacher, the further above it the student stays."""
    return pd.DataFrame([{"N": n, "D": d, "t": t, "loss": t + t ** -1.5 * (400 * n ** -0.34 + 410 * d ** -0.28)}
                         for n in np.logspace(8, 9.5, 5) for d in np.logspace(9.5, 11, 4) for t in (2.1, 2.4, 2.8, 3.2)])


def distillation_sweep(cap=6):
    problem = Problem(("N", "D", "t"), ("loss",), axis=("N",), max_constants=cap)
    table = make_table(distillation_rows(), problem)
    return problem, summarize(problem, table), table


def test_a_loss_given_as_an_input_can_be_the_floor_that_the_target_falls_towards():
    """Distillation: the teacher's loss is the student's floor and scales the rest.  No additive law
    with a constant floor fits that, and the form is seeded only where a linear input sits beside sizes."""
    from agent.search.library import is_prior_shape
    problem, summary, table = distillation_sweep()
    shapes = dict(seed_laws(problem, summary))
    assert shapes["input_floor[N,D,t]"][0] == (
        "loss = b0*(t/2.6) + exp(b1*(t/2.6))*(c0*(N/5.6e+08)**(-a0) + c1*(D/1.8e+10)**(-a1))")
    assert is_prior_shape("input_floor[N,D,t]")
    nmse = seed_nmse(problem, table, shapes,
                     ("input_floor[N,D,t]", "additive_power[N,D,t]", "effective_size[N,D,t]"))
    assert nmse["input_floor[N,D,t]"] < min(nmse["additive_power[N,D,t]"], nmse["effective_size[N,D,t]"]) / 5, nmse
    grid_problem, grid_summary = chinchilla_grid()
    assert not any(label.startswith("input_floor") for label, _ in seed_laws(grid_problem, grid_summary))


def test_a_loss_given_as_an_input_below_the_target_on_every_row_is_seeded_as_the_floor_itself():
    """The teacher's loss t lies below the student's on every row and within its range: the literature's
    law with t itself as the floor (no fitted coefficient) is seeded and recovers the sweep exactly, in any
    units of the losses.  A share below every loss (sparsity) is no floor: it never reaches the loss."""
    from agent.fitting import fit_law, predict
    from agent.scoring import score
    from agent.search.library import is_prior_shape
    assert is_prior_shape("input_as_floor[N,D,t]")
    for unit in (1.0, 100.0):
        rows = distillation_rows()
        rows[["t", "loss"]] *= unit
        problem = Problem(("N", "D", "t"), ("loss",), axis=("N",))
        table = make_table(rows, problem)
        summary = summarize(problem, table)
        assert summary["inputs"]["t"]["floor"] and not summary["inputs"]["N"]["floor"]
        law = parse_law(dict(seed_laws(problem, summary))["input_as_floor[N,D,t]"], problem.inputs, problem.targets)
        assert law.lines[0].startswith("loss = t + (t/")
        fitted = fit_law(law, table, seed=0)
        assert score(table.y, predict(law, table, fitted.constants, table.groups)).nmse < 1e-12
        assert fitted.constants["all_data"]["b0"] == pytest.approx(1.5, rel=1e-6)  # the truth's t**-1.5
    problem, summary, _ = sparse_sweep()
    assert not summary["inputs"]["s"]["floor"]
    assert not any(label.startswith("input_as_floor") for label, _ in seed_laws(problem, summary))


def test_with_a_redundant_fourth_input_the_laws_over_the_other_three_are_seeded_before_single_inputs():
    """A user hands over every column: here the teacher's size beside its loss.  The law over all four
    inputs has 8 constants, over the cap, so only a law over all inputs but one holds the distillation form;
    they come right after the full set (and the sweep's design seeds), before singles and pairs."""
    from agent.search.library import input_subsets
    rows = distillation_rows()
    rows["teacher_N"] = [float(f"{1e9 * ((t - 1.7) / 0.9) ** (-1 / 0.3):.3g}") for t in rows.t]
    four = Problem(("N", "D", "t", "teacher_N"), ("loss",), axis=("N",), max_constants=6)
    labels = [label for label, _ in seed_laws(four, summarize(four, make_table(rows, four)))]
    assert "input_floor[N,D,t]" in labels
    first_single = min(i for i, label in enumerate(labels) if label.endswith("[N]"))
    assert labels.index("input_floor[N,D,t]") < first_single
    assert [s for s in input_subsets(["a", "b", "c", "d"])][:5] == [
        ["a", "b", "c", "d"], ["a", "b", "c"], ["a", "b", "d"], ["a", "c", "d"], ["b", "c", "d"]]
    assert list(input_subsets(["a", "b", "c"])) == [["a", "b", "c"], ["a"], ["b"], ["c"], ["a", "b"], ["a", "c"],
                                                    ["b", "c"]]  # three inputs: as before
