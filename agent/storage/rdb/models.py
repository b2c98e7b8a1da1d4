"""SQLAlchemy 2.0 tables of the RDB storage.  The Alembic migrations in ``migrations/``
create exactly this schema (a test compares them)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, LargeBinary, MetaData,
    String, Text, UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import BYTEA, JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Stable constraint names make migrations reproducible across SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

Json = JSON().with_variant(JSONB(), "postgresql")
Blob = LargeBinary().with_variant(BYTEA(), "postgresql")
Tenant = String(100)  # None (NULL) is the local tenant: rows made without a token, or with a token without one
BigId = BigInteger().with_variant(Integer(), "sqlite")  # SQLite autoincrements INTEGER only


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class DatasetRow(Base):
    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    description: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str | None] = mapped_column(String(200), nullable=True)
    n_rows: Mapped[int] = mapped_column(BigInteger, default=0)
    n_batches: Mapped[int] = mapped_column(Integer, default=0)
    columns: Mapped[Any] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    updated_at: Mapped[datetime] = mapped_column(DateTime)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True, index=True)


class DatasetBatchRow(Base):
    """One appended batch of rows, stored as a Parquet blob."""

    __tablename__ = "dataset_batches"
    __table_args__ = (UniqueConstraint("dataset_id", "seq"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    n_rows: Mapped[int] = mapped_column(Integer)
    format: Mapped[str] = mapped_column(String(16), default="parquet")
    data: Mapped[bytes] = mapped_column(Blob)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class TaskSpecRow(Base):
    """A named problem; names are unique within a tenant, so each tenant imports a bundled task once."""

    __tablename__ = "task_specs"
    __table_args__ = (UniqueConstraint("tenant", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True, index=True)
    problem: Mapped[Any] = mapped_column(Json)
    human_law: Mapped[Any | None] = mapped_column(Json, nullable=True)
    split_column: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class RunRow(Base):
    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_state_heartbeat", "state", "heartbeat_at"),
        Index("ix_runs_dataset_state_score", "dataset_id", "state", "best_score"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    state: Mapped[str] = mapped_column(String(16))
    spec: Mapped[Any] = mapped_column(Json)
    progress: Mapped[Any] = mapped_column(Json)
    best_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    generation: Mapped[int] = mapped_column(Integer, default=0)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    final: Mapped[Any | None] = mapped_column(Json, nullable=True)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True, index=True)  # the dataset's


class CheckpointRow(Base):
    """The search state after the last saved generation (zlib-compressed JSON)."""

    __tablename__ = "run_checkpoints"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    generation: Mapped[int] = mapped_column(Integer)
    state: Mapped[bytes] = mapped_column(Blob)
    updated_at: Mapped[datetime] = mapped_column(DateTime)


class CandidateRow(Base):
    __tablename__ = "candidates"
    __table_args__ = (Index("ix_candidates_run_score", "run_id", "score"),)

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    generation: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    proposer: Mapped[str] = mapped_column(String(100))
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    r2: Mapped[float | None] = mapped_column(Float, nullable=True)
    n_constants: Mapped[int] = mapped_column(Integer)
    complexity: Mapped[int] = mapped_column(Integer)
    seconds: Mapped[float] = mapped_column(Float)
    canonical: Mapped[str] = mapped_column(Text)
    payload: Mapped[Any] = mapped_column(Json)


class EventRow(Base):
    __tablename__ = "run_events"
    __table_args__ = (Index("ix_run_events_run_id", "run_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(50))
    payload: Mapped[Any] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class ComparisonRow(Base):
    """A comparison of a run's law with another law, queued for a worker (see ``comparisons.py``)."""

    __tablename__ = "comparisons"
    __table_args__ = (Index("ix_comparisons_state_started", "state", "started_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    state: Mapped[str] = mapped_column(String(16))
    law: Mapped[Any] = mapped_column(Json)
    result: Mapped[Any | None] = mapped_column(Json, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    started_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True)  # the run's


class SweepRow(Base):
    """A planned set of training runs (see ``sweeps.py``); its rows go to one dataset."""

    __tablename__ = "sweeps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    design: Mapped[Any] = mapped_column(Json)
    dataset_id: Mapped[int | None] = mapped_column(
        ForeignKey("datasets.id", ondelete="SET NULL"), nullable=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True, index=True)


class SweepPointRow(Base):
    """One training run of a sweep, claimed by a trainer worker cheapest first."""

    __tablename__ = "sweep_points"
    __table_args__ = (Index("ix_sweep_points_state_cost", "state", "cost"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    sweep_id: Mapped[int] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int] = mapped_column(Integer)
    spec: Mapped[Any] = mapped_column(Json)
    cost: Mapped[float] = mapped_column(Float)
    state: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    result: Mapped[Any | None] = mapped_column(Json, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True)  # the sweep's


class ApiTokenRow(Base):
    """An API token: the SHA-256 of its secret (the secret itself is shown once and never stored)."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100))
    tenant: Mapped[str | None] = mapped_column(Tenant, nullable=True)
    scope: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
