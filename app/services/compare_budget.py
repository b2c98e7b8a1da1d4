"""A comparison computed in the API is bounded in total before it starts.

Every law is fitted once per validation fold and once on all training rows,
separately for every group, so the work grows with laws x (folds + 1) x groups.
A fit's time limit holds per group, so it cannot bound a comparison by itself:
a run with 10,000 groups took minutes.  Here the rows and groups are capped
before any fit starts, and the fits share one time budget, each group's fit
getting its slice.  (A fit stops at its deadline after the start it is in, so
a request overruns the budget by at most one start per fit.)
"""
from __future__ import annotations

from typing import Any, Mapping

from agent.errors import DataError, LawError
from agent.expressions import parse_law
from agent.fitting import FitOptions

DEFAULT_FOLDS = 3  # the search's default, for runs whose stored spec does not say


def comparison_options(inputs: Mapping[str, Any], settings, *, n_laws: int = 2) -> FitOptions:
    """FitOptions whose per-group time limits add up to ``settings.compare_time_limit``;
    DataError when the run is too large to compare within a request."""
    problem, train, test = inputs["problem"], inputs["train"], inputs["test"]
    n_rows = len(train) + len(test)
    if n_rows > settings.compare_max_rows:
        raise DataError(f"the run has {n_rows} rows; a comparison in the API is limited to "
                        f"{settings.compare_max_rows} (SLD_COMPARE_MAX_ROWS)")
    n_groups = int(train[problem.group].nunique()) if problem.group else 1
    if n_groups > settings.compare_max_groups:
        raise DataError(f"the run has {n_groups} groups; a comparison in the API fits every law for every group "
                        f"several times, so it is limited to {settings.compare_max_groups} groups "
                        "(SLD_COMPARE_MAX_GROUPS)")
    n_fits = n_laws * (int(inputs.get("n_folds") or DEFAULT_FOLDS) + 1) * max(n_groups, 1)
    # the run's own loss: a posted law is fitted as the discovered one was
    return FitOptions(loss=inputs.get("loss") or "auto", time_limit=settings.compare_time_limit / n_fits)


def check_posted_law(law: Mapping[str, Any], problem) -> None:
    """A posted law is parsed before any fit starts: bad text, a law over the run's constant cap
    (``max_constants``) or one too large is refused at once, not after the discovered law's fits."""
    try:
        parse_law(law["lines"], problem.inputs, problem.targets, max_constants=law.get("max_constants"))
    except LawError as exc:
        raise LawError(f"law {law['name']!r}: {exc}") from None
