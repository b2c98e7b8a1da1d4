"""Sweeps as a service resource: a posted design becomes queued points; a trainer's row becomes data."""
from __future__ import annotations

import pandas as pd

from agent.errors import DataError
from agent.storage import BaseStorage, SweepRecord
from app.core.config import Settings
from app.schemas.sweeps import SweepCreate, SweepPointsAdd
from trainer.design import SweepDesign, plan_points
from trainer.spec import ROW_COLUMNS


def create_sweep(storage: BaseStorage, req: SweepCreate, settings: Settings) -> SweepRecord:
    """Plan the design (cheapest points first) and queue every point; DataError names a bad design."""
    design = SweepDesign(kind=req.design, n_params=tuple(req.n_params), tokens=tuple(req.tokens),
                         budgets=tuple(req.budgets), lrs=tuple(req.lrs), batches=tuple(req.batch_sizes),
                         seeds=tuple(req.seeds), context=req.context, options=_options(req.model_dump()))
    try:
        specs = plan_points(design)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if len(specs) > settings.sweep_max_points:
        raise DataError(f"the design plans {len(specs)} runs, more than the limit of {settings.sweep_max_points} "
                        "(SLD_SWEEP_MAX_POINTS)")
    name = req.name or f"{req.design} sweep of {len(specs)} runs"
    return storage.create_sweep(name, req.model_dump(mode="json"), [(s.to_dict(), s.cost) for s in specs])


def add_points(storage: BaseStorage, sweep_id: int, req: SweepPointsAdd, settings: Settings) -> SweepRecord:
    """Plan the sizes × token budgets as the sweep's own design would (batch, context, device, corpus) and
    queue them."""
    sweep = storage.get_sweep(sweep_id)
    design = dict(sweep.design)
    extra = SweepDesign(kind="grid", n_params=tuple(req.n_params), tokens=tuple(req.tokens), lrs=tuple(req.lrs),
                        batches=tuple(design.get("batch_sizes") or (8,))[:1], seeds=tuple(req.seeds),
                        context=int(design.get("context") or 128), options=_options(design))
    try:
        specs = plan_points(extra)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    if sweep.n_points + len(specs) > settings.sweep_max_points:
        raise DataError(f"the sweep would have {sweep.n_points + len(specs)} runs, more than the limit of "
                        f"{settings.sweep_max_points} (SLD_SWEEP_MAX_POINTS)")
    return storage.add_sweep_points(sweep_id, [(s.to_dict(), s.cost) for s in specs])


def _options(design: dict) -> dict:
    """The training options of a stored design; a sweep stored before an option existed takes its default."""
    return {"device": design.get("device", "auto"), "corpus": design.get("corpus", "stdlib"),
            "eval_sequences": int(design.get("eval_sequences") or 64)}


def row_frame(row: dict) -> pd.DataFrame:
    """The trainer's row as a one-row frame, columns in the trainer's order (the dataset's)."""
    return pd.DataFrame([{c: row[c] for c in ROW_COLUMNS}])
