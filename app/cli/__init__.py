"""The ``sld`` command line: a face over tasks/ and agent/, like the REST API.

Each command group lives in its own module and registers itself on ``cli``.
"""
from __future__ import annotations

import importlib

import typer

cli = typer.Typer(
    name="sld",
    help="sld - discover scaling laws that extrapolate: store results, search laws, compare with the literature.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Modules that add commands to ``cli``; a missing one (feature not built yet) is skipped.
_COMMAND_MODULES = ["tasks_cmd", "bench_cmd", "discover_cmd", "answers_cmd", "suggest_cmd", "serve_cmd", "db_cmd",
                    "tasks_import_cmd", "token_cmd", "train_cmd"]


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            importlib.import_module(f"app.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"app.cli.{name}":
                raise


def main() -> None:
    """Entry point: user-facing errors become one line on stderr and exit code 2."""
    from agent.errors import SldError

    _register()
    try:
        cli()
    except SldError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None
