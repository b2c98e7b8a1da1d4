"""The evolutionary search: islands, a diversity archive, ask/tell, checkpoints.

One generation = ask (proposers suggest laws for every island) -> evaluate (in
a process pool when ``workers > 1``) -> tell (records, islands, archive).  The
whole state is a JSON-able dict, so a run checkpoints after every generation
and resumes to exactly the candidates an uninterrupted run would produce.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd

from agent.defaults import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.errors import LawError
from agent.expressions import parse_law
from agent.fitting import FitOptions, resolve_loss
from agent.problem import Problem, axis_values, make_table
from agent.search.choice import choose, finalist_pool, form_spread
from agent.search.compose import compose_best_lines
from agent.search.failures import empty_search_message
from agent.search.evaluate import FINALIST_FIT, SEARCH_FIT, EvaluationContext, Selection, rescored
from agent.search.final import FinalLaw, refit_final
from agent.search.pool import Evaluator
from agent.search.probes import build_probes
from agent.search.proposers.base import BudgetExhausted, ProposalContext, Proposer, ProposerUnavailable
from agent.search.proposers.offline import OfflineProposer
from agent.search.records import FINALIST, Candidate, Proposal
from agent.search.summary import summarize
from agent.search.units import Units, check_columns
from agent.splits import make_folds

STATE_VERSION = 1


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

    def to_dict(self) -> dict:
        return asdict(self)


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
        search_df = self.units.normalise_frame(self._sample_groups(train_df, config))
        search_table = make_table(search_df, problem)
        axis = axis_values(search_df, problem)
        folds = make_folds(axis, search_table.groups, search_table.X, list(problem.inputs), seed=config.seed,
                           n_folds=config.n_folds)
        probes, monotone = build_probes(search_df, problem, search_table, axis)
        self.context = EvaluationContext(problem, search_table, folds, probes, monotone, config.fit,
                                         config.selection, self.units)
        self.proposers = list(proposers) if proposers else [(OfflineProposer(), 1.0)]
        given = [p for p, _ in self.proposers if isinstance(p, OfflineProposer)]
        self.offline = given[0] if given else OfflineProposer()  # seeds gen 0; fallback when others fail
        self.rng = np.random.default_rng(config.seed)
        self.candidates: list[Candidate] = []
        self.islands: list[list[int]] = [[] for _ in range(config.islands)]
        self.archive: dict[str, int] = {}
        self.seen: set[str] = set()
        self.generation = 0
        self.best_id: int | None = None
        self.no_improve = 0
        self.elapsed = 0.0
        self.work = 0.0
        self.stop_reason: str | None = None
        self.refined = False
        self._events: list[dict] = []
        self._evaluator = Evaluator(self.context, config.workers)

    def _sample_groups(self, df: pd.DataFrame, config: SearchConfig) -> pd.DataFrame:
        """With many groups, rank laws on a seeded sample of them: every group is one more
        fit per fold, and a dozen groups already tell good forms from bad ones."""
        names = self.table.group_names
        if self.problem.group is None or len(names) <= config.max_groups:
            return df
        keep = set(np.random.default_rng(config.seed).choice(names, size=config.max_groups, replace=False))
        return df[df[self.problem.group].astype(str).isin(keep)].reset_index(drop=True)

    # ------------------------------------------------------------ public API

    @property
    def done(self) -> bool:
        if self.stop_reason:
            return True
        cfg = self.config
        reason = None
        if len(self.candidates) >= cfg.budget:
            reason = "budget"
        elif cfg.work_budget is not None and self.work >= cfg.work_budget:
            reason = "work budget"
        elif cfg.time_limit is not None and self.elapsed >= cfg.time_limit:
            reason = "time limit"
        elif cfg.patience is not None and self.no_improve >= cfg.patience:
            reason = "patience"
        elif cfg.target_score is not None and self.best and self.best.score >= cfg.target_score:
            reason = "target reached"
        if reason:
            self.stop_reason = reason
        return reason is not None

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
        }

    def step(self) -> list[Candidate]:
        """Run one generation and return its new candidates."""
        if self.done:
            return []
        t0 = time.perf_counter()
        proposals = self._ask()
        room = self.config.budget - len(self.candidates)
        proposals = proposals[:room]
        new = self._tell(proposals)
        self.generation += 1
        if self.generation % self.config.migration_every == 0:
            self._migrate()
        self.elapsed += time.perf_counter() - t0
        if not proposals and not self.stop_reason:
            self.stop_reason = "no new proposals"
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
            value = rescored(c.validation, c.complexity, sel, sel.final_disagreement_weight)
            return c.score if value is None else value

        return choose(self.candidates, sel.parsimony_margin, resolve_loss("auto", self.table.y), sel.prefer_prior,
                      score_of)

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
        best = finalist_pool(self.candidates, self.config.finalists, self.config.selection.prior_finalists)
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
            raise LawError(empty_search_message(self.candidates, self.stop_reason,
                                                self.problem.max_constants))
        options = self.config.final_fit
        if chosen.fit.get("method"):
            options = replace(options, loss=chosen.fit["method"])
        final = refit_final(chosen, self.problem, self.table, options, self.config.seed, self.units)
        probes = None if self.context.probes is None else self.units.user_table(self.context.probes)
        selection = {"margin": self.config.selection.parsimony_margin, "close_finalists": len(close),
                     "spread": form_spread(chosen, close, self.problem, probes)}
        return replace(final, selection=selection)

    def drain_events(self) -> list[dict]:
        events = self._events
        for proposer, _ in self.proposers:
            events.extend(proposer.drain_events())
        self._events = []
        return events

    def close(self) -> None:
        self._evaluator.close()

    # ------------------------------------------------------------ ask / tell

    def _ask(self) -> list[Proposal]:
        if self.generation == 0:
            # the seed library comes out in chunks (the rest interleaves with mutations),
            # so a large library cannot blow through the time limit in one generation
            ctx = self._proposal_context(0)
            n = max(min(self.offline.seeds_left(ctx), self.config.first_generation), 1)
            return self._unique(self.offline.propose(ctx, n, self.rng), island_cycle=True)
        out = []
        for island in range(self.config.islands):
            ctx = self._proposal_context(island)
            if not ctx.parents:
                continue
            for proposer, n in self._allocate():
                out.extend(self._unique(self._call(proposer, ctx, n), island=island))
        composite = compose_best_lines(self.problem, self.candidates, self.config.selection.complexity_weight)
        if composite is not None:
            out.extend(self._unique([composite], island=int(self.rng.integers(self.config.islands))))
        return out

    def _call(self, proposer: Proposer, ctx: ProposalContext, n: int) -> list[Proposal]:
        try:
            return proposer.propose(ctx, n, self.rng)
        except ProposerUnavailable as exc:
            self._events.append({"type": "warning", "proposer": proposer.name,
                                 "message": f"{proposer.name} unavailable, using the offline proposer: {exc}"})
            return self.offline.propose(ctx, n, self.rng) if proposer is not self.offline else []
        except BudgetExhausted as exc:
            self._events.append({"type": "budget", "proposer": proposer.name, "message": str(exc)})
            self.stop_reason = f"{proposer.name} budget exhausted"
            return []

    def _allocate(self) -> list[tuple[Proposer, int]]:
        weights = np.array([w for _, w in self.proposers], dtype=float)
        picks = self.rng.choice(len(self.proposers), size=self.config.children, p=weights / weights.sum())
        return [(p, int(np.sum(picks == i))) for i, (p, _) in enumerate(self.proposers) if np.any(picks == i)]

    def _unique(self, proposals, island=None, island_cycle=False) -> list[Proposal]:
        """Drop proposals already seen (by canonical form); remember their island."""
        out = []
        for k, p in enumerate(proposals):
            try:
                law = parse_law(p.lines, self.problem.inputs, self.problem.targets)
                key = law.canonical
            except LawError:
                key = "\n".join(p.lines)  # rejected later with its reason
            if key in self.seen:
                continue
            self.seen.add(key)
            isl = (len(out) % self.config.islands) if island_cycle else island
            out.append(replace(p, meta={**dict(p.meta), "island": isl}))
        return out

    def _tell(self, proposals: list[Proposal]) -> list[Candidate]:
        first_id = len(self.candidates)
        seeds = [self.config.seed * 1_000_003 + first_id + k for k in range(len(proposals))]
        # a finalist is fitted carefully with its loss, starting from its screening fit too,
        # so careful fitting never lands in a worse basin
        options = [replace(self.config.finalist_fit, loss=p.meta["fit_loss"]) if p.finalist else None
                   for p in proposals]
        warms = [self.candidates[p.parent_ids[0]].constants if p.finalist else None for p in proposals]
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
                self._place(cand)
        improved = self._update_best(new)
        self.no_improve = 0 if improved else self.no_improve + 1
        return new

    def _place(self, cand: Candidate) -> None:
        pop = self.islands[cand.island]
        pop.append(cand.id)
        pop.sort(key=lambda i: -self.candidates[i].score)
        del pop[self.config.population:]
        key = f"{min(cand.complexity // 10, 9)}:{min(cand.n_constants, 12)}"
        held = self.archive.get(key)
        if held is None or self.candidates[held].score < cand.score:
            self.archive[key] = cand.id

    def _update_best(self, new: list[Candidate]) -> bool:
        improved = False
        for c in new:
            if c.ok and (self.best is None or c.score > self.best.score + 1e-9):
                self.best_id, improved = c.id, True
        return improved

    def _migrate(self) -> None:
        bests = [pop[0] if pop else None for pop in self.islands]
        for i, b in enumerate(bests):
            if b is None:
                continue
            dest = self.islands[(i + 1) % len(self.islands)]
            if b not in dest:
                dest.append(b)
                dest.sort(key=lambda j: -self.candidates[j].score)
                del dest[self.config.population:]

    def _proposal_context(self, island: int) -> ProposalContext:
        pop = self.islands[island]
        parents = []
        if pop:
            for _ in range(3):  # tournament of three, biased to the island's best
                pick = self.rng.choice(pop, size=min(3, len(pop)), replace=False)
                parents.append(self.candidates[min(pick, key=lambda i: -self.candidates[i].score)])
        archive_ids = sorted(self.archive.values())
        insp = []
        if self.best is not None:
            insp.append(self.best)
        if archive_ids:
            for i in self.rng.choice(archive_ids, size=min(2, len(archive_ids)), replace=False):
                insp.append(self.candidates[int(i)])
        rejections = [(c.lines, c.reason) for c in self.candidates[-60:] if not c.ok][-5:]
        deadline = None
        if self.config.time_limit is not None:
            # slow proposers (LLMs) start no new call past the run's time limit
            deadline = time.time() + max(0.0, self.config.time_limit - self.elapsed)
        return ProposalContext(self.problem, self.summary, parents, insp, rejections,
                               self.generation, self.best, deadline=deadline)

    # ------------------------------------------------------------ checkpoints

    def state_dict(self) -> dict:
        return {
            "version": STATE_VERSION, "generation": self.generation,
            "candidates": [c.to_dict() for c in self.candidates],
            "islands": [list(p) for p in self.islands], "archive": dict(self.archive),
            "seen": sorted(self.seen), "best_id": self.best_id, "no_improve": self.no_improve,
            "elapsed": self.elapsed, "work": self.work, "stop_reason": self.stop_reason,
            "refined": self.refined, "rng": self.rng.bit_generator.state,
            "proposers": {p.name: p.state_dict() for p, _ in self.proposers} | {"offline": self.offline.state_dict()},
        }

    @classmethod
    def from_state(cls, problem: Problem, train_df: pd.DataFrame, state: dict,
                   config: SearchConfig = SearchConfig(), proposers=None) -> "Search":
        if state.get("version") != STATE_VERSION:
            raise LawError(f"checkpoint version {state.get('version')} is not supported")
        search = cls(problem, train_df, config, proposers)
        search.generation = int(state["generation"])
        search.candidates = [Candidate.from_dict(c) for c in state["candidates"]]
        search.islands = [list(map(int, p)) for p in state["islands"]]
        search.archive = {k: int(v) for k, v in state["archive"].items()}
        search.seen = set(state["seen"])
        search.best_id = state["best_id"]
        search.no_improve = int(state["no_improve"])
        search.elapsed = float(state["elapsed"])
        search.work = float(state.get("work", 0.0))
        search.stop_reason = state.get("stop_reason")
        search.refined = bool(state.get("refined", False))
        search.rng.bit_generator.state = state["rng"]
        saved = state.get("proposers", {})
        search.offline.load_state_dict(saved.get("offline", {}))
        for p, _ in search.proposers:
            if p is not search.offline and p.name in saved:
                p.load_state_dict(saved[p.name])
        return search
