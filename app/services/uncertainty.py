"""A run's uncertainty, computed once by the worker when the run ends and stored with its final law.

The delta method (``agent.uncertainty.laplace``) gives replicates of the constants from the fit's
linearised covariance on the training rows.  Where the run names a run column (rows that are
checkpoints of a few training runs) the bootstrap over runs does instead: there a new run fell inside
the delta method's 90 % prediction interval 76 % of the time and inside the bootstrap's 84 %
(BENCHMARKS.md), and the worker, not a request, pays for the refits.  The worker stores them with the final law, so that
reads never recompute: ``/runs/{id}/best`` reports intervals on every constant (exponents
included), ``POST /predict`` with ``interval`` draws its bands from them, and the dashboard shades
the law's curve.  What is stored is bounded: at most ``MAX_STORED_VALUES`` constants over all
replicates (fewer replicates when a run has many groups) and ``MAX_RESIDUALS`` residuals.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from agent.errors import DataError, FitError, LawError
from agent.expressions import parse_law
from agent.problem import Problem, make_table
from agent.uncertainty import Bootstrap, Member, bootstrap, constant_intervals, laplace

LEVEL = 0.9
DRAWS = 200
MIN_DRAWS = 20
MAX_STORED_VALUES = 60_000
MAX_RESIDUALS = 2_000


def uncertainty_report(final: Mapping[str, Any], problem: Problem, train: pd.DataFrame, seed: int) -> dict:
    """``{"uncertainty": ...}`` to store beside the final law, or ``{"uncertainty_error": why}``."""
    constants = final["constants"]
    size = max(1, sum(len(v) for v in constants.values()))
    draws = int(np.clip(MAX_STORED_VALUES // size, MIN_DRAWS, DRAWS))
    method, make = ("bootstrap", bootstrap) if problem.run else ("delta", laplace)
    try:
        law = parse_law(final["law"], problem.inputs, problem.targets)
        boot = make(law, make_table(train, problem), constants, n=draws, seed=seed,
                    loss=final.get("fit_loss") or "auto")
    except (FitError, DataError, LawError) as exc:
        return {"uncertainty_error": str(exc)}
    rng = np.random.default_rng(seed)
    residuals = tuple(tuple(float(v) for v in (r if len(r) <= MAX_RESIDUALS else
                                              rng.choice(np.asarray(r), MAX_RESIDUALS, replace=False)))
                      for r in boot.residuals)
    kept = replace(boot, residuals=residuals)
    return {"uncertainty": {"method": method, "level": LEVEL, "draws": len(kept.replicates),
                            "constants": constant_intervals(kept, LEVEL), "replicates": kept.to_dict()}}


def stored_replicates(final: Mapping[str, Any] | None) -> Bootstrap | None:
    """The replicates a finished run stored, if any."""
    stored = (final or {}).get("uncertainty")
    return Bootstrap.from_dict(stored["replicates"]) if stored else None


def stored_forms(final: Mapping[str, Any] | None, inputs, targets) -> list[Member]:
    """The close finalists a run stored beside its law (form uncertainty); none for older runs."""
    out = []
    for alt in (final or {}).get("alternatives") or ():
        try:
            out.append(Member(parse_law(alt["law"], inputs, targets), alt["constants"]))
        except (LawError, KeyError, TypeError):
            continue  # a stored form this version cannot read adds no information
    return out


def constant_report(final: Mapping[str, Any] | None) -> dict | None:
    """What ``/runs/{id}/best`` shows: the level, the method and [lo, hi] per group and constant."""
    stored = (final or {}).get("uncertainty")
    if not stored:
        return None
    return {"level": stored["level"], "method": stored["method"], "draws": stored["draws"],
            "kind": "confidence", "constants": stored["constants"]}
