"""Storage errors: each names the record or the step that failed."""
from __future__ import annotations

from agent.errors import SldError


class NotFoundError(SldError, LookupError):
    """No record with that id (a face answers 404)."""


class ConflictError(SldError):
    """The request contradicts the record's state, e.g. cancelling a finished run (409)."""


class RunLost(SldError):
    """A worker no longer owns the run: it was cancelled, finished or re-claimed after a stale heartbeat."""


class SchemaOutdated(SldError):
    """The database schema is not the version this code needs; the message says what to run."""
