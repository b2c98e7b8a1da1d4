"""comparisons: a run's law against another law, queued by the API and fitted by a worker

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: Union[str, Sequence[str], None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copies of the column types (a migration must not change when models.py does).
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
TENANT = sa.String(length=100)


def upgrade() -> None:
    op.create_table(
        "comparisons",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("law", JSON, nullable=False),
        sa.Column("result", JSON, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("worker_id", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=True),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("tenant", TENANT, nullable=True),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_comparisons_run_id_runs"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comparisons")),
    )
    op.create_index(op.f("ix_comparisons_run_id"), "comparisons", ["run_id"])
    op.create_index("ix_comparisons_state_started", "comparisons", ["state", "started_at"])


def downgrade() -> None:
    op.drop_index("ix_comparisons_state_started", table_name="comparisons")
    op.drop_index(op.f("ix_comparisons_run_id"), table_name="comparisons")
    op.drop_table("comparisons")
