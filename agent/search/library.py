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
from typing import Callable, Iterable

from agent.problem import Problem
from agent.search.units import written


class Names:
    """Fresh constant names with a per-target suffix; carries the target's trends."""

    def __init__(self, suffix: str = "", trend: dict | None = None, cap: int | None = None):
        self.suffix, self.counts, self.trend, self.cap = suffix, {}, trend or {}, cap

    @property
    def used(self) -> int:
        return sum(self.counts.values())

    def __call__(self, stem: str) -> str:
        k = self.counts.get(stem, 0)
        self.counts[stem] = k + 1
        return f"{stem}{k}{self.suffix}"


def scaled(name: str, info: dict) -> str:
    return written(name, info.get("reference", 1.0))


def log_term(name: str, info: dict) -> str:
    return f"log({scaled(name, info)})"


def power_term(name: str, info: dict, exponent: str) -> str:
    return f"{scaled(name, info)}**(-{exponent})"


# Each shape: (label, builder(scale_inputs, linear_inputs, summary, names) -> expression or None)
Shape = Callable[[list, list, dict, Names], "str | None"]


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


def _rest_additive(rest_S, rest_L, inf, n):
    return "".join(f" + {n('c')}*{power_term(x, inf[x], n('a'))}" for x in rest_S) + "".join(
        f" + {n('b')}*{x}" for x in rest_L)


def _with_first_scale(fn):
    """Apply a one-input saturating shape to the first scale input; the others add power terms."""
    def build(S, L, inf, n):
        if not S:
            return None
        return fn(S[0], inf[S[0]], n) + _rest_additive(S[1:], L, inf, n)
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
    return head + _rest_additive(S[1:], L, inf, n)


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
    return f"{head} + {moving}" + _rest_additive(S[2:], L, inf, n)


def _power_sum(S, L, inf, n):
    """Kaplan et al.'s joint form: ``E + (A*x1**-a + B*x2**-b)**e``; the terms interact through ``e``."""
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


MONOTONE = 0.5  # |median within-group Spearman| above which an input acts monotonically


def _split_by_trend(S, L, inf, n):
    """Scale inputs with a monotone effect vs. inputs whose effect turns (an optimum inside)."""
    trend = n.trend
    mono = [x for x in S if abs(trend.get(x, 1.0)) >= MONOTONE]
    turning = [x for x in S + L if x not in mono]
    return mono, turning


def _hybrid(S, L, inf, n, interactions=False, drift=False):
    """Power-law decay in monotone scale inputs plus a bowl (quadratic in logs) in inputs with an optimum.

    The classic shape of hyperparameter sweeps: loss falls as a power law in
    size and is a bowl in learning-rate-like settings.  The bowl is written
    expanded (q*u**2 + b*u, not q*(u - m)**2) so every bowl constant enters
    linearly and is solved exactly; ``interactions`` adds products of the
    turning inputs (their optima move together), ``drift`` adds u*log(x) terms
    so the optimum moves with the scale inputs, as many as the cap allows.
    """
    mono, turning = _split_by_trend(S, L, inf, n)
    if not mono or not turning:
        return None
    u = [log_term(x, inf[x]) if x in S else x for x in turning]
    terms = [f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in mono]
    terms += [f"{n('q')}*{t}**2" for t in u] + [f"{n('b')}*{t}" for t in u]
    if interactions:
        terms += [f"{n('q')}*{a}*{b}" for a, b in itertools.combinations(u, 2)]
    if drift:
        for t in u:
            for x in mono:
                if n.cap is None or n.used + 2 <= n.cap:  # +1 for the offset added below
                    terms.append(f"{n('g')}*{t}*{log_term(x, inf[x])}")
    return f"{n('c')} + " + " + ".join(terms)


DRIFT_VARIANTS = 6  # seeds per level_times_bowl shape: which optima move with which scale inputs


def _level_times_bowl(S, L, inf, n, pow_sum=False, variant=0):
    """A power-law level times a bowl around optima that move with scale: ``level * (1 + Q)``.

    Where sweeps span sizes, the penalty for a setting off its optimum grows
    with the loss itself (a relative penalty), the optima move with the scale
    inputs, and turning inputs trade off against each other (their optima
    move together), so ``Q`` is a quadratic form with cross terms in centred
    inputs ``w = u - m - g*log(x)``.  ``pow_sum`` writes the level as
    ``(c1*x1**-a1 + c2*x2**-a2)**e``: its scale inputs interact (a larger model
    gains more from more data).  The cap decides how many centres drift;
    ``variant`` picks which (input, scale) pairs, so each is a separate seed.
    """
    mono, turning = _split_by_trend(S, L, inf, n)
    if not mono or not turning or (pow_sum and len(mono) < 2):
        return None
    fixed = 2 * len(mono) + 1 + 2 * len(turning) + len(turning) * (len(turning) - 1) // 2
    pairs = [(t, x) for t in turning for x in mono]
    slots = len(pairs) if n.cap is None else min(len(pairs), n.cap - fixed)
    if slots < 0:
        return None
    combos = list(itertools.combinations(pairs, slots))
    if variant >= len(combos):
        return None
    powers = [f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in mono]
    level = f"({' + '.join(powers)})**{n('e')}" if pow_sum else f"({n('c')} + {' + '.join(powers)})"
    centred = {}
    for t in turning:
        u = log_term(t, inf[t]) if t in S else t
        moves = "".join(f" - {n('g')}*{log_term(x, inf[x])}" for tt, x in combos[variant] if tt == t)
        centred[t] = f"({u} - {n('m')}{moves})"
    quad = [f"{n('q')}*{w}**2" for w in centred.values()]
    quad += [f"{n('q')}*{a}*{b}" for a, b in itertools.combinations(centred.values(), 2)]
    return f"{level}*(1 + {' + '.join(quad)})"


SHAPES: dict[str, Shape] = {
    "hybrid_power_bowl": _hybrid,
    "hybrid_power_bowl_interactions": lambda S, L, i, n: _hybrid(S, L, i, n, interactions=True),
    "hybrid_power_bowl_drift": lambda S, L, i, n: _hybrid(S, L, i, n, drift=True),
    "hybrid_power_bowl_interactions_drift": lambda S, L, i, n: _hybrid(S, L, i, n, interactions=True, drift=True),
    **{f"level_times_bowl{'_pow_sum' if ps else ''}_{k}": functools.partial(_level_times_bowl, pow_sum=ps, variant=k)
       for ps in (False, True) for k in range(DRIFT_VARIANTS)},
    "additive_power": _additive_power,
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
    "power_sum": _power_sum,
}

# The literature's forms (Kaplan, Chinchilla, broken and shifted power laws, exponents that drift,
# bowls in hyperparameters times a power-law level): the prior a practitioner brings.  The best
# seed of each is always re-scored as a finalist, so a plain form is never lost to the winner's
# curse of a long search before the final choice sees it (see ``agent.search.choice``).
PRIOR_SHAPES = frozenset({
    "additive_power", "multiplicative_power", "pure_power", "power_sum", "shifted_power", "broken_power",
    "rational", "exp_decay", "interacting_exponent", "drifting_exponent",
    "hybrid_power_bowl", "hybrid_power_bowl_interactions", "hybrid_power_bowl_drift",
    "hybrid_power_bowl_interactions_drift",
    *(label for label in SHAPES if label.startswith("level_times_bowl")),
})


def is_prior_shape(label: str | None) -> bool:
    """Whether a seed's label (``shape[inputs]``) names one of the literature's forms."""
    return bool(label) and label.split("[", 1)[0] in PRIOR_SHAPES


def input_subsets(inputs: list[str], max_subsets: int = 8) -> Iterable[list[str]]:
    """All inputs first, then each single input, then pairs (bounded)."""
    yield list(inputs)
    if len(inputs) > 1:
        for x in inputs:
            yield [x]
    if len(inputs) > 2:
        for pair in itertools.islice(itertools.combinations(inputs, 2), max_subsets):
            yield list(pair)


def seed_laws(problem: Problem, summary: dict) -> list[tuple[str, tuple[str, ...]]]:
    """(shape label, law lines) for every shape and input subset that fits the cap."""
    info = summary["inputs"]
    cap_per_target = problem.max_constants // max(len(problem.targets), 1)
    seen, out = set(), []
    for subset in input_subsets(list(problem.inputs)):
        S = [x for x in subset if info[x]["scale_like"]]
        # linear inputs are handed to the shapes already normalised, as the text they enter as
        L = [scaled(x, info[x]) for x in subset if not info[x]["scale_like"]]
        for label, shape in SHAPES.items():
            lines = []
            for j, target in enumerate(problem.targets):
                suffix = f"_{j + 1}" if len(problem.targets) > 1 else ""
                names = Names(suffix, summary["targets"][target]["trend"], cap_per_target)
                expr = shape(S, L, info, names)
                if expr is None:
                    break
                lines.append(f"{target} = {expr}")
            else:
                key = tuple(lines)
                if key not in seen:
                    seen.add(key)
                    out.append((f"{label}[{','.join(subset)}]", key))
    return out
