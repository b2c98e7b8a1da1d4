"""Static analysis of a law for fitting: which constants are linear, which positive.

Targets that share no constants are fitted independently (a 5-target mixture
law with 7 constants each is five 7-constant fits, not one 35-constant fit).
Within a single-target block, constants that enter linearly are solved exactly
by least squares inside the loop (variable projection); only the nonlinear
ones are searched.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import sympy as sp

from agent.expressions import Law


@dataclass(frozen=True)
class Block:
    """Targets fitted together and the constants they need."""

    target_index: tuple[int, ...]
    constants: tuple[str, ...]
    linear: tuple[str, ...]      # solved by linear least squares (single-target blocks only)
    nonlinear: tuple[str, ...]   # searched by multi-start optimisation
    positive: frozenset[str]     # nonlinear constants that must be > 0: log-parametrized
    basis: object = None         # callable(*inputs, *nonlinear) -> list of arrays [g0, g1..gk]


def analyse(law: Law) -> tuple[Block, ...]:
    return _analyse_cached(law)


@functools.lru_cache(maxsize=256)
def _analyse_cached(law: Law) -> tuple[Block, ...]:
    deps = [set(law.depends_on(t)) for t in law.targets]
    blocks: list[tuple[set[int], set[str]]] = []
    for j, d in enumerate(deps):
        merged = [b for b in blocks if b[1] & d]
        idx, consts = {j}, set(d)
        for b in merged:
            idx |= b[0]
            consts |= b[1]
            blocks.remove(b)
        blocks.append((idx, consts))
    out = []
    for idx, consts in sorted(blocks, key=lambda b: min(b[0])):
        ordered = tuple(c for c in law.constants if c in consts)
        exprs = [law.expressions[j] for j in sorted(idx)]
        linear: tuple[str, ...] = ()
        basis = None
        if len(exprs) == 1:
            linear = _linear_constants(exprs[0], ordered)
        nonlinear = tuple(c for c in ordered if c not in linear)
        if linear:
            basis = law.basis(min(idx), linear, nonlinear)
        positive = frozenset(c for c in nonlinear if any(_needs_positive(e, sp.Symbol(c)) for e in exprs))
        out.append(Block(tuple(sorted(idx)), ordered, linear, nonlinear, positive, basis))
    return tuple(out)


def _linear_constants(expr: sp.Expr, constants: tuple[str, ...]) -> tuple[str, ...]:
    """Greedy maximal set of constants in which ``expr`` is jointly affine."""
    chosen: list[sp.Symbol] = []
    for name in constants:
        c = sp.Symbol(name)
        d = sp.diff(expr, c)
        if c in d.free_symbols:
            continue
        if any(sp.diff(d, other) != 0 for other in chosen):
            continue
        if not d.free_symbols and d == 0:
            continue
        chosen.append(c)
    return tuple(s.name for s in chosen)


def _needs_positive(expr: sp.Expr, c: sp.Symbol) -> bool:
    """True when ``c`` is a factor of a base raised to a non-integer power or of a log/sqrt argument.

    Such constants are scales (``(x/c)**a``, ``log(c*x)``): negative values give
    NaN, and their plausible magnitudes span many decades, so they are fitted in
    log space.
    """
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and not (node.exp.is_Integer):
            if _is_factor(node.base, c):
                return True
        elif isinstance(node, sp.log) and _is_factor(node.args[0], c):
            return True
    return False


def _is_factor(base: sp.Expr, c: sp.Symbol) -> bool:
    factors = base.args if isinstance(base, sp.Mul) else (base,)
    for f in factors:
        if f == c or (isinstance(f, sp.Pow) and f.base == c):
            return True
    return False


def evaluate_basis(block: Block, X: dict[str, np.ndarray], inputs, nonlinear_values) -> np.ndarray:
    """Basis matrix (n_rows, 1 + n_linear): column 0 is the part free of linear constants."""
    n = len(next(iter(X.values())))
    with np.errstate(all="ignore"):
        terms = block.basis(*(X[i] for i in inputs), *nonlinear_values)
    return np.column_stack([np.broadcast_to(np.asarray(t, dtype=float), (n,)) for t in terms])
