"""The evolutionary search: the ask/tell loop, its stopping rules, finalists and the final law.

One generation = ask (the proposer mix suggests laws for every island, see
``proposers/mix.py``) -> evaluate (in a process pool when ``workers > 1``,
against the run's ``EvaluationContext``) -> tell (records, then the islands
and archive of ``population.py``).  The whole state is a JSON-able dict
(``checkpoint.py``), so a run checkpoints after every generation and resumes
to exactly the candidates an uninterrupted run would produce.
"""
from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd

from agent.errors import FitError, LawError
from agent.expressions import parse_law
from agent.fitting import resolve_loss
from agent.problem import Problem, Table, make_table
from agent.search import asking, checkpoint
from agent.search.choice import ReferenceRule, choose, finalist_pool, form_spread
from agent.search.config import SearchConfig
from agent.search.context import EvaluationContext
from agent.search.covariance import reference_dependent_inputs
from agent.search.failures import empty_search_message
from agent.search.evaluate import plausible_near
from agent.search.final import FinalLaw, refit_final
from agent.search.pool import Evaluator
from agent.search.population import Population
from agent.search.proposers.base import Proposer
from agent.search.proposers.mix import ProposerMix
from agent.search.records import FINALIST, Candidate, Proposal
from agent.search.selection import choice_score, score_standard_error
from agent.search.summary import summarize
from agent.search.units import Units, check_columns

MAX_ALTERNATIVES = 4  # other close finalists kept for form uncertainty: a bound on refit time, not a choice

__all__ = ["Search", "SearchConfig"]


class Search:
    """Ask/tell evolutionary law search over one training table."""

    def __init__(self, problem: Problem, train_df: pd.DataFrame, config: SearchConfig = SearchConfig(),
                 proposers: list[tuple[Proposer, float]] | None = None):
        self.problem, self.config = problem, config
        self.table = make_table(train_df, problem)
        check_columns(problem, self.table)
        self.summary = summarize(problem, self.table)
        # the search sees normalised numbers only: the same in any units (see units.py)
        self.units = Units.from_summary(problem, self.summary)
        self.context = EvaluationContext.build(problem, train_df, self.table, self.units, config)
        self.mix = ProposerMix(proposers)
        self.proposers, self.offline = self.mix.proposers, self.mix.offline
        # what an LLM should cost, said before the first call (the seed generation is offline)
        self.plan_events = self.mix.plan(max(config.budget - config.first_generation, 0))
        self.rng = np.random.default_rng(config.seed)
        self.candidates: list[Candidate] = []
        self.population = Population(config.islands, config.population)
        self.seen: set[str] = set()
        self.generation = 0
        self.best_id: int | None = None
        self.no_improve = 0
        self.elapsed = 0.0
        self.work = 0.0
        self.stop_reason: str | None = None  # set by step() when the run stops; frozen from then on
        self.refined = False
        self._reference_checks: dict[int, tuple[str, ...]] = {}
        self._last_tell_seconds = 0.0  # how long slow proposers' replies may be waited for (config)
        self._evaluator = Evaluator(self.context, config.workers, config.scheduler)

    # ------------------------------------------------------------ public API

    @property
    def done(self) -> bool:
        """Whether the run has stopped or reached a limit (a query: ``step`` records the reason)."""
        return self.stop_reason is not None or self._limit_reached() is not None

    def _limit_reached(self) -> str | None:
        cfg = self.config
        if len(self.candidates) >= cfg.budget:
            return "budget"
        if cfg.work_budget is not None and self.work >= cfg.work_budget:
            return "work budget"
        if cfg.time_limit is not None and self.elapsed >= cfg.time_limit:
            return "time limit"
        if cfg.patience is not None and self.no_improve >= cfg.patience:
            return "patience"
        if cfg.target_score is not None and self.best and self.best.score >= cfg.target_score:
            return "target reached"
        return None

    @property
    def best(self) -> Candidate | None:
        return None if self.best_id is None else self.candidates[self.best_id]

    @property
    def progress(self) -> dict:
        best = self.best
        finalists = sum(1 for c in self.candidates if c.finalist)
        return {
            "candidates": len(self.candidates) - finalists, "finalists": finalists,
            "generation": self.generation,
            "best_score": None if best is None else best.score,
            "best_validation_r2": None if best is None else best.validation.get("r2"),
            "elapsed": self.elapsed, "budget": self.config.budget, "work": self.work,
            "stop_reason": self.stop_reason,
            **({"retired": {k: dict(v) for k, v in self.mix.retired.items()}} if self.mix.retired else {}),
        }

    def step(self) -> list[Candidate]:
        """Run one generation and return its new candidates."""
        if self.done:
            self.stop_reason = self.stop_reason or self._limit_reached()
            return []
        t0 = time.perf_counter()
        proposals = self._ask()
        room = self.config.budget - len(self.candidates)
        proposals = proposals[:room]
        t_tell = time.perf_counter()
        new = self._tell(proposals)
        self._last_tell_seconds = time.perf_counter() - t_tell
        self.generation += 1
        if self.generation % self.config.migration_every == 0:
            self.population.migrate(self.candidates.__getitem__)
        self.elapsed += time.perf_counter() - t0
        if not proposals and not self.stop_reason:
            self.stop_reason = "no new proposals"
        self.stop_reason = self.stop_reason or self._limit_reached()
        return new

    def run(self, callback=None) -> FinalLaw:
        """Step until done (callback(search, new) after each generation), then finalize."""
        while not self.done:
            new = self.step()
            if callback:
                callback(self, new)
        return self.finalize()

    def chosen(self) -> Candidate | None:
        """The law to report: see ``agent.search.choice.choose`` (parsimony among the close finalists)."""
        return self._choice()[0]

    def _choice(self) -> tuple[Candidate | None, list[Candidate]]:
        if self.best is None:
            return None, []
        sel = self.config.selection
        def score_of(c: Candidate) -> float:
            return choice_score(c.validation, c.complexity, c.score, sel)

        def error_of(c: Candidate) -> float | None:
            ordered = sel.fold_weights != "uniform" and bool(c.validation.get("folds_ordered"))
            return score_standard_error(c.validation, ordered)

        return choose(self.candidates, margin=sel.parsimony_margin, plain_loss=resolve_loss("auto", self.table.y),
                      prefer_prior=sel.prefer_prior, score_of=score_of,
                      error_of=error_of if sel.one_standard_error else None, reference=self._reference_rule())

    def _reference_rule(self) -> ReferenceRule:
        sel = self.config.selection
        return ReferenceRule(self._reference_dependent, sel.exclude_reference_dependent, sel.reference_penalty)

    def _reference_dependent(self, candidate: Candidate) -> tuple[str, ...]:
        """The inputs whose reference scale the candidate's family depends on (once per candidate)."""
        if candidate.id not in self._reference_checks:
            try:
                law = parse_law(candidate.lines, self.problem.inputs, self.problem.targets)
                found = reference_dependent_inputs(law, candidate.constants, self.table)
            except (LawError, FitError):
                found = ()
            self._reference_checks[candidate.id] = found
        return self._reference_checks[candidate.id]

    def refine(self) -> list[Candidate]:
        """Re-score the best distinct laws as finalists, with careful fits and each loss (once per run).

        The search screens thousands of fits cheaply (few starts, short
        refinements), so near the top its ranking is partly fit noise: a form
        whose cheap fit missed its best constants loses to a worse form.  The
        finalists are fitted the way the reported law will be, on the same
        folds.  How constants are fitted is part of the model too: a log-residual
        fit and a robust (Huber) fit of one form extrapolate differently, most
        of all where a few rows sit far from the rest, so each finalist is
        scored under each loss and validation decides, like everything else.
        """
        if self.refined:
            return []
        self.refined = True
        positive = bool(np.all(self.table.y > 0))
        losses = list(dict.fromkeys(resolve_loss(loss, self.table.y) for loss in self.config.finalist_losses
                                    if positive or loss in ("auto", "lsq")))
        sel = self.config.selection
        best = finalist_pool(self.candidates, self.config.finalists, sel.prior_finalists,
                             reference=self._reference_rule())
        proposals = [Proposal(c.lines, f"finalist:{loss}", (c.id,),
                              {"island": c.island, "fit_loss": loss,
                               **({"shape": c.meta["shape"]} if c.meta.get("shape") else {})}, kind=FINALIST)
                     for c in best for loss in losses]
        if not proposals:
            return []
        t0 = time.perf_counter()
        new = self._tell(proposals)
        self.elapsed += time.perf_counter() - t0
        return new

    def finalize(self, rescore: bool = True) -> FinalLaw:
        """Refit the chosen law on all training rows (the test split is never seen here).

        ``rescore=False`` skips the finalists (a cancelled run reports at once).
        """
        if rescore:
            self.refine()
        chosen, close = self._choice()
        if chosen is None:
            raise LawError(empty_search_message(self.candidates, self.stop_reason or self._limit_reached(),
                                                self.problem.max_constants))
        final = refit_final(chosen, self.problem, self.table, self._final_options(chosen), self.config.seed,
                            self.units)
        refits: dict[int, FinalLaw | None] = {chosen.id: final}  # each close finalist is refitted once
        probes = None if self.context.probes is None else self.units.user_table(self.context.probes)
        sel = self.config.selection
        selection = {"margin": sel.parsimony_margin, "close_finalists": len(close),
                     "rule": "literature form first" if sel.prefer_prior else "simplest"}
        if probes is not None and not self._plausible_near(final, probes):
            # the probes screened fold 0's constants; those fitted on every row can still blow up
            # just beyond the data (an exponent of 473 on a power that another one cancels): report
            # the best close finalist whose own refit stays finite and in range there
            for other in sorted((c for c in close if c.id != chosen.id), key=lambda c: (-c.score, c.id)):
                refit = self._refit(other, refits)
                if refit is not None and self._plausible_near(refit, probes):
                    selection["implausible_refit"] = list(final.lines)
                    chosen, final = other, refit
                    break
        selection["spread"] = form_spread(chosen, close, self.problem, probes)
        if dependent := self._reference_dependent(chosen):
            # reported anyway (a literature form, or no finalist was free of it): say so
            selection["reference_dependent"] = list(dependent)
        return replace(final, selection=selection, alternatives=self._alternatives(chosen, close, refits))

    def _plausible_near(self, final: FinalLaw, probes: Table) -> bool:
        """Whether a final law's own constants pass the near probes (a law that cannot be computed
        there does not)."""
        try:
            return plausible_near(final.predict(probes), self.table.y)
        except FitError:
            return False

    def _final_options(self, candidate: Candidate):
        """The final fit's options, with the loss the candidate was scored with."""
        method = candidate.fit.get("method")
        return replace(self.config.final_fit, loss=method) if method else self.config.final_fit

    def _refit(self, candidate: Candidate, refits: dict[int, FinalLaw | None]) -> FinalLaw | None:
        """``candidate`` refitted on all training rows as the chosen law is, once per ``refits``; None
        when it cannot be (a finalist that cannot be refitted on all rows carries no form information)."""
        if candidate.id not in refits:
            try:
                refits[candidate.id] = refit_final(candidate, self.problem, self.table,
                                                   self._final_options(candidate), self.config.seed, self.units)
            except (LawError, FitError):
                refits[candidate.id] = None
        return refits[candidate.id]

    def _alternatives(self, chosen: Candidate, close: list[Candidate],
                      refits: dict[int, FinalLaw | None]) -> list[dict]:
        """The other close finalists, best first, each refitted on all training rows as the chosen law is."""
        others = sorted((c for c in close if c.id != chosen.id), key=lambda c: (-c.score, c.id))
        fitted = [self._refit(c, refits) for c in others[:MAX_ALTERNATIVES]]
        return [{"law": list(f.lines), "constants": f.constants} for f in fitted if f is not None]

    def drain_events(self) -> list[dict]:
        events, self.plan_events = self.plan_events, []
        return events + self.mix.drain_events()

    def close(self) -> None:
        self.mix.close()
        self._evaluator.close()

    # ------------------------------------------------------------ ask / tell

    def _ask(self) -> list[Proposal]:
        return asking.ask(self)

    def _unique(self, proposals, island=None, island_cycle=False) -> list[Proposal]:
        return asking.unique(self, proposals, island, island_cycle)

    def _tell(self, proposals: list[Proposal]) -> list[Candidate]:
        first_id = len(self.candidates)
        seeds = [self.config.seed * 1_000_003 + first_id + k for k in range(len(proposals))]
        # a finalist is fitted carefully with its loss, starting from its screening fit too,
        # so careful fitting never lands in a worse basin
        options = [replace(self.config.finalist_fit, loss=p.meta["fit_loss"]) if p.finalist else None
                   for p in proposals]
        warms = [self.candidates[p.parent_ids[0]].constants if p.finalist else self._suggested_start(p)
                 for p in proposals]
        results = self._evaluator.map([p.lines for p in proposals], seeds, options, warms)
        new = []
        for k, (p, res) in enumerate(zip(proposals, results)):
            meta = dict(p.meta)
            island = int(meta.pop("island", 0) or 0)
            meta.update(res.pop("meta", {}))
            res.setdefault("lines", tuple(p.lines))
            cand = Candidate(id=first_id + k, generation=self.generation, proposer=p.proposer, kind=p.kind,
                             parent_ids=tuple(p.parent_ids), island=island, meta=meta, **res)
            self.candidates.append(cand)
            self.work += float(cand.meta.get("work", 0.0))
            new.append(cand)
            if cand.ok:
                self.population.place(cand, self.candidates.__getitem__)
        improved = self._update_best(new)
        self.no_improve = 0 if improved else self.no_improve + 1
        return new

    def _suggested_start(self, proposal: Proposal) -> dict | None:
        """An LLM's starting values for its law, in every group: one more fit start beside the
        fitter's own (``fit_law`` uses it only when it names every constant with a usable value)."""
        init = proposal.meta.get("constants_init")
        if not init:
            return None
        return {g: dict(init) for g in self.context.table.group_names}

    def _update_best(self, new: list[Candidate]) -> bool:
        improved = False
        for c in new:
            if c.ok and (self.best is None or c.score > self.best.score + 1e-9):
                self.best_id, improved = c.id, True
        return improved

    # ------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict:
        return checkpoint.state_of(self)

    @classmethod
    def from_state(cls, problem: Problem, train_df: pd.DataFrame, state: dict,
                   config: SearchConfig = SearchConfig(), proposers=None,
                   candidates: Sequence[Candidate] | None = None) -> "Search":
        """A search resumed from ``state_dict()``; ``candidates``: the run's candidates so far (a
        checkpoint names how many, ``checkpoint.needs_candidates``; storage holds them)."""
        checkpoint.check_version(state)
        search = cls(problem, train_df, config, proposers)
        checkpoint.restore(search, state, candidates)
        return search
