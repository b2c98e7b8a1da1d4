"""Errors become one-line JSON answers ``{"detail": "..."}`` that name the problem; never a traceback."""
from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError as DatabaseRefusedValue
from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

from agent.errors import SldError
from agent.storage.errors import ConflictError, NotFoundError, RunLost, SchemaOutdated

log = logging.getLogger("sld.api")

DATABASE_RETRY_AFTER_S = 5  # what a 503 for a lost database asks clients to wait


class Busy(SldError):
    """Too many expensive requests at once; try again."""


def status_for(exc: SldError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, (ConflictError, RunLost)):
        return 409
    if isinstance(exc, (SchemaOutdated, Busy)):
        return 503
    return 422  # DataError, LawError, FitError and any other problem with what was sent


def describe_validation(exc: RequestValidationError) -> str:
    """Pydantic's error list as one line: ``body.budget: Input should be ... (and 2 more)``."""
    errors = exc.errors()
    if not errors:
        return "invalid request"
    first = errors[0]
    loc = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    msg = first.get("msg", "invalid value")
    if first.get("type") == "json_invalid":
        ctx = first.get("ctx") or {}
        return f"malformed JSON: {ctx.get('error', msg)}"
    if first.get("type") == "extra_forbidden":
        msg = "unknown field"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return f"{loc}: {msg}{more}" if loc else f"{msg}{more}"


def answer(request: Request, detail: str, status: int, headers=None, **extra):
    """The error as JSON, or as a page for a dashboard page (the renderer ``app.state.error_page``)."""
    render = getattr(request.app.state, "error_page", None)
    if render is not None and is_page(request.url.path):
        return render(request, detail, status, headers)
    return JSONResponse({"detail": detail, **extra}, status_code=status, headers=headers)


def is_page(path: str) -> bool:
    """Dashboard pages (``/`` and ``/ui/...``); the JSON behind their plots (``/ui/api/``) is API."""
    return path == "/" or (path.startswith("/ui/") and not path.startswith("/ui/api/"))


def install(app: FastAPI) -> None:
    @app.exception_handler(SldError)
    async def _sld_error(request: Request, exc: SldError):
        return answer(request, str(exc), status_for(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return answer(request, describe_validation(exc), 422, errors=_jsonable_errors(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400 and exc.detail == BODY_PARSE_FAILED:
            return answer(request, describe_body_error(exc.__cause__), 422)
        return answer(request, exc.detail, exc.status_code, exc.headers)

    @app.exception_handler(OperationalError)
    @app.exception_handler(InterfaceError)
    @app.exception_handler(PoolTimeout)
    async def _database_down(request: Request, exc: Exception):
        # The connection is gone (server down, network cut, pool exhausted, SQLite locked): the request
        # may succeed later, so 503 with Retry-After; the driver's text stays in the log (it names hosts).
        log.warning("database unavailable on %s %s: %s", request.method, request.url.path,
                    " ".join(str(getattr(exc, "orig", None) or exc).split())[:300])
        return JSONResponse({"detail": "the database is unavailable; try again shortly"}, status_code=503,
                            headers={"Retry-After": str(DATABASE_RETRY_AFTER_S)})

    @app.exception_handler(DatabaseRefusedValue)
    async def _refused(request: Request, exc: DatabaseRefusedValue):
        # The checks before storing should catch every such value; this keeps a 4xx if one slips by.
        log.warning("the database refused a value on %s %s: %s", request.method, request.url.path, exc.orig)
        reason = str(exc.orig).strip().splitlines()[0][:200] if exc.orig else "invalid value"
        return JSONResponse({"detail": f"the database refused a value: {reason}"}, status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return answer(request, f"internal error ({type(exc).__name__}); see the server log", 500)


BODY_PARSE_FAILED = "There was an error parsing the body"  # FastAPI's words when json.loads raises


def describe_body_error(cause: BaseException | None) -> str:
    if isinstance(cause, RecursionError):
        return "malformed JSON: it is nested too deeply"
    if isinstance(cause, ValueError) and "digits" in str(cause):
        return "malformed JSON: an integer has more than 4300 digits"
    return "malformed request body"


def _jsonable_errors(exc: RequestValidationError) -> list[dict]:
    return [{"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", "")), "type": e.get("type", "")}
            for e in exc.errors()]
