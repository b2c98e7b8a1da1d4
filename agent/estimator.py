"""A scikit-learn style face over the search (PySR's ``PySRRegressor`` is the model).

    model = LawSearch(axis=["N"], max_constants=4, budget=200, seed=0)
    model.fit(df[["N", "D"]], df["loss"], groups=df["model"])
    model.equations_          # every law found: complexity, validation loss, score
    model.predict(new_points, groups=...)
    model.sympy(), model.latex()
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import sympy as sp

from agent.errors import DataError
from agent.problem import Problem
from agent.search import FinalLaw, Search, SearchConfig

_GROUP = "__group__"


class LawSearch:
    """Discover a law ``targets = f(inputs)`` that extrapolates along ``axis``."""

    def __init__(self, *, axis: Sequence[str] | None = None, max_constants: int = 6, budget: int = 300,
                 seed: int = 0, time_limit: float | None = None, workers: int = 1, proposers=None):
        self.axis, self.max_constants, self.budget = axis, max_constants, budget
        self.seed, self.time_limit, self.workers, self.proposers = seed, time_limit, workers, proposers

    def fit(self, X, y, groups=None) -> "LawSearch":
        X = _frame(X, "x")
        Y = _frame(y, "y")
        overlap = set(X.columns) & set(Y.columns)
        if overlap:
            raise DataError(f"column(s) {', '.join(sorted(overlap))} are both in X and y")
        df = pd.concat([X.reset_index(drop=True), Y.reset_index(drop=True)], axis=1)
        if groups is not None:
            df[_GROUP] = np.asarray(groups).astype(str)
        axis = self.axis
        if axis is None:  # a compute proxy: every input spanning at least a decade
            axis = [c for c in X.columns if (X[c] > 0).all() and X[c].max() / X[c].min() >= 10]
        self.problem_ = Problem(tuple(X.columns), tuple(Y.columns), group=_GROUP if groups is not None else None,
                                axis=tuple(axis), max_constants=self.max_constants)
        config = SearchConfig(budget=self.budget, seed=self.seed, time_limit=self.time_limit,
                              workers=self.workers)
        self.search_ = Search(self.problem_, df, config, self.proposers)
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

    def predict(self, X, groups=None) -> np.ndarray:
        df = _frame(X, "x").reset_index(drop=True)
        if groups is not None:
            df[_GROUP] = np.asarray(groups).astype(str)
        elif self.problem_.group is not None:
            raise DataError("the law was fitted per group: pass groups= to predict")
        pred = self.best_.predict(df, group=_GROUP if groups is not None else None)
        return pred[:, 0] if self._single_output else pred

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
