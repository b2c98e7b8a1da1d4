"""initial schema: datasets (Parquet row batches), task specs, runs, checkpoints, candidates, events

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: Union[str, Sequence[str], None] = None
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copies of the column types (a migration must not change when models.py does).
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
BLOB = sa.LargeBinary().with_variant(postgresql.BYTEA(), "postgresql")
BIG_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=200), nullable=True),
        sa.Column("n_rows", sa.BigInteger(), nullable=False),
        sa.Column("n_batches", sa.Integer(), nullable=False),
        sa.Column("columns", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_datasets")),
    )
    op.create_table(
        "dataset_batches",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("n_rows", sa.Integer(), nullable=False),
        sa.Column("format", sa.String(length=16), nullable=False),
        sa.Column("data", BLOB, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE",
                                name=op.f("fk_dataset_batches_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_dataset_batches")),
        sa.UniqueConstraint("dataset_id", "seq", name=op.f("uq_dataset_batches_dataset_id")),
    )
    op.create_index(op.f("ix_dataset_batches_dataset_id"), "dataset_batches", ["dataset_id"])
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("spec", JSON, nullable=False),
        sa.Column("progress", JSON, nullable=False),
        sa.Column("best_score", sa.Float(), nullable=True),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False),
        sa.Column("worker_id", sa.String(length=200), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("final", JSON, nullable=True),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="CASCADE",
                                name=op.f("fk_runs_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    op.create_index("ix_runs_dataset_state_score", "runs", ["dataset_id", "state", "best_score"])
    op.create_index("ix_runs_state_heartbeat", "runs", ["state", "heartbeat_at"])
    op.create_table(
        "task_specs",
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("problem", JSON, nullable=False),
        sa.Column("human_law", JSON, nullable=True),
        sa.Column("split_column", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="SET NULL",
                                name=op.f("fk_task_specs_dataset_id_datasets")),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_task_specs")),
    )
    op.create_index(op.f("ix_task_specs_dataset_id"), "task_specs", ["dataset_id"])
    op.create_table(
        "candidates",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("proposer", sa.String(length=100), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("r2", sa.Float(), nullable=True),
        sa.Column("n_constants", sa.Integer(), nullable=False),
        sa.Column("complexity", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("canonical", sa.Text(), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE",
                                name=op.f("fk_candidates_run_id_runs")),
        sa.PrimaryKeyConstraint("run_id", "id", name=op.f("pk_candidates")),
    )
    op.create_index("ix_candidates_run_score", "candidates", ["run_id", "score"])
    op.create_table(
        "run_checkpoints",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("state", BLOB, nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE",
                                name=op.f("fk_run_checkpoints_run_id_runs")),
        sa.PrimaryKeyConstraint("run_id", name=op.f("pk_run_checkpoints")),
    )
    op.create_table(
        "run_events",
        sa.Column("id", BIG_ID, autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=50), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE",
                                name=op.f("fk_run_events_run_id_runs")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_run_events")),
    )
    op.create_index("ix_run_events_run_id", "run_events", ["run_id", "id"])


def downgrade() -> None:
    for table in ("run_events", "run_checkpoints", "candidates", "task_specs", "runs",
                  "dataset_batches", "datasets"):
        op.drop_table(table)
