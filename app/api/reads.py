"""Fast reads of what a run already stored: a run's best law is built once per version of the run and
served as the same bytes until the run changes, with an ETag, so a client that has it gets a 304.

A run's version is what its best law depends on: its state, its generation and best score while it
runs, and its end once finished (nothing changes after).  It is read without the run's payloads
(its spec and final law with the stored uncertainty draws, tens of kilobytes of JSON), which are
loaded only to build a response that is not cached yet.  Writes never need to reach the body cache:
a changed run has a new version, hence a new key, and old entries fall out of the small LRU.

The version itself is cached too, for as long as the storage's *generation* holds (it moves on every
commit, of this process or another: ``agent.storage.rdb.changes``).  So a read of an unchanged run
touches neither the database nor a thread: it is answered on the event loop.  Anything that misses
(a new generation, a body not built yet) goes to the API's threads as before.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Callable, Hashable

from fastapi import Request, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from agent.storage import BaseStorage, RunVersion
from app.api.single_flight import SingleFlight

JSON = "application/json"


class ReadCache:
    """A small, thread-safe LRU of serialised responses (routes run in a thread pool)."""

    def __init__(self, size: int = 256):
        self.size = size
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()
        self.building = SingleFlight()  # a new version's body is built once, however many ask for it

    def get(self, key: Hashable) -> bytes | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: Hashable, body: bytes) -> None:
        with self._lock:
            self._items[key] = body
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class VersionCache:
    """Run versions, each with the storage generation it was read at: valid while that generation holds.

    Keyed by what was asked (a run, or a dataset's best run) and by who asked (a tenant's view sees
    other runs).  One entry per key, so the table grows with the ids asked about, up to ``size``.
    """

    def __init__(self, size: int = 4096):
        self.size = size
        self._items: dict[Hashable, tuple[Hashable, RunVersion | None]] = {}
        self._lock = threading.Lock()
        self.reading = SingleFlight()  # a moved generation is read once, not once per waiting request

    def get(self, key: Hashable, generation: Hashable) -> tuple[bool, RunVersion | None]:
        hit = self._items.get(key)
        if hit is not None and hit[0] == generation:
            return True, hit[1]
        return False, None

    def put(self, key: Hashable, generation: Hashable, version: RunVersion | None) -> None:
        with self._lock:
            if len(self._items) >= self.size:
                self._items.clear()
            self._items[key] = (generation, version)


async def current_version(request: Request, storage: BaseStorage, run_id: int | None = None, *,
                          best_of_dataset: int | None = None) -> RunVersion | None:
    """``storage.run_version(...)``, from the version cache while the storage's generation holds.

    The generation is read *before* the version: a commit in between leaves the entry under the
    old generation, which the next read no longer matches.
    """
    versions: VersionCache = request.app.state.run_versions
    key = (storage.scope_key, run_id, best_of_dataset)
    generation = storage.generation()
    if generation is not None:
        hit, version = versions.get(key, generation)
        if hit:
            return version
    if generation is None:  # unknown: this request's own query, so a client reads its own writes
        return await run_in_threadpool(storage.run_version, run_id, best_of_dataset=best_of_dataset)
    version = await versions.reading.run((key, generation),
                                         lambda: storage.run_version(run_id, best_of_dataset=best_of_dataset))
    versions.put(key, generation, version)
    return version


def version_key(v: RunVersion) -> tuple:
    if v.finished_at is not None:
        return (v.id, v.state, v.finished_at.isoformat())
    return (v.id, v.state, v.generation, v.best_score)


def etag_of(key: Hashable) -> str:
    return 'W/"' + hashlib.sha256(repr(key).encode()).hexdigest()[:20] + '"'


def not_modified(request: Request, etag: str) -> bool:
    asked = request.headers.get("if-none-match", "")
    return etag in [tag.strip() for tag in asked.split(",")] or asked.strip() == "*"


async def cached_read(request: Request, key: Hashable, build: Callable[[], BaseModel]) -> Response:
    """The response for ``key``: 304 when the client holds it, else the cached body, or one built
    on a thread (``build`` reads the database)."""
    etag = etag_of(key)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}  # clients revalidate: cheap with the ETag
    if not_modified(request, etag):
        return Response(status_code=304, headers=headers)
    cache: ReadCache = request.app.state.read_cache
    body = cache.get(key)
    if body is None:
        body = await cache.building.run(key, lambda: build().model_dump_json().encode())
        cache.put(key, body)
    return Response(content=body, media_type=JSON, headers=headers)


def fresh_read(request: Request, model: BaseModel) -> Response:
    """A cheap response served with an ETag of its own bytes (304 when unchanged)."""
    body = model.model_dump_json().encode()
    etag = 'W/"' + hashlib.sha256(body).hexdigest()[:20] + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if not_modified(request, etag):
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type=JSON, headers=headers)
