"""The proposers of a run, weighted: each island's children are shared out among them by a seeded
draw, and the offline proposer seeds the first generation and stands in for any that is down.

A proposer whose budget is spent (an LLM's calls, tokens or cost) is retired, not the run: its
share of every later generation goes to the offline proposer, so turning an LLM on never makes a
search smaller than it would be without one.  The run's summary says when and why (``retired``)."""
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
        self.retired: dict[str, dict[str, Any]] = {}  # proposer name -> {"generation", "reason"}
        self._events: list[dict[str, Any]] = []

    def plan(self, proposals: int) -> list[dict[str, Any]]:
        """``llm_plan`` events: each budgeted proposer's expected share of ``proposals`` and its caps."""
        total = sum(w for _, w in self.proposers)
        return [{"type": "llm_plan", "proposer": p.name,
                 **p.expected_usage(int(round(proposals * w / total)))}  # type: ignore[attr-defined]
                for p, w in self.proposers if callable(getattr(p, "expected_usage", None))]

    def allocate(self, children: int, rng: np.random.Generator) -> list[tuple[Proposer, int]]:
        """How many of ``children`` proposals each proposer makes (a weighted draw)."""
        weights = np.array([w for _, w in self.proposers], dtype=float)
        picks = rng.choice(len(self.proposers), size=children, p=weights / weights.sum())
        return [(p, int(np.sum(picks == i))) for i, (p, _) in enumerate(self.proposers) if np.any(picks == i)]

    def call(self, proposer: Proposer, ctx: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        """The proposer's proposals; the offline proposer's when it is unavailable, retired (its
        budget spent) or just retiring."""
        if proposer.name in self.retired and proposer is not self.offline:
            return self.offline.propose(ctx, n, rng)
        try:
            return proposer.propose(ctx, n, rng)
        except ProposerUnavailable as exc:
            self._events.append({"type": "warning", "proposer": proposer.name,
                                 "message": f"{proposer.name} unavailable, using the offline proposer: {exc}"})
            return self.offline.propose(ctx, n, rng) if proposer is not self.offline else []
        except BudgetExhausted as exc:
            self.retired[proposer.name] = {"generation": ctx.generation, "reason": str(exc)}
            self._events.append({"type": "budget", "proposer": proposer.name,
                                 "message": f"{proposer.name} stops at generation {ctx.generation}: {exc}; "
                                            "the offline proposer makes its proposals until the run's own "
                                            "budget ends"})
            return self.offline.propose(ctx, n, rng) if proposer is not self.offline else []

    def drain_events(self) -> list[dict[str, Any]]:
        events, self._events = self._events, []
        for proposer, _ in self.proposers:
            events.extend(proposer.drain_events())
        return events

    def state_dict(self) -> dict[str, Any]:
        return ({p.name: p.state_dict() for p, _ in self.proposers} | {"offline": self.offline.state_dict()}
                | {"_retired": dict(self.retired)})

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        self.offline.load_state_dict(saved.get("offline", {}))
        self.retired = dict(saved.get("_retired", {}))
        for p, _ in self.proposers:
            if p is not self.offline and p.name in saved:
                p.load_state_dict(saved[p.name])
