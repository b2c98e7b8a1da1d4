"""``sld tasks import``: bundled SLDBench tasks as datasets in the service's database."""
from __future__ import annotations

import typer

from agent.errors import DataError
from app.cli.tasks_cmd import tasks_app


@tasks_app.command("import")
def import_tasks(
    names: list[str] = typer.Argument(None, help="Task names (see 'sld tasks list')."),
    all_tasks: bool = typer.Option(False, "--all", help="Import every bundled task."),
    force: bool = typer.Option(False, "--force", help="Import again even if imported before."),
    database_url: str = typer.Option(None, "--database-url", help="Default: DATABASE_URL, else sqlite:///./sld.db."),
):
    """Store bundled tasks as datasets (train + test rows, told apart by a 'split' column)."""
    from app.core.config import get_settings
    from app.main import open_storage
    from app.services.task_import import bundled_task_names, import_task

    if all_tasks == bool(names):
        raise DataError("name the task(s) to import, or give --all")
    settings = get_settings()
    if database_url:
        settings = settings.model_copy(update={"database_url": database_url})
    storage = open_storage(settings)
    try:
        for name in bundled_task_names() if all_tasks else names:
            ds, created = import_task(storage, name, force=force)
            state = "imported" if created else "already imported"
            typer.echo(f"{name}: dataset {ds.id} ({ds.n_rows} rows) {state}")
    finally:
        storage.close()
