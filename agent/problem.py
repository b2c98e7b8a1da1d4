"""What a search is asked to do: a dataset's columns and how to extrapolate."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from agent.defaults import DEFAULT_CAP
from agent.errors import DataError

DEFAULT_GROUP = "all_data"


@dataclass(frozen=True)
class Problem:
    """Inputs -> targets, optional group column, extrapolation axis, constant cap.

    ``axis`` names the column(s) along which the law must extrapolate; the rows
    furthest along it become validation.  With several columns their product is
    used (a compute proxy).  An empty axis means no scale axis: validation is
    k-fold over rows (for mixtures and similar designs).

    ``run`` names the column that says which training run a row comes from, where
    several rows are checkpoints of one run: they share its seed and its schedule,
    so they are one draw, not many, and the intervals resample runs, not rows
    (``agent.uncertainty``).  Without it every row is its own run.
    """

    inputs: tuple[str, ...]
    targets: tuple[str, ...]
    group: str | None = None
    axis: tuple[str, ...] = ()
    max_constants: int = DEFAULT_CAP
    description: str = ""
    run: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "inputs", tuple(self.inputs))
        object.__setattr__(self, "targets", tuple(self.targets))
        object.__setattr__(self, "axis", tuple(self.axis))
        if not self.inputs:
            raise DataError("at least one input column is required")
        if not self.targets:
            raise DataError("at least one target column is required")
        overlap = set(self.inputs) & set(self.targets)
        if overlap:
            raise DataError(f"column(s) {', '.join(sorted(overlap))} cannot be both input and target")
        if self.max_constants < 1:
            raise DataError("the constant cap must be at least 1")
        if self.run is not None and self.run in (*self.inputs, *self.targets, self.group):
            raise DataError(f"the run column {self.run!r} cannot also be an input, a target or the group")

    def to_dict(self) -> dict:
        return {
            "inputs": list(self.inputs), "targets": list(self.targets), "group": self.group,
            "axis": list(self.axis), "max_constants": self.max_constants, "description": self.description,
            "run": self.run,
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> "Problem":
        return cls(
            inputs=tuple(d["inputs"]), targets=tuple(d["targets"]), group=d.get("group"),
            axis=tuple(d.get("axis") or ()), max_constants=int(d.get("max_constants", DEFAULT_CAP)),
            description=d.get("description", ""), run=d.get("run"),
        )


@dataclass(frozen=True)
class Table:
    """Validated numeric arrays for one problem: inputs by name, targets, group labels, and the run
    each row comes from (None: every row its own run)."""

    X: dict[str, np.ndarray] = field(repr=False)
    y: np.ndarray = field(repr=False)
    groups: np.ndarray = field(repr=False)
    runs: np.ndarray | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.y)

    def take(self, index: np.ndarray) -> "Table":
        return Table({k: v[index] for k, v in self.X.items()}, self.y[index], self.groups[index],
                     None if self.runs is None else self.runs[index])

    @property
    def group_names(self) -> list[str]:
        return sorted(set(self.groups.tolist()))


def make_table(df: pd.DataFrame, problem: Problem, *, require_targets: bool = True) -> Table:
    """Check the columns a problem needs and convert them to float arrays.

    The run column is read with the targets (training rows); points to predict at have no run."""
    needed = [*problem.inputs, *(problem.targets if require_targets else ()), *problem.axis]
    missing = [c for c in dict.fromkeys(needed) if c not in df.columns]
    if problem.group and problem.group not in df.columns:
        missing.append(problem.group)
    with_runs = bool(problem.run) and require_targets
    if with_runs and problem.run not in df.columns:
        missing.append(problem.run)
    if missing:
        raise DataError(f"missing column(s): {', '.join(missing)} (have: {', '.join(map(str, df.columns))})")
    if len(df) == 0:
        raise DataError("the data has no rows")
    arrays = {}
    for col in dict.fromkeys([*problem.inputs, *(problem.targets if require_targets else ())]):
        arrays[col] = _numeric_column(df, col)
    y = (np.column_stack([arrays[t] for t in problem.targets]) if require_targets
         else np.full((len(df), len(problem.targets)), np.nan))
    if problem.group:
        if df[problem.group].isna().any():
            raise DataError(f"column {problem.group!r} (group) has missing values")
        groups = df[problem.group].astype(str).to_numpy(dtype=object)
    else:
        groups = np.full(len(df), DEFAULT_GROUP, dtype=object)
    runs = None
    if with_runs:
        if df[problem.run].isna().any():
            raise DataError(f"column {problem.run!r} (run) has {int(df[problem.run].isna().sum())} missing value(s)")
        runs = df[problem.run].astype(str).to_numpy(dtype=object)
    return Table({c: arrays[c] for c in problem.inputs}, y, groups, runs)


def axis_values(df: pd.DataFrame, problem: Problem) -> np.ndarray | None:
    """Position of each row along the extrapolation axis (None when there is none)."""
    if not problem.axis:
        return None
    cols = [_numeric_column(df, c) for c in problem.axis]
    if len(cols) == 1:
        return cols[0]
    if all(np.all(c > 0) for c in cols):
        return np.sum([np.log(c) for c in cols], axis=0)  # log of the product, without overflow
    return np.sum([(c - c.mean()) / (c.std() or 1.0) for c in cols], axis=0)


def _numeric_column(df: pd.DataFrame, col: str) -> np.ndarray:
    series = df[col]
    if not (pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)):
        converted = pd.to_numeric(series, errors="coerce")
        bad = series[converted.isna() & series.notna()]
        if len(bad):
            raise DataError(f"column {col!r} is not numeric (e.g. {bad.iloc[0]!r})")
        series = converted
    values = series.to_numpy(dtype=float)
    if np.isnan(values).any():
        raise DataError(f"column {col!r} has {int(np.isnan(values).sum())} missing or NaN value(s)")
    if not np.isfinite(values).all():
        raise DataError(f"column {col!r} has infinite values")
    return values


def problem_from_columns(inputs: Sequence[str], targets: Sequence[str], **kw) -> Problem:
    return Problem(inputs=tuple(inputs), targets=tuple(targets), **kw)
