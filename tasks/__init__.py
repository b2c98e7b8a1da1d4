"""Bundled task definitions (SLDBench) with their human laws, and a data loader.

Data plus a loader that uses the core's parser; the search core never imports this.
"""
from tasks.catalog import SLDBENCH_CITATION, all_tasks, get_task, task_names
from tasks.data import HUB_REPO, load_split
from tasks.spec import HumanLaw, TaskError, TaskSpec, load_spec_file, parse_spec

__all__ = [
    "HUB_REPO", "HumanLaw", "SLDBENCH_CITATION", "TaskError", "TaskSpec", "all_tasks", "get_task",
    "load_spec_file", "load_split", "parse_spec", "task_names",
]
