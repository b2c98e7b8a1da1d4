from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


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
