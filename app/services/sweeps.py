"""Sweeps as a service resource: a posted design becomes queued points; a trainer's row becomes data."""
from __future__ import annotations

import pandas as pd

from agent.errors import DataError
from agent.storage import BaseStorage, SweepRecord
from app.core.config import Settings
from app.schemas.sweeps import SweepCreate
from trainer.design import SweepDesign, plan_points
from trainer.spec import ROW_COLUMNS


def create_sweep(storage: BaseStorage, req: SweepCreate, settings: Settings) -> SweepRecord:
    """Plan the design (cheapest points first) and queue every point; DataError names a bad design."""
    design = SweepDesign(kind=req.design, n_params=tuple(req.n_params), tokens=tuple(req.tokens),
                         budgets=tuple(req.budgets), lrs=tuple(req.lrs), batches=tuple(req.batch_sizes),
                         seeds=tuple(req.seeds), context=req.context, options={"device": req.device})
    try:
        specs = plan_points(design)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if len(specs) > settings.sweep_max_points:
        raise DataError(f"the design plans {len(specs)} runs, more than the limit of {settings.sweep_max_points} "
                        "(SLD_SWEEP_MAX_POINTS)")
    name = req.name or f"{req.design} sweep of {len(specs)} runs"
    return storage.create_sweep(name, req.model_dump(mode="json"), [(s.to_dict(), s.cost) for s in specs])


def row_frame(row: dict) -> pd.DataFrame:
    """The trainer's row as a one-row frame, columns in the trainer's order (the dataset's)."""
    return pd.DataFrame([{c: row[c] for c in ROW_COLUMNS}])
