"""Helpers the family builders share: drawing constants, writing scaled inputs, naming columns."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from agent.expressions import MAX_LITERAL_ABS
from agent.problem import DEFAULT_GROUP

# Role -> column name used when a catalogue entry does not choose one.
DEFAULT_NAMES = {
    "N": "params", "D": "tokens", "C": "flops", "U": "unique_tokens", "epochs": "epochs", "lr": "lr",
    "bsz": "batch_size", "E": "experts", "V": "vocab", "x": "x", "y": "loss", "y2": "accuracy",
    "group": "dataset",
}


class Draw:
    """Seeded draws of constants, rounded to 4 significant digits so laws read cleanly."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def u(self, lo: float, hi: float) -> float:
        return round4(self.rng.uniform(lo, hi))

    def lu(self, lo: float, hi: float) -> float:
        """Log-uniform between two positive values."""
        return round4(np.exp(self.rng.uniform(np.log(lo), np.log(hi))))

    def sign(self) -> float:
        return float(self.rng.choice([-1.0, 1.0]))

    def ratio(self, lo: float = 2.5, hi: float = 6.0) -> float:
        """How far beyond the training range the test rows reach."""
        return round(float(self.rng.uniform(lo, hi)), 2)


def round4(value: float) -> float:
    return float(f"{float(value):.4g}")


def ref_text(ref: float) -> str:
    return f"{ref:g}"


def scaled(column: str, ref: float) -> str:
    """``column`` divided by a round reference, written so that the parser accepts the literal."""
    if ref == 1:
        return column
    if ref > MAX_LITERAL_ABS:  # FLOPs: 1e21 is over the literal limit, 1e-21 is not
        return f"({column}*{1.0 / ref:g})"
    return f"({column}/{ref:g})"


def reference(lo: float, hi: float) -> float:
    """A round reference value at the geometric middle of a range (one significant digit)."""
    return float(f"{np.sqrt(lo * hi):.1g}")


def per_group(labels: Sequence[str] | None, shared: Mapping[str, float],
              varying: Mapping[str, float], draw: Draw, spread: float = 0.25) -> dict[str, dict[str, float]]:
    """True constants per group: ``shared`` ones equal everywhere, ``varying`` ones scaled per group.

    Without groups the single key is the core's default group name.
    """
    if not labels:
        return {DEFAULT_GROUP: {**shared, **varying}}
    out = {}
    for label in labels:
        moved = {k: round4(v * (1.0 + draw.rng.uniform(-spread, spread))) for k, v in varying.items()}
        out[label] = {**shared, **moved}
    return out


def rename(design: pd.DataFrame, names: Mapping[str, str]) -> pd.DataFrame:
    """Role columns (``N``, ``D``, ...) to the problem's column names; helper columns stay."""
    return design.rename(columns={role: col for role, col in names.items() if role in design.columns})


def columns(names: Mapping[str, str], roles: Sequence[str]) -> tuple[str, ...]:
    return tuple(names[r] for r in roles)


def resolve(names: Mapping[str, str] | None) -> dict[str, str]:
    return {**DEFAULT_NAMES, **(names or {})}
