"""``sld db``, ``sld tasks import`` and the start-up schema check, through the real entry point."""
from __future__ import annotations

import pytest
from sqlalchemy import text

import migrations
from agent.storage.rdb import RDBStorage
from agent.storage.rdb.engine import make_engine


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path):
    """``--database-url`` sets DATABASE_URL for the process (its workers inherit it): undo it after each test."""
    from app.core.config import get_settings

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/default.db")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_db_upgrade_creates_the_schema_and_current_reports_it(sld, tmp_path):
    url = f"sqlite:///{tmp_path}/cli.db"
    before = sld("db", "current", "--database-url", url)
    head = migrations.head_revision()
    assert before.exit_code == 0 and f"database: empty; this sld needs: {head} (run `sld db upgrade`)" in before.stdout
    up = sld("db", "upgrade", "--database-url", url)
    assert up.exit_code == 0 and up.stdout.strip() == f"schema at revision {head} (was empty)"
    assert "up to date" in sld("db", "current", "--database-url", url).stdout
    RDBStorage(url, create_schema=False).close()


def test_serve_refuses_an_outdated_schema_with_the_command_to_run(sld, tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/old.db"
    RDBStorage(url).close()
    engine = make_engine(url)
    with engine.begin() as conn:  # pretend the database was made by an older sld
        conn.execute(text("UPDATE alembic_version SET version_num = '0000'"))
    engine.dispose()
    result = sld("serve", "--database-url", url, "--workers", "0")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("error: the database schema is at revision 0000")
    assert "Traceback" not in result.stderr


def test_serve_names_a_bad_database_url(sld):
    result = sld("worker", "--database-url", "mysql://x@y/z")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("error: unsupported database 'mysql': use sqlite:///path or "
                                     "postgresql+psycopg://...")


def test_tasks_import_stores_bundled_tasks_once(sld, tmp_path, sldbench_env):
    url = f"sqlite:///{tmp_path}/tasks.db"
    first = sld("tasks", "import", "parallel_scaling_law", "--database-url", url)
    assert first.exit_code == 0 and first.stdout.strip() == "parallel_scaling_law: dataset 1 (48 rows) imported"
    again = sld("tasks", "import", "parallel_scaling_law", "--database-url", url)
    assert again.stdout.strip() == "parallel_scaling_law: dataset 1 (48 rows) already imported"
    storage = RDBStorage(url)
    try:
        spec = storage.get_task_spec("parallel_scaling_law")
        assert spec.dataset_id == 1 and spec.split_column == "split" and spec.human_law["lines"]
    finally:
        storage.close()


def test_tasks_import_explains_what_it_needs(sld, tmp_path, sldbench_env):
    url = f"sqlite:///{tmp_path}/tasks.db"
    none = sld("tasks", "import", "--database-url", url)
    assert none.exit_code == 2 and none.stderr.strip() == "error: name the task(s) to import, or give --all"
    unknown = sld("tasks", "import", "nope", "--database-url", url)
    assert unknown.exit_code == 2 and unknown.stderr.startswith("error: unknown task 'nope'; bundled tasks: ")


def test_the_migrations_run_from_the_package_not_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no alembic.ini here
    url = f"sqlite:///{tmp_path}/pkg.db"
    migrations.upgrade(url)
    engine = make_engine(url)
    with engine.connect() as conn:
        assert migrations.current_revision(conn) == migrations.head_revision()
    engine.dispose()
