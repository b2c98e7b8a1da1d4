"""``sld db``: the database schema (Alembic migrations shipped inside the package)."""
from __future__ import annotations

import typer

from app.cli import cli

db_app = typer.Typer(help="The database schema: upgrade it, show its revision.", no_args_is_help=True)
cli.add_typer(db_app, name="db")

URL_HELP = "Database URL (default: DATABASE_URL, else sqlite:///./sld.db)."


def _url(database_url: str | None) -> str:
    from app.core.config import get_settings

    return database_url or get_settings().database_url


@db_app.command("upgrade")
def upgrade(database_url: str = typer.Option(None, "--database-url", help=URL_HELP),
            revision: str = typer.Option("head", help="Target revision.")):
    """Create or upgrade the schema to this version of sld."""
    import migrations
    from agent.storage.rdb.engine import make_engine

    url = _url(database_url)
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            before = migrations.current_revision(conn)
        migrations.upgrade(url, revision, engine=engine)
        with engine.connect() as conn:
            after = migrations.current_revision(conn)
    finally:
        engine.dispose()
    typer.echo(f"schema at revision {after} (was {before or 'empty'})")


@db_app.command("current")
def current(database_url: str = typer.Option(None, "--database-url", help=URL_HELP)):
    """Show the schema revision of the database and the one this sld needs."""
    import migrations
    from agent.storage.rdb.engine import make_engine

    engine = make_engine(_url(database_url))
    try:
        with engine.connect() as conn:
            rev = migrations.current_revision(conn)
    finally:
        engine.dispose()
    head = migrations.head_revision()
    note = "up to date" if rev == head else "run `sld db upgrade`"
    typer.echo(f"database: {rev or 'empty'}; this sld needs: {head} ({note})")
