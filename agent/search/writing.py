"""The reported law in the literature's writing: ``exp(b0*log(N) + b1*log(D))`` is ``N**b0*D**b1``.

The search's mutations write a power law of several inputs as the exponential of a sum of logs
(a linear model in log space, easy to grow one input at a time).  The two writings are the same
function wherever the law can be evaluated at all: a log needs a positive argument, and a positive
base raised to a real power is exactly the exponential of the power times its log.  So the report
rewrites each such exponential into powers, keeps every constant and its value, and checks the
predictions on the training rows before it says so.  Choosing between laws is not touched: the
search scores and ranks the writing it found (``choice`` still prefers a close finalist that was
fitted in the power law's own writing, whose constants read as the literature's exponents).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np
import sympy as sp

from agent.errors import FitError, LawError
from agent.expressions import Law, law_to_text, parse_law
from agent.fitting import predict
from agent.problem import Table
from agent.search.units import Units, fitted_form

READING_ORDER = "none"  # sympy's own order of terms: the floor first, as papers write it (c0 + c1*N**b0)
SAME_PREDICTION = 1e-9  # relative difference a rewriting may make to the law's predictions (round-off)


def as_powers(expr: sp.Expr, inputs: Iterable[str]) -> sp.Expr:
    """``expr`` with every ``exp(c*log(u) + ... + rest)`` whose ``u`` holds an input written as
    ``u**c * ... * exp(rest)`` (``exp(rest)`` dropped when nothing else is left in the sum)."""
    names = {sp.Symbol(x) for x in inputs}

    def rewrite(arg: sp.Expr) -> sp.Expr:
        powers, rest = [], []
        for term in sp.Add.make_args(arg):
            factors = sp.Mul.make_args(term)
            logs = [f for f in factors if isinstance(f, sp.log) and f.free_symbols & names]
            coefficient = sp.Mul(*[f for f in factors if f not in logs])
            # c*log(N) only: a power whose exponent holds an input (log(N)*log(D)) is no plain power law
            if len(logs) == 1 and not coefficient.free_symbols & names:
                powers.append(sp.Pow(logs[0].args[0], coefficient))
            else:
                rest.append(term)
        if not powers:
            return sp.exp(arg)
        return sp.Mul(*powers) * (sp.exp(sp.Add(*rest)) if rest else sp.Integer(1))

    return expr.replace(lambda e: isinstance(e, sp.exp), lambda e: rewrite(e.args[0]))


def literature_writing(law: Law, constants: dict[str, dict[str, float]], rows: Table,
                       units: Units | None = None) -> tuple[Law, int] | None:
    """``law`` (in user units, with its fitted ``constants``) written as powers, and the rewritten
    form's complexity as the search counts it; None when nothing changes or the predictions on
    ``rows`` (user units) would."""
    form = fitted_form(units, law)
    exprs = [as_powers(e, law.inputs) for e in form.law.expressions]
    if all(new == old for new, old in zip(exprs, form.law.expressions)):
        return None
    if units is not None:
        lines = units.render(law.targets, exprs, order=READING_ORDER)
    else:
        lines = tuple(law_to_text(t, e, order=READING_ORDER) for t, e in zip(law.targets, exprs))
    try:
        written = parse_law(lines, law.inputs, law.targets)
        before = predict(law, rows, constants, rows.groups)
        after = predict(written, rows, constants, rows.groups)
    except (LawError, FitError):
        return None
    with np.errstate(all="ignore"):
        same = np.allclose(after, before, rtol=SAME_PREDICTION, atol=0.0, equal_nan=True)
    if not same or set(written.constants) != set(law.constants):
        return None
    return written, fitted_form(units, written).law.complexity
