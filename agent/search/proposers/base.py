"""The proposer plug-in interface (Optuna's samplers are the model)."""
from __future__ import annotations

import abc
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from agent.problem import Problem
from agent.search.records import Candidate, Proposal


class ProposerUnavailable(RuntimeError):
    """The proposer cannot answer now (endpoint down); the search falls back."""


class BudgetExhausted(RuntimeError):
    """A budget of the proposer (calls, tokens, cost) is spent; the run stops cleanly."""


@dataclass(frozen=True)
class ProposalContext:
    """What a proposer may look at.  ``summary`` is a JSON-able data summary.

    ``deadline`` is a ``time.time()`` value past which the search wants no new
    slow work (an LLM call started then would outlive the run's time limit);
    None when the run has no time limit.
    """

    problem: Problem
    summary: dict[str, Any]
    parents: Sequence[Candidate]
    inspirations: Sequence[Candidate] = ()
    rejections: Sequence[tuple[tuple[str, ...], str]] = ()  # (lines, reason), most recent last
    generation: int = 0
    best: Candidate | None = None
    deadline: float | None = None

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.time() >= self.deadline


class Proposer(abc.ABC):
    """Suggests law forms.  Must be deterministic given ``rng`` (LLMs excepted)."""

    name: str = "proposer"
    # a slow proposer (an LLM behind a network) is asked in the background: its reply joins the next
    # generation while this one is evaluated (see ``ProposerMix.ask_later``)
    slow: bool = False

    @abc.abstractmethod
    def propose(self, context: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        """Return up to ``n`` proposals.  May raise ProposerUnavailable or BudgetExhausted."""

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state for checkpoints (counters, budgets used)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""

    def usage(self) -> dict[str, Any]:
        """Counters to report on the run (calls, tokens, cost, accepted, rejected)."""
        return {}

    def drain_events(self) -> list[dict[str, Any]]:
        """Events since the last call (warnings, LLM call records); each a JSON-able dict."""
        return []
