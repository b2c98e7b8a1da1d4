"""The offline proposer: seed library first, then mutation and crossover. No LLM."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from agent.expressions import parse_law
from agent.errors import LawError
from agent.search.library import seed_laws
from agent.search.mutations import OPERATORS, Fresh, crossover, safe_apply
from agent.search.proposers.base import ProposalContext, Proposer
from agent.search.records import Proposal
from agent.search.units import Units


@dataclass
class _MutationContext:
    summary: dict
    inputs: list
    rng: np.random.Generator
    fresh: Fresh


class OfflineProposer(Proposer):
    """Symbolic mutations over expression trees; deterministic given the rng.

    The first calls hand out the seed library (every classic shape over the
    dataset's inputs); afterwards each proposal mutates a parent, crosses it
    with an inspiration, or copies one target's form onto the other targets.
    Mutations act on the law as the search sees it, over normalised inputs and
    targets, and the child is written back in user units (``agent.search.units``):
    the same random draws give the same child, up to reference scales, in any units.
    """

    name = "offline"

    def __init__(self):
        self._seeds: list | None = None
        self._seed_pos = 0

    def state_dict(self):
        return {"seed_pos": self._seed_pos}

    def load_state_dict(self, state):
        self._seed_pos = int(state.get("seed_pos", 0))

    def seeds_left(self, context: ProposalContext) -> int:
        self._ensure_seeds(context)
        return len(self._seeds) - self._seed_pos

    def _ensure_seeds(self, context):
        if self._seeds is None:
            self._seeds = seed_laws(context.problem, context.summary)

    def propose(self, context: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        self._ensure_seeds(context)
        units = Units.from_summary(context.problem, context.summary)
        out: list[Proposal] = []
        while self._seed_pos < len(self._seeds) and len(out) < n:
            label, lines = self._seeds[self._seed_pos]
            self._seed_pos += 1
            if not self._within_cap(lines, context.problem):
                continue
            lines = units.with_target_scales(lines, context.problem.inputs)
            out.append(Proposal(lines=lines, proposer=self.name, meta={"operator": "seed", "shape": label}))
        attempts = 0
        while len(out) < n and context.parents and attempts < 6 * n:
            attempts += 1
            child = self._mutate(context, rng)
            if child is not None and self._within_cap(child.lines, context.problem):
                out.append(child)
        return out

    @staticmethod
    def _within_cap(lines, problem) -> bool:
        """Offline proposals over the constant cap are wasted evaluations; skip them here."""
        try:
            parse_law(lines, problem.inputs, problem.targets, max_constants=problem.max_constants)
            return True
        except LawError:
            return False

    def _mutate(self, context: ProposalContext, rng: np.random.Generator) -> Proposal | None:
        problem = context.problem
        units = Units.from_summary(problem, context.summary)
        parent = context.parents[rng.integers(len(context.parents))]
        try:
            law = units.fitted(parse_law(parent.lines, problem.inputs, problem.targets)).law
        except LawError:
            return None
        exprs = list(law.expressions)
        mctx = _MutationContext(context.summary, list(problem.inputs), rng, Fresh(law.constants))
        j = int(rng.integers(len(exprs)))
        pool = list(context.inspirations)
        roll = rng.random()
        parent_ids = (parent.id,)
        if roll < 0.15 and pool:
            other = pool[rng.integers(len(pool))]
            try:
                other_law = units.fitted(parse_law(other.lines, problem.inputs, problem.targets)).law
            except LawError:
                return None
            new = safe_apply(crossover, exprs[j], other_law.expressions[j], mctx)
            op, parent_ids = "crossover", (parent.id, other.id)
        elif roll < 0.22 and len(exprs) > 1:
            return self._copy_form(law, j, parent, problem, units)
        else:
            op = list(OPERATORS)[rng.integers(len(OPERATORS))]
            new = safe_apply(OPERATORS[op], exprs[j], mctx)
            if new is not None and len(exprs) > 1 and rng.random() < 0.5:
                return self._copy_form(law, j, parent, problem, units, replaced=new, op=op)
        if new is None or new == exprs[j]:
            return None
        exprs[j] = new
        lines = units.render(problem.targets, exprs)
        return Proposal(lines=lines, proposer=self.name, parent_ids=parent_ids, meta={"operator": op})

    def _copy_form(self, law, j, parent, problem, units, replaced=None, op="copy_form"):
        """Give every target target j's form, each with its own constants."""
        source = replaced if replaced is not None else law.expressions[j]
        consts = [s for s in source.free_symbols if s.name not in problem.inputs]
        exprs = [source.xreplace({c: sp.Symbol(f"{c.name}_t{k + 1}") for c in consts})
                 for k in range(len(problem.targets))]
        return Proposal(lines=units.render(problem.targets, exprs), proposer=self.name, parent_ids=(parent.id,),
                        meta={"operator": op})
