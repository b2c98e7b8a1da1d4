"""Frozen records that storage hands out: plain data, never ORM objects.

Datetimes are timezone-aware UTC.  ``dict`` fields are JSON-able copies.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class RunState(str, enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (RunState.DONE, RunState.FAILED, RunState.CANCELLED)


@dataclass(frozen=True)
class ColumnInfo:
    """One dataset column: numeric columns carry their range, text columns their distinct values."""

    name: str
    kind: str  # "number" | "text"
    min: float | None = None
    max: float | None = None
    n_distinct: int | None = None  # text columns only
    values: tuple[str, ...] = ()  # text columns: the first distinct values, capped

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "min": self.min, "max": self.max,
                "n_distinct": self.n_distinct, "values": list(self.values)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ColumnInfo":
        return cls(name=d["name"], kind=d["kind"], min=d.get("min"), max=d.get("max"),
                   n_distinct=d.get("n_distinct"), values=tuple(d.get("values") or ()))


@dataclass(frozen=True)
class DatasetRecord:
    id: int
    name: str
    description: str
    source: str | None  # free-form provenance set by the caller (e.g. an imported bundled task)
    n_rows: int
    n_batches: int
    columns: tuple[ColumnInfo, ...]
    created_at: datetime
    updated_at: datetime
    tenant: str | None = None  # whose it is; None: the local tenant (no token, or a token without one)

    def column(self, name: str) -> ColumnInfo | None:
        return next((c for c in self.columns if c.name == name), None)


@dataclass(frozen=True)
class TaskSpecRecord:
    """A named problem on a dataset, with the literature's law when there is one."""

    name: str
    dataset_id: int | None
    problem: dict[str, Any]  # agent.problem.Problem.to_dict()
    human_law: dict[str, Any] | None  # {"lines": [...], "constants": {group: {name: value}}, ...}
    split_column: str | None  # rows whose value here is "test" are held out
    created_at: datetime
    tenant: str | None = None  # task names are unique within a tenant


@dataclass(frozen=True)
class RunRecord:
    id: int
    dataset_id: int
    state: RunState
    spec: dict[str, Any]
    progress: dict[str, Any]
    best_score: float | None
    generation: int
    cancel_requested: bool
    worker_id: str | None
    heartbeat_at: datetime | None
    attempts: int  # how many times a worker claimed it (> 1 after a resume)
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    final: dict[str, Any] | None
    tenant: str | None = None  # the tenant of the run's dataset


TOKEN_SCOPES = ("read", "write", "admin")  # each allows what the ones before it allow


@dataclass(frozen=True)
class TokenRecord:
    """An API token as stored: its secret is never kept, only the secret's SHA-256."""

    id: int
    name: str
    tenant: str | None  # None: the local tenant
    scope: str  # one of TOKEN_SCOPES
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None


@dataclass(frozen=True)
class RunVersion:
    """What identifies a run's state without its payloads (spec, final law, progress): a read
    served from a cache checks this alone."""

    id: int
    state: str
    generation: int
    best_score: float | None
    finished_at: datetime | None


COMPARISON_STATES = ("queued", "running", "done", "failed")


@dataclass(frozen=True)
class ComparisonRecord:
    """A run's law compared with another law: queued by the API, fitted by a worker.

    ``law``: the other law ({"name", "lines"}); ``result``: the comparison once done;
    ``error``: why it failed (a law that cannot be fitted, a run too large).
    """

    id: int
    run_id: int
    state: str  # one of COMPARISON_STATES
    law: dict[str, Any]
    created_at: datetime
    result: dict[str, Any] | None = None
    error: str | None = None
    worker_id: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None
    tenant: str | None = None

    @property
    def finished(self) -> bool:
        return self.state in ("done", "failed")


SWEEP_POINT_STATES = ("queued", "running", "done", "failed")


@dataclass(frozen=True)
class SweepRecord:
    """A planned set of training runs whose results become one dataset.

    ``dataset_id`` is None until the first point's row arrives (a dataset is never empty);
    ``counts`` maps each of SWEEP_POINT_STATES to how many points are in it.
    """

    id: int
    name: str
    design: dict[str, Any]
    created_at: datetime
    dataset_id: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    tenant: str | None = None

    @property
    def n_points(self) -> int:
        return sum(self.counts.values())

    @property
    def finished(self) -> bool:
        return self.counts.get("queued", 0) == 0 and self.counts.get("running", 0) == 0


@dataclass(frozen=True)
class SweepPointRecord:
    """One training run of a sweep: claimed by a trainer, heartbeat while it trains, then one row."""

    id: int
    sweep_id: int
    seq: int
    spec: dict[str, Any]
    cost: float
    state: str  # one of SWEEP_POINT_STATES
    attempts: int = 0
    worker_id: str | None = None
    claimed_at: datetime | None = None
    heartbeat_at: datetime | None = None
    finished_at: datetime | None = None
    result: dict[str, Any] | None = None
    error: str | None = None


@dataclass(frozen=True)
class RunEvent:
    id: int
    run_id: int
    kind: str
    payload: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class CandidatePoint:
    """A candidate's indexed columns without its payload: what plots of a whole run read."""

    id: int
    generation: int
    status: str
    proposer: str
    score: float | None
    r2: float | None
    n_constants: int
    complexity: int


@dataclass(frozen=True)
class Page(Generic[T]):
    items: tuple[T, ...]
    total: int
    offset: int
    limit: int


@dataclass(frozen=True)
class Checkpoint:
    run_id: int
    generation: int
    state: dict[str, Any] = field(repr=False)
    updated_at: datetime | None = None
