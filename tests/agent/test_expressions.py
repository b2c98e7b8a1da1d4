"""Law expressions: hostile text is rejected with a reason and never evaluated; laws compute."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from agent.errors import LawError
from agent.expressions import parse_law

REPO = Path(__file__).resolve().parents[2]


def parse(text: str, cap: int | None = 4):
    return parse_law(text, ["x"], ["y"], max_constants=cap)


@pytest.mark.parametrize("text, reason", [
    ("y = __import__('os').system('x')", "attribute access cannot be called"),
    ("y = __import__('os')", "unknown function '__import__'"),
    ("y = __builtins__ * x", "'__builtins__' is not an allowed name"),
    ("y = x.real", "attribute access is not allowed"),
    ("y = np.exp(x)", "attribute access cannot be called"),
    ("y = (lambda q: q)(x)", "lambda cannot be called"),
    ("y = (lambda: 1)", "lambda is not allowed"),
    ("y = [a for a in x]", "a comprehension is not allowed"),
    ("y = {a: a for a in x}", "a comprehension is not allowed"),
    ("y = x[0]", "subscripting is not allowed"),
    ("y = 10**10**10", "exponent 1e\\+10 is too large"),
    ("y = x + 2**2**2**2**2", "too large"),
    ("y = exp(exp(exp(100)))*x", "too large or not a finite real number"),
    ("y = 1e400*x", "too large"),
    ("y = foo(x)", "unknown function 'foo'; allowed functions: exp, log"),
    ("y = eval('x')", "unknown function 'eval'"),
    ("y = 'x'", "not a number"),
    ("y = f'{x}'", "a string is not allowed"),
    ("y = x if x else 1", "a conditional expression is not allowed"),
    ("y = x < 1", "a comparison is not allowed"),
    ("y = x ^ 2", "use \\*\\* for powers"),
    ("y = (z := x)", "the walrus operator is not allowed"),
    ("y = exp(x=1)", "plain positional arguments only"),
    ("y = max(*x)", "plain positional arguments only"),
    ("import os", "expected 'name = expression'"),
    ("y = x\nimport os", "line 2: expected 'name = expression'"),
    ("y = x +", "syntax error"),
    ("x = 1\ny = x", "cannot assign to input column 'x'"),
    ("y = a + b", "uses no input column"),
    ("z = x", "no line defines target column\\(s\\) y"),
    ("y = a*x**b + c + d + e", "5 constants, more than the cap of 4"),
    ("y = " + "+".join(["x"] * 5000), "10003 characters, more than the limit"),
    ("y = " + "(" * 1900 + "x" + ")" * 1900, "syntax error|nested"),
    ("y = " + "-" * 3000 + "x", "nested too deeply|too large"),
])
def test_hostile_or_invalid_text_is_rejected_with_its_reason(text, reason):
    with pytest.raises(LawError, match=reason):
        parse(text)


def test_a_ten_thousand_character_expression_is_rejected_before_parsing():
    text = "y = " + "x*" * 4998 + "x"
    assert len(text) >= 10_000
    with pytest.raises(LawError, match="more than the limit"):
        parse(text)


def test_the_constant_cap_counts_only_constants_the_targets_use():
    law = parse("unused = p*q*r*s*t*x\ny = a*x**b + c", cap=3)
    assert law.constants == ("a", "b", "c")


def test_helper_lines_define_names_used_by_later_lines():
    law = parse_law(["U = min(u, 0.051*N)", "y = A/U**alpha + E"], ["u", "N"], ["y"])
    assert law.constants == ("A", "alpha", "E") and law.n_constants == 3
    pred = law.evaluate({"u": np.array([100.0]), "N": np.array([1000.0])}, {"A": 2.0, "alpha": 1.0, "E": 1.0})
    assert pred.shape == (1, 1) and pred[0, 0] == pytest.approx(1.0 + 2.0 / 51.0)


def test_laws_with_several_targets_evaluate_to_one_column_each():
    law = parse_law("y1 = a*x\ny2 = b + x", ["x"], ["y1", "y2"])
    out = law.evaluate({"x": np.array([1.0, 2.0])}, {"a": 3.0, "b": 10.0})
    np.testing.assert_allclose(out, [[3.0, 11.0], [6.0, 12.0]])
    assert law.depends_on("y2") == ("b",)


def test_each_row_can_carry_its_own_constants():
    # Rows of different groups evaluate in one call with per-row constant arrays.
    law = parse("y = a*x + b")
    out = law.evaluate({"x": np.array([1.0, 1.0, 2.0])}, {"a": np.array([1.0, 2.0, 3.0]), "b": 0.5})
    np.testing.assert_allclose(out[:, 0], [1.5, 2.5, 6.5])


def test_non_finite_predictions_are_returned_for_the_caller_to_judge():
    out = parse("y = log(x) + a").evaluate({"x": np.array([-1.0, 1.0])}, {"a": 0.0})
    assert np.isnan(out[0, 0]) and out[1, 0] == 0.0


def test_a_missing_constant_value_is_a_law_error():
    with pytest.raises(LawError, match="no value for constant 'b'"):
        parse("y = a*x + b").evaluate({"x": np.array([1.0])}, {"a": 1.0})


def test_canonical_form_ignores_term_order_and_helper_lines():
    a = parse("y = a*x**b + c")
    assert a.canonical == parse("y = c + a*x**b").canonical
    assert a.canonical == parse("h = x**b\ny = a*h + c").canonical
    assert a.canonical != parse("y = a*x**b - c").canonical


def test_canonical_form_is_equal_under_a_consistent_renaming_of_constants():
    assert parse("y = a*x**b + c").canonical == parse("y = A*x**B + C").canonical


def test_canonical_form_is_equal_under_any_renaming_of_constants():
    assert parse("y = a*x**b + c").canonical == parse("y = k + q*x**p").canonical


def test_complexity_grows_with_the_expression():
    assert parse("y = a*x").complexity < parse("y = a*x**b + c*log(x)").complexity


def test_a_parsed_law_can_be_pickled_and_still_evaluates():
    import pickle

    law = pickle.loads(pickle.dumps(parse("y = a*exp(-b*x)")))
    assert law.evaluate({"x": np.array([0.0])}, {"a": 2.0, "b": 1.0})[0, 0] == 2.0


# Calls that evaluate text as code: builtins, and sympy's string parsers.
_FORBIDDEN_NAMES = {"eval", "exec", "compile", "__import__", "sympify", "parse_expr"}
_FORBIDDEN_ATTRS = {"sympify", "parse_expr", "eval", "exec", "S"}


def _forbidden_uses(path: Path, root: Path = REPO) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(root)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            if (isinstance(fn, ast.Name) and fn.id in _FORBIDDEN_NAMES) or (
                    isinstance(fn, ast.Attribute) and fn.attr in _FORBIDDEN_ATTRS):
                found.append(f"{where}:{node.lineno}: {ast.unparse(fn)}(...)")
        elif isinstance(node, ast.ImportFrom):
            bad = [a.name for a in node.names if a.name in _FORBIDDEN_NAMES]
            if bad or (node.module or "").startswith("sympy.parsing"):
                found.append(f"{where}:{node.lineno}: import {', '.join(bad) or node.module}")
    return found


def test_no_code_path_evaluates_text():
    files = [p for pkg in ("agent", "app", "tasks") for p in sorted((REPO / pkg).rglob("*.py"))]
    assert len(files) > 10
    assert [hit for p in files for hit in _forbidden_uses(p)] == []


def test_the_source_scan_finds_each_kind_of_text_evaluation(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import sympy as sp\nfrom sympy import sympify\nfrom sympy.parsing.sympy_parser import standard_transformations\n"
        "a = sp.S('1')\nb = eval('2')\nc = exec('d = 3')\n"
    )
    assert _forbidden_uses(probe, tmp_path) == [
        "probe.py:2: import sympify", "probe.py:3: import sympy.parsing.sympy_parser",
        "probe.py:4: sp.S(...)", "probe.py:5: eval(...)", "probe.py:6: exec(...)",
    ]


def doubling_chain(lines: int) -> list[str]:
    """Helper lines that each use the one before twice: the substituted law doubles per line."""
    return (["h0 = log(x) + a"] + [f"h{i} = exp(h{i - 1}) + log(h{i - 1})" for i in range(1, lines + 1)]
            + [f"y = h{lines}"])


def test_a_law_that_doubles_with_each_helper_line_is_refused_where_it_passes_the_bound():
    assert parse(doubling_chain(8)).complexity == 1534  # under MAX_LAW_NODES: accepted
    for lines in (9, 12, 22):  # 22 lines would be 6 million nodes: refused at line 10 before building it
        with pytest.raises(LawError, match="line 10: the law is too large with its helper lines substituted "
                                           r"\(more than 2000 nodes\)"):
            parse(doubling_chain(lines))


def test_deep_nesting_is_refused_by_name_before_any_recursion_error():
    with pytest.raises(LawError, match="nested more than 60 levels deep with its helper lines substituted"):
        parse("y = " + "exp(" * 61 + "x" + ")" * 61)
    with pytest.raises(LawError, match="nested more than 60 levels deep"):
        parse(["h0 = x"] + [f"h{i} = exp(exp(exp(h{i - 1})))" for i in range(1, 22)] + ["y = h21"])
    for text in ("y = " + "-" * 500 + "x", "y = x + " + " + ".join(f"c{i}" for i in range(500))):
        with pytest.raises(LawError, match="line 1: the expression is nested more than 100 levels deep"):
            parse(text, cap=None)
    assert parse("y = x + " + " + ".join(f"c{i}" for i in range(90)), cap=None).n_constants == 90


def test_the_compiled_law_predicts_differentiates_and_splits_off_its_linear_constants():
    law = parse_law("loss = E + A * N ** (-a)", ["N"], ["loss"])
    assert law.constants == ("E", "A", "a")
    N = np.array([1.0, 10.0, 100.0])
    E, A, a = 1.5, 3.0, 0.4
    assert np.allclose(law.predictor(0)(N, E, A, a), E + A * N ** -a)
    dE, dA, da = law.jacobian(0)(N, E, A, a)
    step = 1e-6
    numeric = (law.predictor(0)(N, E, A, a + step) - law.predictor(0)(N, E, A, a - step)) / (2 * step)
    assert np.allclose(dE, 1.0) and np.allclose(dA, N ** -a) and np.allclose(da, numeric)
    g0, gE, gA = (np.broadcast_to(t, N.shape) for t in law.basis(0, ["E", "A"], ["a"])(N, a))
    assert np.allclose(g0 + E * gE + A * gA, law.predictor(0)(N, E, A, a))  # affine in E and A
