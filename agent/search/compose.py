"""Assemble a multi-target law from the best line found for each target.

When targets share no constants their fits are independent, and the law's
validation error is the mean of the targets' errors, so the best law is made
of each target's best line.  Lines come from different candidates; their
constants are renamed per target so that no two lines share one.
"""
from __future__ import annotations

import sympy as sp

from agent.errors import LawError
from agent.expressions import law_to_text, parse_law
from agent.problem import Problem
from agent.search.records import Candidate, Proposal


def compose_best_lines(problem: Problem, candidates: list[Candidate], complexity_weight: float) -> Proposal | None:
    if len(problem.targets) < 2:
        return None
    best: list[tuple[float, Candidate] | None] = [None] * len(problem.targets)
    for c in candidates:
        per_target = c.validation.get("target_decades") if c.ok else None
        if not per_target or c.validation.get("implausibility", 0) > 0:
            continue
        for j, decades in enumerate(per_target):
            value = -decades - complexity_weight * c.complexity / len(problem.targets)
            if best[j] is None or value > best[j][0]:
                best[j] = (value, c)
    if any(b is None for b in best):
        return None
    lines, parents = [], []
    for j, (_, cand) in enumerate(best):
        try:
            law = parse_law(cand.lines, problem.inputs, problem.targets)
        except LawError:
            return None
        expr = law.expressions[j]
        consts = sorted((s for s in expr.free_symbols if s.name not in problem.inputs), key=lambda s: s.name)
        rename = {s: sp.Symbol(f"{s.name[0]}{i}_{j + 1}") for i, s in enumerate(consts)}
        lines.append(law_to_text(problem.targets[j], expr.xreplace(rename)))
        parents.append(cand.id)
    return Proposal(lines=tuple(lines), proposer="compose", parent_ids=tuple(dict.fromkeys(parents)),
                    meta={"operator": "best line per target"})
