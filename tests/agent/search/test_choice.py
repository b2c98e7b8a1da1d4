"""The final choice: finalists include the literature's forms, and a close literature form is reported."""
from dataclasses import replace

import numpy as np

from agent.problem import Problem, Table
from agent.search.choice import ReferenceRule, choose, finalist_pool, form_spread
from agent.search.library import is_prior_shape
from agent.search.probes import FACTORS
from agent.search.records import Candidate


def cand(id, score, complexity=10, n_constants=3, shape=None, finalist=True, method="log", canonical=None,
         lines=("loss = c0 + c1*N**(-a0)",), constants=None):
    return Candidate(id=id, generation=0, lines=lines, proposer="finalist:log" if finalist else "offline",
                     kind="finalist" if finalist else "searched", status="ok", canonical=canonical or f"law{id}",
                     complexity=complexity, n_constants=n_constants, fit={"method": method}, score=score,
                     meta={"shape": shape} if shape else {}, constants=constants or {})


def test_the_simplest_finalist_within_the_margin_is_reported_not_the_best_scoring_one():
    lucky = cand(0, score=2.00, complexity=30)
    plain = cand(1, score=1.96, complexity=11)
    far_behind = cand(2, score=1.80, complexity=5)
    chosen, close = choose([lucky, plain, far_behind], margin=0.05, plain_loss="log")
    assert chosen is plain and set(c.id for c in close) == {0, 1}
    # with no margin, validation alone decides
    assert choose([lucky, plain, far_behind], margin=0.0, plain_loss="log")[0] is lucky


def test_a_finalist_scored_nan_ranks_last_and_the_choice_still_answers():
    broken, fine = cand(0, score=float("nan")), cand(1, score=0.5, complexity=30)
    assert choose([broken, fine], margin=0.2, plain_loss="log")[0] is fine
    # every score NaN (once: a target of 1e308 overflowed every variance) still reports a law, never raises
    chosen, close = choose([broken, cand(2, score=float("nan"))], margin=0.2, plain_loss="log")
    assert chosen is not None and chosen in close


def test_finalists_are_compared_among_themselves_not_with_screening_scores():
    screened = cand(0, score=5.0, finalist=False)  # a cheap fit's score is on another footing
    finalist = cand(1, score=1.0)
    assert choose([screened, finalist], margin=0.05, plain_loss="log")[0] is finalist


def test_of_one_form_the_plain_loss_is_kept_unless_the_robust_fit_wins_by_the_margin():
    plain = cand(0, score=1.00, canonical="same")
    robust = cand(1, score=1.03, canonical="same", method="huber_log")
    assert choose([plain, robust], margin=0.05, plain_loss="log")[0] is plain
    clearly = cand(2, score=1.20, canonical="same", method="huber_log")
    assert choose([plain, clearly], margin=0.05, plain_loss="log")[0] is clearly


def test_preferring_the_prior_puts_literature_forms_first_among_close_finalists():
    odd = cand(0, score=2.0, complexity=8, n_constants=3)
    chinchilla = cand(1, score=1.99, complexity=15, n_constants=5, shape="additive_power[N,D]")
    assert choose([odd, chinchilla], margin=0.05, plain_loss="log")[0] is odd
    assert choose([odd, chinchilla], margin=0.05, plain_loss="log", prefer_prior=True)[0] is chinchilla


def test_the_margin_is_at_least_the_standard_error_of_the_best_finalists_score():
    """The one-standard-error rule: a tail too noisy to rank two laws 0.3 decades apart does not."""
    lucky = cand(0, score=2.0, complexity=30)
    chinchilla = cand(1, score=1.7, complexity=15, shape="additive_power[N,D]")
    noisy = {0: 0.4, 1: 0.1}
    assert choose([lucky, chinchilla], margin=0.2, plain_loss="log", prefer_prior=True)[0] is lucky
    assert choose([lucky, chinchilla], margin=0.2, plain_loss="log", prefer_prior=True,
                  error_of=lambda c: noisy[c.id])[0] is chinchilla
    steady = {0: 0.05, 1: 0.5}  # the best finalist's error counts, not the others'
    assert choose([lucky, chinchilla], margin=0.2, plain_loss="log", prefer_prior=True,
                  error_of=lambda c: steady[c.id])[0] is lucky


def test_among_close_literature_forms_the_score_decides_not_the_count_of_constants():
    """Fewest constants first reported a bare power law where the data had an offset (suite, 48 problems)."""
    bare = cand(0, score=1.90, complexity=7, n_constants=2, shape="pure_power[N]")
    offset = cand(1, score=2.00, complexity=9, n_constants=3, shape="additive_power[N]")
    odd = cand(2, score=2.05, complexity=6, n_constants=2)
    assert choose([bare, offset, odd], margin=0.2, plain_loss="log", prefer_prior=True)[0] is offset


def test_a_literature_form_gives_way_to_the_close_form_it_nests_over_the_same_inputs():
    """A shift, a drift or a break the tail cannot tell from zero is not reported (power_offset_02 of the
    suite: (C + k)^-a scored 0.18 decades above the plain offset power law and extrapolated 1.3x worse)."""
    shifted = cand(0, score=0.84, n_constants=4, shape="shifted_power[compute]")
    plain = cand(1, score=0.66, n_constants=3, shape="additive_power[compute]")
    other_inputs = cand(2, score=0.80, n_constants=5, shape="additive_power[compute,tokens]")
    assert choose([shifted, plain], margin=0.2, plain_loss="log", prefer_prior=True)[0] is plain
    assert choose([shifted, other_inputs], margin=0.2, plain_loss="log", prefer_prior=True)[0] is shifted
    assert choose([shifted, plain], margin=0.1, plain_loss="log", prefer_prior=True)[0] is shifted  # not close
    # down the chain: an N-dependent data exponent nests the additive law, which nests nothing further
    drifting = cand(3, score=1.30, n_constants=6, shape="drifting_exponent[N,D]")
    additive = cand(4, score=1.20, n_constants=5, shape="additive_power[N,D]")
    pure = cand(5, score=1.25, n_constants=3, shape="pure_power[N,D]")
    assert choose([drifting, additive, pure], margin=0.2, plain_loss="log", prefer_prior=True)[0] is additive


def test_a_searched_law_whose_family_depends_on_an_inputs_reference_ranks_lower():
    """The allocation bench's grid 14: ``c0/N**a0 + c2 + (tokens/1e10)**(-a2)``, the data term with no
    coefficient of its own, scored 0.23 decades above the additive law and put N* 30 % off (1.21x)."""
    coincidence = cand(0, score=1.56, complexity=20, lines=("loss = c0/N**a0 + c2 + (D/1e10)**(-a2)",))
    additive = cand(1, score=1.33, complexity=24, shape="additive_power[N,D]")
    dependent = {0: True, 1: False}.__getitem__
    def ask(penalty):
        rule = ReferenceRule(lambda c: dependent(c.id), exclude=False, penalty=penalty)
        return choose([coincidence, additive], margin=0.2, plain_loss="log", prefer_prior=True, reference=rule)[0]
    assert ask(0.25) is additive
    assert ask(0.0) is coincidence  # the rule removed
    # a literature form is exempt (its drift terms fix a reference by the literature's own choice)
    drift = cand(2, score=1.56, shape="drifting_exponent[N,D]")
    for exclude in (False, True):
        assert choose([drift, additive], margin=0.2, plain_loss="log", prefer_prior=True,
                      reference=ReferenceRule(lambda c: True, exclude=exclude))[0] is drift


def test_the_expanded_bowls_drift_is_a_searched_law_that_rule_4_judges():
    """Suite problem hyper_bowl_02 (seed 0): the expanded bowl with its optimum drifting,
    ``q0*log(B)**2 + b0*log(B) + g0*log(B)*log(D)``, scored 1.393 and the truth's centred bowl times the
    level 1.385; the expanded one was reported as a literature form and extrapolated 8.6x worse on test.
    Its drift is sld's writing, not the literature's, and ties it to B's reference (``test_covariance``):
    it is a searched law, neither preferred among the close finalists nor exempt from rule 4."""
    assert not is_prior_shape("hybrid_power_bowl_drift[D,B]") and not is_prior_shape("hybrid_power_bowl_interactions_drift[D,B]")
    assert is_prior_shape("hybrid_power_bowl[D,B]") and is_prior_shape("level_plus_bowl_0[D,B]")
    expanded = cand(0, score=1.393, complexity=30, shape="hybrid_power_bowl_drift[D,B]")
    centred = cand(1, score=1.385, complexity=28, shape="level_times_bowl_0[D,B]")
    assert choose([expanded, centred], margin=0.2, plain_loss="log", prefer_prior=True)[0] is centred
    searched = cand(2, score=1.385, complexity=28)  # another searched law free of any reference
    rule = ReferenceRule(lambda c: c.id == 0)
    assert choose([expanded, searched], margin=0.2, plain_loss="log", prefer_prior=True, reference=rule)[0] is searched
    # the bowl without drift stays exempt like every other literature form
    plain = cand(3, score=1.393, complexity=26, shape="hybrid_power_bowl[D,B]")
    assert choose([plain, centred], margin=0.2, plain_loss="log", prefer_prior=True,
                  reference=ReferenceRule(lambda c: True))[0] is plain


def test_a_law_tied_to_the_reference_is_reported_only_when_all_finalists_are():
    """The README's own sweep, ``E + A*N**-0.3`` in two groups: ``c0 + c1*tanh(log(N/3.2e7)) + c2*N**-a2``
    scored 0.55 decades above the power law on a 4-row tail.  Its sigmoid is centred on sld's reference."""
    tanh_step = cand(0, score=2.46, complexity=18, lines=("loss = c0 + c1*tanh(log(N/3.2e7)) + c2*N**(-a2)",))
    power = cand(1, score=1.90, complexity=11, shape="additive_power[N]")
    other = cand(2, score=1.70, complexity=14, lines=("loss = c0 + c1*exp(-k*N**a0)",))
    dependent = {0: True, 1: False, 2: False}.__getitem__
    def ask(finalists, exclude=True):
        return choose(finalists, margin=0.2, plain_loss="log", prefer_prior=True,
                      reference=ReferenceRule(lambda c: dependent(c.id), exclude=exclude, penalty=0.25))
    chosen, close = ask([tanh_step, power, other])
    assert chosen is power and [c.id for c in close] == [1, 2]  # the excluded law is not a close one
    assert ask([tanh_step, power, other], exclude=False)[0] is tanh_step  # a mere penalty is outscored
    assert ask([tanh_step, other])[0] is other                          # any law free of it is reported
    assert ask([tanh_step])[0] is tanh_step                             # ... and one is reported anyway


def test_a_law_that_takes_a_loss_below_zero_at_the_horizon_is_reported_only_when_all_finalists_do():
    """Rule 5.  The development suite's broken power law came back as ``c0 + c1*(N + k0)**(-a0)`` with
    c1 = -5.7 and a0 = -0.047 (a log in disguise, 446x the oracle's test error) while the finalist that
    writes the break scored 0.3 decades lower.  Prior form or not, the one that stays positive is reported."""
    def finalist(id, score, leaves_sign, shape=None):
        c = cand(id, score=score, shape=shape)
        return replace(c, validation={"leaves_sign": leaves_sign})
    falls_through = finalist(0, score=1.215, leaves_sign=True, shape="shifted_power[N]")
    bends = finalist(1, score=0.900, leaves_sign=False)
    chosen, close = choose([falls_through, bends], margin=0.2, plain_loss="log", prefer_prior=True)
    assert chosen is bends and [c.id for c in close] == [1]
    # records from before the check carry no flag: nothing is excluded
    assert choose([cand(2, score=1.2, shape="shifted_power[N]"), cand(3, score=0.9)], margin=0.2,
                  plain_loss="log", prefer_prior=True)[0].id == 2
    assert choose([falls_through], margin=0.2, plain_loss="log")[0] is falls_through  # one is reported anyway


def test_a_loss_that_stays_positive_outranks_a_law_free_of_the_reference():
    """Rules 5 and 4 together, in that order: a law that takes the loss below zero is dropped first, and
    where only laws tied to the reference are left, rule 4 cannot choose among them and one is reported."""
    tied = replace(cand(0, score=1.0), validation={"leaves_sign": False})
    free_but_negative = replace(cand(1, score=1.1), validation={"leaves_sign": True})
    reference = ReferenceRule(lambda c: c.id == 0)
    assert choose([tied, free_but_negative], margin=0.2, plain_loss="log", reference=reference)[0] is tied
    free = replace(cand(2, score=0.9), validation={"leaves_sign": False})
    assert choose([tied, free_but_negative, free], margin=0.2, plain_loss="log", reference=reference)[0] is free


def test_the_same_law_is_reported_in_the_power_laws_writing_not_through_exp_and_log():
    """The README's own sweep: ``c0 + c1*exp(b0*log(N/3.2e7))`` and ``c1 + c0*(N/3.2e7)**(-a0)`` fitted to
    the same fold errors and tied on score; the tie went to the first written, the exp form."""
    def fitted(id, shape, lines, folds, score=1.902):
        c = cand(id, score=score, complexity=11, shape=shape, lines=lines)
        return Candidate(**{**c.__dict__, "validation": {"fold_nmse": folds}})
    folds = [0.01417, 0.00812, 0.00316]
    exp_form = fitted(0, "offset_exp_linear[N]", ("loss = c0 + c1*exp(b0*log(N/3.2e7))",), folds, 1.9021)
    power = fitted(1, "additive_power[N]", ("loss = c1 + c0*(N/3.2e7)**(-a0)",), [f * (1 + 1e-6) for f in folds])
    assert choose([exp_form, power], margin=0.2, plain_loss="log", prefer_prior=True)[0] is power
    # in two inputs the exp form is the multiplicative law
    product = fitted(2, "offset_exp_linear[N,D]", ("loss = c0 + c1*exp(b0*log(N) + b1*log(D))",), folds, 1.95)
    multiplicative = fitted(3, "multiplicative_power[N,D]", ("loss = c0 + c1*N**(-a0)*D**(-a1)",), folds)
    assert choose([product, multiplicative], margin=0.2, plain_loss="log", prefer_prior=True)[0] is multiplicative
    # a fit that reached other errors is another law, even when the writing says otherwise
    elsewhere = fitted(4, "additive_power[N]", ("loss = c1 + c0*(N/3.2e7)**(-a0)",), [0.02, 0.008, 0.003], 1.9)
    assert choose([exp_form, elsewhere], margin=0.2, plain_loss="log", prefer_prior=True)[0] is exp_form
    # so is one over other inputs
    other_inputs = fitted(5, "multiplicative_power[D]", ("loss = c1 + c0*(D/1e9)**(-a0)",), folds)
    assert choose([exp_form, other_inputs], margin=0.2, plain_loss="log", prefer_prior=True)[0] is exp_form


def test_the_literature_forms_join_the_finalists_behind_the_best_law_that_can_be_reported():
    """Where the best screened laws are all tied to a reference, the prior forms are measured against the
    best of the others, or the choice that excludes those laws would have nothing to report."""
    tied = [cand(i, score=3.0 - 0.1 * i, finalist=False) for i in range(3)]
    power = cand(10, score=2.2, finalist=False, shape="additive_power[N]")  # 0.8 behind the best
    assert [c.id for c in finalist_pool(tied + [power], n_best=3, with_prior=True)] == [0, 1, 2]
    pool = finalist_pool(tied + [power], n_best=3, with_prior=True, reference=ReferenceRule(lambda c: c.id < 10))
    assert [c.id for c in pool] == [0, 1, 2, 10]


def test_the_best_seed_of_each_literature_form_joins_the_best_distinct_laws_as_finalists():
    searched = [cand(i, score=3.0 - 0.1 * i, finalist=False) for i in range(5)]
    chinchilla = [cand(10, score=2.65, finalist=False, shape="additive_power[N,D]"),
                  cand(11, score=2.55, finalist=False, shape="additive_power[N]")]  # same family: one is enough
    oddity = cand(12, score=2.62, finalist=False, shape="tanh_step[N]")  # a seed, but not a literature form
    hopeless = cand(13, score=1.0, finalist=False, shape="broken_power[N]")  # 2 decades behind the best
    pool = finalist_pool(searched + chinchilla + [oddity, hopeless], n_best=3, with_prior=True)
    assert [c.id for c in pool] == [0, 1, 2, 10]
    assert [c.id for c in finalist_pool(searched + chinchilla, n_best=3, with_prior=False)] == [0, 1, 2]
    # the variants of one shape count as one family
    bowls = [cand(20, score=2.7, finalist=False, shape="level_times_bowl_0[N,lr]"),
             cand(21, score=2.69, finalist=False, shape="level_times_bowl_3[N,lr]")]
    assert [c.id for c in finalist_pool(searched + bowls, n_best=3, with_prior=True)] == [0, 1, 2, 20]


def test_the_spread_of_the_close_finalists_is_measured_beyond_the_data():
    n_points = len(FACTORS)
    N = 1e9 * np.array(FACTORS)
    probes = Table({"N": N}, np.full((n_points, 1), np.nan), np.array(["g"] * n_points, dtype=object))
    problem = Problem(("N",), ("loss",), axis=("N",))
    a = cand(0, 1.0, lines=("loss = c + k*N",), constants={"g": {"c": 2.0, "k": 0.0}})
    b = cand(1, 1.0, lines=("loss = c + k*N",), constants={"g": {"c": 2.2, "k": 0.0}})
    spread = form_spread(a, [a, b], problem, probes)
    assert spread["finalists"] == 2 and abs(spread["2x"] - 0.1) < 1e-12
    assert form_spread(a, [a], problem, probes) is None  # a lone finalist has no spread to report


def test_the_final_choice_leaves_the_folds_disagreement_out_of_the_finalists_scores():
    """Fold fits of a true form with more constants wobble beyond the data; careful finalists are
    ranked on their validation error alone (Selection.final_disagreement_weight)."""
    from agent.search.evaluate import Selection, rescored

    sel = Selection()
    steady = cand(0, score=0.0, n_constants=3, complexity=10)
    wobbly = cand(1, score=0.0, n_constants=5, complexity=20)
    parts = {0: {"fold_nmse": [0.01], "disagreement": 0.0, "folds_ordered": True},
             1: {"fold_nmse": [0.001], "disagreement": 0.05, "folds_ordered": True}}
    steady = Candidate(**{**steady.__dict__, "validation": parts[0]})
    wobbly = Candidate(**{**wobbly.__dict__, "validation": parts[1]})

    def with_weight(w):
        return lambda c: rescored(c.validation, c.complexity, sel, w)

    assert choose([steady, wobbly], margin=0.2, plain_loss="log", score_of=with_weight(1.0))[0] is steady
    assert choose([steady, wobbly], margin=0.2, plain_loss="log", score_of=with_weight(sel.final_disagreement_weight))[0] is wobbly
