"""A request-body size limit that holds for chunked uploads too (413, naming the limit)."""
from __future__ import annotations

import json
from html import escape

from app.core.errors import is_page


class BodySizeLimit:
    """Pure ASGI middleware: checks Content-Length first, then counts body bytes as they arrive.

    Past ``max_bytes`` the body stream raises; whatever answer the app then
    produces (FastAPI turns a failed body read into a 400) is replaced by 413.
    """

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        page = is_page(scope.get("path", ""))
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await self._reject(send, f"{int(declared)} bytes", page)
        seen, over, replaced = 0, False, False

        async def limited_receive():
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    over = True
                    raise PayloadOverLimit(seen)
            return message

        async def guarded_send(message):
            nonlocal replaced
            if over:
                if message["type"] == "http.response.start" and not replaced:
                    replaced = True
                    await self._reject(send, f"more than {self.max_bytes} bytes", page)
                return
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except PayloadOverLimit:
            if not replaced:
                await self._reject(send, f"more than {self.max_bytes} bytes", page)

    async def _reject(self, send, size: str, page: bool = False):
        detail = (f"request body of {size} is over the limit of {self.max_bytes} bytes "
                  "(SLD_MAX_PAYLOAD_BYTES); send the rows in several appends")
        if page:  # a form on a dashboard page gets a page back (this runs before the app's templates)
            body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Upload too large - sld'
                    f'</title></head><body><main><h1>Upload too large</h1><p role="alert">{escape(detail)}</p>'
                    '<p><a href="/">Back to sld</a></p></main></body></html>').encode()
            kind = b"text/html; charset=utf-8"
        else:
            body, kind = json.dumps({"detail": detail}).encode(), b"application/json"
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class PayloadOverLimit(Exception):
    pass
