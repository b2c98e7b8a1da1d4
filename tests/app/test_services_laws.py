"""Law helpers of the service that need no database."""
from __future__ import annotations

from agent.search.records import Candidate
from app.services.laws import lineage_of


def cand(i, parents=(), score=1.0):
    return Candidate(id=i, generation=i, lines=(f"y = a * x ** {i}",), proposer="offline", status="ok",
                     parent_ids=tuple(parents), score=score)


def test_lineage_follows_first_parents_nearest_first_and_stops_at_a_seed():
    pool = {0: cand(0), 1: cand(1, [0]), 2: cand(2, [1, 0], score=float("-inf")), 3: cand(3, [2])}
    steps = lineage_of(pool[3], pool.get)
    assert [s.id for s in steps] == [2, 1, 0]
    assert steps[0].score is None and steps[0].lines == ["y = a * x ** 2"]


def test_lineage_survives_missing_ancestors_and_cycles():
    assert [s.id for s in lineage_of(cand(5, [4]), {}.get)] == []
    pool = {1: cand(1, [2]), 2: cand(2, [1])}
    assert [s.id for s in lineage_of(pool[1], pool.get)] == [2, 1]
