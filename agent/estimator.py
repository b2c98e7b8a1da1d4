"""A scikit-learn style face over the search (PySR's ``PySRRegressor`` is the model).

    model = LawSearch(axis=["N"], max_constants=4, budget=200, seed=0)
    model.fit(df[["N", "D"]], df["loss"], groups=df["model"])
    model.equations_          # every law found: complexity, validation loss, score
    model.predict(new_points, groups=...)
    model.sympy(), model.latex()

As scikit-learn asks of an estimator, the constructor only stores its
parameters and ``fit`` does all the work: a model can be fitted again, cloned
(``sklearn.base.clone``) and tuned through ``get_params``/``set_params``.  The
search is the one the CLI and the service run (``agent.plan``), with their defaults.
"""
from __future__ import annotations

import copy
import inspect
from typing import Sequence

import numpy as np
import pandas as pd
import sympy as sp

from agent.defaults import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEFAULT_WORK
from agent.errors import DataError
from agent.plan import DiscoveryRequest, plan_discovery
from agent.problem import Problem, Table, make_table
from agent.search import FinalLaw, Search
from agent.uncertainty import bootstrap, interval

_GROUP = "__group__"
_RUN = "__run__"
N_BOOTSTRAP = 100  # refits behind ``predict(..., return_interval=True)``


class LawSearch:
    """Discover a law ``targets = f(inputs)`` that extrapolates along ``axis``.

    ``axis=None``: the inputs that are positive and span a decade; ``max_constants=None``:
    ``defaults.DEFAULT_CAP`` per target.  ``work_budget`` and
    ``time_limit`` of None mean no limit.  ``proposers``: (proposer, weight) pairs, copied
    at each fit so that the given ones are never used up.  ``loss``: how constants are fitted,
    ``auto`` (robust_log for positive targets, else lsq), ``log``, ``robust_log``, ``huber_log``
    or ``lsq`` (see ``agent.fitting.FitOptions``); the interval refits use it too.
    """

    def __init__(self, *, axis: Sequence[str] | None = None, max_constants: int | None = None,
                 budget: int = DEFAULT_BUDGET, work_budget: float | None = DEFAULT_WORK, seed: int = 0,
                 time_limit: float | None = DEFAULT_TIME_LIMIT, workers: int = 1, proposers=None,
                 n_bootstrap: int = N_BOOTSTRAP, loss: str = "auto"):
        self.axis, self.max_constants, self.budget, self.work_budget = axis, max_constants, budget, work_budget
        self.seed, self.time_limit, self.workers, self.proposers = seed, time_limit, workers, proposers
        self.n_bootstrap, self.loss = n_bootstrap, loss

    @classmethod
    def _param_names(cls) -> list[str]:
        return sorted(p.name for p in inspect.signature(cls.__init__).parameters.values()
                      if p.kind is p.KEYWORD_ONLY)

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's parameters (scikit-learn's estimator interface)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params) -> "LawSearch":
        unknown = sorted(set(params) - set(self._param_names()))
        if unknown:
            raise ValueError(f"invalid parameter(s) {', '.join(unknown)} for LawSearch; "
                             f"valid: {', '.join(self._param_names())}")
        for name, value in params.items():
            setattr(self, name, value)
        return self

    def fit(self, X, y, groups=None, runs=None) -> "LawSearch":
        """``groups``: each row's group (a law form shared, constants per group).  ``runs``: each row's
        training run, where rows are checkpoints of a few runs: intervals then resample whole runs."""
        self.bootstrap_ = None
        X = _frame(X, "x")
        if isinstance(y, pd.Series) and y.name in X.columns:
            y = y.rename(None)  # computed from an input (2 + 30*X.N**-0.3 is named N): the target is "y"
        Y = _frame(y, "y")
        overlap = set(X.columns) & set(Y.columns)
        if overlap:
            raise DataError(f"column(s) {', '.join(sorted(overlap))} are both in X and y")
        lengths = {"X": len(X), "y": len(Y), **({"groups": len(groups)} if groups is not None else {}),
                   **({"runs": len(runs)} if runs is not None else {})}
        if len(set(lengths.values())) > 1:
            raise DataError("X, y, groups and runs need one entry each per row: "
                            + ", ".join(f"{name} has {n}" for name, n in lengths.items()))
        df = pd.concat([X.reset_index(drop=True), Y.reset_index(drop=True)], axis=1)
        if groups is not None:
            df[_GROUP] = np.asarray(groups).astype(str)
        if runs is not None:
            df[_RUN] = pd.Series(list(runs), dtype=object)  # a missing label stays missing: make_table names it
        request = DiscoveryRequest(
            inputs=list(X.columns), targets=list(Y.columns), group=_GROUP if groups is not None else None,
            axis=self.axis, max_constants=self.max_constants, budget=self.budget, work_budget=self.work_budget,
            time_limit=self.time_limit, seed=self.seed, workers=self.workers, loss=self.loss,
            run=_RUN if runs is not None else None)
        plan = plan_discovery(df, request)
        self.problem_ = plan.problem
        # a proposer keeps state (the seed library it handed out, call counters): each fit starts afresh
        proposers = copy.deepcopy(self.proposers)
        self.search_ = Search(plan.problem, df, plan.config, proposers)
        try:
            self.best_: FinalLaw = self.search_.run()
        finally:
            self.search_.close()
        self._single_output = isinstance(y, pd.Series) or np.ndim(y) == 1
        return self

    @property
    def equations_(self) -> pd.DataFrame:
        """Every evaluated law, best first (like PySR's ``equations_``)."""
        rows = [{
            "law": "; ".join(c.lines), "complexity": c.complexity, "n_constants": c.n_constants,
            "validation_loss": c.validation.get("nmse"), "validation_r2": c.validation.get("r2"),
            "score": c.score, "proposer": c.proposer, "generation": c.generation, "id": c.id,
        } for c in self.search_.candidates if c.ok]
        return pd.DataFrame(rows).sort_values("score", ascending=False, ignore_index=True)

    def predict(self, X, groups=None, return_interval: bool = False, level: float = 0.9,
                kind: str = "confidence"):
        """Predictions; with ``return_interval``, ``(pred, lo, hi)`` at ``level`` from a bootstrap of the
        law over the training runs (computed once, ``n_bootstrap`` refits, then kept as ``bootstrap_``).
        ``kind``: "confidence" (where the curve lies) or "prediction" (where a new run would land)."""
        df = _frame(X, "x").reset_index(drop=True)
        if groups is not None:
            df[_GROUP] = np.asarray(groups).astype(str)
        elif self.problem_.group is not None:
            raise DataError("the law was fitted per group: pass groups= to predict")
        group = _GROUP if groups is not None else None
        pred = self.best_.predict(df, group=group)
        if not return_interval:
            return pred[:, 0] if self._single_output else pred
        law = self.best_.law()
        if getattr(self, "bootstrap_", None) is None:
            self.bootstrap_ = bootstrap(law, self.search_.table, self.best_.constants, n=self.n_bootstrap,
                                        seed=self.seed, loss=self.best_.fit_loss or "auto")
        table = make_table(df, Problem(self.best_.inputs, self.best_.targets, group=group), require_targets=False)
        if group is None:
            table = Table(table.X, table.y, np.full(len(table), next(iter(self.best_.constants)), dtype=object))
        lo, hi = interval(law, table, self.bootstrap_, level=level, kind=kind)
        if self._single_output:
            return pred[:, 0], lo[:, 0], hi[:, 0]
        return pred, lo, hi

    @property
    def selection_(self) -> dict:
        """How the law was chosen: the parsimony margin, the finalists within it, and the spread of
        their predictions at 2x, 4x and 10x the largest axis value (the form's own uncertainty)."""
        return dict(self.best_.selection)

    def sympy(self) -> sp.Expr | dict[str, sp.Expr]:
        exprs = self.best_.law().sympy()
        return next(iter(exprs.values())) if len(exprs) == 1 else exprs

    def latex(self) -> str:
        return self.best_.latex


def _frame(data, prefix: str) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, pd.Series):
        return data.to_frame(name=data.name or prefix)
    arr = np.asarray(data, dtype=float)
    arr = arr.reshape(-1, 1) if arr.ndim == 1 else arr
    return pd.DataFrame(arr, columns=[f"{prefix}{i}" for i in range(arr.shape[1])])
