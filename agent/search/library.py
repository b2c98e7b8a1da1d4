"""The generic seed library: classic scaling-law shapes over whatever inputs a dataset has.

Nothing here knows a task.  Every input enters as its normalised form, the
input divided by its reference value (``agent.search.units``: constants stay
near 1, fits well conditioned, and the law the same in any units).  Inputs that
span decades (``scale_like``) enter through powers and logs of it; other inputs
enter linearly, through exponentials and polynomials.  Multi-target problems get
the same shape for every target with separate constants.
"""
from __future__ import annotations

import functools
import itertools
from typing import Iterable

from agent.problem import Problem
from agent.search.bowls import DRIFT_VARIANTS, hybrid, level_times_bowl
from agent.search.effective import effective_share, effective_size, input_as_floor, input_floor
from agent.search.sweep_seeds import repetition_seeds, shared_target_seeds
from agent.search.terms import Shape, all_and_all_but_one, log_term, per_target, power_term, rest_additive, scaled


def _additive_power(S, L, inf, n):
    terms = [f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in S] + [f"{n('b')}*{x}" for x in L]
    return f"{n('c')} + " + " + ".join(terms) if terms else None


def _multiplicative_power(S, L, inf, n):
    if not S:
        return None
    prod = "*".join(power_term(x, inf[x], n("a")) for x in S)
    lin = "".join(f"*exp({n('b')}*{x})" for x in L)
    return f"{n('c')} + {n('c')}*{prod}{lin}"


def _pure_power(S, L, inf, n):
    if not S:
        return None
    return f"{n('c')}*" + "*".join(power_term(x, inf[x], n("a")) for x in S) + "".join(
        f"*exp({n('b')}*{x})" for x in L)


def _log_linear(S, L, inf, n):
    terms = [f"{n('b')}*{log_term(x, inf[x])}" for x in S] + [f"{n('b')}*{x}" for x in L]
    return f"{n('c')} + " + " + ".join(terms) if terms else None


def _log_quadratic(S, L, inf, n, interactions=False):
    u = [log_term(x, inf[x]) for x in S] + list(L)
    if not u:
        return None
    terms = [f"{n('b')}*{t}" for t in u] + [f"{n('q')}*{t}**2" for t in u]
    if interactions:
        terms += [f"{n('q')}*{a}*{b}" for a, b in itertools.combinations(u, 2)]
    return f"{n('c')} + " + " + ".join(terms)


def _exp_log_linear(S, L, inf, n):
    terms = [f"{n('b')}*{log_term(x, inf[x])}" for x in S] + [f"{n('b')}*{x}" for x in L]
    return f"exp({n('c')} + " + " + ".join(terms) + ")" if terms else None


def _offset_exp_linear(S, L, inf, n):
    terms = [f"{n('b')}*{log_term(x, inf[x])}" for x in S] + [f"{n('b')}*{x}" for x in L]
    return f"{n('c')} + {n('c')}*exp(" + " + ".join(terms) + ")" if terms else None


def _polynomial(S, L, inf, n, degree=3):
    if len(S) + len(L) != 1:
        return None
    x = log_term(S[0], inf[S[0]]) if S else L[0]
    return f"{n('c')} + " + " + ".join(f"{n('p')}*{x}**{k}" if k > 1 else f"{n('p')}*{x}"
                                       for k in range(1, degree + 1))


def _tanh_step(S, L, inf, n):
    if len(S) + len(L) != 1:
        return None
    x = log_term(S[0], inf[S[0]]) if S else L[0]
    return f"{n('c')} + {n('c')}*tanh({n('k')}*({x} - {n('m')}))"


def _with_first_scale(fn):
    """Apply a one-input saturating shape to the first scale input; the others add power terms."""
    def build(S, L, inf, n):
        if not S:
            return None
        return fn(S[0], inf[S[0]], n) + rest_additive(S[1:], L, inf, n)
    return build


def _rational(x, info, n):
    return f"{n('c')} + {n('c')}/({scaled(x, info)}**{n('a')} + {n('k')})"


def _shifted_power(x, info, n):
    return f"{n('c')} + {n('c')}*({scaled(x, info)} + {n('k')})**(-{n('a')})"


def _broken_power(x, info, n):
    s = scaled(x, info)
    return f"{n('c')} + {n('c')}*{s}**(-{n('a')})*(1 + {s}/{n('k')})**(-{n('a')})"


def _exp_decay(x, info, n):
    return f"{n('c')} + {n('c')}*exp(-{n('k')}*{scaled(x, info)}**{n('a')})"


def _interacting_exponent(S, L, inf, n):
    if len(S) < 2:
        return None
    a, b = S[0], S[1]
    head = f"{n('c')} + {n('c')}*{scaled(a, inf[a])}**(-({n('a')} + {n('g')}*{log_term(b, inf[b])}))"
    return head + rest_additive(S[1:], L, inf, n)


def _drifting_exponent(S, L, inf, n):
    """The second scale input's exponent drifts with the first: ``x2**-(b + g*log x1)``.

    The literature's data exponent that depends on model size; the mirror
    image of ``_interacting_exponent``, so either input's exponent may move.
    """
    if len(S) < 2:
        return None
    a, b = S[0], S[1]
    head = f"{n('c')} + {n('c')}*{power_term(a, inf[a], n('a'))}"
    moving = f"{n('c')}*{scaled(b, inf[b])}**(-({n('a')} + {n('g')}*{log_term(a, inf[a])}))"
    return f"{head} + {moving}" + rest_additive(S[2:], L, inf, n)


def _interacting_product(S, L, inf, n, floor=True):
    """Clark et al.'s unified law for routed models: ``A*x1**-a*x2**-(b + g*log x1)``, here over a floor.

    The log-bilinear form ``log(L - c) = a*log x1 + b*log x2 + g*log x1*log x2``: the benefit of one
    input (experts) shrinks or grows with the other (size).  Symmetric in the pair, so one seed per
    subset; other scale inputs add power terms.  ``floor=False``: their original, without ``c``.
    """
    if len(S) < 2:
        return None
    a, b = S[0], S[1]
    product = (f"{n('c')}*{power_term(a, inf[a], n('a'))}"
               f"*{scaled(b, inf[b])}**(-({n('a')} + {n('g')}*{log_term(a, inf[a])}))")
    head = f"{n('c')} + {product}" if floor else product
    return head + rest_additive(S[2:], L, inf, n)


def _power_sum(S, L, inf, n):
    """Kaplan et al.'s joint form: ``E + (A*x1**-a + B*x2**-b)**e``; the terms interact through ``e``.

    Their original has no floor; a seed without it was tried on the development suite and dropped
    (48 problems: 21 wins against 23; it was reported on Chinchilla sweeps whose floor it lacks)."""
    if len(S) < 2:
        return None
    powers = " + ".join(f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in S)
    return f"{n('c')} + ({powers})**{n('e')}" + "".join(f" + {n('b')}*{x}" for x in L)


def _additive_with_cross(S, L, inf, n):
    if len(S) < 2:
        return None
    base = _additive_power(S, L, inf, n)
    a, b = S[0], S[1]
    return base + f" + {n('c')}*{power_term(a, inf[a], n('a'))}*{power_term(b, inf[b], n('a'))}"


SHAPES: dict[str, Shape] = {
    "hybrid_power_bowl": hybrid,
    "hybrid_power_bowl_interactions": lambda S, L, i, n: hybrid(S, L, i, n, interactions=True),
    "hybrid_power_bowl_drift": lambda S, L, i, n: hybrid(S, L, i, n, drift=True),
    "hybrid_power_bowl_interactions_drift": lambda S, L, i, n: hybrid(S, L, i, n, interactions=True, drift=True),
    **{f"level_times_bowl{'_pow_sum' if ps else ''}_{k}": functools.partial(level_times_bowl, pow_sum=ps, variant=k)
       for ps in (False, True) for k in range(DRIFT_VARIANTS)},
    **{f"level_plus_bowl_{k}": functools.partial(level_times_bowl, variant=k, additive=True)
       for k in range(DRIFT_VARIANTS)},
    **{f"level_times_diagonal_bowl_{k}": functools.partial(level_times_bowl, variant=k, cross=False)
       for k in range(DRIFT_VARIANTS)},
    "additive_power": _additive_power,
    "effective_size": effective_size,
    "effective_size_linear": lambda S, L, i, n: effective_size(S, L, i, n, linear=True),
    "effective_size_share": effective_share,
    "input_floor": input_floor,
    "input_as_floor": input_as_floor,
    "multiplicative_power": _multiplicative_power,
    "pure_power": _pure_power,
    "log_linear": _log_linear,
    "log_quadratic": _log_quadratic,
    "log_quadratic_interactions": lambda S, L, i, n: _log_quadratic(S, L, i, n, interactions=True),
    "exp_log_linear": _exp_log_linear,
    "offset_exp_linear": _offset_exp_linear,
    "polynomial2": lambda S, L, i, n: _polynomial(S, L, i, n, 2),
    "polynomial3": _polynomial,
    "tanh_step": _tanh_step,
    "rational": _with_first_scale(_rational),
    "shifted_power": _with_first_scale(_shifted_power),
    "broken_power": _with_first_scale(_broken_power),
    "exp_decay": _with_first_scale(_exp_decay),
    "interacting_exponent": _interacting_exponent,
    "additive_with_cross": _additive_with_cross,
    "drifting_exponent": _drifting_exponent,
    "interacting_product": _interacting_product,
    "interacting_product_no_floor": lambda S, L, i, n: _interacting_product(S, L, i, n, floor=False),
    "power_sum": _power_sum,
}

# The literature's forms (Kaplan, Chinchilla, broken and shifted power laws, exponents that drift,
# bowls in hyperparameters times a power-law level or added to it, Clark's routed-model product,
# Muennighoff's data-constrained law, data-mixing laws; for several targets, shared exponents
# and a shared level): the prior a practitioner brings.  The best
# seed of each is always re-scored as a finalist, so a plain form is never lost to the winner's
# curse of a long search before the final choice sees it (see ``agent.search.choice``).
PRIOR_SHAPES = frozenset({
    "additive_power", "effective_size", "effective_size_linear", "effective_size_share", "input_floor",
    "input_as_floor", "multiplicative_power", "pure_power",
    "power_sum", "shifted_power", "broken_power",
    "rational", "exp_decay", "interacting_exponent", "drifting_exponent", "interacting_product",
    "interacting_product_no_floor",
    # in proportions (inputs that enter linearly) the data-mixing law exp(c + sum t_i*p_i) and its
    # offset form; in scale inputs they are the pure and the multiplicative power law again
    "exp_log_linear", "offset_exp_linear",
    # the expanded bowl q*u**2 + b*u is the centred one, q*(u - m)**2 plus a constant; its drift
    # g*u*log(x) is sld's writing, not the literature's (the centred q*(u - m - g*log(x))**2 adds
    # log(x) and log(x)**2 terms, and moving u's reference adds a log(x) term the expanded form
    # cannot absorb), so the expanded drifts are searched laws; the literature's drifting bowls
    # are the centred ones, ``level_times_bowl`` and ``level_plus_bowl``
    "hybrid_power_bowl", "hybrid_power_bowl_interactions", "data_repetition",
    *(label for label in SHAPES if label.startswith(("level_times_bowl", "level_plus_bowl", "level_times_diagonal"))),
})


# What a literature form reduces to when its one extra constant vanishes (a shift k -> 0, a break
# pushed beyond reach, a drift g -> 0, an outer exponent e -> 1, a cross term's coefficient -> 0):
# the nested special case over the same inputs.  A floor is no such constant: without one a loss
# law cannot level off, so the additive law never reduces to a pure power.
SPECIAL_CASES = {
    "shifted_power": "additive_power", "rational": "additive_power", "broken_power": "additive_power",
    "drifting_exponent": "additive_power", "interacting_exponent": "additive_power",
    "power_sum": "additive_power", "additive_with_cross": "additive_power",
    "interacting_product": "multiplicative_power",
}


# Forms that are another form written through exp and log (exp(b*log N) is N**b): over the same
# inputs the offset form is the multiplicative power law (with one input, the additive one) and the
# bare form the pure power law.  Both writings are seeded, since over proportions alone only the
# exp writing exists; where both fit alike, the power law's writing is the one reported.
WRITTEN_AS = {"offset_exp_linear": ("multiplicative_power", "additive_power"), "exp_log_linear": ("pure_power",)}


def plain_writings(label: str | None) -> tuple[str, ...]:
    """The labels of the forms that a seed's form writes differently over the same inputs
    (``offset_exp_linear[N]`` -> ``multiplicative_power[N]``, ``additive_power[N]``)."""
    family, bracket, inputs = (label or "").partition("[")
    return tuple(f"{alt}{bracket}{inputs}" for alt in WRITTEN_AS.get(family, ()))


def special_case(label: str | None) -> str | None:
    """The label of the form that a seed's form nests over the same inputs
    (``shifted_power[N,D]`` -> ``additive_power[N,D]``); None when it nests none."""
    family, bracket, inputs = (label or "").partition("[")
    return f"{SPECIAL_CASES[family]}{bracket}{inputs}" if family in SPECIAL_CASES else None


def _shape_parts(label: str | None) -> list[str]:
    """The shapes a seed's label names (``shape[inputs]``, ``shape+variant[...]``, ``variant+shape[...]``)."""
    return label.split("[", 1)[0].split("+") if label else []


def is_prior_shape(label: str | None) -> bool:
    """Whether a seed's label names one of the literature's forms."""
    return any(part in PRIOR_SHAPES for part in _shape_parts(label))


def input_subsets(inputs: list[str], max_subsets: int = 8) -> Iterable[list[str]]:
    """All inputs first, then (from four inputs) all but one, then each single input, then pairs (bounded)."""
    yield from all_and_all_but_one(inputs, max_subsets)
    if len(inputs) > 1:
        for x in inputs:
            yield [x]
    if len(inputs) > 2:
        for pair in itertools.islice(itertools.combinations(inputs, 2), max_subsets):
            yield list(pair)


def seed_laws(problem: Problem, summary: dict) -> list[tuple[str, tuple[str, ...]]]:
    """(shape label, law lines) for every shape and input subset that fits the cap: every shape over
    all inputs, then the seeds of the sweep's design (data repetition, targets of the same runs),
    then (from four inputs) every input but one, then each single input and pairs.

    Seeds are proposed in this order until a budget stops the search, and a sweep over three inputs
    has over a hundred: listed after every subset, the data-constrained form was never fitted on a
    72-row repetition sweep of the development suite at its work budget, and the rule that every
    literature form is a finalist (``agent.search.choice``) cannot hear a form never fitted."""
    info = summary["inputs"]
    cap_per_target = problem.max_constants // max(len(problem.targets), 1)
    seen, out = set(), []
    design = repetition_seeds(problem, summary) + shared_target_seeds(problem, summary, SHAPES)
    for k, subset in enumerate(input_subsets(list(problem.inputs))):
        if k == 1:
            out += design  # the design's seeds are over every input too: they join that block
        S = [x for x in subset if info[x]["scale_like"]]
        # linear inputs are handed to the shapes already normalised, as the text they enter as
        L = [scaled(x, info[x]) for x in subset if not info[x]["scale_like"]]
        for label, shape in SHAPES.items():
            key = per_target(problem, summary, lambda names: shape(S, L, info, names), cap_per_target)
            if key is not None and key not in seen:
                seen.add(key)
                out.append((f"{label}[{','.join(subset)}]", key))
    return out if len(problem.inputs) > 1 else out + design  # one input: one block, the design after it
