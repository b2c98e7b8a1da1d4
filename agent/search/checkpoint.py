"""A search's whole state as a JSON-able dict, and back: a run checkpoints after every generation
and resumes to exactly the candidates an uninterrupted run would produce."""
from __future__ import annotations

from typing import TYPE_CHECKING

from agent.errors import LawError
from agent.search.records import Candidate

if TYPE_CHECKING:
    from agent.search.engine import Search

STATE_VERSION = 1


def state_of(search: "Search") -> dict:
    return {
        "version": STATE_VERSION, "generation": search.generation,
        "candidates": [c.to_dict() for c in search.candidates],
        **search.population.state_dict(),
        "seen": sorted(search.seen), "best_id": search.best_id, "no_improve": search.no_improve,
        "elapsed": search.elapsed, "work": search.work, "stop_reason": search.stop_reason,
        "refined": search.refined, "rng": search.rng.bit_generator.state,
        "proposers": search.mix.state_dict(),
    }


def check_version(state: dict) -> None:
    if state.get("version") != STATE_VERSION:
        raise LawError(f"checkpoint version {state.get('version')} is not supported")


def restore(search: "Search", state: dict) -> None:
    """Load ``state`` into a search just built with the run's problem, rows, config and proposers."""
    search.generation = int(state["generation"])
    search.candidates = [Candidate.from_dict(c) for c in state["candidates"]]
    search.population.load_state_dict(state)
    search.seen = set(state["seen"])
    search.best_id = state["best_id"]
    search.no_improve = int(state["no_improve"])
    search.elapsed = float(state["elapsed"])
    search.work = float(state.get("work", 0.0))
    # a checkpoint written before step() recorded its stop (older runs) says it now
    search.stop_reason = state.get("stop_reason") or search._limit_reached()
    search.refined = bool(state.get("refined", False))
    search.rng.bit_generator.state = state["rng"]
    search.mix.load_state_dict(state.get("proposers", {}))
