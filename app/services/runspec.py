"""A run request checked against its dataset: every column named in it must exist and fit its role.

The request becomes a discovery plan exactly as in the CLI and ``LawSearch``
(``agent.plan``); the stored spec (``app.schemas.runspec.RunSpec``) holds the
whole plan, so a worker on another machine, or a later version, runs exactly
what was resolved here.
"""
from __future__ import annotations

from typing import Any

from agent.errors import DataError
from agent.plan import DiscoveryRequest, HeldOut, plan_discovery
from agent.storage import BaseStorage, DatasetRecord, TaskSpecRecord
from app.core.config import Settings
from app.schemas.runs import RunCreate
from app.schemas.runspec import RunSpec
from app.services.llm_endpoints import check_run_llm


def resolve_run_spec(req: RunCreate, storage: BaseStorage, settings: Settings) -> dict[str, Any]:
    ds = storage.get_dataset(req.dataset_id)
    task = storage.find_task_spec(ds.id)
    base = task.problem if task else {}
    inputs = req.inputs or base.get("inputs")
    targets = req.targets or base.get("targets")
    if not inputs or not targets:
        raise DataError(f"name the run's inputs and targets (dataset {ds.id} columns: {_names(ds)})")
    group = req.group if req.group is not None or req.inputs else base.get("group")
    axis = req.axis if req.axis is not None else base.get("axis") if task and not req.inputs else None
    _check_columns(ds, inputs=inputs, targets=targets, group=group, axis=axis or [], run=req.run)
    test_split = _test_split(req, ds, task)
    budget = req.budget or settings.default_budget
    if budget > settings.max_budget:
        raise DataError(f"budget {budget} is over the limit of {settings.max_budget} (SLD_MAX_BUDGET)")
    cap = req.max_constants or (base.get("max_constants") if task else None)
    request = DiscoveryRequest(
        inputs, targets, group=group, axis=axis, run=req.run, **({"max_constants": cap} if cap else {}),
        budget=budget,
        work_budget=settings.default_work_budget if req.work_budget is None else req.work_budget,
        time_limit=req.time_limit or settings.default_time_limit, seed=req.seed, patience=req.patience, loss=req.loss,
        description=req.description or base.get("description", ""),
        held_out=HeldOut(**test_split) if test_split else None)
    plan = plan_discovery(storage.load_rows(ds.id), request)
    return RunSpec.of_plan(plan, proposers=_proposers(req, settings), task=task.name if task else None).to_json()


def _check_columns(ds: DatasetRecord, *, inputs, targets, group, axis, run=None) -> None:
    named = {"input": inputs, "target": targets, "axis": axis, "group": [group] if group else [],
             "run": [run] if run else []}
    unknown = [f"{c!r} ({role})" for role, cols in named.items() for c in cols if ds.column(c) is None]
    if unknown:
        raise DataError(f"unknown column(s) {', '.join(unknown)}; dataset {ds.id} has: {_names(ds)}")
    for role in ("input", "target", "axis"):
        for c in named[role]:
            if ds.column(c).kind != "number":
                raise DataError(f"column {c!r} ({role}) is not numeric (it holds text such as "
                                f"{ds.column(c).values[0]!r})")


def _test_split(req: RunCreate, ds: DatasetRecord, task: TaskSpecRecord | None) -> dict | None:
    if req.test_split is not None:
        split = req.test_split.model_dump()
    elif task is not None and task.split_column and ds.column(task.split_column) is not None:
        split = {"column": task.split_column, "value": "test"}
    else:
        return None
    col = ds.column(split["column"])
    if col is None:
        raise DataError(f"unknown test_split column {split['column']!r}; dataset {ds.id} has: {_names(ds)}")
    if split.get("at_least") is not None:
        if col.kind != "number":
            raise DataError(f"test_split.at_least needs a numeric column; {split['column']!r} holds text")
        if not col.min < split["at_least"] <= col.max:
            raise DataError(f"test_split.at_least = {split['at_least']:g} leaves no training or no test rows: "
                            f"{split['column']} spans {col.min:g} to {col.max:g}")
        return split
    values = [str(v) for v in col.values] if col.kind == "text" else None
    if values is not None and split["value"] not in values:
        raise DataError(f"no row has {split['column']} = {split['value']!r} (values: {', '.join(values[:10])})")
    return split


def _proposers(req: RunCreate, settings: Settings) -> list[dict[str, Any]]:
    if not req.proposers:
        return [{"kind": "offline", "weight": 1.0}]
    out = []
    for p in req.proposers:
        if p.kind == "offline":
            if p.llm:
                raise DataError("proposers: 'llm' settings belong to a proposer of kind 'llm'")
            out.append({"kind": "offline", "weight": p.weight})
            continue
        llm = check_run_llm(p.llm, settings.llm_endpoints)
        n_llm = sum(1 for q in out if q["kind"] == "llm")
        llm.setdefault("name", "llm" if n_llm == 0 else f"llm{n_llm + 1}")  # names key checkpoint state
        out.append({"kind": "llm", "weight": p.weight, "llm": llm})
    names = [q["llm"]["name"] for q in out if q["kind"] == "llm"]
    if len(set(names)) != len(names):
        raise DataError(f"proposers: two LLM proposers share the name {names[0]!r}; give each its own llm.name")
    return out


def _names(ds: DatasetRecord) -> str:
    return ", ".join(c.name for c in ds.columns)
