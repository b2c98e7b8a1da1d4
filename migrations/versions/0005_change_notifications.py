"""change notifications: on PostgreSQL, a commit that touches runs notifies channel sld_changes

The API caches each run's version while nothing changed (agent/storage/rdb/changes.py); its listener
hears other processes' commits through these triggers.  SQLite needs nothing: PRAGMA data_version
tells the same.  Row triggers, so a statement that changes no run (a worker's claim that finds none)
says nothing; no payload, so PostgreSQL folds the notifications of one transaction into one.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05
"""
from typing import Sequence, Union

from alembic import op

revision: str = "0005"
down_revision: Union[str, Sequence[str], None] = "0004"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

CHANNEL = "sld_changes"  # a frozen copy of agent.storage.rdb.changes.CHANNEL (migrations import no app code)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(f"""
        CREATE FUNCTION sld_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('{CHANNEL}', '');
            RETURN NULL;
        END $$""")
    op.execute("""
        CREATE TRIGGER runs_notify_change AFTER INSERT OR UPDATE OR DELETE ON runs
        FOR EACH ROW EXECUTE FUNCTION sld_notify_change()""")
    op.execute("""
        CREATE TRIGGER runs_notify_truncate AFTER TRUNCATE ON runs
        FOR EACH STATEMENT EXECUTE FUNCTION sld_notify_change()""")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS runs_notify_truncate ON runs")
    op.execute("DROP TRIGGER IF EXISTS runs_notify_change ON runs")
    op.execute("DROP FUNCTION IF EXISTS sld_notify_change()")
