"""One chat completion with retries: backoff on timeouts, 429 and 5xx; adapt to servers.

Servers differ in what they accept (``response_format``, ``seed``,
``max_tokens`` versus ``max_completion_tokens``, ``temperature`` on reasoning
models); a 400 that names such a parameter switches it off (or over) once and
the call is repeated.  Waits are exponential with jitter seeded per call, so a
run's retry schedule is reproducible.
"""
from __future__ import annotations

import random
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import openai

from agent.llm.settings import LLMSettings
from agent.search.proposers.base import ProposerUnavailable

_RETRY_STATUS = {408, 409, 429}
_FATAL_STATUS = {401, 403, 404}  # wrong key, no access, unknown model or URL: retrying cannot help
_KEY_PATTERN = re.compile(r"sk-[A-Za-z0-9_\-*.]{4,}")


class CallError(RuntimeError):
    """This one request failed (the server refused it); the endpoint itself may be fine."""


@dataclass(frozen=True)
class Completion:
    text: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    usage_estimated: bool
    latency_s: float
    retries: int
    json_mode: bool
    model: str


@dataclass(frozen=True)
class RetryNotice:
    attempt: int
    error: str
    delay_s: float


class ChatTransport:
    """Sends chat requests through an OpenAI-compatible client (or a fake with the same shape)."""

    def __init__(self, client: Any, settings: LLMSettings, *, sleep: Callable[[float], None] = time.sleep,
                 secret: str | None = None):
        self.client = client
        self.settings = settings
        self.sleep = sleep
        self._secret = secret
        self._lock = threading.Lock()
        # Server quirks learned at run time; part of the proposer's checkpoint state.
        self.flags = {
            "json_mode": settings.json_mode != "off",
            "seed": settings.send_seed,
            "temperature": True,
            "tokens_param": "max_tokens",
        }

    def complete(self, messages: Sequence[dict[str, str]], *, call_index: int, seed: int | None,
                 on_retry: Callable[[RetryNotice], None] = lambda notice: None) -> Completion:
        """Raises :class:`CallError` (this request) or ``ProposerUnavailable`` (the endpoint)."""
        s = self.settings
        retries = adaptations = 0
        while True:
            with self._lock:
                flags = dict(self.flags)
            started = time.monotonic()
            try:
                response = self.client.chat.completions.create(**self._request(messages, seed, flags))
                return self._completion(response, messages, time.monotonic() - started, retries, flags)
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                reason = self.describe(exc)
                if status in (400, 422) and adaptations < 4 and self._adapt(str(exc), flags):
                    adaptations += 1
                    continue
                if status in _FATAL_STATUS:
                    raise ProposerUnavailable(f"LLM endpoint refused the request: {reason}") from None
                if status is not None and status < 500 and status not in _RETRY_STATUS:
                    raise CallError(reason) from None
                if retries >= s.max_retries:
                    raise ProposerUnavailable(
                        f"LLM endpoint {self.endpoint} failed after {retries} retries: {reason}") from None
                delay = self._delay(call_index, retries, exc)
                on_retry(RetryNotice(retries + 1, reason, delay))
                self.sleep(delay)
                retries += 1

    @property
    def endpoint(self) -> str:
        return str(getattr(self.client, "base_url", None) or self.settings.resolved_base_url() or "OpenAI")

    def describe(self, exc: BaseException) -> str:
        status = getattr(exc, "status_code", None)
        text = " ".join(str(exc).split())[:400]
        return self.redact(f"HTTP {status}: {text}" if status else f"{type(exc).__name__}: {text}")

    def redact(self, text: str) -> str:
        if self._secret and len(self._secret) >= 4:
            text = text.replace(self._secret, "***")
        return _KEY_PATTERN.sub("sk-***", text)

    def _request(self, messages, seed, flags) -> dict[str, Any]:
        s = self.settings
        request: dict[str, Any] = {"model": s.model, "messages": list(messages), "timeout": s.timeout_s,
                                   flags["tokens_param"]: s.max_tokens}
        if flags["temperature"]:
            request["temperature"] = s.temperature
        if flags["json_mode"]:
            request["response_format"] = {"type": "json_object"}
        if flags["seed"] and seed is not None:
            request["seed"] = seed
        return request

    def _adapt(self, message: str, used: dict[str, Any]) -> bool:
        """Switch off (or over) the parameter a 400 complains about; False when none applies."""
        text = message.lower()
        with self._lock:
            if used["json_mode"] and self.settings.json_mode == "auto" and (
                    "response_format" in text or "json_object" in text or "json mode" in text):
                self.flags["json_mode"] = False
            elif used["tokens_param"] == "max_tokens" and "max_tokens" in text:
                self.flags["tokens_param"] = "max_completion_tokens"
            elif used["seed"] and "seed" in text:
                self.flags["seed"] = False
            elif used["temperature"] and "temperature" in text:
                self.flags["temperature"] = False
            else:
                return False
        return True

    def _delay(self, call_index: int, retries: int, exc: BaseException) -> float:
        s = self.settings
        jitter = random.Random(f"{s.seed}:{call_index}:{retries}").uniform(0.5, 1.5)
        delay = min(s.backoff_max_s, s.backoff_s * 2 ** retries) * jitter
        response = getattr(exc, "response", None)
        header = response.headers.get("retry-after") if response is not None else None
        try:
            delay = max(delay, min(s.backoff_max_s, float(header))) if header else delay
        except ValueError:
            pass
        return delay

    def _completion(self, response, messages, latency, retries, flags) -> Completion:
        choice = response.choices[0] if getattr(response, "choices", None) else None
        text = getattr(getattr(choice, "message", None), "content", None)
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        estimated = prompt_tokens is None or completion_tokens is None
        if estimated:  # servers without usage: about four characters per token
            prompt_tokens = sum(len(m.get("content") or "") for m in messages) // 4
            completion_tokens = len(text or "") // 4
        return Completion(
            text=text, finish_reason=getattr(choice, "finish_reason", None),
            prompt_tokens=int(prompt_tokens), completion_tokens=int(completion_tokens),
            usage_estimated=estimated, latency_s=latency, retries=retries,
            json_mode=flags["json_mode"], model=str(getattr(response, "model", None) or self.settings.model),
        )
