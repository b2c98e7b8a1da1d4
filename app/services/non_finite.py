"""Why a law's prediction is not finite at one point: the innermost operation that broke.

Every sub-expression is evaluated once in float64 (numpy, errors ignored), from
the leaves up, so the answer costs microseconds whatever the numbers are.  (Sympy
``subs`` would compute ``exp(exp(exp(16)))`` exactly, in big integers, for minutes.)
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Mapping

import numpy as np
import sympy as sp

from agent.expressions import Law

MAX_SHOWN = 80  # characters of a sub-expression quoted in a message

_FUNCTIONS: dict[type, Callable[..., Any]] = {
    sp.exp: np.exp, sp.log: np.log, sp.Abs: np.abs, sp.tanh: np.tanh,
    sp.Min: lambda *a: functools.reduce(np.minimum, a), sp.Max: lambda *a: functools.reduce(np.maximum, a),
    sp.Add: lambda *a: functools.reduce(np.add, a), sp.Mul: lambda *a: functools.reduce(np.multiply, a),
    sp.Pow: np.power,
}


def explain_non_finite(law: Law, table, constants, groups, row: int) -> str:
    """Name the operation that broke at ``row``: a log or sqrt of a non-positive value, a
    fractional power of a negative one, a division by zero, or an overflow."""
    point = {name: float(table.X[name][row]) for name in law.inputs}
    values = {**point, **{k: float(v) for k, v in constants[groups[row]].items()}}
    where = ", ".join(f"{k}={v:g}" for k, v in point.items())
    for expr in law.expressions:
        found = _first_break(expr, values)
        if found:
            return f"{found} at {where}"
    return f"the value overflows or divides by zero at {where}"


def _first_break(expr: sp.Expr, values: Mapping[str, float]) -> str | None:
    """Post-order walk (iterative, each distinct node once): the first node that turns finite
    arguments into a non-finite value, described; None if every node is finite."""
    value: dict[sp.Basic, np.float64] = {}
    stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
    with np.errstate(all="ignore"):
        while stack:
            node, expanded = stack.pop()
            if node in value:
                continue
            if not expanded and node.args:
                stack.append((node, True))
                stack.extend((a, False) for a in node.args if a not in value)
                continue
            kids = [value[a] for a in node.args]
            value[node] = v = _evaluate(node, kids, values)
            if not np.isfinite(v) and all(np.isfinite(k) for k in kids):
                return _describe(node, kids)
    return None


def _evaluate(node: sp.Basic, kids: list[np.float64], values: Mapping[str, float]) -> np.float64:
    if isinstance(node, sp.Symbol):
        return np.float64(values[node.name])
    if not node.args:
        try:
            return np.float64(float(node))  # a number: Integer, Rational, Float, E, pi
        except (TypeError, ValueError):
            return np.float64(np.nan)
    fn = _FUNCTIONS.get(type(node))
    if fn is None:
        return np.float64(np.nan)  # the parser's whitelist makes this unreachable
    return np.float64(fn(*kids))


def _describe(node: sp.Basic, kids: list[np.float64]) -> str:
    if isinstance(node, sp.log):
        return _of_non_positive("log", node.args[0], kids[0])
    if isinstance(node, sp.Pow):
        base, exponent = node.args
        b, e = kids
        if exponent == sp.Rational(1, 2):
            return _of_non_positive("sqrt", base, b)
        if b == 0 and e < 0:
            return f"a division by zero ({_show(base)} = 0 raised to the power {e:g})"
        if b < 0 and e != np.round(e):
            return f"a fractional power of a negative value ({_show(base)} = {b:g}, power {e:g})"
        return f"a power overflows ({_show(base)} = {b:g} raised to the power {e:g})"
    if isinstance(node, sp.exp):
        arg = node.args[0]
        return f"exp overflows (exp({_show(arg)}) with {_show(arg)} = {kids[0]:g})"
    return f"the value of {_show(node)} overflows"


def _of_non_positive(kind: str, arg: sp.Basic, v: np.float64) -> str:
    return f"{kind} of a non-positive value ({kind}({_show(arg)}) with {_show(arg)} = {v:g})"


def _show(expr: sp.Basic) -> str:
    text = str(expr)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 1] + "…"
