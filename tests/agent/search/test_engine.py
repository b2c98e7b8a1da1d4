"""The search: seeded, resumable, budgeted, and robust to a failing proposer."""
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from agent.errors import LawError
from agent.search import (BudgetExhausted, Candidate, OfflineProposer, Proposal, Proposer, ProposerUnavailable, Search,
                          SearchConfig)
from agent.expressions import parse_law
from agent.fitting import predict
from agent.problem import Problem
from agent.search.engine import MAX_ALTERNATIVES
from agent.search.library import PRIOR_SHAPES
from agent.search.writing import as_powers

SMALL = SearchConfig(budget=40, seed=1, islands=2, children=4)


def lines_of(search):
    return [c.lines for c in search.candidates]


def search_only(search):
    """Step until done without the finalists' careful fits: for tests of the search proper, a third of
    the cost of ``run``."""
    while not search.done:
        search.step()


def searched(search):
    """Candidates of the search proper (not the finalists re-scored before reporting)."""
    return [c for c in search.candidates if c.kind == "searched"]


@pytest.fixture(scope="module")
def reference(power_law_problem, power_law_data):
    """One finished run with SMALL, shared by the tests that compare another run with it."""
    search = Search(power_law_problem, power_law_data, SMALL)
    search.final = search.run()
    search.close()
    return search


def test_the_same_seed_gives_the_same_candidates(power_law_problem, power_law_data, reference):
    a = reference
    b = Search(power_law_problem, power_law_data, SMALL)
    b.run()
    assert lines_of(a) == lines_of(b)
    assert [c.score for c in a.candidates] == [c.score for c in b.candidates]


def test_a_run_resumed_from_any_checkpoint_matches_the_uninterrupted_run(power_law_problem, power_law_data,
                                                                        reference):
    full = reference
    first = Search(power_law_problem, power_law_data, SMALL)
    first.step()
    first.step()
    state = json.loads(json.dumps(first.state_dict()))  # checkpoints are plain JSON
    # the candidates come back from where the run stored them, as JSON too
    stored = [Candidate.from_dict(json.loads(json.dumps(c.to_dict()))) for c in first.candidates]
    resumed = Search.from_state(power_law_problem, power_law_data, state, SMALL, candidates=stored)
    resumed.run()
    assert lines_of(resumed) == lines_of(full)
    assert [c.id for c in resumed.candidates] == list(range(len(full.candidates)))

    # a version 1 checkpoint, written before checkpoints named their candidates, held them all
    old = {k: v for k, v in state.items() if k not in ("n_candidates", "seen_extra", "seen_absent")}
    old.update(version=1, candidates=[c.to_dict() for c in first.candidates], seen=sorted(first.seen))
    from_old = Search.from_state(power_law_problem, power_law_data, json.loads(json.dumps(old)), SMALL)
    search_only(from_old)  # the finalists after a resume were checked above
    assert lines_of(from_old) == [c.lines for c in searched(full)]


def test_a_checkpoint_names_the_candidates_instead_of_holding_them(power_law_problem, power_law_data):
    search = Search(power_law_problem, power_law_data, dataclasses.replace(SMALL, budget=10_000, patience=None))
    sizes = {}
    for generation in range(1, 17):
        search.step()
        if generation in (2, 16):
            sizes[generation] = (len(search.candidates), len(json.dumps(search.state_dict())))
    search.close()
    (n_early, early), (n_late, late) = sizes[2], sizes[16]
    assert n_late > 2 * n_early, sizes  # the run grew ...
    assert late < 1.3 * early, sizes  # ... and its checkpoint did not
    state = search.state_dict()
    assert "candidates" not in state and state["n_candidates"] == n_late
    with pytest.raises(LawError, match="needs candidates"):
        Search.from_state(power_law_problem, power_law_data, state, SMALL, candidates=search.candidates[:-1])


def test_budget_counts_every_candidate_and_duplicates_are_never_evaluated(power_law_problem, power_law_data):
    config = dataclasses.replace(SMALL, budget=30)  # below what the proposers can offer a 1-input law of 4 constants
    search = Search(power_law_problem, power_law_data, config)
    search_only(search)
    assert search.stop_reason == "budget"
    assert len(searched(search)) == config.budget
    canon = [c.canonical for c in searched(search) if c.ok]
    assert len(canon) == len(set(canon))
    assert search.stop_reason == "budget"


def test_before_reporting_the_best_laws_are_rescored_as_finalists_with_careful_fits(reference):
    search, final = reference, reference.final
    finalists = [c for c in search.candidates if c.kind == "finalist"]
    # the best distinct laws, plus the best seed of each literature form (see test_choice.py)
    assert 0 < len(finalists) <= SMALL.finalists + len(PRIOR_SHAPES)
    for finalist in finalists:
        parent = search.candidates[finalist.parent_ids[0]]
        assert finalist.canonical == parent.canonical and finalist.complexity == parent.complexity
        assert finalist.fit["method"] == "robust_log"  # positive targets: log residuals, Huber-polished where a run stands out
    assert search.refine() == []  # once per run, also after a resume
    chosen = search.chosen()
    assert chosen in finalists  # the report comes from the careful scores, not the screening ones
    assert final.candidate_id == chosen.id and final.lines == chosen.lines and final.fit_loss == "robust_log"
    assert final.axis == search.problem.axis  # what it was chosen on extrapolating along, for the answers


def test_the_other_close_finalists_are_kept_refitted_on_all_rows_for_form_uncertainty(reference,
                                                                                       power_law_problem):
    search, final = reference, reference.final
    _, close = search._choice()
    others = [c for c in close if c.id != final.candidate_id]
    assert len(final.alternatives) == min(len(others), MAX_ALTERNATIVES)
    # each is a close finalist's law, as the report writes it (exp(b0*log(N)) as N**b0: agent.search.writing)
    def written(lines):
        law = parse_law(lines, power_law_problem.inputs, power_law_problem.targets)
        return tuple(as_powers(e, law.inputs) for e in law.expressions)
    assert {written(a["law"]) for a in final.alternatives} <= {written(c.lines) for c in others}
    table = search.table
    for alt in final.alternatives:  # constants in user units, fitted on every training row: they describe the data
        law = parse_law(alt["law"], power_law_problem.inputs, power_law_problem.targets)
        pred = predict(law, table, alt["constants"], table.groups)
        assert np.all(np.isfinite(pred)) and np.median(np.abs(pred / table.y - 1)) < 0.1


def test_the_final_choice_judges_reference_dependence_on_the_laws_in_user_units(reference):
    """Rule 4 of the choice (test_choice.py): laws and constants are the user's, so is the table."""
    search = reference
    chosen = search.chosen()
    assert search._reference_dependent(chosen) == () and "reference_dependent" not in search.final.selection
    constants = {g: {"c0": 1.5, "a0": 0.3} for g in ("small", "large")}
    pinned = dataclasses.replace(chosen, id=10_000, lines=("loss = c0 + (N/3.2e+07)**(-a0)",), constants=constants)
    assert search._reference_dependent(pinned) == ("N",)
    del search._reference_checks[pinned.id]


def test_a_chosen_law_whose_final_refit_blows_up_near_the_data_gives_way_to_the_next_close_finalist(
        reference, monkeypatch):
    """The probes screened fold 0's constants; the refit on every row is probed too (at 2x-4x)."""
    from agent.search import engine
    search = reference
    finalists = sorted((c for c in search.candidates if c.kind == "finalist"), key=lambda c: -c.score)
    chosen, runner_up = finalists[0], next(c for c in finalists[1:] if c.canonical != finalists[0].canonical)
    monkeypatch.setattr(search, "_choice", lambda: (chosen, [chosen, runner_up]))
    real_refit = engine.refit_final

    def refit(candidate, *args, **kwargs):
        final = real_refit(candidate, *args, **kwargs)
        if candidate.id != chosen.id:
            return final
        # what an exponent of 500 on the size does: fine on the rows, 2**500 times the loss at 2x
        return dataclasses.replace(final, lines=("loss = c0*(N/1e9)**a0",),
                                   constants={g: {"c0": 2.0, "a0": 500.0} for g in final.constants})

    monkeypatch.setattr(engine, "refit_final", refit)
    final = search.finalize()
    assert final.candidate_id == runner_up.id and final.lines == runner_up.lines
    assert final.selection["implausible_refit"] == ["loss = c0*(N/1e9)**a0"]

    # when no close finalist's refit passes either, the chosen law is reported as it is
    monkeypatch.setattr(search, "_choice", lambda: (chosen, [chosen]))
    final = search.finalize()
    assert final.candidate_id == chosen.id and "implausible_refit" not in final.selection


def test_at_the_choice_a_rate_predicted_past_one_ranks_one_failed_check_lower():
    """Of two close finalists, the one whose accuracy climbs past 1 at 10x-100x gives way (the
    search's own screening never saw that check: see test_evaluate)."""
    C = np.logspace(18, 21, 10)
    data = pd.DataFrame({"C": C, "acc": 0.7 - 0.5 * np.exp(-(C / 1e21) ** 0.4)})
    search = Search(Problem(("C",), ("acc",), axis=("C",)), data, SearchConfig(budget=1))

    def finalist(i, score, rate_left):
        return Candidate(id=i, generation=0, lines=("acc = c0 + c1*(C/1e21)**a",), proposer="offline", status="ok",
                         canonical=f"law{i}", constants={"all_data": {"c0": 0.2, "c1": 0.3, "a": 0.1}},
                         validation={"rate_left": rate_left}, score=score, kind="finalist")

    search.candidates = [finalist(0, 1.00, True), finalist(1, 0.95, False)]
    search.best_id = 0
    assert search._choice()[0].id == 1
    search.candidates = [finalist(0, 1.00, False), finalist(1, 0.95, False)]
    assert search._choice()[0].id == 0


def test_finalists_can_also_be_fitted_with_a_robust_loss_and_the_plain_fit_wins_ties(
        power_law_problem, power_law_data):
    config = SearchConfig(**{**SMALL.__dict__, "finalist_losses": ("auto", "huber_log")})
    search = Search(power_law_problem, power_law_data, config)
    final = search.run()
    finalists = [c for c in search.candidates if c.kind == "finalist"]
    assert {c.fit["method"] for c in finalists} == {"robust_log", "huber_log"}
    chosen = search.chosen()
    twin = next(c for c in finalists if c.canonical == chosen.canonical and c is not chosen)
    margin = config.selection.parsimony_margin
    assert chosen.fit["method"] == "robust_log" or chosen.score > twin.score + margin
    assert final.fit_loss == chosen.fit["method"]


class Failing(Proposer):
    name = "flaky"

    def __init__(self, error):
        self.error = error

    def propose(self, context, n, rng):
        raise self.error


def test_an_unavailable_proposer_falls_back_to_offline_with_a_warning(power_law_problem, power_law_data):
    config = dataclasses.replace(SMALL, budget=30)
    search = Search(power_law_problem, power_law_data, config,
                    proposers=[(Failing(ProposerUnavailable("connection refused")), 1.0)])
    search_only(search)
    events = search.drain_events()
    assert any(e["type"] == "warning" and "flaky unavailable" in e["message"] for e in events)
    assert len(searched(search)) == config.budget  # the offline proposer carried the run


def test_a_spent_proposer_budget_ends_its_turns_not_the_run(power_law_problem, power_law_data):
    """An LLM whose calls run out hands its share to the offline proposer: the run keeps its full size."""
    config = dataclasses.replace(SMALL, budget=30)
    search = Search(power_law_problem, power_law_data, config,
                    proposers=[(Failing(BudgetExhausted("100 calls used")), 1.0)])
    search_only(search)
    assert search.stop_reason == "budget" and len(searched(search)) == config.budget
    retired = search.progress["retired"]["flaky"]
    assert retired["reason"] == "100 calls used" and retired["generation"] >= 1
    events = [e for e in search.drain_events() if e["type"] == "budget"]
    assert len(events) == 1 and "offline proposer" in events[0]["message"]


class Hostile(Proposer):
    name = "hostile"

    def propose(self, context, n, rng):
        return [Proposal(("loss = __import__('os').system('echo pwned')",), self.name),
                Proposal(("loss = E + A*N**(-alpha)",), self.name)]


def test_untrusted_proposals_are_parsed_never_run_and_rejections_keep_their_reason(power_law_problem,
                                                                                  power_law_data):
    search = Search(power_law_problem, power_law_data, SMALL, proposers=[(Hostile(), 1.0)])
    search.step()
    search.step()
    rejected = [c for c in search.candidates if c.proposer == "hostile" and not c.ok]
    assert rejected and "not allowed" in rejected[0].reason or "cannot be called" in rejected[0].reason
    assert any(c.proposer == "hostile" and c.ok for c in search.candidates)


def test_parallel_evaluation_gives_the_same_run_as_serial(power_law_problem, power_law_data, reference):
    serial = reference
    parallel = Search(power_law_problem, power_law_data, SearchConfig(**{**SMALL.__dict__, "workers": 2}))
    try:
        parallel.run()
    finally:
        parallel.close()
    assert lines_of(parallel) == lines_of(serial)


def test_an_llms_starting_values_are_a_fit_start_of_its_law():
    """A narrow bump no default start finds: from the proposer's suggested constants the fit lands on it."""
    from agent.problem import Problem

    N = np.logspace(6, 9, 40)
    frame = pd.DataFrame({"N": N, "loss": 1.8 + 300 * N ** -0.3 + 0.3 * np.exp(-40 * (np.log(N / 1e7) - 2.9) ** 2)})
    search = Search(Problem(("N",), ("loss",), axis=("N",), max_constants=6), frame, SearchConfig(budget=1))
    law = ("loss = E + A*(N/1e7)**(-alpha) + B*exp(-w*(log(N/1e7) - m)**2)",)
    init = {"E": 1.8, "A": 300 * 1e7 ** -0.3, "alpha": 0.3, "B": 0.3, "w": 40.0, "m": 2.9}
    suggested, plain = search._tell([Proposal(law, "llm", (), {"constants_init": init}),
                                     Proposal(law, "llm", (), {})])
    search.close()
    assert suggested.validation["r2"] > 0.999
    assert plain.validation["r2"] < 0.9


def test_a_run_says_what_a_budgeted_proposer_should_cost_before_its_first_call(power_law_problem, power_law_data):
    class Priced(Failing):
        def expected_usage(self, proposals):
            return {"expected_proposals": proposals, "expected_calls": -(-proposals // 3)}

    search = Search(power_law_problem, power_law_data, dataclasses.replace(SMALL, budget=108),
                    proposers=[(Priced(ProposerUnavailable("down")), 1.0), (OfflineProposer(), 1.0)])
    plan = [e for e in search.drain_events() if e["type"] == "llm_plan"]
    search.close()
    # 108 candidates, 48 of them the offline seed generation: half of the other 60 are its share
    assert plan == [{"type": "llm_plan", "proposer": "flaky", "expected_proposals": 30, "expected_calls": 10}]


class DryAfterSeeds(OfflineProposer):
    """An offline proposer with nothing new to say once the seed library is out."""

    def propose(self, context, n, rng):
        return super().propose(context, n, rng) if context.generation == 0 else []


class SlowPartner(Proposer):
    """A slow proposer (like an LLM behind a network) whose every reply takes ``delay`` seconds."""

    name = "partner"
    slow = True

    def __init__(self, delay):
        self.delay, self.calls = delay, 0

    def propose(self, context, n, rng):
        import time
        self.calls += 1
        time.sleep(self.delay)
        return [Proposal(lines=(f"loss = c + a*(N + {self.calls})**(-b)",), proposer=self.name)]


def test_when_the_offline_proposer_runs_dry_slow_replies_are_waited_for_within_the_run_allowance(
        power_law_problem, power_law_data):
    """Nothing new offline and a reply 20 s away: the run ends as it would without the slow proposer
    ("no new proposals"), having waited at most a tenth of its own working time, not for the reply."""
    config = SearchConfig(budget=400, seed=1, islands=2, children=4, work_budget=None, time_limit=None)
    search = Search(power_law_problem, power_law_data, config,
                    proposers=[(SlowPartner(delay=20.0), 0.5), (DryAfterSeeds(), 0.5)])
    try:
        search_only(search)
    finally:
        search.close()
    assert search.stop_reason == "no new proposals"
    working = search.elapsed - search.mix.waited_seconds
    assert search.mix.waited_seconds <= 0.1 * working + 0.5
    assert not [c for c in search.candidates if c.proposer == "partner"]


def test_without_a_bound_or_without_offline_proposals_slow_replies_are_waited_for_in_full(
        power_law_problem, power_law_data):
    config = SearchConfig(budget=30, seed=1, islands=2, children=4, work_budget=None, time_limit=None,
                          slow_proposer_wait=None)
    partner = SlowPartner(delay=0.05)
    search = Search(power_law_problem, power_law_data, config, proposers=[(partner, 1.0)])  # an LLM-only run
    try:
        search_only(search)
    finally:
        search.close()
    assert search.progress["candidates"] == 30
    assert [c for c in search.candidates if c.proposer == "partner"]
