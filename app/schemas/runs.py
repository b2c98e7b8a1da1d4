from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from agent.defaults import DEFAULT_CAP
from agent.fitting import LOSSES
from app.schemas.common import MAX_ID, RequestModel
from agent.storage.records import RunRecord

_COLUMN = r"^[A-Za-z][A-Za-z0-9_]*$"


class ProposerSpec(RequestModel):
    """One proposer of a run and its share of the proposals."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["offline", "llm"]
    weight: float = Field(1.0, gt=0, le=1000)
    llm: dict[str, Any] | None = Field(
        None, description="LLM settings (model, endpoint, temperature, max_tokens, concurrency, max_calls, "
                          "max_total_tokens, max_cost_usd, ...). 'endpoint' names one of the operator's "
                          "endpoints (SLD_LLM_ENDPOINTS; optional when there is one). A run never carries a "
                          "URL or a key: workers send each endpoint its key from their own environment.")


class TestSplit(RequestModel):
    """Rows whose ``column`` equals ``value`` (or, with ``at_least``, is at least that number) are held
    out: never searched, scored once at the end."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest test class

    column: str = Field(min_length=1)
    value: str = "test"
    at_least: float | None = Field(None, allow_inf_nan=False,
                                   description="hold out the rows whose numeric column is at least this "
                                               "(e.g. the largest models); replaces value")


LossName = Literal[("auto", *LOSSES)]  # the fitter's losses, and auto


class RunCreate(RequestModel):
    """A discovery run.  Columns default to the dataset's task (for an imported SLDBench task)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, json_schema_extra={"examples": [{
        "dataset_id": 1, "inputs": ["N", "D"], "targets": ["loss"], "group": None, "axis": ["N", "D"],
        "max_constants": 6, "budget": 300, "seed": 0}]})

    dataset_id: int = Field(ge=0, le=MAX_ID)
    inputs: list[str] | None = Field(None, min_length=1)
    targets: list[str] | None = Field(None, min_length=1)
    group: str | None = Field(None, description="one law form, constants fitted per value of this column")
    run: str | None = Field(None, max_length=200,
                            description="the column naming each row's training run, where rows are checkpoints "
                                        "of a few runs: intervals then resample whole runs")
    axis: list[str] | None = Field(
        None, description="input columns to extrapolate along (their product is the scale); [] for none; "
                          "default: the task's, else the inputs whose values are positive and span a decade")
    max_constants: int | None = Field(None, ge=1, le=200, validation_alias=AliasChoices("max_constants", "cap"),
                                      description=f"the constant cap per group (alias: cap); default: the "
                                                  f"task's, else {DEFAULT_CAP} per target")
    budget: int | None = Field(None, ge=1, description="candidates to evaluate; default SLD_DEFAULT_BUDGET")
    work_budget: float | None = Field(None, ge=0, description="search effort in model evaluations, reproducible "
                                                              "from the seed; 0 = no limit; default "
                                                              "SLD_DEFAULT_WORK_BUDGET")
    seed: int = Field(0, ge=0)
    time_limit: float | None = Field(None, gt=0, description="seconds of search, a safety net (a run it stops "
                                                            "is not reproducible); default SLD_DEFAULT_TIME_LIMIT")
    patience: int | None = Field(None, ge=1, description="stop after this many generations without improvement")
    loss: LossName = Field(
        "auto", description="how constants are fitted: auto (robust_log for positive targets, else lsq), log (log "
                            "residuals), robust_log (log, re-fitted with Huber's loss where a run stands out), "
                            "huber_log (Huber on log residuals, delta 1e-3) or lsq (raw residuals); every fit of "
                            "the run, and every law compared with it, uses it")
    proposers: list[ProposerSpec] | None = Field(None, min_length=1, description="default: offline only")
    test_split: TestSplit | None = Field(None, description="default: the task's held-out test rows, if any")
    description: str = Field("", max_length=2000)

    @field_validator("inputs", "targets", "axis")
    @classmethod
    def _names(cls, value):
        import re

        for name in value or ():
            if not re.match(_COLUMN, name):
                raise ValueError(f"{name!r} cannot be used in a law "
                                 "(letters, digits and _ only, starting with a letter)")
        if value is not None and len(set(value)) != len(value):
            raise ValueError("a column is listed twice")
        return value

    @model_validator(mode="after")
    def _axis_is_not_a_target(self) -> "RunCreate":
        both = [c for c in self.axis or () if c in (self.targets or ())]
        if both:
            raise ValueError(f"axis column(s) {', '.join(both)} are targets: the axis is an input that says how far "
                             "out a row is, the target is what the law predicts")
        return self


class RunPublic(BaseModel):
    id: int
    dataset_id: int
    state: str
    spec: dict[str, Any] = Field(description="the run as resolved when queued: columns, axis, cap, the whole "
                                             "search config (config), proposers, test_split, task")
    progress: dict[str, Any] = Field(description="candidates, generation, best_score, best_validation_r2, "
                                                 "elapsed, budget, proposers' usage")
    best_score: float | None
    cancel_requested: bool
    worker_id: str | None
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    error: str | None
    final: dict[str, Any] | None = Field(None, description="the best law refitted on all training rows")

    @classmethod
    def of(cls, run: RunRecord, *, with_final: bool = True) -> "RunPublic":
        return cls(id=run.id, dataset_id=run.dataset_id, state=run.state.value, spec=run.spec,
                   progress=run.progress, best_score=run.best_score, cancel_requested=run.cancel_requested,
                   worker_id=run.worker_id, attempts=run.attempts, created_at=run.created_at,
                   started_at=run.started_at, finished_at=run.finished_at, heartbeat_at=run.heartbeat_at,
                   error=run.error, final=run.final if with_final else None)


class EventPublic(BaseModel):
    id: int
    kind: str
    payload: dict[str, Any]
    created_at: datetime
