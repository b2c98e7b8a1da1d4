"""All service settings in one pydantic-settings class (environment variables, or a .env file).

``DATABASE_URL`` (also ``SLD_DATABASE_URL``) picks the database; every other
setting is ``SLD_<NAME>``, e.g. ``SLD_MAX_PAYLOAD_BYTES=10000000``.
"""
from __future__ import annotations

import functools
import re

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent.defaults import DEFAULT_BUDGET, DEFAULT_TIME_LIMIT, DEFAULT_WORK


class LLMEndpoint(BaseModel):
    """One LLM endpoint the operator allows: where requests go and which variable holds its key.

    Runs name an endpoint; they never carry a URL or a key, so a request cannot
    send the server's key (or its prompts) anywhere the operator did not list.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str = Field(pattern=r"^https?://[^\s]+$", description="OpenAI-compatible base URL")
    api_key_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                    description="the environment variable holding the key; "
                                                "none for local servers that need no key")


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SLD_", env_file=".env", extra="ignore", populate_by_name=True)

    database_url: str = Field("sqlite:///./sld.db",
                              validation_alias=AliasChoices("DATABASE_URL", "SLD_DATABASE_URL"))
    db_pool_size: int = Field(10, ge=1)       # PostgreSQL connections kept per process
    db_max_overflow: int = Field(20, ge=0)
    create_schema: bool = True                # an empty database gets the schema at start-up

    # API
    # Every request needs an API token, even while none exists (`sld serve` sets it when it listens
    # beyond this machine).  Otherwise a request without one is served only while no token is active.
    auth_required: bool = False
    # How long the API trusts what the token table said (a token's scope, that none exists): every
    # request would otherwise cost a query.  A token created or revoked by `sld token` in another
    # process takes effect within this many seconds; 0 asks the database on every request.
    auth_cache_seconds: float = Field(1.0, ge=0)
    # Threads serving the API's blocking handlers (database reads and writes).  Few: they share one GIL,
    # and more of them spend it handing it over (on 2 cores, cached reads/s with 4, 8, 16 and anyio's
    # default 40 threads: 671, 571-658, 527 and 510 on SQLite; 626 and 439-498 with 4 and 8 on
    # PostgreSQL; README "Load").  A slow request (a large upload) holds one while it lasts; /health
    # has a thread of its own, and more API processes (`sld serve --api-workers`) add threads and GILs.
    api_threads: int = Field(4, ge=2)
    # Web pages on other sites that may call the API from a browser, as JSON:
    # SLD_CORS_ORIGINS='["https://dashboard.example.com"]'.  None by default: such pages can neither read
    # answers nor write (a cross-site write is 403 even where CORS would not be asked, e.g. a text/plain POST).
    cors_origins: list[str] = Field(default_factory=list)
    max_payload_bytes: int = Field(32 * 1024 * 1024, ge=1024)  # larger request bodies get 413
    max_rows_per_request: int = Field(1_000_000, ge=1)
    page_limit_default: int = Field(50, ge=1)
    page_limit_max: int = Field(500, ge=1)
    # A comparison computed in the API (a posted law, or a run without a stored one) is bounded before it
    # starts: at most this many rows and groups, and its fits share this many seconds in all.
    compare_time_limit: float = Field(10.0, gt=0)
    compare_max_groups: int = Field(50, ge=1)
    compare_max_rows: int = Field(20_000, ge=1)
    compare_concurrency: int = Field(2, ge=1)      # comparisons fitted at once; more wait

    # workers
    embedded_workers: int = Field(1, ge=0)    # worker processes `sld serve` starts next to the API
    heartbeat_interval: float = Field(5.0, gt=0)
    stale_after: float = Field(60.0, gt=0)    # a running run silent this long is re-claimed
    poll_interval: float = Field(1.0, gt=0)
    eval_workers: int = Field(1, ge=1)        # processes evaluating candidates inside one run
    dask_scheduler: str | None = None         # SLD_DASK_SCHEDULER=tcp://host:8786: a run's evaluations go to
                                              # that Dask cluster instead (whole runs still queue in the database)
    db_retry_max: float = Field(30.0, gt=0)   # longest wait between a worker's tries of a lost database

    # training sweeps: trainer workers claim points over HTTP (`sld train worker`)
    sweep_heartbeat_interval: float = Field(10.0, gt=0)  # how often a trainer says it is still training
    sweep_stale_after: float = Field(60.0, gt=0)  # a point whose trainer is silent this long is queued again
    sweep_max_attempts: int = Field(3, ge=1)      # a point that fails this often is marked failed
    sweep_max_points: int = Field(1000, ge=1)     # points one sweep may plan

    # LLM endpoints runs may name, as JSON: SLD_LLM_ENDPOINTS='{"openai": {"base_url":
    # "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"}, "local": {"base_url": "http://127.0.0.1:8080/v1"}}'
    llm_endpoints: dict[str, LLMEndpoint] = Field(default_factory=dict)

    # run defaults: the CLI's and LawSearch's (agent/defaults.py), so every face runs the same search
    default_budget: int = Field(DEFAULT_BUDGET, ge=1)                  # candidates
    default_work_budget: float = Field(DEFAULT_WORK, ge=0)             # model evaluations; 0 = no limit
    default_time_limit: float = Field(DEFAULT_TIME_LIMIT, gt=0)        # seconds, a safety net
    max_budget: int = Field(100_000, ge=1)

    @field_validator("llm_endpoints")
    @classmethod
    def _endpoint_names(cls, value: dict[str, LLMEndpoint]) -> dict[str, LLMEndpoint]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
                raise ValueError(f"LLM endpoint name {name[:80]!r}: use letters, digits, '_', '.' or '-'")
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: list[str]) -> list[str]:
        for origin in value:
            if not re.fullmatch(r"https?://[^/\s?#*]+", origin):
                raise ValueError(f"CORS origin {origin[:80]!r}: give scheme://host[:port], e.g. "
                                 "https://dashboard.example.com (no path, no wildcard)")
        return value

    def engine_kwargs(self) -> dict:
        return {"pool_size": self.db_pool_size, "max_overflow": self.db_max_overflow}


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
