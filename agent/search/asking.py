"""The ask side of a generation: what the proposers suggest, deduplicated, each on an island.

Functions over a :class:`agent.search.engine.Search` (as Optuna's ``_optimize`` module works over a
study): the engine keeps the loop and the records, this module what goes into each generation.
"""
from __future__ import annotations

import functools
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from agent.errors import LawError
from agent.expressions import parse_law
from agent.search.compose import compose_best_lines
from agent.search.proposers.base import ProposalContext
from agent.search.records import Proposal

if TYPE_CHECKING:
    from agent.search.engine import Search


def ask(search: "Search") -> list[Proposal]:
    """One generation's proposals: the first takes the seed library in chunks; later ones take the
    slow proposers' replies that are back, then every island's share from each proposer."""
    if search.generation == 0:
        # the seed library comes out in chunks (the rest interleaves with mutations),
        # so a large library cannot blow through the time limit in one generation
        ctx = proposal_context(search, 0)
        n = max(min(search.offline.seeds_left(ctx), search.config.first_generation), 1)
        return unique(search, search.offline.propose(ctx, n, search.rng), island_cycle=True)
    out = []
    # the slow proposers' replies to earlier generations join this one, in the order asked; with a
    # bound, those not back within a share of the last generation's evaluation time wait for a later one
    share = search.config.slow_proposer_wait
    for island, proposals in search.mix.replies(None if share is None else share * search._last_tell_seconds):
        out.extend(unique(search, proposals, island=island))
    for island in range(search.config.islands):
        ctx = proposal_context(search, island)
        if not ctx.parents:
            continue
        for proposer, n in search.mix.allocate(search.config.children, search.rng):
            if proposer.slow:
                own = np.random.default_rng(int(search.rng.integers(2**63)))
                now = search.mix.ask_later(island, proposer, ctx, n, own)
                if not now and search.mix.offline_in_mix:
                    # asked: its laws join a later generation as extras; this one keeps its full size
                    now = search.mix.offline.propose(ctx, n, search.rng)
                out.extend(unique(search, now, island=island))
            else:
                out.extend(unique(search, search.mix.call(proposer, ctx, n, search.rng), island=island))
    if not out:
        out = _when_nothing_new(search, share)
    composite = compose_best_lines(search.problem, search.candidates, search.config.selection.complexity_weight)
    if composite is not None:
        out.extend(unique(search, [composite], island=int(search.rng.integers(search.config.islands))))
    return out


def _when_nothing_new(search: "Search", share: float | None) -> list[Proposal]:
    """A generation whose proposers made nothing new.  The offline proposer (when it shares the
    run with others) takes every child first.  Only if it too has nothing does the search wait on the slow
    proposers' replies: in full in an LLM-only run or without a bound, else within what is left of
    the run's allowance (waiting at most ``share`` of the search's own working time in all).  An
    empty answer ends the run ("no new proposals"), as it would without the slow proposers."""
    out: list[Proposal] = []
    if search.mix.offline_in_mix and len(search.mix.proposers) > 1:  # alone, it had every child already
        for island in range(search.config.islands):
            ctx = proposal_context(search, island)
            if ctx.parents:
                out.extend(unique(search, search.mix.offline.propose(ctx, search.config.children, search.rng),
                                        island=island))
    if out or not search.mix.in_flight:
        return out
    if share is None or not search.mix.offline_in_mix:
        wait = None
    else:
        working = search.elapsed - search.mix.waited_seconds
        wait = share * working - search.mix.waited_seconds
    for island, proposals in search.mix.replies(wait):
        out.extend(unique(search, proposals, island=island))
    return out


def unique(search: "Search", proposals, island=None, island_cycle=False) -> list[Proposal]:
    """Drop proposals already seen (by canonical form); remember their island."""
    out = []
    for k, p in enumerate(proposals):
        key = dedup_key(search.problem, p.lines)
        if key in search.seen:
            continue
        search.seen.add(key)
        isl = (len(out) % search.config.islands) if island_cycle else island
        out.append(replace(p, meta={**dict(p.meta), "island": isl}))
    return out


def dedup_key(problem, lines) -> str:
    """A proposal's form, to drop one already seen (its lines when it does not parse: rejected later
    with its reason)."""
    return _dedup_key(tuple(lines), tuple(problem.inputs), tuple(problem.targets))


@functools.lru_cache(maxsize=4096)  # every checkpoint keys the run's formless rejects again: parse them once
def _dedup_key(lines: tuple[str, ...], inputs: tuple[str, ...], targets: tuple[str, ...]) -> str:
    try:
        return parse_law(lines, inputs, targets).canonical
    except LawError:
        return "\n".join(lines)


def proposal_context(search: "Search", island: int) -> ProposalContext:
    parents = search.population.parents(island, search.rng, search.candidates.__getitem__)
    insp = search.population.inspirations(search.best, search.rng, search.candidates.__getitem__)
    rejections = [(c.lines, c.reason) for c in search.candidates[-60:] if not c.ok][-5:]
    deadline = None
    if search.config.time_limit is not None:
        # slow proposers (LLMs) start no new call past the run's time limit
        deadline = time.time() + max(0.0, search.config.time_limit - search.elapsed)
    return ProposalContext(search.problem, search.summary, parents, insp, rejections,
                           search.generation, search.best, deadline=deadline)
