"""Alembic migrations of sld's database, runnable from the installed package.

``upgrade(url)`` is what ``sld db upgrade`` calls; no alembic.ini in the
current directory is needed (``alembic.ini`` here serves the plain ``alembic``
command: ``alembic -c migrations/alembic.ini upgrade head``).
"""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config(url: str | None = None, *, engine: Engine | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(SCRIPT_LOCATION))
    if url:
        cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if engine is not None:
        cfg.attributes["engine"] = engine
    return cfg


def upgrade(url: str, revision: str = "head", *, engine: Engine | None = None) -> None:
    command.upgrade(alembic_config(url, engine=engine), revision)


def downgrade(url: str, revision: str, *, engine: Engine | None = None) -> None:
    command.downgrade(alembic_config(url, engine=engine), revision)


def head_revision() -> str:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def known_revisions() -> set[str]:
    return {s.revision for s in ScriptDirectory.from_config(alembic_config()).walk_revisions()}


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()
