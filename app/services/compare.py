"""Two laws, one protocol: the discovered law against a human (or posted) law.

Both laws are fitted and scored exactly alike: on every validation fold of the
search (fit on the fold's fit rows, score its validation rows, overall and per
group), then refitted on all training rows and scored on the held-out test
rows when the run has them.  Fitting is CPU work: workers run it when a run
ends; the API runs it only for a posted law, in a bounded thread pool.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from agent.errors import FitError, LawError
from agent.expressions import parse_law
from agent.fitting import FitOptions, fit_law, predict
from agent.problem import Problem, Table, axis_values, make_table
from agent.scoring import score
from agent.search import SearchConfig, refit_law
from agent.splits import make_folds
from app.services.non_finite import explain_non_finite

N_FOLDS = SearchConfig().n_folds  # a run's comparison uses the run's own (see comparison_inputs)


def compare_laws(problem: Problem, train_df: pd.DataFrame, test_df: pd.DataFrame,
                 laws: Sequence[Mapping[str, Any]], *, seed: int = 0,
                 options: FitOptions = FitOptions(), n_folds: int = N_FOLDS) -> dict[str, Any]:
    """``laws``: dicts with ``name``, ``lines`` and optionally published ``constants``.

    Raises LawError/FitError naming the law that cannot be fitted.
    """
    table = make_table(train_df, problem)
    folds = make_folds(axis_values(train_df, problem), table.groups, table.X, list(problem.inputs),
                       seed=seed, n_folds=n_folds)
    test = make_table(test_df, problem) if len(test_df) else None
    results = [_score_law(spec, problem, table, folds, test, seed, options) for spec in laws]
    ranked = [r for r in results if r["validation"].get("overall", {}).get("r2") is not None]
    best = max(ranked, key=lambda r: r["validation"]["overall"]["r2"])["name"] if ranked else None
    protocol = {
        "fit": "constants fitted per group with agent.fitting.fit_law "
               f"(loss {options.loss}, time limit {options.time_limit:g} s per fit)",
        "validation": "the search's folds; 'validation' is the first (nearest extrapolation tail)",
        "test": "refit on all training rows, scored once on the held-out rows" if test else "no test rows",
        "training_rows": len(table), "validation_rows": int(len(folds[0].validate)) if folds else 0,
        "test_rows": 0 if test is None else len(test), "folds": len(folds), "seed": seed,
    }
    return {"protocol": protocol, "laws": results, "best": best}


def _score_law(spec, problem: Problem, table: Table, folds, test: Table | None, seed: int,
               options: FitOptions) -> dict[str, Any]:
    name = spec["name"]
    try:
        law = parse_law(spec["lines"], problem.inputs, problem.targets, max_constants=spec.get("max_constants"))
    except LawError as exc:
        raise LawError(f"law {name!r}: {exc}") from None
    fold_scores = []
    try:
        for k, fold in enumerate(folds):
            fitted = fit_law(law, table.take(fold.fit), seed=seed + 7919 * k, options=options)
            fold_scores.append(_scores(law, table.take(fold.validate), fitted.constants))
        constants = refit_law(law, table, seed=seed, options=options).constants
    except FitError as exc:
        raise FitError(f"law {name!r} cannot be fitted: {exc}{_hint(law, table)}") from None
    _check_finite(name, law, table, constants)
    out = {"name": name, "lines": list(law.lines), "n_constants": law.n_constants,
           "validation": fold_scores[0] if fold_scores else {}, "folds": fold_scores,
           "test": _scores(law, test, constants) if test is not None else None, "constants": constants}
    published = spec.get("constants")
    if published and test is not None:
        out["published_test"] = _scores(law, test, published)
    return out


def _check_finite(name: str, law, table: Table, constants) -> None:
    """A law whose best fit still breaks on the data (a log of a negative value...) is refused by name."""
    pred = predict(law, table, constants, table.groups)
    bad = np.flatnonzero(~np.all(np.isfinite(pred), axis=1))
    if len(bad):
        i = int(bad[0])
        raise LawError(f"law {name!r} is not finite on {len(bad)} training row(s), e.g. row {i + 1}: "
                       f"{explain_non_finite(law, table, constants, table.groups, i)}")


def _hint(law, table: Table) -> str:
    """Why a fit may have found nothing finite: the law evaluated with every constant at 1."""
    ones = {g: {c: 1.0 for c in law.constants} for g in table.group_names}
    pred = predict(law, table, ones, table.groups)
    bad = np.flatnonzero(~np.all(np.isfinite(pred), axis=1))
    if not len(bad):
        return ""
    return f" (with every constant at 1: {explain_non_finite(law, table, ones, table.groups, int(bad[0]))})"


def _scores(law, table: Table, constants) -> dict[str, Any]:
    known = np.isin(table.groups, list(constants))
    if not known.all():
        missing = sorted(set(table.groups[~known].tolist()))
        table = table.take(np.flatnonzero(known))
        if len(table) == 0:
            return {"overall": None, "groups": {}, "skipped_groups": missing}
    else:
        missing = []
    pred = predict(law, table, constants, table.groups)
    per_group = {}
    for g in table.group_names:
        rows = table.groups == g
        per_group[g] = _finite(score(table.y[rows], pred[rows]).to_dict())
    out = {"overall": _finite(score(table.y, pred).to_dict()), "groups": per_group}
    if missing:
        out["skipped_groups"] = missing  # groups without constants (not in the training rows)
    return out


def _finite(d: dict) -> dict:
    return {k: (float(v) if isinstance(v, float) and np.isfinite(v) else (None if isinstance(v, float) else v))
            for k, v in d.items()}


# ---------------------------------------------------------------- a run's comparison

def comparison_inputs(storage, run_id: int) -> dict[str, Any]:
    """What comparing with a run needs: its problem, training and test rows, and its law."""
    from agent.storage import NotFoundError
    from app.schemas.runspec import RunSpec

    run = storage.get_run(run_id)
    if run.final and run.final.get("law"):
        lines = list(run.final["law"])
    else:
        best = storage.best_candidate(run_id)
        if best is None:
            raise NotFoundError(f"run {run_id} has no fitted law yet (state {run.state.value})")
        lines = list(best.lines)
    plan = RunSpec.model_validate(run.spec).plan()
    train, test = plan.split(storage.load_rows(run.dataset_id))
    return {"problem": plan.problem, "train": train, "test": test, "lines": lines,
            "seed": plan.config.seed, "n_folds": plan.config.n_folds, "loss": plan.config.final_fit.loss}


def run_comparison(inputs: Mapping[str, Any], other: Mapping[str, Any],
                   options: FitOptions = FitOptions()) -> dict[str, Any]:
    laws = [{"name": "discovered", "lines": inputs["lines"]}, dict(other)]
    return compare_laws(inputs["problem"], inputs["train"], inputs["test"], laws, seed=inputs["seed"],
                        options=options, n_folds=inputs["n_folds"])
