"""Whether a law's family depends on the reference scale an input is measured against.

sld writes every input over a reference value (``tokens/1e+10``: see
``agent.search.units``).  The reference is a convenience, so a law of the field
keeps its family when it changes: measure the tokens in thousands and the
constants absorb it (``B*D**-b`` becomes ``B'*D**-b``).  A mutation can build a
law where they cannot: ``(tokens/1e+10)**(-b)`` with no coefficient of its own
says that this term equals exactly 1 at 1e10 tokens, ``exp((D/1.1e10)**-a)`` or
``log(N)**2`` alone tie the curve to where the reference happens to sit.  Such
a law fits as well as its covariant neighbour only by the coincidence of the
reference (it saves a constant that the data never determined), and it
extrapolates with that coincidence built in.

The check is infinitesimal and needs no fit: rescaling input ``x`` by
``1 + h`` moves the prediction along ``x * df/dx``; the family absorbs the
rescaling when that direction lies in the span of the derivatives with respect
to the constants at the fitted values.  A relative residual above
``TOLERANCE`` names the input.  Literature forms are exempt where they use it (see
``agent.search.choice``): a data exponent that drifts with log N ties the drift to
N's reference by the literature's own choice.
"""
from __future__ import annotations

import numpy as np

from agent.expressions import Law
from agent.problem import Table

TOLERANCE = 1e-5   # relative residual of the projection: exact cases leave ~1e-10 (central differences),
                   # the structural ones measured from 4e-4 (exp((D/1e10)**-a)) up
STEP = 1e-5        # relative step of the input's rescaling


def reference_dependent_inputs(law: Law, constants: dict[str, dict[str, float]], table: Table) -> tuple[str, ...]:
    """The inputs whose rescaling the law's constants cannot absorb in some group, each group judged on
    its own rows at its own constants (empty when nothing can be judged: non-finite values, no rows).

    Every group is judged, not one: a fit can hide the dependence where it is degenerate (a term
    ``tanh(x**p)`` fitted with p in the thousands is a step over one group's rows, and a step does not
    move with a small rescaling), while another group's fit of the same law shows it.
    """
    names = [g for g in table.group_names if g in constants and all(c in constants[g] for c in law.constants)]
    if not names or not law.constants:
        return ()
    used = {s.name for e in law.expressions for s in e.free_symbols}
    undecided = [name for name in law.inputs if name in used]
    dependent: set[str] = set()
    for group in names:
        rows = table.take(np.flatnonzero(table.groups == group))
        dependent |= set(_dependent_in_group(law, constants[group], rows, undecided))
        undecided = [name for name in undecided if name not in dependent]
        if not undecided:
            break  # every input is named: the other groups cannot add one
    return tuple(name for name in law.inputs if name in dependent)


def _dependent_in_group(law: Law, values: dict[str, float], rows: Table, inputs: list[str]) -> list[str]:
    """Which of ``inputs`` this group's constants cannot absorb a rescaling of."""
    args = [float(values[c]) for c in law.constants]
    jac = _constant_jacobian(law, rows.X, args, len(rows))
    if jac is None:
        return []
    dependent = []
    for name in inputs:
        direction = _rescaling_direction(law, rows.X, values, name)
        if direction is None:
            continue
        norm = np.linalg.norm(direction)
        if norm <= 1e-9 * (np.linalg.norm(law.evaluate(rows.X, values)) + 1e-300):
            continue  # the input barely moves the prediction here: nothing to judge
        beta, *_ = np.linalg.lstsq(jac, direction, rcond=None)
        if np.linalg.norm(direction - jac @ beta) > TOLERANCE * norm:
            dependent.append(name)
    return dependent


def _constant_jacobian(law: Law, X: dict[str, np.ndarray], args: list[float], n: int) -> np.ndarray | None:
    """d prediction / d constant, stacked over targets: (n * n_targets, n_constants)."""
    cols = [np.asarray(X[i], dtype=float) for i in law.inputs]
    blocks = []
    with np.errstate(all="ignore"):
        for j in range(len(law.targets)):
            grads = law.jacobian(j)(*cols, *args)
            blocks.append(np.column_stack([np.broadcast_to(np.asarray(g, dtype=float), (n,)) for g in grads]))
    jac = np.vstack(blocks)
    return jac if np.all(np.isfinite(jac)) else None


def _rescaling_direction(law: Law, X: dict[str, np.ndarray], values: dict[str, float],
                         name: str) -> np.ndarray | None:
    """x * df/dx for input ``name`` by central differences of a rescaling, stacked over targets."""
    up, down = dict(X), dict(X)
    up[name] = X[name] * (1 + STEP)
    down[name] = X[name] * (1 - STEP)
    diff = (law.evaluate(up, values) - law.evaluate(down, values)) / (2 * STEP)
    diff = diff.T.reshape(-1)  # target-major, as the Jacobian's blocks
    return diff if np.all(np.isfinite(diff)) else None
