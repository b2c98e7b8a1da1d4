"""A search's settings: every one is stored with a run, so a resumed run searches as it began."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from agent.defaults import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.fitting import LOSSES, FitOptions
from agent.search.context import FINALIST_FIT, SEARCH_FIT
from agent.search.selection import Selection


@dataclass(frozen=True)
class SearchConfig:
    budget: int = DEFAULT_BUDGET      # candidates evaluated (rejected ones count)
    work_budget: float | None = DEFAULT_WORK  # model evaluations summed over all fits: a seeded, machine-
                                      # independent effort budget (a time limit is not reproducible)
    seed: int = 0
    islands: int = 4
    population: int = 10              # kept per island
    children: int = 6                 # proposals per island per generation
    migration_every: int = 3          # generations
    time_limit: float | None = DEFAULT_TIME_LIMIT  # seconds of search (not the final refit): a safety net
    patience: int | None = None       # generations without improvement
    target_score: float | None = None
    workers: int = 1
    scheduler: str | None = None      # a Dask scheduler's address: evaluations fan out there (like workers,
                                      # a property of the machine: the same seed gives the same candidates)
    n_folds: int = 3
    first_generation: int = 48        # seed laws evaluated before mutation starts
    max_groups: int = 12              # groups the search validates on (all are refitted at the end)
    fit: FitOptions = SEARCH_FIT
    final_fit: FitOptions = FitOptions()
    selection: Selection = Selection()
    finalists: int = 12               # best distinct laws re-scored with careful fits before reporting
    finalist_losses: tuple[str, ...] = ("auto",)  # each finalist is fitted with each; ("auto", "huber_log")
                                      # adds robust fits (on SLDBench a wash, and worse on Gaussian noise)
    finalist_fit: FitOptions = FINALIST_FIT
    slow_proposer_wait: float | None = 0.1  # an LLM's replies are waited for at most this share of the last
                                      # generation's evaluation time (0.1 of the search's working time over
                                      # the run); later ones join a later generation, and the offline proposer
                                      # makes the LLM's share meanwhile.  None: every reply joins the
                                      # generation after it was asked (with a deterministic endpoint the same
                                      # seed gives the same run), however slow

    def to_dict(self) -> dict:
        return asdict(self)

    def with_loss(self, loss: str) -> "SearchConfig":
        """The same search with every fit (screening, finalists, the final refit) on ``loss``.

        ``auto`` keeps the defaults.  A named loss replaces the finalists' own choice too, so the
        reported law is fitted exactly as asked (the user knows their noise; the default guesses it).
        """
        if loss == "auto":
            return self
        if loss not in LOSSES:
            raise ValueError(f"unknown loss {loss!r}; choose one of auto, {', '.join(LOSSES)}")
        return replace(self, fit=replace(self.fit, loss=loss), finalist_fit=replace(self.finalist_fit, loss=loss),
                       final_fit=replace(self.final_fit, loss=loss), finalist_losses=(loss,))
