"""Fast reads of what a run already stored: a run's best law is built once per version of the run and
served as the same bytes until the run changes, with an ETag, so a client that has it gets a 304.

A run's version is what its best law depends on: its state, its generation and best score while it
runs, and its end once finished (nothing changes after).  It is read without the run's payloads
(its spec and final law with the stored uncertainty draws, tens of kilobytes of JSON), which are
loaded only to build a response that is not cached yet.  Writes never need to reach this cache: a
changed run has a new version, hence a new key, and old entries fall out of the small LRU.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Callable, Hashable

from fastapi import Request, Response
from pydantic import BaseModel

from agent.storage import RunVersion

JSON = "application/json"


class ReadCache:
    """A small, thread-safe LRU of serialised responses (routes run in a thread pool)."""

    def __init__(self, size: int = 256):
        self.size = size
        self._items: OrderedDict[Hashable, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_build(self, key: Hashable, build: Callable[[], BaseModel]) -> bytes:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        body = build().model_dump_json().encode()  # built outside the lock: another read may build it too
        with self._lock:
            self._items[key] = body
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return body


def version_key(v: RunVersion) -> tuple:
    if v.finished_at is not None:
        return (v.id, v.state, v.finished_at.isoformat())
    return (v.id, v.state, v.generation, v.best_score)


def etag_of(key: Hashable) -> str:
    return 'W/"' + hashlib.sha256(repr(key).encode()).hexdigest()[:20] + '"'


def not_modified(request: Request, etag: str) -> bool:
    asked = request.headers.get("if-none-match", "")
    return etag in [tag.strip() for tag in asked.split(",")] or asked.strip() == "*"


def cached_read(request: Request, key: Hashable, build: Callable[[], BaseModel]) -> Response:
    """The response for ``key``: 304 when the client holds it, else the cached or freshly built body."""
    etag = etag_of(key)
    headers = {"ETag": etag, "Cache-Control": "no-cache"}  # clients revalidate: cheap with the ETag
    if not_modified(request, etag):
        return Response(status_code=304, headers=headers)
    body = request.app.state.read_cache.get_or_build(key, build)
    return Response(content=body, media_type=JSON, headers=headers)


def fresh_read(request: Request, model: BaseModel) -> Response:
    """A cheap response served with an ETag of its own bytes (304 when unchanged)."""
    body = model.model_dump_json().encode()
    etag = 'W/"' + hashlib.sha256(body).hexdigest()[:20] + '"'
    headers = {"ETag": etag, "Cache-Control": "no-cache"}
    if not_modified(request, etag):
        return Response(status_code=304, headers=headers)
    return Response(content=body, media_type=JSON, headers=headers)
