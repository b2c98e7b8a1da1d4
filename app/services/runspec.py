"""A run request checked against its dataset: every column named in it must exist and fit its role.

The stored spec is complete (defaults resolved), so a worker on another
machine, or a later version, runs exactly what was asked.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from agent.errors import DataError
from agent.problem import Problem
from agent.storage import BaseStorage, DatasetRecord, TaskSpecRecord
from app.core.config import Settings
from app.schemas.runs import RunCreate
from app.services.llm_endpoints import check_run_llm

DEFAULT_CAP = 8
MIN_TRAIN_ROWS = 4


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
    _check_columns(ds, inputs=inputs, targets=targets, group=group, axis=axis or [])
    if axis is None:
        axis = [c for c in inputs if ds.column(c).min is not None and ds.column(c).min > 0]
    cap = req.max_constants or (base.get("max_constants") if task else None) or DEFAULT_CAP
    problem = Problem(inputs=tuple(inputs), targets=tuple(targets), group=group, axis=tuple(axis),
                      max_constants=cap, description=req.description or base.get("description", ""))
    if group in (*inputs, *targets):
        raise DataError(f"the group column {group!r} cannot also be an input or a target")
    test_split = _test_split(req, ds, task)
    n_train = ds.n_rows
    if test_split is not None:
        n_train = len(split_rows(storage.load_rows(ds.id), {"test_split": test_split})[0])
    if n_train < MIN_TRAIN_ROWS:
        raise DataError(f"only {n_train} training row(s); a run needs at least {MIN_TRAIN_ROWS}")
    budget = req.budget or settings.default_budget
    if budget > settings.max_budget:
        raise DataError(f"budget {budget} is over the limit of {settings.max_budget} (SLD_MAX_BUDGET)")
    return {
        **problem.to_dict(),
        "budget": budget, "seed": req.seed, "time_limit": req.time_limit, "patience": req.patience,
        "proposers": _proposers(req, settings),
        "test_split": test_split,
        "task": task.name if task else None,
    }


def problem_of(spec: dict[str, Any]) -> Problem:
    return Problem.from_dict(spec)


def split_rows(df: pd.DataFrame, spec: dict[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(training rows, held-out test rows) of a run."""
    split = spec.get("test_split")
    if not split:
        return df, df.iloc[0:0]
    held_out = df[split["column"]].astype(str) == str(split["value"])
    return df[~held_out].reset_index(drop=True), df[held_out].reset_index(drop=True)


def _check_columns(ds: DatasetRecord, *, inputs, targets, group, axis) -> None:
    named = {"input": inputs, "target": targets, "axis": axis, "group": [group] if group else []}
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
