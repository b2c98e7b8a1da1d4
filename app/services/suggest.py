"""Which run to do next, for a finished run: its stored replicates rank the candidates."""
from __future__ import annotations

import pandas as pd

from agent.errors import DataError
from agent.expressions import parse_law
from agent.storage import BaseStorage, RunState
from agent.storage.errors import ConflictError
from agent.suggest import rank_runs
from app.schemas.laws import SuggestCreate, SuggestionPublic, SuggestPublic
from app.services.uncertainty import stored_forms, stored_replicates

METHOD = ("the share of the variance of the target predictions that one more run removes (the linear-Gaussian "
          "update over the final law's stored delta-method draws and the run's close finalists: parameter and "
          "form uncertainty), per unit cost")


def suggest_next_runs(storage: BaseStorage, run_id: int, req: SuggestCreate) -> SuggestPublic:
    run = storage.get_run(run_id)
    if run.state is not RunState.DONE or not run.final:
        raise ConflictError(f"run {run_id} is {run.state.value}: suggestions need its final law")
    replicates = stored_replicates(run.final)
    if replicates is None:
        reason = run.final.get("uncertainty_error") or "the run ended before sld stored a law's uncertainty"
        raise DataError(f"run {run_id} has no stored uncertainty to rank runs with: {reason}")
    spec = run.spec
    law = parse_law(run.final["law"], spec["inputs"], spec["targets"])
    candidates, targets = pd.DataFrame(req.candidates), pd.DataFrame(req.targets)
    cost_inputs = req.cost_inputs if req.cost_inputs is not None else list(spec.get("axis") or ())
    ranked = rank_runs(law, replicates, candidates, targets, group=spec.get("group"), cost_inputs=cost_inputs,
                       cost_factor=req.cost_factor, top=req.top,
                       others=stored_forms(run.final, law.inputs, law.targets))
    return SuggestPublic(run_id=run_id, method=METHOD, suggestions=[
        SuggestionPublic(rank=k + 1, point=req.candidates[s.index], score=s.score, reduction=s.reduction,
                         cost=s.cost, explanation=s.explanation) for k, s in enumerate(ranked)])
