"""Seed shapes for hyperparameter sweeps: a power-law level in the inputs that act monotonically
and a bowl (an optimum inside the range) in the others, whose optima may move with scale."""
from __future__ import annotations

import itertools

from agent.search.terms import log_term, power_term


MONOTONE = 0.5  # |median within-group Spearman| above which an input acts monotonically


def split_by_trend(S, L, inf, n):
    """Scale inputs with a monotone effect vs. inputs whose effect turns (an optimum inside)."""
    trend = n.trend
    mono = [x for x in S if abs(trend.get(x, 1.0)) >= MONOTONE]
    turning = [x for x in S + L if x not in mono]
    return mono, turning


def hybrid(S, L, inf, n, interactions=False, drift=False):
    """Power-law decay in monotone scale inputs plus a bowl (quadratic in logs) in inputs with an optimum.

    The classic shape of hyperparameter sweeps: loss falls as a power law in
    size and is a bowl in learning-rate-like settings.  The bowl is written
    expanded (q*u**2 + b*u, not q*(u - m)**2) so every bowl constant enters
    linearly and is solved exactly; ``interactions`` adds products of the
    turning inputs (their optima move together), ``drift`` adds u*log(x) terms
    so the optimum moves with the scale inputs, as many as the cap allows.
    """
    mono, turning = split_by_trend(S, L, inf, n)
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


def level_times_bowl(S, L, inf, n, pow_sum=False, variant=0, additive=False, cross=True):
    """A power-law level times a bowl around optima that move with scale: ``level * (1 + Q)``.

    Where sweeps span sizes, the penalty for a setting off its optimum grows
    with the loss itself (a relative penalty), the optima move with the scale
    inputs, and turning inputs trade off against each other (their optima
    move together), so ``Q`` is a quadratic form with cross terms in centred
    inputs ``w = u - m - g*log(x)``.  ``pow_sum`` writes the level as
    ``(c1*x1**-a1 + c2*x2**-a2)**e``: its scale inputs interact (a larger model
    gains more from more data).  The cap decides how many centres drift;
    ``variant`` picks which (input, scale) pairs, so each is a separate seed.
    ``additive`` writes ``level + Q`` instead: a size-like setting (vocabulary, depth) whose
    optimum grows with scale costs the same amount of loss at any level.  ``cross=False`` leaves
    the cross terms out of ``Q`` (settings whose optima move independently), which frees
    constants for drifting centres; it is a seed of its own only with two turning inputs or more.
    """
    mono, turning = split_by_trend(S, L, inf, n)
    if not mono or not turning or (pow_sum and len(mono) < 2) or (not cross and len(turning) < 2):
        return None
    fixed = 2 * len(mono) + 1 + 2 * len(turning) + (len(turning) * (len(turning) - 1) // 2 if cross else 0)
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
    if cross:
        quad += [f"{n('q')}*{a}*{b}" for a, b in itertools.combinations(centred.values(), 2)]
    if additive:
        return f"{level[1:-1]} + {' + '.join(quad)}"
    return f"{level}*(1 + {' + '.join(quad)})"
