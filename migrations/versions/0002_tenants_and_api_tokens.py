"""tenants and API tokens: api_tokens (hashed secrets), a tenant on datasets, runs and task specs

Existing rows keep a NULL tenant: they belong to the local tenant (no token, or a token made
without ``--tenant``).  Task specs were keyed by name alone; now a name is unique within a
tenant, so the table gets a surrogate key (rebuilt: it holds a few rows, one per imported task).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-20
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0002"
down_revision: Union[str, Sequence[str], None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copies of the column types (a migration must not change when models.py does).
JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
TENANT = sa.String(length=100)
SPEC_COLUMNS = ("name", "dataset_id", "problem", "human_law", "split_column", "created_at")


def _spec_table(*extra: sa.Column) -> sa.Table:
    """A lightweight description of task_specs for copying its rows across the rebuild."""
    return sa.table("task_specs", *extra, sa.column("name", sa.String(200)), sa.column("dataset_id", sa.Integer()),
                    sa.column("problem", JSON), sa.column("human_law", JSON),
                    sa.column("split_column", sa.String(200)), sa.column("created_at", sa.DateTime()))


def _saved_specs(where=None) -> list[dict]:
    table = _spec_table(sa.column("tenant", TENANT)) if where is not None else _spec_table()
    query = sa.select(*[table.c[name] for name in SPEC_COLUMNS])
    if where is not None:
        query = query.where(where(table))
    return [dict(row) for row in op.get_bind().execute(query).mappings()]


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("tenant", TENANT, nullable=True),
        sa.Column("scope", sa.String(length=16), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("revoked_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_tokens")),
        sa.UniqueConstraint("secret_hash", name=op.f("uq_api_tokens_secret_hash")),
    )
    for table in ("datasets", "runs"):
        op.add_column(table, sa.Column("tenant", TENANT, nullable=True))
        op.create_index(op.f(f"ix_{table}_tenant"), table, ["tenant"])

    specs = _saved_specs()
    op.drop_index(op.f("ix_task_specs_dataset_id"), table_name="task_specs")
    op.drop_table("task_specs")
    _create_task_specs(with_tenant=True)
    if specs:
        op.bulk_insert(_spec_table(), specs)


def downgrade() -> None:
    # Only the local tenant's task specs fit the older table (one row per name).
    specs = _saved_specs(where=lambda t: t.c.tenant.is_(None))
    op.drop_index(op.f("ix_task_specs_dataset_id"), table_name="task_specs")
    op.drop_table("task_specs")
    _create_task_specs(with_tenant=False)
    if specs:
        op.bulk_insert(_spec_table(), specs)
    for table in ("runs", "datasets"):
        op.drop_index(op.f(f"ix_{table}_tenant"), table_name=table)
        # A plain ALTER (SQLite 3.35+): a batch rebuild would drop datasets, and with it (ON DELETE
        # CASCADE) every batch and run.
        op.drop_column(table, "tenant")
    op.drop_table("api_tokens")


def _create_task_specs(*, with_tenant: bool) -> None:
    keys = [
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("tenant", TENANT, nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
    ] if with_tenant else [sa.Column("name", sa.String(length=200), nullable=False)]
    constraints = [
        sa.PrimaryKeyConstraint("id", name=op.f("pk_task_specs")),
        sa.UniqueConstraint("tenant", "name", name=op.f("uq_task_specs_tenant")),
    ] if with_tenant else [sa.PrimaryKeyConstraint("name", name=op.f("pk_task_specs"))]
    op.create_table(
        "task_specs",
        *keys,
        sa.Column("dataset_id", sa.Integer(), nullable=True),
        sa.Column("problem", JSON, nullable=False),
        sa.Column("human_law", JSON, nullable=True),
        sa.Column("split_column", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["dataset_id"], ["datasets.id"], ondelete="SET NULL",
                                name=op.f("fk_task_specs_dataset_id_datasets")),
        *constraints,
    )
    op.create_index(op.f("ix_task_specs_dataset_id"), "task_specs", ["dataset_id"])
