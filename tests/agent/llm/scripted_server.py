"""A scripted OpenAI-compatible chat server for tests: a real HTTP server on 127.0.0.1 whose replies
come from a script, so the LLM path is tested through the real client, retries and parsing."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

# one scripted turn: (HTTP status, reply content or None, seconds to wait before answering)
Turn = tuple[int, str | None, float]


class ScriptedServer:
    """``script(call_number) -> Turn``; the server counts the calls it answered."""

    def __init__(self, script: Callable[[int], Turn]):
        self.script, self.calls, self._lock = script, 0, threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                self.rfile.read(length)
                with server._lock:
                    number = server.calls
                    server.calls += 1
                status, content, delay = server.script(number)
                time.sleep(delay)
                if status != 200:
                    body = json.dumps({"error": {"message": "scripted failure", "code": status}}).encode()
                else:
                    body = json.dumps({
                        "id": f"scripted-{number}", "object": "chat.completion", "created": 0, "model": "scripted",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": content}}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
                    }).encode()
                try:
                    self.send_response(status)
                    if status == 429:
                        self.send_header("retry-after", "0")
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out first
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
