"""The evolutionary law search (ask/tell) and its plug-in proposers."""
from agent.search.config import SearchConfig
from agent.search.engine import Search
from agent.search.selection import Selection
from agent.search.final import FinalLaw, Refit, refit_law, report_on_test
from agent.search.proposers import BudgetExhausted, ProposalContext, Proposer, ProposerUnavailable
from agent.search.proposers.offline import OfflineProposer
from agent.search.records import Candidate, Proposal

__all__ = [
    "BudgetExhausted", "Candidate", "FinalLaw", "OfflineProposer", "Proposal", "ProposalContext",
    "Proposer", "ProposerUnavailable", "Refit", "Search", "SearchConfig", "Selection", "refit_law",
    "report_on_test",
]
