"""The FastAPI application: ``uvicorn app.main:app`` (``sld serve`` adds the embedded worker).

Routes validate, store, queue and read; the CPU-heavy search runs in workers.
"""
from __future__ import annotations

import contextlib
import logging

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import FastAPI

from agent.storage import BaseStorage
from app.api.reads import ReadCache, VersionCache
from app.api.routes import datasets, health, predict, runs, sweeps, tasks
from app.core import errors, origins
from app.core.config import Settings, get_settings
from app.core.limits import BodySizeLimit
from app import web

log = logging.getLogger("sld.api")

DESCRIPTION = """\
Send experiment results, run a law search on them, get the law that predicts the big run.

Journey: `POST /datasets` (JSON rows or CSV) -> `POST /runs` (202, queued) -> `GET /runs/{id}`
(progress) -> `GET /runs/{id}/best` -> `POST /runs/{id}/compare` -> `POST /predict`.

New data: `POST /sweeps` (an N × D grid or IsoFLOP design) -> `sld train worker` trains its points ->
their rows become a dataset -> `POST /runs` on it, holding out the largest models.
"""


def open_storage(settings: Settings) -> BaseStorage:
    from agent.storage.rdb import RDBStorage

    return RDBStorage(settings.database_url, engine_kwargs=settings.engine_kwargs(),
                      create_schema=settings.create_schema)


def create_app(settings: Settings | None = None, storage: BaseStorage | None = None) -> FastAPI:
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        # the blocking handlers' threads (anyio's limiter is per event loop: set it on this one)
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api_threads
        owned = storage is None
        app.state.storage = open_storage(settings) if owned else storage
        try:
            yield
        finally:
            if owned:
                app.state.storage.close()

    app = FastAPI(title="sld", version="0.1.0", description=DESCRIPTION, lifespan=lifespan)
    app.state.settings = settings
    app.state.compare_limiter = CapacityLimiter(settings.compare_concurrency)
    app.state.health_limiter = CapacityLimiter(1)
    app.state.read_cache = ReadCache()
    app.state.run_versions = VersionCache()
    if storage is not None:
        app.state.storage = storage
    errors.install(app)
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_payload_bytes)
    origins.install(app, settings.cors_origins)  # outside the size limit: a refused write is not read
    for module in (health, datasets, tasks, runs, predict, sweeps):
        app.include_router(module.router)
    web.install(app)
    return app


def __getattr__(name: str):
    # ``app.main:app`` for uvicorn, built on first access so that importing this module stays cheap.
    if name == "app":
        globals()["app"] = create_app()
        return globals()["app"]
    raise AttributeError(name)
