"""Mutation and crossover operators on law expression trees (sympy).

Every operator takes and returns per-target sympy expressions and draws from
``rng`` only, so the same seed gives the same children.  New constants get
fresh names; the result is re-rendered as law text and parsed again by the
caller, so an operator can never smuggle anything past the whitelist.

Operators work on the *inner* law (``agent.search.units``): every input symbol
already stands for the normalised input, so a term or a shift written here is
in normalised units, and the same in any units the user chose.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from agent.errors import LawError
from agent.expressions import parse_law


class Fresh:
    """Fresh constant names that collide with nothing in use."""

    def __init__(self, taken):
        self.taken, self.i = {str(t) for t in taken}, 0

    def __call__(self, stem: str = "k") -> str:
        while f"{stem}{self.i}" in self.taken:
            self.i += 1
        name = f"{stem}{self.i}"
        self.taken.add(name)
        return name


def term_texts(summary: dict, inputs, rng: np.random.Generator, fresh: Fresh) -> str:
    """One random term (without its coefficient) over the dataset's inputs."""
    info = summary["inputs"]
    x = inputs[rng.integers(len(inputs))]
    s = x
    if info[x]["scale_like"]:
        options = [f"{s}**(-{fresh('a')})", f"log({s})", f"log({s})**2",
                   f"({s} + {fresh('k')})**(-{fresh('a')})", f"exp(-{fresh('k')}*{s}**{fresh('a')})"]
    else:
        options = [x, f"{x}**2", f"exp({fresh('b')}*{x})", f"tanh({fresh('b')}*{x})", f"{x}**3"]
    if len(inputs) > 1 and rng.random() < 0.35:
        z = inputs[rng.integers(len(inputs))]
        if z != x:
            tz = f"log({z})" if info[z]["scale_like"] else z
            options += [f"{options[0]}*{tz}", f"log({s})*{tz}" if info[x]["scale_like"] else f"{x}*{tz}"]
            if info[z]["scale_like"] and info[x]["scale_like"]:
                options.append(f"{s}**(-{fresh('a')})*{z}**(-{fresh('a')})")
    return options[rng.integers(len(options))]


def to_expr(text: str, inputs) -> sp.Expr:
    return parse_law(f"y = {text}", inputs, ["y"]).expressions[0]


def _constants(expr, inputs):
    # sorted: set order follows string hashes, which change between processes
    return sorted((s for s in expr.free_symbols if s.name not in inputs), key=lambda s: s.name)


def _subterms(expr, inputs):
    """Sub-expressions that involve at least one input (candidates for replacement)."""
    ins = {sp.Symbol(i) for i in inputs}
    return [e for e in sp.preorder_traversal(expr) if e is not expr and e.free_symbols & ins and not e.is_Symbol]


# ----------------------------------------------------------------- operators


def add_term(expr, ctx):
    c = sp.Symbol(ctx.fresh("c"))
    return expr + c * to_expr(term_texts(ctx.summary, ctx.inputs, ctx.rng, ctx.fresh), ctx.inputs)


def drop_term(expr, ctx):
    if not isinstance(expr, sp.Add):
        return None
    ins = {sp.Symbol(i) for i in ctx.inputs}
    terms = [t for t in expr.args if t.free_symbols & ins]
    if len(terms) < 2:
        return None
    victim = terms[ctx.rng.integers(len(terms))]
    return sp.Add(*[t for t in expr.args if t is not victim])


def replace_subexpression(expr, ctx):
    subs = _subterms(expr, ctx.inputs)
    if not subs:
        return None
    target = subs[ctx.rng.integers(len(subs))]
    new = to_expr(term_texts(ctx.summary, ctx.inputs, ctx.rng, ctx.fresh), ctx.inputs)
    return expr.xreplace({target: new})


def change_operator(expr, ctx):
    """Turn two additive terms into one multiplicative term, or a product into a sum."""
    ins = {sp.Symbol(i) for i in ctx.inputs}
    if isinstance(expr, sp.Add):
        terms = [t for t in expr.args if t.free_symbols & ins]
        if len(terms) >= 2:
            i, j = ctx.rng.choice(len(terms), size=2, replace=False)
            rest = [t for k, t in enumerate(terms) if k not in (i, j)]
            const = [t for t in expr.args if not t.free_symbols & ins]
            return sp.Add(*const, *rest, sp.Symbol(ctx.fresh("c")) * _strip_coeff(terms[i], ins) * _strip_coeff(terms[j], ins))
    muls = [e for e in sp.preorder_traversal(expr) if isinstance(e, sp.Mul)
            and sum(1 for a in e.args if a.free_symbols & ins) >= 2]
    if not muls:
        return None
    m = muls[ctx.rng.integers(len(muls))]
    parts = [a for a in m.args if a.free_symbols & ins]
    coeff = sp.Mul(*[a for a in m.args if not a.free_symbols & ins])
    return expr.xreplace({m: coeff * (parts[0] + sp.Symbol(ctx.fresh("c")) * sp.Mul(*parts[1:]))})


def _strip_coeff(term, ins):
    if isinstance(term, sp.Mul):
        return sp.Mul(*[a for a in term.args if a.free_symbols & ins])
    return term


def reparametrize(expr, ctx):
    """Shift an input, let an exponent depend on another input, or add a saturation."""
    choice = ctx.rng.integers(3)
    ins = [sp.Symbol(i) for i in ctx.inputs]
    if choice == 0:
        pows = [p for p in sp.preorder_traversal(expr) if isinstance(p, sp.Pow)
                and p.base.free_symbols & set(ins) and not p.exp.free_symbols & set(ins)
                and not p.exp.is_number]
        if pows and len(ctx.inputs) > 1:
            p = pows[ctx.rng.integers(len(pows))]
            z = ctx.inputs[ctx.rng.integers(len(ctx.inputs))]
            info = ctx.summary["inputs"][z]
            tz = f"log({z})" if info["scale_like"] else z
            g = sp.Symbol(ctx.fresh("g"))
            return expr.xreplace({p: sp.Pow(p.base, p.exp + g * to_expr(tz, ctx.inputs))})
    if choice == 1:
        present = [s for s in ins if s in expr.free_symbols]
        if present:
            x = present[ctx.rng.integers(len(present))]
            return expr.xreplace({x: x + sp.Symbol(ctx.fresh("k"))})
    ins_set = set(ins)
    terms = [t for t in (expr.args if isinstance(expr, sp.Add) else (expr,)) if t.free_symbols & ins_set]
    if not terms:
        return None
    t = terms[ctx.rng.integers(len(terms))]
    other = to_expr(term_texts(ctx.summary, ctx.inputs, ctx.rng, ctx.fresh), ctx.inputs)
    return expr.xreplace({t: t * (1 + sp.Symbol(ctx.fresh("c")) * other)})


def crossover(expr, other, ctx):
    """Additive terms of this parent plus a random subset of the other parent's."""
    ins = {sp.Symbol(i) for i in ctx.inputs}
    mine = list(expr.args) if isinstance(expr, sp.Add) else [expr]
    theirs = [t for t in (other.args if isinstance(other, sp.Add) else [other]) if t.free_symbols & ins]
    if not theirs:
        return None
    k = 1 + ctx.rng.integers(len(theirs))
    picked = [theirs[i] for i in sorted(ctx.rng.choice(len(theirs), size=k, replace=False))]
    rename = {c: sp.Symbol(ctx.fresh("x")) for p in picked for c in _constants(p, ctx.inputs)}
    return sp.Add(*mine, *(p.xreplace(rename) for p in picked))


OPERATORS = {
    "add_term": add_term,
    "drop_term": drop_term,
    "replace_subexpression": replace_subexpression,
    "change_operator": change_operator,
    "reparametrize": reparametrize,
}


def safe_apply(op, *args):
    """Operators may build expressions the parser rejects; that is a failed mutation, not an error."""
    try:
        return op(*args)
    except (LawError, ValueError, TypeError, ZeroDivisionError, RecursionError):
        return None
