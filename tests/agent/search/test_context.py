"""What a search evaluates on: with many groups, a seeded sample of whole groups."""
import numpy as np
import pandas as pd

from agent.problem import Problem, make_table
from agent.search.context import sample_groups

PROBLEM = Problem(("N",), ("loss",), group="run", axis=("N",))


def sweep(n_groups: int) -> pd.DataFrame:
    N = np.logspace(6, 9, 5)
    return pd.DataFrame([{"run": f"g{g}", "N": n, "loss": 2 + g / 10 + 100 * n ** -0.3}
                         for g in range(n_groups) for n in N])


def test_with_many_groups_a_seeded_sample_of_whole_groups_is_searched():
    df = sweep(30)
    table = make_table(df, PROBLEM)
    kept = sample_groups(df, PROBLEM, table, max_groups=12, seed=4)
    groups = set(kept["run"])
    assert len(groups) == 12
    assert kept.groupby("run").size().eq(5).all()  # every row of a kept group, none of the others
    assert groups == set(sample_groups(df, PROBLEM, table, max_groups=12, seed=4)["run"])  # the seed decides
    assert groups != set(sample_groups(df, PROBLEM, table, max_groups=12, seed=5)["run"])


def test_few_groups_or_no_group_column_keep_every_row():
    df = sweep(12)
    assert sample_groups(df, PROBLEM, make_table(df, PROBLEM), max_groups=12, seed=0) is df
    ungrouped = Problem(("N",), ("loss",), axis=("N",))
    assert sample_groups(df, ungrouped, make_table(df, ungrouped), max_groups=3, seed=0) is df
