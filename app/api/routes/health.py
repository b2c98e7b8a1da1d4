from __future__ import annotations

from importlib.metadata import version

import anyio.to_thread
from fastapi import APIRouter, Request

from agent.storage import RunState
from app.api.deps import ServerStorage
from app.schemas.common import HealthPublic

router = APIRouter(tags=["health"])


@router.get("/health", response_model=HealthPublic, summary="Liveness, database and queue")
async def health(request: Request, storage: ServerStorage) -> HealthPublic:
    def check():
        info = storage.info()
        queued = storage.list_runs(state=RunState.QUEUED, limit=1).total
        running = storage.list_runs(state=RunState.RUNNING, limit=1).total
        return HealthPublic(status="ok", database=info["backend"], schema_revision=info["schema_revision"],
                            queued_runs=queued, running_runs=running, version=version("sld"))

    # its own thread, not one of the handlers' few (SLD_API_THREADS): liveness answers while they are busy
    return await anyio.to_thread.run_sync(check, limiter=request.app.state.health_limiter)
