"""Alembic environment: the URL comes from the caller (``sld db upgrade``) or from DATABASE_URL."""
from __future__ import annotations

import os

from alembic import context

from agent.storage.rdb.engine import make_engine
from agent.storage.rdb.models import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    # Plain `alembic`: the service's variables, read here because migrations import nothing from app/.
    return os.environ.get("DATABASE_URL") or os.environ.get("SLD_DATABASE_URL") or "sqlite:///./sld.db"


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    engine = config.attributes.get("engine") or make_engine(_url())
    with engine.connect() as connection:
        # render_as_batch lets later migrations ALTER tables on SQLite too.
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
    if "engine" not in config.attributes:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
