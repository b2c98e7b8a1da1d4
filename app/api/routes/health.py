from __future__ import annotations

from importlib.metadata import version

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from agent.storage import RunState
from app.api.deps import ServerStorage
from app.schemas.common import HealthPublic

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthPublic, summary="Liveness, database and queue")
async def health(storage: ServerStorage) -> HealthPublic:
    def check():
        info = storage.info()
        queued = storage.list_runs(state=RunState.QUEUED, limit=1).total
        running = storage.list_runs(state=RunState.RUNNING, limit=1).total
        return HealthPublic(status="ok", database=info["backend"], schema_revision=info["schema_revision"],
                            queued_runs=queued, running_runs=running, version=version("sld"))

    return await run_in_threadpool(check)
