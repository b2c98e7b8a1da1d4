"""The final choice: which searched laws are re-scored as finalists, which one is reported,
and how much the close finalists disagree beyond the data (form uncertainty).

A long search compares thousands of laws on a short validation tail, so the
best validation score is partly luck (the winner's curse), and the lucky laws
are the complex ones, whose extra freedom fits the tail's noise.  Three rules
work against it, as PySR's ``model_selection`` names its policy:

1. **The prior is always heard.**  Besides the best distinct laws, the best
   seed of each of the literature's forms (``library.PRIOR_SHAPES``) is a
   finalist, so a plain form is compared with careful fits before the choice.
2. **The prior first.**  Of the finalists within ``parsimony_margin`` decades of
   the best, with ``prefer_prior`` the best-scoring literature form is reported
   (a plain form this close to a lucky complex one is the better bet).  Without
   it, the simplest close law is (the one-standard-error rule of model
   selection).  Among literature forms the score decides, not the count of
   constants: on the development suite "fewest constants first" picked a
   2-constant power law that ignores an offset or a whole input (48 problems:
   the same 18 wins, but a median test NMSE 2.4x the oracle textbook form's
   against 1.6x for "best score first").  One exception, nesting: a form
   whose extra constant vanishes into another close literature form over
   the same inputs (a shift, a drift, a break: ``library.SPECIAL_CASES``)
   gives way to it, since the tail could not tell that constant from zero.
3. **The plain loss first.**  Of one form, a fit with the plain loss (log
   residuals for positive targets) is kept unless the robust fit wins by the margin.
4. **Units do not choose the law.**  A searched law whose family depends on
   the reference scale of an input (``agent.search.covariance``: a term with no
   coefficient of its own, ``log(N)**2`` alone, a sigmoid centred on the
   reference) is not reported while a finalist free of that is there: the
   reference is sld's choice, not the data's, and such a law saves a constant
   only by the coincidence of where it sits (``ReferenceRule(exclude=False)``
   ranks it ``penalty`` decades lower instead).  Literature forms are exempt
   (their drift terms are the literature's own choice of reference).  The
   finalist pool measures the literature forms against the best law the
   choice can report.
5. **A loss stays positive.**  A law that predicts a target positive on every
   row at or below zero at the horizon (1e3x, 1e6x along the axis:
   ``evaluate._leaves_sign``) is not reported while a finalist that keeps the
   sign is there.  Such a law is a log, or a rising power with a negative
   coefficient: what a fit makes of a bend it cannot follow.  On the
   development suite it was chosen once in 58 problems (seed 0): a broken
   power law reported as ``c0 - 5.7*N**0.047``, 446x the oracle's test error,
   while the finalist that writes the break was there.

Last, a law is reported as the literature writes it: ``exp(b*log N)`` fitted
alike as ``N**-a`` is reported as the power law (``library.WRITTEN_AS``); where no
close finalist writes it so, the final report rewrites the exponential into powers
with the same constants (``agent.search.writing``).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from agent.errors import FitError, LawError
from agent.expressions import parse_law
from agent.fitting import predict
from agent.problem import Problem, Table
from agent.search.library import is_prior_shape, plain_writings, special_case
from agent.search.probes import FACTORS
from agent.search.records import Candidate

SPREAD_FACTORS = (2.0, 4.0, 10.0)  # where the spread of the close finalists' predictions is reported
PRIOR_WITHIN = 0.5  # decades of screening score behind the best within which prior forms are finalists
SAME_FIT = 1e-4     # relative difference of fold errors below which two writings of one law fit alike


@dataclass(frozen=True)
class ReferenceRule:
    """Rule 4: ``dependent`` says whether a law's family depends on an input's reference scale
    (``covariance.reference_dependent_inputs``).  Such a searched law is reported only when every
    finalist is one (``exclude``), or else ranks ``penalty`` decades lower."""
    dependent: Callable[[Candidate], object]
    exclude: bool = True
    penalty: float = 0.25

    def tied(self, candidate: Candidate) -> bool:
        return not is_prior_shape(candidate.meta.get("shape")) and bool(self.dependent(candidate))


def finalist_pool(candidates: Sequence[Candidate], n_best: int, with_prior: bool,
                  prior_within: float = PRIOR_WITHIN,
                  reference: ReferenceRule | None = None) -> list[Candidate]:
    """The best ``n_best`` distinct laws by screening score, then the best seed of each prior form
    that screened within ``prior_within`` decades of the best (a form further behind cannot come
    close with a careful fit, and each finalist costs as much as dozens of screened laws).
    ``reference``: rule 4; where it excludes, the best is the best law the choice can report."""
    ranked = sorted((c for c in candidates if c.ok and not c.finalist), key=lambda c: (-c.score, c.id))
    # the best law the choice can report (checked lazily: each check parses the law and differentiates it)
    excludes = reference is not None and reference.exclude
    reportable = next((c for c in ranked if not excludes or not reference.tied(c)), None)
    pool, seen = [], set()
    for c in ranked:
        if len(pool) >= n_best:
            break
        if c.canonical not in seen:
            seen.add(c.canonical)
            pool.append(c)
    if with_prior:
        shapes = set()
        for c in ranked:
            label = c.meta.get("shape")
            if not is_prior_shape(label):
                continue
            # variants of one shape (level_times_bowl_0..5: which optima drift) are one family: on a
            # 2,700-row sweep twelve bowl variants as finalists took 20 minutes of careful fits
            family = re.sub(r"_\d+$", "", label.split("[", 1)[0])
            if family in shapes or c.canonical in seen or c.validation.get("implausibility", 0) > 0:
                continue
            if c.score < (reportable or ranked[0]).score - prior_within:
                break
            shapes.add(family)
            seen.add(c.canonical)
            pool.append(c)
    return pool


def is_prior(candidate: Candidate) -> bool:
    return is_prior_shape(candidate.meta.get("shape"))


def choose(candidates: Sequence[Candidate], *, margin: float, plain_loss: str, prefer_prior: bool = False,
           score_of: Callable[[Candidate], float] | None = None,
           error_of: Callable[[Candidate], float | None] | None = None,
           reference: ReferenceRule | None = None) -> tuple[Candidate | None, list[Candidate]]:
    """The law to report and the finalists within the margin of the best (the close ones).

    Finalists are compared among themselves only: their careful fits make
    scores that the screening scores cannot be compared with.  ``score_of``
    ranks them (default: the search's score).  ``error_of``: the standard error
    of a score; the margin is then at least the best finalist's (the
    one-standard-error rule).  ``reference``: rule 4.
    """
    ok = [c for c in candidates if c.ok]
    finalists = [c for c in ok if c.finalist] or ok
    if not finalists:
        return None, []
    for excluded in _exclusions(reference):
        finalists = [c for c in finalists if not excluded(c)] or finalists
    penalty = 0.0 if reference is None or reference.exclude else reference.penalty

    def rank_score(c: Candidate) -> float:
        value = c.score if score_of is None else score_of(c)
        # a score that is not a number (a validation fold whose targets are all equal) ranks last
        if math.isnan(value):
            return -math.inf
        if penalty and reference.tied(c):
            value -= penalty
        return value

    score = {c.id: rank_score(c) for c in finalists}
    best = max(finalists, key=lambda c: (score[c.id], -c.id))
    top = score[best.id]
    if error_of is not None:
        margin = max(margin, error_of(best) or 0.0)
    close = [c for c in finalists if score[c.id] >= top - margin] or [best]

    def order(c: Candidate):
        robust = c.fit.get("method", plain_loss) != plain_loss
        if prefer_prior:
            return (not is_prior(c), robust, -score[c.id], c.id)
        return (c.complexity, robust, -score[c.id], c.id)

    chosen = min(close, key=order)
    while prefer_prior and (nested := special_case(chosen.meta.get("shape"))) is not None:
        # a literature form whose extra constant the tail cannot justify gives way to the form it nests
        simpler = [c for c in close if c.meta.get("shape") == nested]
        if not simpler:
            break
        chosen = min(simpler, key=order)
    return _plain_writing(chosen, close, order), close


def leaves_sign(candidate: Candidate) -> bool:
    return bool(candidate.validation.get("leaves_sign"))


def _exclusions(reference: ReferenceRule | None) -> list[Callable[[Candidate], bool]]:
    """Rules 5 and 4, in that order: each drops the finalists it flags while any finalist is left
    (where every finalist is flagged, the rule cannot choose and the others decide)."""
    rules = [leaves_sign]
    if reference is not None and reference.exclude:
        rules.append(reference.tied)
    return rules


def _plain_writing(chosen: Candidate, close: Sequence[Candidate], order: Callable) -> Candidate:
    """The same law in the power law's writing (``c0 + c1*exp(b0*log(N))`` is ``c1 + c0*N**-a0``) when a
    close finalist writes it so and its fit reached the same errors on every fold."""
    labels = set(plain_writings(chosen.meta.get("shape")))
    errors = chosen.validation.get("fold_nmse")
    if not labels or not errors:
        return chosen

    def fits_alike(c: Candidate) -> bool:
        other = c.validation.get("fold_nmse") or ()
        return len(other) == len(errors) and bool(np.allclose(other, errors, rtol=SAME_FIT, atol=0.0))

    same = [c for c in close if c.meta.get("shape") in labels and fits_alike(c)]
    return min(same, key=order) if same else chosen


def form_spread(chosen: Candidate, close: Sequence[Candidate], problem: Problem,
                probes: Table | None) -> dict | None:
    """How far the close finalists' predictions spread around the chosen law's, beyond the data.

    For each factor (2x, 4x, 10x the largest axis value of each group), the
    median over probe points of (max - min) / |chosen| over the close
    finalists, each with its fold-0 constants.  A large spread says the
    validation tail cannot tell these laws apart and they disagree where the
    user will extrapolate: the form itself is uncertain.
    """
    if probes is None or len(probes) == 0 or len(close) < 2:
        return None
    preds = []
    for c in [chosen, *[c for c in close if c.id != chosen.id]]:
        try:
            law = parse_law(c.lines, problem.inputs, problem.targets)
            rows = np.flatnonzero(np.isin(probes.groups, list(c.constants)))
            p = np.full((len(probes), len(problem.targets)), np.nan)
            p[rows] = predict(law, probes.take(rows), c.constants, probes.groups[rows])
            preds.append(p)
        except (LawError, FitError):
            continue
    if len(preds) < 2:
        return None
    stack = np.stack(preds)
    with np.errstate(all="ignore"):
        rel = (np.nanmax(stack, axis=0) - np.nanmin(stack, axis=0)) / np.abs(stack[0])
    out = {"finalists": len(preds)}
    for f in SPREAD_FACTORS:
        rows = np.arange(FACTORS.index(f), len(probes), len(FACTORS))
        vals = rel[rows]
        vals = vals[np.isfinite(vals)]
        out[f"{f:g}x"] = float(np.median(vals)) if len(vals) else None
    return out

