"""Databases for tests (Optuna's ``optuna.testing.storages`` is the model).

``SLD_TEST_POSTGRES_URL`` names a PostgreSQL server; each test session gets
its own scratch database there (created and dropped), so concurrent sessions
never see each other's rows.  SQLite databases are files in a temp folder.
"""
from __future__ import annotations

import contextlib
import os
import uuid
from typing import Iterator

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ENV = "SLD_TEST_POSTGRES_URL"
TABLES = ("sweep_points", "sweeps", "comparisons", "run_events", "run_checkpoints", "candidates", "task_specs", "runs", "dataset_batches",
          "datasets", "api_tokens")


def postgres_url() -> str | None:
    return os.environ.get(POSTGRES_ENV) or None


def must_have_postgres() -> bool:
    """In CI the PostgreSQL tests must run, never be skipped."""
    return bool(os.environ.get("CI"))


@contextlib.contextmanager
def scratch_postgres(base_url: str) -> Iterator[str]:
    """A fresh database on the server of ``base_url``; dropped afterwards."""
    url = make_url(base_url)
    name = f"sld_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def empty_tables(url: str) -> None:
    """Remove every row (keeps the schema): a clean slate between tests, fast."""
    engine = create_engine(make_url(url).set(drivername="postgresql+psycopg"))
    try:
        with engine.begin() as conn:
            conn.execute(text(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE"))
    finally:
        engine.dispose()
