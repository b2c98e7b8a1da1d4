"""Upgrading a database made by an older sld keeps every row: before tenants, rows are the local tenant's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from sqlalchemy import text

import migrations
from agent.storage import SchemaOutdated
from agent.storage.rdb import RDBStorage
from agent.storage.rdb.engine import make_engine
from agent.storage.testing import postgres_url, scratch_postgres

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def empty_database(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/old.db"
        return
    request.getfixturevalue("postgres_database")  # skips (or fails in CI) without PostgreSQL
    with scratch_postgres(postgres_url()) as url:
        yield url


def test_upgrading_from_0001_keeps_datasets_runs_and_task_specs_in_the_local_tenant(empty_database):
    migrations.upgrade(empty_database, "0001")
    engine = make_engine(empty_database)
    with engine.begin() as conn:  # what sld 0001 stored: a dataset with its task spec, and a run
        conn.execute(text("INSERT INTO datasets (name, description, n_rows, n_batches, columns, created_at, "
                          "updated_at) VALUES ('toy', '', 3, 0, '[]', '2026-01-01', '2026-01-01')"))
        conn.execute(text("INSERT INTO task_specs (name, dataset_id, problem, created_at) "
                          "VALUES ('toy', 1, '{\"inputs\": [\"N\"]}', '2026-01-01')"))
        conn.execute(text("INSERT INTO runs (dataset_id, state, spec, progress, generation, cancel_requested, "
                          "attempts, created_at) VALUES (1, 'done', '{}', '{}', 0, false, 1, '2026-01-01')"))
    with pytest.raises(SchemaOutdated, match=f"needs {migrations.head_revision()}: run `sld db upgrade`"):
        RDBStorage(empty_database, create_schema=False)
    migrations.upgrade(empty_database)
    storage = RDBStorage(empty_database, create_schema=False)
    try:
        local = storage.for_tenant(None)
        assert local.get_dataset(1).name == "toy" and local.get_run(1).tenant is None
        assert local.get_task_spec("toy").problem == {"inputs": ["N"]} and local.find_task_spec(1).name == "toy"
        assert storage.for_tenant("team").list_datasets().total == 0
        again = storage.for_tenant("team").create_dataset(pd.DataFrame({"N": [1.0], "loss": [2.0]}),
                                                          task={"name": "toy", "problem": {}})
        assert again.id == 2 and storage.for_tenant("team").get_task_spec("toy").dataset_id == 2
    finally:
        storage.close()
    migrations.downgrade(empty_database, "0001")  # back again: rows survive, the local tenant's task specs too
    with engine.connect() as conn:
        assert conn.execute(text("SELECT name, dataset_id FROM task_specs")).all() == [("toy", 1)]
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 1
        assert conn.execute(text("SELECT count(*) FROM datasets")).scalar() == 2
        assert conn.execute(text("SELECT count(*) FROM dataset_batches")).scalar() == 1
    engine.dispose()


def test_the_migrations_import_nothing_from_the_service(empty_database):
    code = ("import sys, migrations; migrations.upgrade(sys.argv[1]); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'app'))")
    done = subprocess.run([sys.executable, "-c", code, empty_database], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    plain = subprocess.run([sys.executable, "-m", "alembic", "-c", "migrations/alembic.ini", "current"],
                           capture_output=True, text=True, timeout=120, cwd=REPO,
                           env={**os.environ, "DATABASE_URL": empty_database, "SLD_DATABASE_URL": ""})
    assert plain.returncode == 0, plain.stderr
    assert f"{migrations.head_revision()} (head)" in plain.stdout
