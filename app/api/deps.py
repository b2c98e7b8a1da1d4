"""Shared request dependencies: the storage and the settings live on ``app.state``."""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from agent.storage import BaseStorage
from app.core.config import Settings


def get_storage(request: Request) -> BaseStorage:
    return request.app.state.storage


def get_app_settings(request: Request) -> Settings:
    return request.app.state.settings


StorageDep = Annotated[BaseStorage, Depends(get_storage)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]


OffsetQuery = Annotated[int, Query(ge=0)]
LimitQuery = Annotated[int | None, Query(ge=1, description="page size (at most SLD_PAGE_LIMIT_MAX)")]


class Paging:
    def __init__(self, request: Request, offset: OffsetQuery = 0, limit: LimitQuery = None):
        settings: Settings = request.app.state.settings
        self.offset = offset
        self.limit = min(limit or settings.page_limit_default, settings.page_limit_max)


PagingDep = Annotated[Paging, Depends(Paging)]
