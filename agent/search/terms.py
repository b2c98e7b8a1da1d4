"""The pieces seed shapes are written with: fresh constant names, and inputs as they enter a law
(over their reference scale, in powers and logs)."""
from __future__ import annotations

import itertools
from typing import Callable

from agent.search.units import written


class Names:
    """Fresh constant names with a per-target suffix; carries the target's trends."""

    def __init__(self, suffix: str = "", trend: dict | None = None, cap: int | None = None,
                 shared: frozenset[str] = frozenset()):
        self.suffix, self.counts, self.trend, self.cap = suffix, {}, trend or {}, cap
        self.shared = shared  # stems named without the suffix: one constant for every target

    @property
    def used(self) -> int:
        return sum(self.counts.values())

    def __call__(self, stem: str) -> str:
        k = self.counts.get(stem, 0)
        self.counts[stem] = k + 1
        return f"{stem}{k}" if stem in self.shared else f"{stem}{k}{self.suffix}"


def scaled(name: str, info: dict) -> str:
    return written(name, info.get("reference", 1.0))


def columns_of(inf: dict) -> dict[str, str]:
    """The column each input's written form stands for: shapes get linear inputs as written, ``(t/2.6)``."""
    return {scaled(x, info): x for x, info in inf.items()}


def log_term(name: str, info: dict) -> str:
    return f"log({scaled(name, info)})"


def power_term(name: str, info: dict, exponent: str) -> str:
    return f"{scaled(name, info)}**(-{exponent})"


def all_and_all_but_one(inputs: list[str], max_subsets: int = 8) -> list[list[str]]:
    """Every input, then (from four inputs) every input but one: a sweep's columns often hold one that
    the others determine (epochs beside seen and unique tokens, a teacher's size beside its loss), and a
    law over all of them is then over the cap or carries a term for nothing."""
    out = [list(inputs)]
    if len(inputs) > 3:
        out += [list(rest) for rest in itertools.islice(itertools.combinations(inputs, len(inputs) - 1), max_subsets)]
    return out


def rest_additive(rest_S, rest_L, inf, n):
    """The inputs a shape leaves out, added as power terms (scale inputs) and linear terms."""
    return "".join(f" + {n('c')}*{power_term(x, inf[x], n('a'))}" for x in rest_S) + "".join(
        f" + {n('b')}*{x}" for x in rest_L)


def per_target(problem, summary: dict, build, cap: int | None = None,
               shared: frozenset[str] = frozenset()) -> tuple[str, ...] | None:
    """One ``target = expression`` line per target, each built with fresh names (suffixed per
    target when there are several; ``shared`` stems are one constant for all); None when
    ``build`` has no expression for some target."""
    lines = []
    for j, target in enumerate(problem.targets):
        suffix = f"_{j + 1}" if len(problem.targets) > 1 else ""
        expr = build(Names(suffix, summary["targets"][target]["trend"], cap, shared))
        if expr is None:
            return None
        lines.append(f"{target} = {expr}")
    return tuple(lines)


# Each shape: (label, builder(scale_inputs, linear_inputs, summary, names) -> expression or None)
Shape = Callable[[list, list, dict, Names], "str | None"]
