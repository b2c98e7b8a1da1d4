"""A non-finite prediction is explained by the innermost operation that broke, computed in float64."""
from __future__ import annotations

import numpy as np
import pytest

from agent.expressions import parse_law
from agent.problem import Table
from app.services.non_finite import explain_non_finite


def explain(line: str, constants: dict[str, float], **point: float) -> str:
    law = parse_law([line], list(point), ["loss"])
    table = Table({k: np.array([v]) for k, v in point.items()}, np.full((1, 1), np.nan),
                  np.array(["all"], dtype=object))
    return explain_non_finite(law, table, {"all": constants}, table.groups, 0)


@pytest.mark.parametrize("line, constants, point, message", [
    ("loss = log(N - c)", {"c": 10.0}, {"N": 5.0},
     "log of a non-positive value (log(N - c) with N - c = -5) at N=5"),
    ("loss = sqrt(c - N)", {"c": 1.0}, {"N": 3.0},
     "sqrt of a non-positive value (sqrt(-N + c) with -N + c = -2) at N=3"),
    ("loss = (N - c) ** a", {"c": 4.0, "a": 0.3}, {"N": 2.0},
     "a fractional power of a negative value (N - c = -2, power 0.3) at N=2"),
    ("loss = a / (N - c)", {"a": 1.0, "c": 2.0}, {"N": 2.0},
     "a division by zero (N - c = 0 raised to the power -1) at N=2"),
    ("loss = exp(a * N)", {"a": 1.0}, {"N": 1000.0},
     "exp overflows (exp(N*a) with N*a = 1000) at N=1000"),
    ("loss = N ** a", {"a": 200.0}, {"N": 1e10},
     "a power overflows (N = 1e+10 raised to the power 200) at N=1e+10"),
    ("loss = a * N * b", {"a": 1e300, "b": 1e300}, {"N": 1.0}, "the value of N*a*b overflows at N=1"),
])
def test_each_kind_of_break_is_named_with_its_values(line, constants, point, message):
    assert explain(line, constants, **point) == message


def test_the_innermost_break_is_named_not_the_operations_it_spoils():
    # exp(exp(16)) is already infinite; the log around it only inherits the problem
    message = explain("loss = log(exp(exp(exp(a*N))) + b)", {"a": 1.0, "b": 0.0}, N=16.0)
    assert message == "exp overflows (exp(exp(N*a)) with exp(N*a) = 8.88611e+06) at N=16"


def test_helper_lines_are_explained_through_their_substitution():
    law = parse_law(["h = N - c", "loss = log(h) + sqrt(h + 10)"], ["N"], ["loss"])
    table = Table({"N": np.array([1.0])}, np.full((1, 1), np.nan), np.array(["all"], dtype=object))
    message = explain_non_finite(law, table, {"all": {"c": 3.0}}, table.groups, 0)
    assert message == "log of a non-positive value (log(N - c) with N - c = -2) at N=1"


@pytest.mark.timeout(30)  # sympy's exact arithmetic took minutes here and froze the API meanwhile
def test_predict_with_a_huge_intermediate_answers_a_clear_422_at_once(client):
    r = client.post("/predict", json={"lines": ["loss = log(exp(exp(exp(a*N)))+b)"], "constants": {"a": 1, "b": 0},
                                      "points": [{"N": 16}]})
    assert r.status_code == 422
    assert r.json()["detail"] == ("the prediction at point 1 is not finite: exp overflows "
                                  "(exp(exp(N*a)) with exp(N*a) = 8.88611e+06) at N=16")
    assert client.get("/health").status_code == 200
