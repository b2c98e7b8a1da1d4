"""The proposers of a run, weighted: each island's children are shared out among them by a seeded
draw, and the offline proposer seeds the first generation and stands in for any that is down."""
from __future__ import annotations

from typing import Any

import numpy as np

from agent.search.proposers.base import BudgetExhausted, ProposalContext, Proposer, ProposerUnavailable
from agent.search.proposers.offline import OfflineProposer
from agent.search.records import Proposal


class ProposerMix:
    def __init__(self, proposers: list[tuple[Proposer, float]] | None = None):
        self.proposers = list(proposers) if proposers else [(OfflineProposer(), 1.0)]
        given = [p for p, _ in self.proposers if isinstance(p, OfflineProposer)]
        self.offline = given[0] if given else OfflineProposer()
        self.exhausted: str | None = None  # why the run must stop: a proposer's budget is spent
        self._events: list[dict[str, Any]] = []

    def allocate(self, children: int, rng: np.random.Generator) -> list[tuple[Proposer, int]]:
        """How many of ``children`` proposals each proposer makes (a weighted draw)."""
        weights = np.array([w for _, w in self.proposers], dtype=float)
        picks = rng.choice(len(self.proposers), size=children, p=weights / weights.sum())
        return [(p, int(np.sum(picks == i))) for i, (p, _) in enumerate(self.proposers) if np.any(picks == i)]

    def call(self, proposer: Proposer, ctx: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        """The proposer's proposals; the offline proposer's when it is unavailable, none when its
        budget is spent (``exhausted`` then says so)."""
        try:
            return proposer.propose(ctx, n, rng)
        except ProposerUnavailable as exc:
            self._events.append({"type": "warning", "proposer": proposer.name,
                                 "message": f"{proposer.name} unavailable, using the offline proposer: {exc}"})
            return self.offline.propose(ctx, n, rng) if proposer is not self.offline else []
        except BudgetExhausted as exc:
            self._events.append({"type": "budget", "proposer": proposer.name, "message": str(exc)})
            self.exhausted = f"{proposer.name} budget exhausted"
            return []

    def drain_events(self) -> list[dict[str, Any]]:
        events, self._events = self._events, []
        for proposer, _ in self.proposers:
            events.extend(proposer.drain_events())
        return events

    def state_dict(self) -> dict[str, Any]:
        return {p.name: p.state_dict() for p, _ in self.proposers} | {"offline": self.offline.state_dict()}

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        self.offline.load_state_dict(saved.get("offline", {}))
        for p, _ in self.proposers:
            if p is not self.offline and p.name in saved:
                p.load_state_dict(saved[p.name])
