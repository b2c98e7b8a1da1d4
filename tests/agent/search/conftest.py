import numpy as np
import pandas as pd
import pytest

from agent.problem import Problem


@pytest.fixture(scope="module")  # read only: a module shares it, and the runs made on it
def power_law_data():
    """Two groups following L = E + A * N**-alpha with 0.2% noise; N spans 3 decades."""
    rng = np.random.default_rng(0)
    rows = []
    for group, (E, A, alpha) in {"small": (1.8, 300.0, 0.3), "large": (1.5, 500.0, 0.35)}.items():
        for N in np.logspace(6, 9, 14):
            loss = (E + A * N ** -alpha) * (1 + rng.normal(0, 0.002))
            rows.append({"N": N, "group": group, "loss": loss})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def power_law_problem():
    return Problem(("N",), ("loss",), group="group", axis=("N",), max_constants=4)
