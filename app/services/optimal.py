"""Compute-optimal allocation for a finished run: its final law, its stored replicates and close finalists."""
from __future__ import annotations

import math

from agent.allocation import axis_caveat, isoflop_profile, optimal_allocation
from agent.expressions import parse_law
from agent.storage import BaseStorage, RunState
from agent.storage.errors import ConflictError
from app.schemas.answers import AllocationPublic, IsoflopPublic, OptimalCreate, OptimalPublic
from app.services.uncertainty import stored_forms, stored_replicates

METHOD = ("N* minimises the law's predicted loss along C = k*N*D over size_range (a 1-D bounded search); "
          "intervals from the final law's stored delta-method draws, forms: the same under each close finalist")


def optimal_for_run(storage: BaseStorage, run_id: int, req: OptimalCreate) -> OptimalPublic:
    run = storage.get_run(run_id)
    if run.state is not RunState.DONE or not run.final:
        raise ConflictError(f"run {run_id} is {run.state.value}: allocation needs its final law")
    spec = run.spec
    law = parse_law(run.final["law"], spec["inputs"], spec["targets"])
    constants = run.final["constants"]
    boot = stored_replicates(run.final)
    forms = stored_forms(run.final, law.inputs, law.targets)
    common = dict(size=req.size, data=req.data, size_range=tuple(req.size_range), group=req.group,
                  fixed=req.fixed, flops_per=req.flops_per)
    allocations = []
    for budget in req.budgets:
        best = optimal_allocation(law, constants, budget=budget, boot=boot, level=req.level, **common)
        others = [optimal_allocation(f.law, f.constants, budget=budget, **common) for f in forms
                  if (req.group or next(iter(constants))) in f.constants]
        allocations.append(AllocationPublic(
            budget=best.budget, size=best.size, data=best.data, loss=best.loss, on_edge=best.on_edge,
            interval=best.interval,
            forms=[{"size": o.size, "data": o.data, "loss": o.loss, "on_edge": o.on_edge} for o in others]))
    views = []
    for budget in req.isoflop if req.isoflop is not None else req.budgets[:3]:
        sizes, losses = isoflop_profile(law, constants, budget=budget, **common)
        views.append(IsoflopPublic(budget=budget, sizes=sizes.tolist(),
                                   loss=[float(v) if math.isfinite(v) else None for v in losses]))
    caveat = axis_caveat(run.final.get("axis"), req.size, req.data)
    return OptimalPublic(run_id=run_id, size=req.size, data=req.data, flops_per=req.flops_per, level=req.level,
                         method=METHOD, allocations=allocations, isoflop=views, warnings=[caveat] if caveat else [])
