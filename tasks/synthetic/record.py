"""One synthetic problem: data drawn from a known law, and how a family describes it.

A family builds a :class:`Draft` (the design, the truth as law text and as numpy,
the noise); :func:`finish` turns it into a :class:`SyntheticProblem` by evaluating
the truth per group, adding noise and splitting train from test.  Two random
streams are used, one for the design and constants and one for the noise, so the
noiseless variant of a problem has exactly the same rows and constants.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from agent.problem import DEFAULT_GROUP, Problem
from tasks.synthetic.designs import holdout_settings, split_along_axis

# Columns a design may carry for the noise model; they never reach the data.
RUN_COLUMN = "_run"            # rows of one training run share its seed noise
PROGRESS_COLUMN = "_progress"  # 0..1 position of a checkpoint within its run (1 = the run's end)


@dataclass(frozen=True)
class Noise:
    """Realistic measurement noise, all multiplicative on the targets.

    sigma: per-row log-normal noise.  seed_sigma: one offset per training run
    (rows of a run are checkpoints or evaluations of the same seed).  outliers:
    training rows made 4-12 % worse (an unlucky or half-diverged run).  bump:
    the cut-off learning-rate schedule: a checkpoint taken before its run's
    schedule has decayed sits above the law, most at mid-run, not at the end.
    """

    sigma: float = 0.005
    seed_sigma: float = 0.0
    outliers: int = 0
    bump: float = 0.0

    @property
    def silent(self) -> bool:
        return not (self.sigma or self.seed_sigma or self.outliers or self.bump)


MeanFn = Callable[[Mapping[str, np.ndarray], Mapping[str, float]], np.ndarray]


@dataclass(frozen=True)
class Draft:
    """What a family builder returns: the design and the truth, before noise and split."""

    family: str
    description: str
    design: pd.DataFrame            # input columns (+ group, + _run/_progress); one row per run/checkpoint
    inputs: tuple[str, ...]
    targets: tuple[str, ...]
    truth: tuple[str, ...] | None   # law text in sld's format, or None when not expressible
    constants: dict[str, dict[str, float]]   # true constants per group (DEFAULT_GROUP without a group)
    mean: MeanFn                    # numpy truth, independent of the text: (columns, constants) -> (n, n_targets)
    noise: Noise = Noise()
    group: str | None = None
    axis: tuple[str, ...] = ()
    test_ratio: float = 3.0         # the test rows reach this far beyond the training range along the axis
    holdout: float = 0.25           # without an axis: share of input settings held out as test
    max_constants: int = 6


def with_recorded(draft: Draft, column: str, values: Callable[[pd.DataFrame], np.ndarray], what: str) -> Draft:
    """The same problem with one more input a sweep records beside the others: derived from them
    (a teacher's size beside its loss, epochs beside tokens and unique tokens), and unused by the truth.

    A user hands sld every column they have; a search must find the law without being told which
    of them is redundant, and it must search the laws over all inputs but one to do so."""
    design = draft.design.copy()
    design[column] = np.asarray(values(design), dtype=float)
    return replace(draft, design=design, inputs=(*draft.inputs, column),
                   description=f"{draft.description}; {column} recorded as well ({what})")


@dataclass(frozen=True)
class SyntheticProblem:
    """A problem of the synthetic suite: a sld Problem, its data and the law that made it."""

    name: str
    family: str
    problem: Problem
    train: pd.DataFrame = field(repr=False)
    test: pd.DataFrame = field(repr=False)
    truth: tuple[str, ...] | None
    true_constants: dict[str, dict[str, float]] = field(repr=False)
    description: str = ""
    noise: Noise = Noise()
    # which run each training row comes from, where a design has runs of several rows (checkpoints);
    # never in the data a search sees, as a user's CSV rarely says it: benchmarks may name it
    train_runs: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_rows(self) -> int:
        return len(self.train) + len(self.test)


def finish(name: str, draft: Draft, noise_rng: np.random.Generator, split_rng: np.random.Generator,
           noiseless: bool = False) -> SyntheticProblem:
    design = draft.design.reset_index(drop=True)
    y = _noiseless_targets(draft, design)
    problem = Problem(draft.inputs, draft.targets, group=draft.group, axis=draft.axis,
                      max_constants=draft.max_constants, description=draft.description)
    if draft.axis:
        is_test = split_along_axis(design, draft.axis, draft.test_ratio)
    else:
        is_test = holdout_settings(design, draft.inputs, draft.holdout, split_rng)
    if not noiseless:
        y = y * _noise_factors(design, draft.noise, ~is_test, y.shape[1], noise_rng)
    data = design[[c for c in design.columns if not c.startswith("_")]].copy()
    for j, target in enumerate(draft.targets):
        data[target] = y[:, j]
    return SyntheticProblem(
        name=name, family=draft.family, problem=problem,
        train=data[~is_test].reset_index(drop=True), test=data[is_test].reset_index(drop=True),
        truth=draft.truth, true_constants=draft.constants, description=draft.description,
        noise=Noise(0.0) if noiseless else draft.noise,
        train_runs=design.loc[~is_test, RUN_COLUMN].astype(str).to_numpy(dtype=object) if RUN_COLUMN in design else None,
    )


def _noiseless_targets(draft: Draft, design: pd.DataFrame) -> np.ndarray:
    y = np.empty((len(design), len(draft.targets)))
    labels = design[draft.group].astype(str) if draft.group else pd.Series(DEFAULT_GROUP, index=design.index)
    for label, rows in labels.groupby(labels).groups.items():
        columns = {c: design.loc[rows, c].to_numpy(dtype=float) for c in draft.inputs}
        y[np.asarray(rows)] = np.asarray(draft.mean(columns, draft.constants[label]), dtype=float).reshape(len(rows), -1)
    if not np.all(np.isfinite(y)) or np.any(y <= 0):
        raise ValueError(f"{draft.family}: the truth is not finite and positive on the design")
    return y


def _noise_factors(design: pd.DataFrame, noise: Noise, is_train: np.ndarray, n_targets: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Factors (n_rows, n_targets): row noise per target; a run's seed, schedule and outlier hit all its targets."""
    n = len(design)
    factors = np.exp(rng.normal(0.0, noise.sigma, (n, n_targets))) if noise.sigma else np.ones((n, n_targets))
    if noise.seed_sigma:
        runs = design[RUN_COLUMN].to_numpy() if RUN_COLUMN in design else np.arange(n)
        labels, index = np.unique(runs, return_inverse=True)
        factors *= np.exp(rng.normal(0.0, noise.seed_sigma, len(labels)))[index, None]
    if noise.bump and PROGRESS_COLUMN in design:
        progress = design[PROGRESS_COLUMN].to_numpy(dtype=float)
        factors *= 1.0 + noise.bump * np.sin(np.pi * np.clip(progress, 0.0, 1.0))[:, None]
    if noise.outliers:
        candidates = np.flatnonzero(is_train)
        picked = rng.choice(candidates, size=min(noise.outliers, len(candidates)), replace=False)
        factors[picked] *= 1.0 + rng.uniform(0.04, 0.12, len(picked))[:, None]
    return factors
