"""The synthetic development suite: problems whose law is known, generated from a seed."""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from agent.expressions import parse_law
from agent.fitting import predict
from agent.problem import axis_values, make_table
from tasks.synthetic import (
    SyntheticProblem, UnknownProblem, family_names, get_problem, problem_names, problems_in_family, synthetic_suite,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def suite() -> list[SyntheticProblem]:
    return synthetic_suite(0)


@pytest.fixture(scope="module")
def noiseless() -> list[SyntheticProblem]:
    return synthetic_suite(0, noiseless=True)


def truth_of(p: SyntheticProblem, df: pd.DataFrame) -> np.ndarray:
    law = parse_law(p.truth, p.problem.inputs, p.problem.targets, max_constants=p.problem.max_constants)
    table = make_table(df, p.problem)
    return predict(law, table, p.true_constants, table.groups)


def log_axis(p: SyntheticProblem, df: pd.DataFrame) -> np.ndarray:
    """Log position along the axis (the core already returns the log of a product of columns)."""
    values = axis_values(df, p.problem)
    return values if len(p.problem.axis) > 1 else np.log(values)


def test_at_least_40_problems_from_at_least_10_families(suite):
    families = Counter(p.family for p in suite)
    assert len(suite) >= 40 and len(families) >= 10, families
    assert min(families.values()) >= 3
    assert [p.name for p in suite] == problem_names() and len(set(problem_names())) == len(suite)
    assert list(families) == family_names()
    assert all(p.name.startswith(p.family + "_") for p in suite)


def test_the_suite_mixes_designs_groups_targets_and_column_names(suite):
    assert sum(p.problem.group is not None for p in suite) >= 10
    assert sum(p.problem.group is None for p in suite) >= 10
    assert sum(len(p.problem.targets) > 1 for p in suite) >= 6
    assert sum(not p.problem.axis for p in suite) >= 3                 # mixtures: no scale axis
    assert sum(len(p.problem.axis) > 1 for p in suite) >= 3            # compute proxy N*D
    assert len({c for p in suite for c in p.problem.inputs}) >= 25
    model_size = {p.problem.inputs[0] for p in suite if p.family in ("chinchilla_additive", "drifting_exponent")}
    assert len(model_size) >= 4, model_size
    rows = sorted(p.n_rows for p in suite)
    assert rows[0] >= 20 and rows[-1] >= 1000 and rows[len(rows) // 2] <= 300
    flops = [p for p in suite if any(p.train[c].max() > 1e20 for c in p.problem.inputs)]
    assert len(flops) >= 4  # compute in FLOPs, far beyond float literals one would type
    # sparsity beside the sizes: an input that is no scale (it holds zero or spans under 4x) on a problem
    # with an axis (a mixture's proportions have none)
    narrow = [p for p in suite if p.problem.axis and any(
        p.train[c].min() <= 0 or p.train[c].max() < 4 * p.train[c].min() for c in p.problem.inputs)]
    assert len(narrow) >= 2, [p.name for p in narrow]


def test_the_same_seed_gives_the_same_data_and_another_seed_other_data(suite):
    again, other = synthetic_suite(0), synthetic_suite(1)
    for a, b, c in zip(suite, again, other):
        pd.testing.assert_frame_equal(a.train, b.train)
        pd.testing.assert_frame_equal(a.test, b.test)
        assert a.true_constants == b.true_constants
        assert a.true_constants != c.true_constants, a.name
        assert a.problem == c.problem  # the seed draws constants and noise, not the problem


def test_a_problem_does_not_depend_on_which_others_are_generated(suite):
    alone = get_problem("hyper_bowl_02")
    in_suite = next(p for p in suite if p.name == "hyper_bowl_02")
    pd.testing.assert_frame_equal(alone.train, in_suite.train)
    assert [p.name for p in problems_in_family("moe")] == ["moe_01", "moe_02", "moe_03", "moe_04"]


def test_unknown_problem_or_family_names_are_errors():
    with pytest.raises(UnknownProblem, match="chinchilla_99"):
        synthetic_suite(names=["chinchilla_99"])
    with pytest.raises(UnknownProblem, match="no_such_family"):
        synthetic_suite(families=["no_such_family"])


def test_every_test_row_lies_beyond_the_training_range_along_the_axis(suite):
    for p in (p for p in suite if p.problem.axis):
        train, test = log_axis(p, p.train), log_axis(p, p.test)
        assert test.min() > train.max(), p.name
        reach = np.exp(test.max() - train.max())
        assert 2.0 <= reach <= 10.5, (p.name, reach)


def test_without_an_axis_whole_input_settings_are_held_out(suite):
    for p in (p for p in suite if not p.problem.axis):
        key = lambda df: set(map(tuple, df[list(p.problem.inputs)].round(9).to_numpy()))  # noqa: E731
        assert key(p.train).isdisjoint(key(p.test)), p.name
        assert 0.15 <= len(p.test) / p.n_rows <= 0.35


def test_a_distilled_student_falls_towards_its_teacher_and_never_passes_it(noiseless):
    """The teacher's loss is an input and the student's floor: above it on every row, further above a
    better teacher, and falling with the student's size."""
    distilled = [p for p in noiseless if p.family == "distillation"]
    assert len(distilled) >= 3
    for p in distilled:
        size, tokens, teacher = p.problem.inputs[:3]  # a fourth, when there is one, is the teacher's size
        df = pd.concat([p.train, p.test])
        y = df[p.problem.targets[0]]
        assert (y > df[teacher]).all(), p.name
        gap = (y - df[teacher]).groupby(df[teacher]).mean()
        assert np.all(np.diff(gap.to_numpy()) < 0), (p.name, gap)  # the teacher index is sorted ascending
        by_size = y.groupby([df[teacher], df[tokens], df[size]]).mean().unstack()
        assert np.all(np.diff(by_size.to_numpy(), axis=1) < 0), p.name


def test_some_problems_record_a_column_the_truth_does_not_use_but_the_others_determine(noiseless):
    """As users do: epochs beside seen and unique tokens, active beside total parameters, a teacher's size
    beside its loss.  The search is told nothing of which input is redundant."""
    recorded = [p for p in noiseless if "recorded as well" in p.description]
    assert len(recorded) >= 3 and len({p.family for p in recorded}) >= 3
    for p in recorded:
        assert len(p.problem.inputs) >= 4, p.name
        extra, others = p.problem.inputs[-1], list(p.problem.inputs[:-1])
        df = pd.concat([p.train, p.test])
        assert (df.groupby(others)[extra].nunique() == 1).all(), p.name   # the others fix it
        assert df[extra].nunique() > 1, p.name
        moved = df.assign(**{extra: df[extra] * 3.0})
        np.testing.assert_array_equal(truth_of(p, moved), truth_of(p, df), err_msg=p.name)  # unused


def test_every_truth_parses_under_the_problems_cap_with_a_value_for_each_constant(suite):
    for p in suite:
        assert p.truth is not None and p.problem.max_constants in (6, 8)
        law = parse_law(p.truth, p.problem.inputs, p.problem.targets, max_constants=p.problem.max_constants)
        groups = set(make_table(pd.concat([p.train, p.test]), p.problem).group_names)
        assert set(p.true_constants) == groups, p.name
        for values in p.true_constants.values():
            assert set(values) == set(law.constants), p.name


def test_the_truth_with_its_constants_reproduces_the_noiseless_data(noiseless):
    # The data come from numpy code per family; the truth is law text. They must agree exactly.
    for p in noiseless:
        for df in (p.train, p.test):
            np.testing.assert_allclose(truth_of(p, df), df[list(p.problem.targets)].to_numpy(), rtol=1e-9,
                                       err_msg=p.name)


def test_noise_is_a_few_tenths_of_a_percent_to_two_percent(suite):
    for p in suite:
        residual = np.abs(np.log(p.train[list(p.problem.targets)].to_numpy() / truth_of(p, p.train)))
        assert 0.001 <= np.median(residual) <= 0.02, (p.name, np.median(residual))


def test_outliers_and_a_cut_off_schedule_show_in_the_training_rows(suite):
    with_outliers = [p for p in suite if p.noise.outliers]
    bent = [p for p in suite if p.noise.bump]
    assert len(with_outliers) >= 5 and len(bent) >= 4
    for p in with_outliers:
        residual = np.log(p.train[list(p.problem.targets)].to_numpy() / truth_of(p, p.train))
        assert residual.max() > 0.035, p.name
    for p in bent:  # checkpoints before the schedule's end lie above the law
        residual = np.log(p.train[p.problem.targets[0]].to_numpy() / truth_of(p, p.train)[:, 0])
        assert np.median(residual) > 0.003, p.name


def test_the_search_core_never_imports_the_tasks_package():
    for path in (REPO / "agent").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "tasks" or n.startswith("tasks.") for n in names), path
