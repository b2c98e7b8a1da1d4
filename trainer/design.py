"""Sweep designs, expanded into training specs cheapest first; no torch, so the service plans them.

Two designs of the field:

- ``grid``: every model size in ``n_params`` trained on every budget of tokens in ``tokens``
  (Chinchilla's approach 1 and Kaplan's N × D sweeps);
- ``isoflop``: for each compute budget C, every model size trained on D = C / (6·N) tokens
  (Chinchilla's approach 2); a size whose D would be less than one step is left out.

Each may cross learning rates (None: the width's default), batch sizes and seeds.  Model sizes
snap to the nearest shape of the family (:func:`trainer.shapes.shape_for`); the rows record the
exact N.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Literal

from trainer.spec import DEFAULT_BATCH, TrainSpec
from trainer.shapes import CONTEXT, shape_for


@dataclass(frozen=True)
class SweepDesign:
    kind: Literal["grid", "isoflop"]
    n_params: tuple[float, ...]
    tokens: tuple[float, ...] = ()  # grid
    budgets: tuple[float, ...] = ()  # isoflop: FLOPs, 6·N·D
    lrs: tuple[float | None, ...] = (None,)
    batches: tuple[int, ...] = (DEFAULT_BATCH,)
    seeds: tuple[int, ...] = (0,)
    context: int = CONTEXT
    options: dict = field(default_factory=dict)  # other TrainSpec fields for every point (device, threads, ...)


def plan_points(design: SweepDesign) -> list[TrainSpec]:
    """The design's training specs, cheapest (6·N·D) first, duplicates removed.

    ValueError names a design that plans nothing or a point that cannot be trained.
    """
    shapes = sorted({shape_for(n, design.context) for n in design.n_params}, key=lambda s: s.non_embedding_params)
    if design.kind == "grid":
        pairs = [(shape, int(d)) for shape in shapes for d in design.tokens]
    elif design.kind == "isoflop":
        pairs = [(shape, int(c / (6 * shape.non_embedding_params))) for c in design.budgets for shape in shapes]
    else:
        raise ValueError(f"unknown sweep design {design.kind!r}: use grid or isoflop")
    specs, seen = [], set()
    for (shape, tokens), lr, batch, seed in itertools.product(pairs, design.lrs, design.batches, design.seeds):
        if tokens < batch * design.context:
            continue  # less than one step: an isoflop budget too small for this size
        spec = TrainSpec(d_model=shape.d_model, n_layers=shape.n_layers, tokens=tokens, batch=batch, lr=lr,
                         seed=seed, context=design.context, **design.options)
        if spec not in seen:
            seen.add(spec)
            specs.append(spec)
    if not specs:
        raise ValueError("the design plans no run: every point has less than one step of tokens")
    return sorted(specs, key=lambda s: (s.cost, s.d_model, s.tokens, s.seed))
