"""Training sweeps over HTTP: the design a user posts, what they read back, what a trainer sends."""
from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.storage import SweepPointRecord, SweepRecord
from app.schemas.common import RequestModel
from trainer.spec import ROW_COLUMNS

Params = Annotated[float, Field(ge=1e3, le=1e11, description="target non-embedding parameters")]
Tokens = Annotated[float, Field(ge=1e3, le=1e13)]
Budget = Annotated[float, Field(ge=1e6, le=1e25, description="training FLOPs, 6·N·D")]
WorkerId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[\w.:@/-]+$")]


class SweepCreate(RequestModel):
    """A grid of model sizes × token budgets, or IsoFLOP budgets × model sizes."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field("", max_length=200)
    design: Literal["grid", "isoflop"] = "grid"
    n_params: list[Params] = Field(min_length=1, max_length=64)
    tokens: list[Tokens] = Field(default_factory=list, max_length=64, description="grid: tokens per run")
    budgets: list[Budget] = Field(default_factory=list, max_length=64, description="isoflop: FLOPs per run")
    lrs: list[Annotated[float, Field(gt=0, lt=1)] | None] = Field(
        default_factory=lambda: [None], min_length=1, max_length=16,
        description="peak learning rates; null takes the width's default 3e-3·(96/d)^0.75")
    batch_sizes: list[Annotated[int, Field(ge=1, le=4096)]] = Field(default_factory=lambda: [8], min_length=1,
                                                                    max_length=8)
    seeds: list[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(default_factory=lambda: [0], min_length=1,
                                                                   max_length=16)
    context: int = Field(128, ge=8, le=4096)
    device: Literal["auto", "cpu", "cuda"] = "auto"
    corpus: Literal["stdlib", "stdlib+torch"] = Field(
        "stdlib", description="the training text: the standard library's sources (11.6 MB), or with the installed "
        "torch package's (about 58 MB, for GPU sweeps of more than a few tens of millions of tokens)")
    eval_sequences: int = Field(64, ge=1, le=8192, description="held-out sequences that score each run")

    @model_validator(mode="after")
    def _design_has_its_axis(self) -> "SweepCreate":
        if self.design == "grid" and not self.tokens:
            raise ValueError("a grid design needs tokens (the token budgets each model size is trained on)")
        if self.design == "isoflop" and not self.budgets:
            raise ValueError("an isoflop design needs budgets (training FLOPs, 6·N·D)")
        return self


class SweepPointsAdd(RequestModel):
    """More runs for a sweep (a suggested next run, say): every size × token budget, trained like the
    sweep's other points (its batch size, context and device) and stored in its dataset."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"n_params": [4e5], "tokens": [8e6]}]})

    n_params: list[Params] = Field(min_length=1, max_length=16)
    tokens: list[Tokens] = Field(min_length=1, max_length=16)
    lrs: list[Annotated[float, Field(gt=0, lt=1)] | None] = Field(default_factory=lambda: [None], min_length=1,
                                                                  max_length=4)
    seeds: list[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(default_factory=lambda: [0], min_length=1,
                                                                   max_length=4)


class SweepPointPublic(BaseModel):
    id: int
    sweep_id: int
    seq: int
    spec: dict[str, Any]
    cost: float = Field(description="6·N·D: points are claimed cheapest first")
    state: str
    attempts: int
    worker_id: str | None
    heartbeat_at: datetime | None
    finished_at: datetime | None
    result: dict[str, Any] | None = Field(None, description="the row the point added to the sweep's dataset")
    error: str | None

    @classmethod
    def of(cls, p: SweepPointRecord) -> "SweepPointPublic":
        return cls(id=p.id, sweep_id=p.sweep_id, seq=p.seq, spec=p.spec, cost=p.cost, state=p.state,
                   attempts=p.attempts, worker_id=p.worker_id, heartbeat_at=p.heartbeat_at,
                   finished_at=p.finished_at, result=p.result, error=p.error)


class SweepPublic(BaseModel):
    id: int
    name: str
    design: dict[str, Any]
    dataset_id: int | None = Field(description="the dataset of the sweep's rows; null until the first run finishes")
    counts: dict[str, int] = Field(description="points per state: queued, running, done, failed")
    n_points: int
    finished: bool
    created_at: datetime
    points: list[SweepPointPublic] | None = None

    @classmethod
    def of(cls, s: SweepRecord, points: list[SweepPointRecord] | None = None) -> "SweepPublic":
        return cls(id=s.id, name=s.name, design=s.design, dataset_id=s.dataset_id, counts=s.counts,
                   n_points=s.n_points, finished=s.finished, created_at=s.created_at,
                   points=None if points is None else [SweepPointPublic.of(p) for p in points])


class ClaimRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    worker_id: WorkerId


class PointClaim(BaseModel):
    point: SweepPointPublic
    heartbeat_interval: float = Field(description="seconds between the trainer's heartbeats")
    stale_after: float = Field(description="a point whose trainer is silent this long is queued again")


class Heartbeat(RequestModel):
    model_config = ConfigDict(extra="forbid")
    worker_id: WorkerId


class PointResult(RequestModel):
    """A finished run's row: exactly the trainer's columns (``trainer.spec.TrainResult``)."""

    model_config = ConfigDict(extra="forbid")
    worker_id: WorkerId
    row: dict[str, float | int | str]

    @model_validator(mode="after")
    def _row_has_the_columns(self) -> "PointResult":
        missing = [c for c in ROW_COLUMNS if c not in self.row]
        extra = [c for c in self.row if c not in ROW_COLUMNS]
        if missing or extra:
            raise ValueError("row must hold exactly the trainer's columns"
                             + (f"; missing {', '.join(missing)}" if missing else "")
                             + (f"; unknown {', '.join(extra[:5])}" if extra else ""))
        return self


class PointFailure(RequestModel):
    model_config = ConfigDict(extra="forbid")
    worker_id: WorkerId
    error: str = Field(max_length=2000)
