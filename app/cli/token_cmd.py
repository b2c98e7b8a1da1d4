"""``sld token``: API tokens for the service (create, list, revoke), kept in its database."""
from __future__ import annotations

import contextlib

import typer
from rich.console import Console
from rich.table import Table

from app.cli import cli

token_app = typer.Typer(help="API tokens: every request to a shared `sld serve` needs one.", no_args_is_help=True)
cli.add_typer(token_app, name="token")

URL_HELP = "Database URL (default: DATABASE_URL, else sqlite:///./sld.db)."


@contextlib.contextmanager
def _storage(database_url: str | None):
    from app.core.config import get_settings
    from app.main import open_storage

    settings = get_settings()
    if database_url:
        settings = settings.model_copy(update={"database_url": database_url})
    storage = open_storage(settings)
    try:
        yield storage
    finally:
        storage.close()


@token_app.command("create")
def create(
    name: str = typer.Option(..., "--name", help="What the token is for (unique among active tokens)."),
    scope: str = typer.Option("read", "--scope", help="read, write (read + create/delete/run) or admin "
                                                      "(write + import bundled tasks)."),
    tenant: str = typer.Option(None, "--tenant", help="Whose datasets and runs it sees (default: the local "
                                                      "tenant's, made before tokens or by the CLI)."),
    database_url: str = typer.Option(None, "--database-url", help=URL_HELP),
):
    """Create a token and print its secret, once: only its SHA-256 is stored."""
    from app.core.auth import issue_token

    with _storage(database_url) as storage:
        token, secret = issue_token(storage, name, scope=scope, tenant=tenant)
    typer.echo(secret)
    typer.echo(f"token {token.name!r} created (scope {token.scope}, tenant {token.tenant or 'local'}). "
               "The line above is its secret, shown only now: send it as `Authorization: Bearer <secret>`.",
               err=True)


@token_app.command("list")
def list_tokens(database_url: str = typer.Option(None, "--database-url", help=URL_HELP)):
    """List tokens (never their secrets), revoked ones too."""
    with _storage(database_url) as storage:
        tokens = storage.list_tokens()
    if not tokens:
        typer.echo("no API tokens: `sld serve` answers without one on 127.0.0.1 only")
        return
    table = Table()
    for column in ("name", "scope", "tenant", "created (UTC)", "revoked (UTC)"):
        table.add_column(column, no_wrap=True)
    for t in tokens:
        table.add_row(t.name, t.scope, t.tenant or "local", f"{t.created_at:%Y-%m-%d %H:%M}",
                      f"{t.revoked_at:%Y-%m-%d %H:%M}" if t.revoked_at else "")
    Console(width=200).print(table)


@token_app.command("revoke")
def revoke(name: str = typer.Argument(..., help="The token's name."),
           database_url: str = typer.Option(None, "--database-url", help=URL_HELP)):
    """Revoke a token: requests with it get 401 from then on."""
    with _storage(database_url) as storage:
        token = storage.revoke_token(name)
    typer.echo(f"token {token.name!r} revoked")
