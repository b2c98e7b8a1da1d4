"""Who breeds: the islands' populations, a diversity archive, and migration between islands.

Each island keeps its best ``size`` candidates; parents come from a
tournament on one island, so islands evolve apart and a lucky form cannot take
over the whole search at once.  Every few generations each island's best
moves to the next island.  The archive keeps the best candidate of each cell
of (complexity, number of constants), so simple and rich forms both stay
around as inspirations.  Candidates are held by id; ``lookup`` gives the
records (the search owns them).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from agent.search.records import Candidate

Lookup = Callable[[int], Candidate]


class Population:
    def __init__(self, n_islands: int, size: int):
        self.size = size
        self.islands: list[list[int]] = [[] for _ in range(n_islands)]
        self.archive: dict[str, int] = {}

    def place(self, cand: Candidate, lookup: Lookup) -> None:
        """Add an evaluated candidate to its island (kept if among the best) and to its archive cell."""
        pop = self.islands[cand.island]
        pop.append(cand.id)
        pop.sort(key=lambda i: -lookup(i).score)
        del pop[self.size:]
        key = f"{min(cand.complexity // 10, 9)}:{min(cand.n_constants, 12)}"
        held = self.archive.get(key)
        if held is None or lookup(held).score < cand.score:
            self.archive[key] = cand.id

    def migrate(self, lookup: Lookup) -> None:
        """Each island's best joins the next island (ring topology)."""
        bests = [pop[0] if pop else None for pop in self.islands]
        for i, b in enumerate(bests):
            if b is None:
                continue
            dest = self.islands[(i + 1) % len(self.islands)]
            if b not in dest:
                dest.append(b)
                dest.sort(key=lambda j: -lookup(j).score)
                del dest[self.size:]

    def parents(self, island: int, rng: np.random.Generator, lookup: Lookup) -> list[Candidate]:
        """Three tournaments of three, biased to the island's best (none for an empty island)."""
        pop = self.islands[island]
        out = []
        if pop:
            for _ in range(3):
                pick = rng.choice(pop, size=min(3, len(pop)), replace=False)
                out.append(lookup(min(pick, key=lambda i: -lookup(i).score)))
        return out

    def inspirations(self, best: Candidate | None, rng: np.random.Generator, lookup: Lookup) -> list[Candidate]:
        """The best so far and two random archive cells."""
        out = [] if best is None else [best]
        ids = sorted(self.archive.values())
        if ids:
            for i in rng.choice(ids, size=min(2, len(ids)), replace=False):
                out.append(lookup(int(i)))
        return out

    def state_dict(self) -> dict:
        return {"islands": [list(p) for p in self.islands], "archive": dict(self.archive)}

    def load_state_dict(self, state: dict) -> None:
        self.islands = [list(map(int, p)) for p in state["islands"]]
        self.archive = {k: int(v) for k, v in state["archive"].items()}
