"""A scriptable stand-in for ``openai.OpenAI`` in unit tests: a queue of replies.

Each ``chat.completions.create`` call pops the next scripted item: a string is
the reply text, a :class:`FakeReply` sets tokens or the finish reason, an
exception instance is raised (use the helpers below for real ``openai``
errors), and a callable receives the request and returns one of those.
Every request is kept in ``requests`` for assertions.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Union

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.chat.chat_completion import Choice
from openai.types.completion_usage import CompletionUsage

try:  # the openai package moved to httpx2; older releases use httpx
    import httpx2 as _http
except ImportError:  # pragma: no cover - depends on the installed openai
    import httpx as _http

FAKE_URL = "http://fake-llm.invalid/v1/chat/completions"


@dataclass(frozen=True)
class FakeReply:
    content: str | None
    prompt_tokens: int | None = None  # None: about four characters per token
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    usage: bool = True  # False: the server reports no usage at all
    delay_s: float = 0.0


Scripted = Union[str, FakeReply, BaseException, Callable[[dict[str, Any]], Any]]


class FakeExhausted(AssertionError):
    """The test made more calls than it scripted replies for."""


class FakeChatClient:
    """Quacks like ``openai.OpenAI`` for ``client.chat.completions.create(**request)``."""

    def __init__(self, replies: Iterable[Scripted] = (), *, model: str = "fake-model",
                 base_url: str = "http://fake-llm.invalid/v1"):
        self.queue: deque[Scripted] = deque(replies)
        self.requests: list[dict[str, Any]] = []
        self.model = model
        self.base_url = base_url
        self._lock = threading.Lock()
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def add(self, *replies: Scripted) -> "FakeChatClient":
        with self._lock:
            self.queue.extend(replies)
        return self

    def _create(self, **request: Any) -> ChatCompletion:
        with self._lock:
            self.requests.append(request)
            if not self.queue:
                raise FakeExhausted(f"no scripted reply left for request #{len(self.requests)}")
            item = self.queue.popleft()
        if callable(item) and not isinstance(item, BaseException):
            item = item(request)
        if isinstance(item, BaseException):
            raise item
        reply = item if isinstance(item, FakeReply) else FakeReply(str(item))
        if reply.delay_s:
            time.sleep(reply.delay_s)
        return self._completion(reply, request)

    def _completion(self, reply: FakeReply, request: dict[str, Any]) -> ChatCompletion:
        prompt_chars = sum(len(m.get("content") or "") for m in request.get("messages", []))
        usage = CompletionUsage(
            prompt_tokens=reply.prompt_tokens if reply.prompt_tokens is not None else prompt_chars // 4,
            completion_tokens=(reply.completion_tokens if reply.completion_tokens is not None
                               else len(reply.content or "") // 4 + 1),
            total_tokens=0,
        )
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens
        return ChatCompletion(
            id=f"fake-{len(self.requests)}", object="chat.completion", created=0, model=self.model,
            choices=[Choice(index=0, finish_reason=reply.finish_reason,
                            message=ChatCompletionMessage(role="assistant", content=reply.content))],
            usage=usage if reply.usage else None,
        )


# -- real openai errors, as the client raises them ---------------------------------------------
def _response(status: int, headers: dict[str, str] | None = None, body: Any = None) -> Any:
    request = _http.Request("POST", FAKE_URL)
    return _http.Response(status, headers=headers or {}, json=body or {}, request=request)


def status_error(status: int, message: str = "", headers: dict[str, str] | None = None) -> openai.APIStatusError:
    """The exception class the openai client raises for this HTTP status."""
    cls = {400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
           404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
           429: openai.RateLimitError}.get(status)
    if cls is None:
        cls = openai.InternalServerError if status >= 500 else openai.APIStatusError
    body = {"error": {"message": message or f"status {status}"}}
    return cls(message or f"Error code: {status}", response=_response(status, headers, body), body=body)


def rate_limited(retry_after: float | None = None) -> openai.RateLimitError:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else None
    return status_error(429, "Rate limit reached", headers)


def server_error(status: int = 503) -> openai.InternalServerError:
    return status_error(status, "The server is overloaded")


def connection_refused() -> openai.APIConnectionError:
    return openai.APIConnectionError(message="Connection error.", request=_http.Request("POST", FAKE_URL))


def timed_out() -> openai.APITimeoutError:
    return openai.APITimeoutError(request=_http.Request("POST", FAKE_URL))
