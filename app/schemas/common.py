from __future__ import annotations

import sys
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, model_validator

T = TypeVar("T")

# Ids are checked against their columns' types before any query: datasets, runs and candidates
# are INTEGER (32 bits on PostgreSQL), events BIGINT; a larger id is a 422, not a driver overflow.
MAX_ID = 2**31 - 1
MAX_EVENT_ID = 2**63 - 1


class RequestModel(BaseModel):
    """Base of request bodies: refuses, anywhere in the body, what no field can use.

    Text with a NUL character (PostgreSQL cannot store it) and integers beyond a
    float's range (nothing downstream can compute with them) are refused with
    the path to the value, before any field is validated.  A number field refuses NaN and infinity
    as such ("should be a finite number"), not by a bound it happens to fail.
    """

    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        stack: list[tuple[str, Any]] = [("", data)]
        while stack:  # iterative: a deeply nested body must not exhaust the stack
            path, value = stack.pop()
            if isinstance(value, str):
                if "\x00" in value:
                    raise ValueError(f"{_shown(path)}: text must not hold a NUL character")
            elif isinstance(value, int) and not isinstance(value, bool):
                if abs(value) > sys.float_info.max:
                    raise ValueError(f"{_shown(path)}: the integer is too large (the limit is about 1.8e308)")
            elif isinstance(value, dict):
                for key, item in value.items():
                    key_path = f"{path}.{key}" if path else str(key)
                    if isinstance(key, str) and "\x00" in key:
                        raise ValueError(f"{_shown(key_path)!r}: a name must not hold a NUL character")
                    stack.append((key_path, item))
            elif isinstance(value, list):
                stack.extend((f"{path}.{i}" if path else str(i), item) for i, item in enumerate(value))
        return data


def _shown(path: str, limit: int = 120) -> str:
    """Where a bad value sits, short enough for a one-line answer (keys can be long)."""
    if not path:
        return "the body"
    return path if len(path) <= limit else path[:limit] + "..."


class PagePublic(BaseModel, Generic[T]):
    items: list[T]
    total: int
    offset: int
    limit: int


class Message(BaseModel):
    detail: str


class HealthPublic(BaseModel):
    status: str
    database: str
    schema_revision: str | None
    queued_runs: int
    running_runs: int
    version: str
