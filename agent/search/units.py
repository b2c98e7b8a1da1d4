"""Units: the search normalises inputs and targets, so the law it finds does not depend on them.

Every input enters a law through its normalised form, written in the law's text
as ``(x/ref)``: for a positive input ``ref`` is its geometric mean rounded to
two significant digits, for an input with zeros or negative values the power of
ten just above its largest magnitude.  The target is fitted divided by a power
of ten (its largest magnitude lies in [1, 10) after).  References are computed
from decimal digits, so scaling a column by exactly 10^k scales its reference
by exactly 10^k, and the data the search sees, rounded to ``DIGITS``
significant digits after normalisation, are the very same numbers.

Two forms of a law:

* the user's text, in user units, ``loss = c0 + c1*(N/3.2e+07)**(-a0)``: what
  candidates store and users read; its constants are in user units;
* the *fitted* form (``Units.fitted``), the same law over normalised inputs and
  the normalised target (``c0 + c1*N**(-a0)``): what the search fits, scores,
  counts (complexity) and the offline proposer mutates, the same whatever the
  units.  Where a target's expression is linear in some constants with no part
  free of them (``c0 + c1*N**-a0``; most laws) those constants carry the
  target's scale and are the only ones converted (times the reference); where
  it is ``exp(c + ...)`` times anything free of c, c carries it (plus the log
  of the reference).  Where no constant can (``c0 + exp(b*N)``: the amplitude
  1 is a statement in some units), the user's text is the fitted form times
  the reference, ``loss = 10*(c0 + exp(b*(N/3.2e+07)))``, which the proposer
  writes and the fit divides back out exactly.  A law written by someone else
  without that factor is fitted as written, in user units: correct, but
  equivariant only as far as the optimiser finds the same optimum.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
import pandas as pd
import sympy as sp

from agent.errors import DataError
from agent.expressions import Law, law_to_text, parse_law
from agent.problem import Problem, Table

DIGITS = 12          # significant digits of normalised data: x*10^k/ref*10^k and x/ref agree on them
RATIO_WEIGHT = 3     # a positive input counts as its normalised form (x/ref): three syntax nodes


def input_reference(x: np.ndarray) -> float:
    """Geometric mean to two significant digits (positive), else the power of ten at or above max |x|."""
    x = np.asarray(x, dtype=float)
    if np.all(x > 0):
        return _significant(float(np.exp(np.mean(np.log(x)))), 2)
    return _power_of_ten(float(np.max(np.abs(x))), ceil=True)


def target_reference(y: np.ndarray) -> float:
    """The power of ten at or below the largest |y|: the normalised target's peak is in [1, 10)."""
    return _power_of_ten(float(np.max(np.abs(y))), ceil=False)


def _significant(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits, rounded from its first ``DIGITS`` decimal digits:
    12.499999999999998 and 12.500000000000002 (1.25 times 10 either way) both give 12."""
    d = Decimal(f"{value:.{DIGITS - 1}e}")
    e = d.adjusted()
    return float(d.scaleb(-e).quantize(Decimal(10) ** (1 - digits), rounding=ROUND_HALF_EVEN).scaleb(e))


def _power_of_ten(value: float, *, ceil: bool) -> float:
    if value == 0:
        return 1.0
    mantissa, exponent = f"{value:.{DIGITS - 1}e}".split("e")  # decimal digits: commutes with x10^k
    e = int(exponent) + (1 if ceil and float(mantissa) != 1.0 else 0)
    return float(f"1e{e}")


def written(name: str, reference: float) -> str:
    """How an input is written in a law's text: over its reference, ``(N/3.2e+07)``."""
    return f"({name}/{reference:g})" if reference != 1.0 else name


# Beyond this magnitude a value cannot be fitted in double precision: squared errors and variances
# overflow near 1e154, and a law's powers of it long before.  No measured quantity of the field comes
# near it (a training run's FLOPs are about 1e25); such a value is a diverged run or a unit slip.
MAX_MAGNITUDE = 1e100


def check_columns(problem: Problem, table: Table) -> None:
    """Refuse, before any search, columns no law can use (a constant one, an axis of two values, a
    value too large to compute with), saying what to do instead.  A non-axis input with two values
    (a flag) is fine."""
    columns = {**{x: table.X[x] for x in problem.inputs},
               **{t: table.y[:, j] for j, t in enumerate(problem.targets)}}
    for name, column in columns.items():
        if column.size and np.max(np.abs(column)) > MAX_MAGNITUDE:
            row = int(np.argmax(np.abs(column)))
            raise DataError(f"column {name!r} holds {column[row]:g} (row {row + 1}): values beyond "
                            f"{MAX_MAGNITUDE:g} in magnitude overflow any fit; drop the row (a diverged run?) "
                            "or rescale the column")
    for name in problem.inputs:
        values = np.unique(table.X[name])
        if len(values) == 1:
            raise DataError(f"input {name!r} has the same value ({values[0]:g}) in every row, so no law "
                            "can learn its effect; leave it out of the inputs")
    for j, name in enumerate(problem.targets):
        values = np.unique(table.y[:, j])
        if len(values) == 1:
            raise DataError(f"target {name!r} has the same value ({values[0]:g}) in every row: there is "
                            "nothing to fit")
    if problem.axis and set(problem.axis) <= set(table.X):
        levels = len(np.unique(np.column_stack([table.X[a] for a in problem.axis]), axis=0))
        if levels < 3:
            raise DataError(f"the axis ({', '.join(problem.axis)}) has only {levels} distinct values; "
                            "validating extrapolation along it needs at least 3 (fit on the lower ones, "
                            "validate on the highest): add runs at more values, or choose another axis")


@dataclass(frozen=True)
class Units:
    """References per input and per target (1: the column is used as it is)."""

    inputs: dict[str, float]
    targets: dict[str, float]
    ratios: frozenset[str] = frozenset()   # inputs normalised by a ratio (positive ones)

    @classmethod
    def from_summary(cls, problem: Problem, summary: dict) -> "Units":
        info = summary["inputs"]
        return cls({x: float(info[x].get("reference", 1.0)) for x in problem.inputs},
                   {t: float(summary["targets"][t].get("reference", 1.0)) for t in problem.targets},
                   frozenset(x for x in problem.inputs if info[x].get("positive")))

    # ------------------------------------------------------------ data

    def normalise_frame(self, df: pd.DataFrame) -> pd.DataFrame:
        """Inputs and targets over their references, rounded to ``DIGITS`` (a reference of 1 too:
        301 * 0.01 is 3.0100000000000002, 301 / 100 is 3.01)."""
        out = df.copy()
        for name, ref in (*self.inputs.items(), *self.targets.items()):
            if name in out.columns:
                out[name] = _rounded(pd.to_numeric(out[name]).to_numpy(dtype=float) / ref)
        return out

    def normalise_table(self, table: Table) -> Table:
        X = {k: _rounded(v / self.inputs.get(k, 1.0)) for k, v in table.X.items()}
        y = np.column_stack([_rounded(table.y[:, j] / ref) for j, ref in enumerate(self.targets.values())])
        return Table(X, y.reshape(table.y.shape), table.groups, table.runs)

    def user_table(self, table: Table) -> Table:
        """A normalised table's inputs back in user units (probe points to evaluate user laws at)."""
        return Table({k: v * self.inputs.get(k, 1.0) for k, v in table.X.items()}, table.y, table.groups, table.runs)

    # ------------------------------------------------------------ laws

    def inner(self, law: Law) -> Law:
        """The law over normalised inputs: ``(N/3.2e+07)`` becomes ``N``, exactly (rational arithmetic)."""
        to_inner = {sp.Symbol(x): _rational(r) * sp.Symbol(x) for x, r in self.inputs.items() if r != 1.0}
        exprs = tuple(e.xreplace(to_inner) for e in law.expressions)
        if all(a == b for a, b in zip(exprs, law.expressions)):
            return replace(law, complexity=self._complexity(exprs))
        return _law(law, exprs, self._complexity(exprs))

    def fitted(self, law: Law) -> "FittedForm":
        """The law as the search sees it (normalised inputs and targets), and how its constants
        become the user's.  The offline proposer mutates this form too."""
        inner = self.inner(law)
        exprs, scale, shift = [], {}, {}
        for j, (target, expr) in enumerate(zip(law.targets, inner.expressions)):
            ref = self.targets.get(target, 1.0)
            kind, names = _absorbed(inner.expressions, j, law.constants) if ref != 1.0 else ("", ())
            scale.update({c: ref for c in names if kind == "scale"})
            shift.update({c: float(np.log(ref)) for c in names if kind == "shift"})
            exprs.append(expr / _rational(ref) if kind == "divide" else expr)
        if all(a is b for a, b in zip(exprs, inner.expressions)):
            return FittedForm(law, inner, scale, shift)
        return FittedForm(law, _law(law, tuple(exprs), self._complexity(exprs)), scale, shift)

    def render(self, targets, exprs, order: str | None = None) -> tuple[str, ...]:
        """Expressions of the fitted form as law lines in user units: every input written
        ``(x/ref)``, and a target no constant can carry the scale of multiplied by its reference
        (``10*(c0 + exp(b0*x))``: the amplitude 1 is in the normalised target's units)."""
        names = {x: written(x, r) for x, r in self.inputs.items() if r != 1.0}
        constants = {s.name for e in exprs for s in e.free_symbols} - set(self.inputs)
        lines = []
        for j, (target, expr) in enumerate(zip(targets, exprs)):
            line = law_to_text(target, expr, names=names, order=order)
            ref = self.targets.get(target, 1.0)
            if ref != 1.0 and _absorbed(exprs, j, constants)[0] == "divide":
                # the whole body in parentheses: 0.1*(a + b)*c would distribute 0.1 over a + b alone
                line = f"{target} = {ref:g}*({line.split(' = ', 1)[1]})"
            lines.append(line)
        return tuple(lines)

    def with_target_scales(self, lines, inputs) -> tuple[str, ...]:
        """Law text meant for normalised targets (the seed library's), in user units: a target no
        constant can carry the scale of gets its reference as a factor, as ``render`` writes it."""
        if all(r == 1.0 for r in self.targets.values()):
            return tuple(lines)
        targets = list(self.targets)
        exprs = self.inner(parse_law(lines, inputs, targets)).expressions
        constants = {s.name for e in exprs for s in e.free_symbols} - set(inputs)
        out = []
        for line in lines:
            name, body = (part.strip() for part in line.split("=", 1))
            j = targets.index(name) if name in targets else None
            if j is not None and self.targets[name] != 1.0 and _absorbed(exprs, j, constants)[0] == "divide":
                line = f"{name} = {self.targets[name]:g}*({body})"
            out.append(line)
        return tuple(out)

    def _complexity(self, exprs) -> int:
        weights = {sp.Symbol(x): RATIO_WEIGHT for x in self.ratios}
        return sum(_weighted_nodes(e, weights) for e in exprs)


def fitted_form(units: Units | None, law: Law) -> "FittedForm":
    """``units.fitted(law)``, or the law as it is where nothing was normalised."""
    return units.fitted(law) if units is not None else FittedForm(law, law, {})


@dataclass(frozen=True)
class FittedForm:
    """A law as fitted (normalised rows) and how its constants become the user's:
    ``user = fitted * scale + shift`` (absent: 1 and 0)."""

    user: Law                   # the law as written, in user units
    law: Law                    # over normalised inputs, predicting the normalised target
    scale: dict[str, float]     # linear constants that carry the target's scale
    shift: dict[str, float] = field(default_factory=dict)  # exp(c + ...): c carries it as log(ref)

    def to_user(self, constants: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        if not self.scale and not self.shift:
            return constants
        return {g: {c: v * self.scale.get(c, 1.0) + self.shift.get(c, 0.0) for c, v in vals.items()}
                for g, vals in constants.items()}

    def to_fitted(self, constants: dict | None) -> dict | None:
        if not constants or (not self.scale and not self.shift):
            return constants
        return {g: {c: (v - self.shift.get(c, 0.0)) / self.scale.get(c, 1.0) for c, v in vals.items()}
                for g, vals in constants.items()}


def _absorbed(exprs, j: int, constants) -> tuple[str, tuple[str, ...]]:
    """How target j's expression carries a change of the target's scale: ("scale", linear
    constants), ("shift", (c,)) for exp(c + ...), or ("divide", ()) when no constant can."""
    mine = _own_constants(exprs, j, constants)
    linear = _scale_constants(exprs[j], mine)
    if linear:
        return "scale", linear
    exponent = _log_shift_constant(exprs[j], mine)
    return ("shift", (exponent,)) if exponent else ("divide", ())


def _own_constants(exprs, j: int, constants) -> list[sp.Symbol]:
    """Target j's constants that no other target uses, in name order (a choice that depends on
    the expression alone, the same for the user's and the inner law)."""
    others = set().union(*(e.free_symbols for k, e in enumerate(exprs) if k != j))
    return sorted((s for s in exprs[j].free_symbols - others if s.name in constants), key=lambda s: s.name)


def _scale_constants(expr: sp.Expr, candidates) -> tuple[str, ...]:
    """Constants in which ``expr`` is linear with no part free of them: multiplying them all
    by s multiplies the prediction by s (``c0 + c1*N**-a``: c0 and c1)."""
    chosen: list[sp.Symbol] = []
    for c in candidates:  # greedy
        d = sp.diff(expr, c)
        if d == 0 or c in d.free_symbols or any(sp.diff(d, o) != 0 for o in chosen):
            continue
        chosen.append(c)
    if not chosen or expr.xreplace({c: 0 for c in chosen}) != 0:
        return ()
    return tuple(c.name for c in chosen)


def _log_shift_constant(expr: sp.Expr, candidates) -> str | None:
    """A constant c with ``expr = exp(c)*F``, F free of c (``exp(c + b*log(N))``): adding log(s)
    to it multiplies the prediction by s."""
    logged = sp.expand_log(sp.log(expr), force=True)
    for c in candidates:
        if sp.diff(logged, c) == 1:
            return c.name
    return None


def _law(like: Law, exprs: tuple, complexity: int) -> Law:
    # the lines name the expressions (fit structure is cached per Law, which compares by its
    # lines); the canonical form stays the user law's: candidates are told apart as written
    lines = tuple(law_to_text(t, e) for t, e in zip(like.targets, exprs))
    return Law(lines=lines, inputs=like.inputs, targets=like.targets, constants=like.constants,
               expressions=exprs, complexity=complexity, canonical=like.canonical)


def _weighted_nodes(expr: sp.Expr, weights: dict) -> int:
    if expr in weights:
        return weights[expr]
    return 1 + sum(_weighted_nodes(a, weights) for a in expr.args)


def _rational(value: float) -> sp.Rational:
    """The exact rational the law parser reads for this literal."""
    return sp.Rational(Decimal(repr(float(value))).normalize().to_eng_string())


def _rounded(values: np.ndarray) -> np.ndarray:
    return np.array([float(f"{v:.{DIGITS}g}") for v in np.asarray(values, dtype=float)], dtype=float)

