"""The chosen law refitted on all training rows, and its one-time test report; any other law
(a human law, a posted one) is refitted and reported the same way by :func:`refit_law`."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np
import pandas as pd

from agent.expressions import Law, parse_law
from agent.fitting import FitOptions, fit_law, predict, resolve_loss
from agent.problem import Problem, Table, make_table
from agent.scoring import Scores, score
from agent.search.records import Candidate
from agent.search.units import Units, fitted_form
from agent.search.writing import literature_writing


@dataclass(frozen=True)
class FinalLaw:
    lines: tuple[str, ...]
    inputs: tuple[str, ...]
    targets: tuple[str, ...]
    constants: dict[str, dict[str, float]]
    validation: dict = field(default_factory=dict)  # the chosen candidate's (empty in a law written by hand)
    candidate_id: int | None = None
    n_constants: int = 0
    complexity: int = 0
    latex: str = ""
    train: dict = field(default_factory=dict)
    fit_loss: str = ""  # the residuals the constants were fitted on (robust_log, log, huber_log, lsq)
    selection: dict = field(default_factory=dict)  # the close finalists and their spread beyond the data
    # the other close finalists refitted on all training rows ({"law": lines, "constants": ...}): the laws
    # the validation tail could not tell from this one, kept so intervals can carry form uncertainty
    alternatives: list = field(default_factory=list)
    # the columns the law was chosen on extrapolating along (None: a law saved before it was recorded)
    axis: tuple[str, ...] | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["law"] = list(d.pop("lines"))
        d["inputs"], d["targets"] = list(self.inputs), list(self.targets)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "FinalLaw":
        d = dict(d)
        lines = tuple(d.pop("law", None) or d.pop("lines"))
        known = {f.name for f in fields(cls)} - {"lines", "inputs", "targets"}
        rest = {k: v for k, v in d.items() if k in known}  # reports saved beside the law (test, ...) are not part of it
        return cls(lines=lines, inputs=tuple(d["inputs"]), targets=tuple(d["targets"]), **rest)

    def law(self):
        return parse_law(self.lines, self.inputs, self.targets)

    def predict(self, data: pd.DataFrame | Table, group: str | None = None) -> np.ndarray:
        """Predictions for rows in user units: a data frame (its ``group`` column, if any, names each
        row's constants), or a ``Table`` whose groups must have constants."""
        if isinstance(data, Table):
            return predict(self.law(), data, self.constants, data.groups)
        problem = Problem(self.inputs, self.targets, group=group)
        table = make_table(data, problem, require_targets=False)
        if group is None and len(self.constants) == 1:
            groups = np.full(len(table), next(iter(self.constants)), dtype=object)
        else:
            groups = table.groups
        return predict(self.law(), table, self.constants, groups)


def refit_final(best: Candidate, problem: Problem, table: Table, options: FitOptions, seed: int,
                units: Units | None = None) -> FinalLaw:
    """``units``: the search's normalisation; the law is refitted on the rows normalised the same
    way, as it was searched, and its constants are reported in user units."""
    law = parse_law(best.lines, problem.inputs, problem.targets)
    form = fitted_form(units, law)
    rows = units.normalise_table(table) if units is not None else table
    fitted = fit_law(form.law, rows, seed=seed, options=options,
                     warm=form.to_fitted(best.constants))  # the search's basin
    train = score(rows.y, predict(form.law, rows, fitted.constants, rows.groups))
    constants, complexity = form.to_user(fitted.constants), form.law.complexity
    if (written := literature_writing(law, constants, table, units)) is not None:
        law, complexity = written
    return FinalLaw(lines=law.lines, inputs=problem.inputs, targets=problem.targets,
                    constants=constants, validation=dict(best.validation),
                    candidate_id=best.id, n_constants=law.n_constants, complexity=complexity,
                    latex=law.latex(), train=train.to_dict(), fit_loss=resolve_loss(options.loss, table.y),
                    axis=tuple(problem.axis))


def report_on_test(final: FinalLaw, problem: Problem, test_df: pd.DataFrame) -> dict:
    """Score on the test split: call once, at the end, for reporting."""
    table = make_table(test_df, problem)
    pred = predict(final.law(), table, final.constants, table.groups)
    return score(table.y, pred).to_dict()


@dataclass(frozen=True)
class Refit:
    law: Law
    constants: dict[str, dict[str, float]]
    test: Scores | None = None


def refit_law(law: Law, train: Table, test: Table | None = None, *, seed: int = 0,
              options: FitOptions | None = None) -> Refit:
    """A law compared with the discovered one: its form's constants fitted on all training rows
    by the same backend and seed, then (with test rows) scored once on them."""
    fitted = fit_law(law, train, seed=seed, options=options or FitOptions())
    scores = None if test is None else score(test.y, predict(law, test, fitted.constants, test.groups))
    return Refit(law, fitted.constants, scores)
