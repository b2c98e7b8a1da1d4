"""A search's state as a small JSON-able dict, and back: a run checkpoints after every generation
and resumes to exactly the candidates an uninterrupted run would produce.

The candidates themselves are not in the checkpoint: a run's storage already holds them (the
candidates table, written in the same transaction as the checkpoint), so the state names how
many there are and a resume loads them back.  The checkpoint's size stays flat as a run grows,
where one that carried every candidate grew with the run (600 KB at generation 50) and the bytes
written over a run with its square.  Version 1 checkpoints, which carried them, still load.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from agent.errors import LawError
from agent.search import asking
from agent.search.records import Candidate

if TYPE_CHECKING:
    from agent.search.engine import Search

STATE_VERSION = 2
READABLE_VERSIONS = (1, 2)


def state_of(search: "Search") -> dict:
    derived = seen_keys(search, search.candidates)
    return {
        "version": STATE_VERSION, "generation": search.generation,
        "n_candidates": len(search.candidates),
        # the proposals already seen are the candidates' forms, apart from these (normally none)
        "seen_extra": sorted(search.seen - derived), "seen_absent": sorted(derived - search.seen),
        **search.population.state_dict(),
        "best_id": search.best_id, "no_improve": search.no_improve,
        "elapsed": search.elapsed, "work": search.work, "stop_reason": search.stop_reason,
        "refined": search.refined, "rng": search.rng.bit_generator.state,
        "proposers": search.mix.state_dict(),
    }


def check_version(state: dict) -> None:
    if state.get("version") not in READABLE_VERSIONS:
        raise LawError(f"checkpoint version {state.get('version')} is not supported")


def needs_candidates(state: dict) -> int | None:
    """How many stored candidates a resume from ``state`` needs (ids 0..n-1); None when it holds them."""
    return None if "candidates" in state else int(state["n_candidates"])


def restore(search: "Search", state: dict, candidates: Sequence[Candidate] | None = None) -> None:
    """Load ``state`` into a search just built with the run's problem, rows, config and proposers.

    ``candidates``: the run's stored candidates, ids 0..n-1 (a version 1 state carries its own).
    """
    if "candidates" in state:
        search.candidates = [Candidate.from_dict(c) for c in state["candidates"]]
        search.seen = set(state["seen"])
    else:
        n = int(state["n_candidates"])
        found = sorted(candidates or (), key=lambda c: c.id)
        if [c.id for c in found] != list(range(n)):
            raise LawError(f"checkpoint of generation {state['generation']} needs candidates 0..{n - 1}; "
                           f"{len(found)} were given")
        search.candidates = list(found)
        search.seen = (seen_keys(search, found) - set(state["seen_absent"])) | set(state["seen_extra"])
    search.generation = int(state["generation"])
    search.population.load_state_dict(state)
    search.best_id = state["best_id"]
    search.no_improve = int(state["no_improve"])
    search.elapsed = float(state["elapsed"])
    search.work = float(state.get("work", 0.0))
    # a checkpoint written before step() recorded its stop (older runs) says it now
    search.stop_reason = state.get("stop_reason") or search._limit_reached()
    search.refined = bool(state.get("refined", False))
    search.rng.bit_generator.state = state["rng"]
    search.mix.load_state_dict(state.get("proposers", {}))


def seen_keys(search: "Search", candidates: Iterable[Candidate]) -> set[str]:
    """The dedup keys (``asking.unique``) of the proposals these candidates were made from."""
    out = set()
    for c in candidates:
        # a candidate rejected before it had a form (parse error, too many constants) is keyed anew
        out.add(c.canonical or asking.dedup_key(search.problem, c.lines))
    return out
