"""Shapes where an input that is no scale changes what a size is worth, or is the floor itself.

The literature's effective size (sparsity, precision, a share of the data: ``N_eff = N*f(s)``, so only
the size term's coefficient moves) and a loss given as an input that the target falls towards (a
distillation teacher's).  Part of the seed library (``agent.search.library``); the same signature as
its shapes: scale inputs ``S`` by name, linear inputs ``L`` as written, the inputs' summary ``inf``,
and ``n`` naming constants.
"""
from __future__ import annotations

from agent.search.terms import columns_of, power_term, rest_additive


def effective_size(S, L, inf, n, linear=False):
    """The additive power law over an effective size: ``E + A*exp(b*s)*N**-a + B*D**-b``.

    The literature's effective size: an input that is no scale (sparsity, precision, a share of the
    data) changes how much a parameter is worth, ``N_eff = N*f(s)``, and so only the size term's
    coefficient, ``A*f(s)**-a``.  ``f`` differs between papers (a power of ``1 - s`` for sparsity,
    a saturating exponential in the bits of precision); ``exp(b*s)`` and, with ``linear``, ``A + b*s``
    are its two generic first-order writings (``effective_share`` writes the first as the papers do).
    Without such an input it is the additive law.
    """
    if not S or not L:
        return None
    head = power_term(S[0], inf[S[0]], n("a"))
    if linear:
        first = f"({n('c')} + " + " + ".join(f"{n('b')}*{x}" for x in L) + f")*{head}"
    else:
        first = f"{n('c')}*" + "*".join(f"exp({n('b')}*{x})" for x in L) + f"*{head}"
    return f"{n('c')} + {first}" + rest_additive(S[1:], [], inf, n)


def effective_share(S, L, inf, n):
    """The effective size over a share: ``E + A*(1 - s)**b*N**-a + B*D**-b``.

    Where the input that is no scale is a share confined to [0, 1) (sparsity, a pruned fraction),
    the literature's ``f`` is a power of what is left, ``N_eff = N*(1 - s)**r`` (Frantar et al.'s
    sparse models), so the size term's coefficient is ``A*(1 - s)**b``: as plain as ``exp(b*s)``, and
    far from it where most weights are gone.  Other linear inputs keep the ``exp(b*x)`` writing.
    """
    name_of = columns_of(inf)
    shares = [name_of[t] for t in L if t in name_of and is_share(inf[name_of[t]])]
    if not S or not shares:
        return None
    kept = [t for t in L if name_of.get(t) not in shares]
    head = power_term(S[0], inf[S[0]], n("a"))
    coefficient = "*".join([f"(1 - {x})**{n('b')}" for x in shares] + [f"exp({n('b')}*{t})" for t in kept])
    return f"{n('c')} + {n('c')}*{coefficient}*{head}" + rest_additive(S[1:], [], inf, n)


def input_as_floor(S, L, inf, n):
    """The floor is an input itself: ``t + t**-c*(A*N**-a + B*D**-b)``.

    Busbridge et al.'s distillation law to first order, as written: the student's loss falls towards
    its teacher's loss ``t`` with nothing in between (the floor's coefficient is 1, in the target's
    units, not a fitted constant), and what is left to fall scales as a power of ``t``.  Seeded only
    where one linear input lies below the target on every row and reaches into its range (``summary``'s
    ``floor``): so it can be the floor, and is in the target's units.
    """
    name_of = columns_of(inf)
    floors = [t for t in L if t in name_of and inf[name_of[t]].get("floor")]
    if not S or len(floors) != 1:
        return None
    floor = floors[0]
    written_floor = (f"{floor}**(-{n('b')})" if inf[name_of[floor]]["positive"]
                     else f"exp({n('b')}*{floor})")
    scale = "*".join([written_floor] + [f"exp({n('b')}*{x})" for x in L if x != floor])
    powers = " + ".join(f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in S)
    return f"{name_of[floor]} + {scale}*({powers})"


def is_share(info: dict) -> bool:
    """A linear input whose every value lies in [0, 1): a share of something (of the weights, of the data)."""
    return not info["scale_like"] and info["min"] >= 0.0 and info["max"] < 1.0 and info["distinct"] > 1


def input_floor(S, L, inf, n):
    """The floor is another input: ``k*t + exp(b*t)*(A*N**-a + B*D**-b)``.

    Busbridge et al.'s distillation law to first order: a student's loss falls towards its teacher's
    loss ``t``, given as an input, and how much is left to fall scales with ``t`` (their ``t**-c``,
    written ``exp(b*t)`` as the library writes a linear input).  A loss bounded by another measured
    loss may have this shape.  There is no constant floor: with one the form is over a cap of 6.
    """
    if not S or not L:
        return None
    floor = " + ".join(f"{n('b')}*{x}" for x in L)
    scale = "*".join(f"exp({n('b')}*{x})" for x in L)
    powers = " + ".join(f"{n('c')}*{power_term(x, inf[x], n('a'))}" for x in S)
    return f"{floor} + {scale}*({powers})"
