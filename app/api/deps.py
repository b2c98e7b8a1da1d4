"""Shared request dependencies: the storage and the settings live on ``app.state``.

A route reaches datasets and runs only through ``ReadStorage``, ``WriteStorage`` or
``AdminStorage``: each checks the request's token for that scope (401/403) and gives the
storage as the token's tenant sees it, so another tenant's ids are 404 like unknown ones.
"""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Query, Request

from agent.storage import BaseStorage
from app.api.auth import StorageFor
from app.core.config import Settings
from app.schemas.common import MAX_EVENT_ID, MAX_ID


# async: FastAPI runs a plain ``def`` dependency on one of the API's few threads (SLD_API_THREADS),
# which these attribute reads do not need
async def get_server_storage(request: Request) -> BaseStorage:
    return request.app.state.storage


async def get_app_settings(request: Request) -> Settings:
    return request.app.state.settings


ReadStorage = Annotated[BaseStorage, Depends(StorageFor("read"))]
WriteStorage = Annotated[BaseStorage, Depends(StorageFor("write"))]
AdminStorage = Annotated[BaseStorage, Depends(StorageFor("admin"))]
ServerStorage = Annotated[BaseStorage, Depends(get_server_storage)]  # every tenant's: /health only
SettingsDep = Annotated[Settings, Depends(get_app_settings)]


DatasetId = Annotated[int, Path(ge=0, le=MAX_ID, description="a dataset's id")]
RunId = Annotated[int, Path(ge=0, le=MAX_ID, description="a run's id")]
CandidateId = Annotated[int, Path(ge=0, le=MAX_ID, description="a candidate's id within its run")]
SweepId = Annotated[int, Path(ge=0, le=MAX_ID, description="a sweep's id")]
PointId = Annotated[int, Path(ge=0, le=MAX_ID, description="a sweep point's id")]
ComparisonId = Annotated[int, Path(ge=1, le=MAX_ID, description="a comparison's id")]
DatasetIdQuery = Annotated[int | None, Query(ge=0, le=MAX_ID, description="only this dataset's runs")]
EventIdQuery = Annotated[int, Query(ge=0, le=MAX_EVENT_ID, description="only events after this id")]
TaskName = Annotated[str, Path(max_length=200, pattern=r"^[A-Za-z0-9_.-]+$", description="a bundled task's name")]

OffsetQuery = Annotated[int, Query(ge=0, le=MAX_EVENT_ID)]
LimitQuery = Annotated[int | None, Query(ge=1, le=MAX_EVENT_ID,
                                          description="page size (at most SLD_PAGE_LIMIT_MAX)")]


class Paging:
    def __init__(self, request: Request, offset: OffsetQuery = 0, limit: LimitQuery = None):
        settings: Settings = request.app.state.settings
        self.offset = offset
        self.limit = min(limit or settings.page_limit_default, settings.page_limit_max)


PagingDep = Annotated[Paging, Depends(Paging)]
