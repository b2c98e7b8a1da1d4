"""The bundled SLDBench tasks, importable as datasets."""
from __future__ import annotations

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from app.api.deps import AdminStorage, ReadStorage, TaskName
from app.schemas.datasets import DatasetPublic, TaskImport, TaskPublic
from app.services.task_import import import_task

router = APIRouter(prefix="/tasks", tags=["tasks"])


@router.get("", response_model=list[TaskPublic], summary="The bundled SLDBench tasks")
def list_tasks(storage: ReadStorage) -> list[TaskPublic]:
    import tasks

    imported = {t.name: t.dataset_id for t in storage.list_task_specs()}
    return [TaskPublic(name=s.name, description=s.description, inputs=list(s.inputs), targets=list(s.targets),
                       group=s.group, axis=list(s.axis), max_constants=s.max_constants,
                       human_law=list(s.human_law.lines) if s.human_law else None,
                       dataset_id=imported.get(s.name)) for s in tasks.all_tasks()]


@router.post("/{name}/import", response_model=DatasetPublic, status_code=201,
             summary="Import a bundled task as a dataset (train + test rows, column 'split')",
             responses={200: {"model": DatasetPublic, "description": "already imported"}})
async def import_bundled_task(name: TaskName, storage: AdminStorage, response: Response,
                              options: TaskImport | None = None) -> DatasetPublic:
    ds, created = await run_in_threadpool(import_task, storage, name, force=bool(options and options.force))
    if not created:
        response.status_code = 200
    return DatasetPublic.of(ds, task=name)
