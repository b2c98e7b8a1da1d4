"""sweeps: planned training runs, claimed by trainer workers, whose rows become one dataset

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: Union[str, Sequence[str], None] = "0003"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copies of the column types (a migration must not change when models.py does).
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
TENANT = sa.String(length=100)


def upgrade() -> None:
    op.create_table(
        "sweeps",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("design", JSON, nullable=False),
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("tenant", TENANT, nullable=True),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], name=op.f("fk_sweeps_dataset_id_datasets"),
                                ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweeps")),
    )
    op.create_index(op.f("ix_sweeps_dataset_id"), "sweeps", ["dataset_id"])
    op.create_index(op.f("ix_sweeps_tenant"), "sweeps", ["tenant"])
    op.create_table(
        "sweep_points",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("sweep_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("spec", JSON, nullable=False),
        sa.Column("cost", sa.Float(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=200), nullable=True),
        sa.Column("claimed_at", sa.DateTime(), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tenant", TENANT, nullable=True),
        sa.ForeignKeyConstraint(["sweep_id"], ["sweeps.id"], name=op.f("fk_sweep_points_sweep_id_sweeps"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sweep_points")),
    )
    op.create_index(op.f("ix_sweep_points_sweep_id"), "sweep_points", ["sweep_id"])
    op.create_index("ix_sweep_points_state_cost", "sweep_points", ["state", "cost"])


def downgrade() -> None:
    op.drop_index("ix_sweep_points_state_cost", table_name="sweep_points")
    op.drop_index(op.f("ix_sweep_points_sweep_id"), table_name="sweep_points")
    op.drop_table("sweep_points")
    op.drop_index(op.f("ix_sweeps_tenant"), table_name="sweeps")
    op.drop_index(op.f("ix_sweeps_dataset_id"), table_name="sweeps")
    op.drop_table("sweeps")
