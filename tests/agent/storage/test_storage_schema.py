"""The schema comes from the Alembic migrations and its version is checked at start-up."""
from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

import migrations
from agent.storage import SchemaOutdated
from agent.storage.rdb import RDBStorage
from agent.storage.rdb.engine import make_engine
from agent.storage.rdb.models import Base


def test_the_migrations_create_exactly_the_models_schema(storage):
    with storage.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []
    with storage.engine.connect() as conn:
        assert migrations.current_revision(conn) == migrations.head_revision()


def test_an_empty_database_is_refused_when_schema_creation_is_off(tmp_path):
    with pytest.raises(SchemaOutdated, match="run `sld db upgrade`"):
        RDBStorage(f"sqlite:///{tmp_path}/new.db", create_schema=False)


def test_an_older_schema_is_refused_with_the_command_to_run(tmp_path):
    url = f"sqlite:///{tmp_path}/old.db"
    RDBStorage(url).close()
    migrations.downgrade(url, "base")
    engine = make_engine(url)
    with engine.begin() as conn:  # a database at a revision this code has never heard of
        conn.execute(text("INSERT INTO alembic_version VALUES ('0000')"))
        conn.execute(text("CREATE TABLE datasets (id INTEGER PRIMARY KEY)"))
    with pytest.raises(SchemaOutdated, match="revision 0000, unknown to this version of sld"):
        RDBStorage(url)


def test_downgrade_and_upgrade_round_trip(tmp_path):
    url = f"sqlite:///{tmp_path}/cycle.db"
    RDBStorage(url).close()
    migrations.downgrade(url, "base")
    with pytest.raises(SchemaOutdated, match="no sld schema yet"):
        RDBStorage(url, create_schema=False)
    migrations.upgrade(url)
    RDBStorage(url, create_schema=False).close()
