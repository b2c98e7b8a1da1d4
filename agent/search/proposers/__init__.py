from agent.search.proposers.base import (
    BudgetExhausted,
    ProposalContext,
    Proposer,
    ProposerUnavailable,
)

__all__ = ["BudgetExhausted", "ProposalContext", "Proposer", "ProposerUnavailable"]
