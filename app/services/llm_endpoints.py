"""LLM endpoints are an operator setting (``SLD_LLM_ENDPOINTS``); a run names one of them.

A run is stored and executed by workers that hold the operator's keys, so what
a request may say about the LLM is limited to the model and sampling settings
and the *name* of an endpoint.  A URL or a key in a run is refused: the API
answers 422, and a worker refuses a stored run that carries one (a run queued
by an older version), so the key never leaves for a URL the operator did not list.
"""
from __future__ import annotations

import os
from typing import Any, Mapping

from pydantic import ValidationError

from agent.errors import DataError
from app.core.config import LLMEndpoint

# Sent to endpoints that need no key, so that the OpenAI client does not fall back
# to OPENAI_API_KEY from the worker's environment.
NO_KEY = "sk-no-key-needed"
_OPERATOR_ONLY = ("base_url", "api_key")


def check_run_llm(llm: Mapping[str, Any] | None, endpoints: Mapping[str, LLMEndpoint]) -> dict[str, Any]:
    """A run's ``llm`` settings, checked and with the endpoint it will use named; DataError otherwise."""
    if not llm or not llm.get("model"):
        raise DataError("proposers: an 'llm' proposer needs llm settings with at least a 'model'")
    if "api_key" in llm:
        raise DataError("proposers: an API key is not accepted in a run (runs are stored); the operator "
                        "sets each endpoint's key in the workers' environment")
    if "base_url" in llm:
        raise DataError("proposers: a run cannot send the LLM requests to a URL of its own (llm.base_url); "
                        f"name one of the operator's endpoints in llm.endpoint ({_listed(endpoints)})")
    from agent.llm import LLMSettings

    try:
        LLMSettings.model_validate(_without_endpoint(llm))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(f"proposers: llm.{where}: {first['msg']}") from None
    return {**llm, "endpoint": _endpoint_name(llm.get("endpoint"), endpoints)}


def llm_settings_for_run(llm: Mapping[str, Any], endpoints: Mapping[str, LLMEndpoint],
                         environ: Mapping[str, str] = os.environ):
    """The worker's side: LLMSettings with the listed endpoint's URL and key (LLMConfigError if none)."""
    from agent.llm import LLMConfigError, LLMSettings

    smuggled = [k for k in _OPERATOR_ONLY if k in llm]
    if smuggled:
        raise LLMConfigError(f"the run's llm settings carry {', '.join(smuggled)}; workers only send "
                             "requests to the operator's endpoints (SLD_LLM_ENDPOINTS): queue the run again "
                             "naming one in llm.endpoint")
    name = llm.get("endpoint")
    endpoint = endpoints.get(name) if isinstance(name, str) else None
    if endpoint is None:
        raise LLMConfigError(f"LLM endpoint {repr(name)[:80]} is not configured on this worker "
                             f"(SLD_LLM_ENDPOINTS lists: {', '.join(endpoints) or 'none'})")
    key = NO_KEY
    if endpoint.api_key_env:
        key = environ.get(endpoint.api_key_env) or ""
        if not key:
            raise LLMConfigError(f"the key of LLM endpoint {name!r} is not set: the worker's environment "
                                 f"has no {endpoint.api_key_env}")
    return LLMSettings.model_validate({**_without_endpoint(llm), "base_url": endpoint.base_url, "api_key": key})


def _endpoint_name(name: Any, endpoints: Mapping[str, LLMEndpoint]) -> str:
    if not endpoints:
        raise DataError("proposers: this server has no LLM endpoints; the operator lists them in "
                        "SLD_LLM_ENDPOINTS (a JSON object of name: {base_url, api_key_env})")
    if name is None:
        if len(endpoints) == 1:
            return next(iter(endpoints))
        raise DataError(f"proposers: name the LLM endpoint in llm.endpoint ({_listed(endpoints)})")
    if not isinstance(name, str) or name not in endpoints:
        raise DataError(f"proposers: unknown LLM endpoint {repr(name)[:80]} ({_listed(endpoints)})")
    return name


def _without_endpoint(llm: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in llm.items() if k != "endpoint"}


def _listed(endpoints: Mapping[str, LLMEndpoint]) -> str:
    return f"this server has: {', '.join(endpoints)}" if endpoints else "this server has none"
