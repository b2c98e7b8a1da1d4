"""Bundled SLDBench tasks as datasets: train and test rows in one dataset, told apart by ``split``.

Runs on such a dataset default to the task's columns and hold the test rows
out (scored once, at the end); its human law is what ``/runs/{id}/compare`` uses.
"""
from __future__ import annotations

import pandas as pd

from agent.storage import BaseStorage, DatasetRecord, NotFoundError

SPLIT_COLUMN = "split"


def import_task(storage: BaseStorage, name: str, *, force: bool = False) -> tuple[DatasetRecord, bool]:
    """(dataset, created): an earlier import is reused unless ``force``."""
    import tasks  # the bundled task definitions; the web layer composes tasks and core

    if name not in tasks.task_names():
        raise NotFoundError(f"unknown task {name!r}; bundled tasks: {', '.join(tasks.task_names())}")
    spec = tasks.get_task(name)
    if not force:
        try:
            existing = storage.get_task_spec(spec.name)
            if existing.dataset_id is not None:
                return storage.get_dataset(existing.dataset_id), False
        except NotFoundError:
            pass
    train, test = tasks.load_split(spec.name, "train"), tasks.load_split(spec.name, "test")
    column = SPLIT_COLUMN if SPLIT_COLUMN not in train.columns else f"sld_{SPLIT_COLUMN}"
    rows = pd.concat([train.assign(**{column: "train"}), test.assign(**{column: "test"})], ignore_index=True)
    human = spec.human_law.model_dump(mode="json") if spec.human_law else None
    ds = storage.create_dataset(
        rows, name=spec.name, description=spec.description, source=f"sldbench:{spec.name}",
        task={"name": spec.name, "problem": spec.problem().to_dict(), "human_law": human, "split_column": column})
    return ds, True


def bundled_task_names() -> list[str]:
    import tasks

    return tasks.task_names()
