"""Schema version check at start-up; the Alembic scripts live in the ``migrations`` package."""
from __future__ import annotations

from sqlalchemy import Engine, inspect

from agent.storage.errors import SchemaOutdated
from agent.storage.rdb.models import Base


def ensure_schema(engine: Engine, url: str, *, create: bool = True) -> None:
    """Create the schema in an empty database; refuse a database at another revision."""
    import migrations  # the installed Alembic scripts; not a web import

    head = migrations.head_revision()
    with engine.connect() as conn:
        current = migrations.current_revision(conn)
        tables = set(inspect(conn).get_table_names())
    if current == head:
        return
    if current is None and not tables & set(Base.metadata.tables):
        if create:
            migrations.upgrade(url, engine=engine)
            return
        raise SchemaOutdated(f"the database has no sld schema yet: run `sld db upgrade` (DATABASE_URL={_safe(url)})")
    if current is None:
        raise SchemaOutdated("the database has sld tables but no schema version; "
                             "it was not created by sld's migrations (use a fresh database)")
    if current not in migrations.known_revisions():
        raise SchemaOutdated(f"the database schema is at revision {current}, unknown to this version of sld "
                             f"(newest known: {head}); upgrade sld")
    raise SchemaOutdated(f"the database schema is at revision {current} but this sld needs {head}: "
                         f"run `sld db upgrade` (DATABASE_URL={_safe(url)})")


def _safe(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
