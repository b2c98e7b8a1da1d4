"""``sld tasks``: the bundled SLDBench tasks and their human laws."""
from __future__ import annotations

import json

import typer
from rich.console import Console
from rich.table import Table

from app.cli import cli
from tasks import SLDBENCH_CITATION, all_tasks, get_task

tasks_app = typer.Typer(help="The bundled SLDBench tasks and their human laws.", no_args_is_help=True)
cli.add_typer(tasks_app, name="tasks")


def _axis(axis) -> str:
    return ", ".join(axis) if axis else "none (no scale axis)"


def _columns(names) -> str:
    # Long column lists (the mixture task has 5 + 5) would swamp the table.
    return ", ".join(names) if len(names) <= 4 else f"{names[0]} .. {names[-1]} ({len(names)})"


@tasks_app.command("list")
def list_tasks(as_json: bool = typer.Option(False, "--json", help="Print the task specs as one JSON array.")):
    """List the bundled tasks: columns, extrapolation axis, constant cap."""
    specs = all_tasks()
    if as_json:
        typer.echo(json.dumps([s.model_dump(mode="json", exclude={"human_law"}) for s in specs], indent=1))
        return
    table = Table(caption=SLDBENCH_CITATION, caption_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("inputs -> targets", overflow="fold")
    table.add_column("groups", justify="right")
    table.add_column("extrapolates along", overflow="fold")
    table.add_column("cap", justify="right")
    for s in specs:
        table.add_row(s.name, f"{_columns(s.inputs)} -> {_columns(s.targets)}", str(len(s.groups)),
                      _axis(s.axis), str(s.max_constants))
    Console().print(table, highlight=False)


@tasks_app.command("show")
def show_task(
    task: str = typer.Argument(..., help="A task name (see 'sld tasks list') or a path to a task spec .json file."),
    constants: bool = typer.Option(False, "--constants", help="Also print the published constants per group."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole spec as JSON."),
):
    """Show one task: description, columns, cap, and its human law."""
    spec = get_task(task)
    if as_json:
        typer.echo(json.dumps(spec.model_dump(mode="json"), indent=1))
        return
    console = Console()
    console.print(f"[bold]{spec.name}[/bold]")
    console.print(spec.description, highlight=False)
    facts = Table.grid(padding=(0, 2))
    facts.add_row("data from", spec.citation or "-")
    facts.add_row("inputs", ", ".join(spec.inputs))
    facts.add_row("targets", ", ".join(spec.targets))
    facts.add_row("group column", spec.group or "none")
    facts.add_row("extrapolates along", _axis(spec.axis))
    facts.add_row("constant cap", f"{spec.max_constants} per group")
    console.print(facts, highlight=False)
    if spec.human_law is None:
        console.print("no human law")
        return
    law = spec.law()
    console.print(f"\n[bold]human law[/bold] ({spec.human_law.source})", highlight=False)
    for line in law.lines:
        console.print(f"  {line}", highlight=False, markup=False)
    groups = spec.groups
    shown = ", ".join(groups[:6]) + (f", ... ({len(groups)} in all)" if len(groups) > 6 else "")
    console.print(f"{law.n_constants} constants: {', '.join(law.constants)}; published for {len(groups)} "
                  f"group(s): {shown}", highlight=False, markup=False)
    if constants:
        table = Table("group", *law.constants)
        for group, values in spec.human_law.constants.items():
            table.add_row(group, *(f"{values[c]:.6g}" for c in law.constants))
        console.print(table, markup=False)
