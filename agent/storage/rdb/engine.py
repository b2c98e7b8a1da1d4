"""Engines for SQLite and PostgreSQL with the settings sld relies on.

SQLite: WAL (readers never block the writer), foreign keys on, a busy timeout,
and ``BEGIN IMMEDIATE`` for write transactions so that two writers queue up
instead of failing when one upgrades a read lock.  pysqlite's own transaction
handling is switched off so that our BEGIN is the one that counts.
"""
from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from agent.errors import SldError

WRITE_OPTION = "sld_write"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def make_engine(url: str, **kwargs: Any) -> Engine:
    try:
        parsed = make_url(url)
    except Exception:  # sqlalchemy raises ArgumentError with a long message
        raise SldError(f"not a database URL: {url!r} (e.g. sqlite:///./sld.db or "
                       "postgresql+psycopg://user:password@host/db)") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(url, parsed.database, **kwargs)
    if backend == "postgresql":
        if parsed.get_driver_name() not in ("psycopg", None):
            raise SldError(f"use the psycopg 3 driver: postgresql+psycopg://... (got {parsed.drivername})")
        url = parsed.set(drivername="postgresql+psycopg")
        kwargs.setdefault("pool_pre_ping", True)
        return create_engine(url, **kwargs)
    raise SldError(f"unsupported database {backend!r}: use sqlite:///path or postgresql+psycopg://...")


def _sqlite_engine(url: str, database: str | None, **kwargs: Any) -> Engine:
    connect_args = {"timeout": 60.0, "check_same_thread": False}
    memory = database in (None, "", ":memory:")
    if memory:
        kwargs.setdefault("poolclass", StaticPool)  # one shared connection, or each would be a new db
    for key in ("pool_size", "max_overflow", "pool_timeout", "pool_recycle"):
        kwargs.pop(key, None)  # meaningless for SQLite's pool
    engine = create_engine(url, connect_args=connect_args, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection):
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine
