"""The FastAPI application: ``uvicorn app.main:app`` (``sld serve`` adds the embedded worker).

Routes validate, store, queue and read; the CPU-heavy search runs in workers.
"""
from __future__ import annotations

import contextlib
import gc
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


# The served process's collector: ``gc.freeze()`` once started, and young collections 30x rarer.
# A full collection walked every object of the imported libraries (sympy, scipy, pandas: millions),
# a pause of about 100 ms every few seconds under load that was the p99 of cached reads (wrk, 50
# connections: 107-111 ms; frozen 25-36 ms; frozen with this threshold 19-23 ms; README "Load").
GC_THRESHOLD = (20_000, 10, 10)


def tune_collector() -> None:
    gc.collect()
    gc.freeze()  # what is alive now (modules, the app) is never walked again; it is still freed by refcount
    gc.set_threshold(*GC_THRESHOLD)


def create_app(settings: Settings | None = None, storage: BaseStorage | None = None, *,
               tune_gc: bool = False) -> FastAPI:
    """``tune_gc``: the process serves this app and nothing else (``sld serve``; not a test's app)."""
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        # the blocking handlers' threads (anyio's limiter is per event loop: set it on this one)
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api_threads
        owned = storage is None
        app.state.storage = open_storage(settings) if owned else storage
        if tune_gc:
            tune_collector()
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
        globals()["app"] = create_app(tune_gc=True)
        return globals()["app"]
    raise AttributeError(name)
