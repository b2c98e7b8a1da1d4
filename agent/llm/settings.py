"""Settings of the LLM proposer: endpoint, sampling, retries, budgets and prices.

The API key is a ``SecretStr`` excluded from ``repr``, ``model_dump`` and JSON, so
the settings can be stored with a run (database, checkpoint, event) without it.
"""
from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from agent.errors import SldError

_SNAPSHOT_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}$")


class LLMConfigError(SldError):
    """The LLM proposer is configured in a way that cannot work (names the setting)."""


class ModelPrice(BaseModel):
    """US dollars per one million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


# List prices at the time of writing; they change, so runs may pass their own table.
# A model that is not listed costs 0 (its tokens are still counted).
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(prompt=0.15, completion=0.60),
    "gpt-4o": ModelPrice(prompt=2.50, completion=10.00),
    "gpt-4.1-nano": ModelPrice(prompt=0.10, completion=0.40),
    "gpt-4.1-mini": ModelPrice(prompt=0.40, completion=1.60),
    "gpt-4.1": ModelPrice(prompt=2.00, completion=8.00),
    "gpt-5-nano": ModelPrice(prompt=0.05, completion=0.40),
    "gpt-5-mini": ModelPrice(prompt=0.25, completion=2.00),
    "gpt-5": ModelPrice(prompt=1.25, completion=10.00),
}


class LLMSettings(BaseModel):
    """Everything an :class:`~agent.llm.proposer.LLMProposer` needs; strict (unknown keys fail)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str | None = None  # None: OPENAI_BASE_URL, else OpenAI itself
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)  # None: OPENAI_API_KEY
    name: str = "llm"  # the proposer's name on proposals and candidates
    temperature: float = Field(default=0.8, ge=0, le=2)
    max_tokens: int = Field(default=600, ge=16, le=32_000)
    laws_per_call: int = Field(default=3, ge=1, le=10)
    concurrency: int = Field(default=2, ge=1, le=64)
    timeout_s: float = Field(default=120.0, gt=0)  # local CPU servers queue requests: be patient
    max_retries: int = Field(default=3, ge=0, le=10)
    backoff_s: float = Field(default=1.0, ge=0)  # first retry waits about this long, then doubles
    backoff_max_s: float = Field(default=30.0, ge=0)
    json_mode: Literal["auto", "on", "off"] = "auto"  # auto: ask for json_object, drop it if refused
    send_seed: bool = True  # pass a per-call seed (llama.cpp, vLLM and OpenAI honour it)
    seed: int = 0  # seeds the retry jitter
    max_calls: int | None = Field(default=None, ge=0)
    max_total_tokens: int | None = Field(default=None, ge=0)
    max_cost_usd: float | None = Field(default=None, ge=0)
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
    max_rejections_in_prompt: int = Field(default=5, ge=0, le=50)
    # After the endpoint is found down, this many propose() requests are answered
    # "unavailable" at once (the search uses its offline proposer) before it is tried again.
    down_cooldown: int = Field(default=20, ge=0)

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or None

    def resolved_api_key(self) -> str:
        """The key to send.  Local servers (any custom base URL) accept a placeholder."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        env_key = os.environ.get("OPENAI_API_KEY")
        if env_key:
            return env_key
        if self.resolved_base_url():
            return "sk-no-key-needed"
        raise LLMConfigError(
            "no API key for the LLM: set OPENAI_API_KEY, pass an api key, or give --base-url for a local server"
        )

    def known_secret(self) -> str | None:
        """The key this process would send, if any: used only to scrub it from error text."""
        if self.api_key is not None and self.api_key.get_secret_value():
            return self.api_key.get_secret_value()
        return os.environ.get("OPENAI_API_KEY") or None

    def price_for(self, model: str) -> ModelPrice | None:
        """Exact match, else the listed model this is a dated snapshot of (``gpt-4o-2024-08-06``)."""
        if model in self.prices:
            return self.prices[model]
        base = _SNAPSHOT_SUFFIX.sub("", model)
        return self.prices.get(base)

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.price_for(model)
        if price is None:
            return 0.0
        return (prompt_tokens * price.prompt + completion_tokens * price.completion) / 1e6
