"""LawSearch reads like a scikit-learn estimator."""
import numpy as np
import pandas as pd
import pytest
import sympy as sp

from agent.errors import DataError
from agent.estimator import LawSearch


def test_fit_predict_and_the_equations_table(power_law_data):
    train = power_law_data[power_law_data.N < 3e8]
    held_out = power_law_data[power_law_data.N >= 3e8]
    model = LawSearch(axis=["N"], max_constants=4, budget=50, seed=0)
    model.fit(train[["N"]], train["loss"], groups=train["group"])
    pred = model.predict(held_out[["N"]], groups=held_out["group"])
    assert pred.shape == (len(held_out),)
    assert np.max(np.abs(pred / held_out["loss"].to_numpy() - 1)) < 0.02
    table = model.equations_
    assert list(table.columns[:5]) == ["law", "complexity", "n_constants", "validation_loss", "validation_r2"]
    assert table["score"].is_monotonic_decreasing
    assert isinstance(model.sympy(), sp.Expr)
    assert "N" in model.latex()


def test_a_grouped_law_needs_groups_to_predict(power_law_data):
    model = LawSearch(axis=["N"], max_constants=4, budget=20, seed=0)
    model.fit(power_law_data[["N"]], power_law_data["loss"], groups=power_law_data["group"])
    with pytest.raises(DataError, match="groups="):
        model.predict(power_law_data[["N"]])
