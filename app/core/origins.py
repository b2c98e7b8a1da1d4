"""Which web pages may call the API: explicit CORS origins (none by default), and no cross-site writes.

A browser sends a "simple" cross-site POST (``text/plain``, a form) without asking first, so
CORS alone cannot stop a page on another site from writing through a user's browser, for
instance to an ``sld serve`` on 127.0.0.1 that needs no token.  A write (POST, PUT, PATCH,
DELETE) whose ``Origin`` is neither this server's own nor listed in ``SLD_CORS_ORIGINS`` is
therefore refused with 403 before its body is read.  Clients other than browsers (curl,
scripts) send no ``Origin`` and are unaffected.
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware

SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}


def install(app: FastAPI, origins: list[str]) -> None:
    """The write guard, and CORS outside it (so preflights are answered) when origins are listed."""
    allowed = {normalize_origin(o) for o in origins}
    app.add_middleware(CrossSiteWriteGuard, allowed=allowed)
    if allowed:
        app.add_middleware(CORSMiddleware, allow_origins=sorted(allowed), allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["Authorization", "Content-Type"], allow_credentials=False, max_age=600)


def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case, without a default port or a trailing slash."""
    parts = urlsplit(origin.strip().lower())
    default = {"http": 80, "https": 443}.get(parts.scheme)
    try:
        port = parts.port
    except ValueError:
        return origin  # not a URL; compared as sent, so it matches nothing listed
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port and port != default else "")


class CrossSiteWriteGuard:
    """Pure ASGI middleware: 403 for a write from another site's page that CORS does not allow."""

    def __init__(self, app, allowed: set[str]):
        self.app, self.allowed = app, allowed

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        origin = headers.get(b"origin")
        if origin is None:
            return await self.app(scope, receive, send)
        origin_text = origin.decode("latin-1")
        normalized = normalize_origin(origin_text)
        own = _authority(headers.get(b"host", b"").decode("latin-1"))
        if normalized in self.allowed or (own and _authority(normalized) == own):
            return await self.app(scope, receive, send)
        body = json.dumps({"detail": f"cross-site {scope['method']} from origin {origin_text[:100]!r} refused: "
                                     "only this server's own pages and the origins in SLD_CORS_ORIGINS may "
                                     "write"}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _authority(origin_or_host: str) -> str:
    """``host[:port]`` without the scheme or a default port: a page served by this very server may
    reach it through a TLS proxy, so its Origin says https while the request arrives over http."""
    text = origin_or_host.strip().lower()
    authority = text.split("://", 1)[1] if "://" in text else text
    for default in (":80", ":443"):
        if authority.endswith(default):
            authority = authority[: -len(default)]
    return authority
