"""A request-body size limit that holds for chunked uploads too (413, naming the limit)."""
from __future__ import annotations

import json


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
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await self._reject(send, f"{int(declared)} bytes")
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
                    await self._reject(send, f"more than {self.max_bytes} bytes")
                return
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except PayloadOverLimit:
            if not replaced:
                await self._reject(send, f"more than {self.max_bytes} bytes")

    async def _reject(self, send, size: str):
        body = json.dumps({"detail": f"request body of {size} is over the limit of {self.max_bytes} bytes "
                                     "(SLD_MAX_PAYLOAD_BYTES); send the rows in several appends"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


class PayloadOverLimit(Exception):
    pass
