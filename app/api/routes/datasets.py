"""Datasets: upload rows (JSON or CSV), read summaries, append, delete, best law over runs."""
from __future__ import annotations

from typing import Any, Callable, TypeVar

from fastapi import APIRouter, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from agent.errors import DataError
from agent.storage import NotFoundError
from agent.storage.frames import Batch
from app.api.deps import DatasetId, PagingDep, ReadStorage, SettingsDep, WriteStorage
from app.api.reads import cached_read, current_version, version_key
from app.schemas.common import PagePublic
from app.schemas.datasets import DatasetCreate, DatasetPublic, RowsAppend
from app.schemas.laws import BestLawPublic
from app.services import rows as parse
from app.services.laws import best_law

router = APIRouter(prefix="/datasets", tags=["datasets"])
T = TypeVar("T")


def _body_doc(model) -> dict[str, Any]:
    """OpenAPI for a body that is JSON, a CSV file upload, or raw CSV text."""
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": model.model_json_schema()},
        "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
            "file": {"type": "string", "format": "binary", "description": "a CSV file with a header row"},
            "name": {"type": "string"}, "description": {"type": "string"}}}},
        "text/csv": {"schema": {"type": "string"}},
    }}}


async def _store_rows(request: Request, max_rows: int, store: Callable[[Batch, dict[str, Any]], T]) -> T:
    """``store(validated rows, other fields)``, the rows from any of the three body forms.

    The body is read here, on the event loop; parsing and storing share one trip to a handler thread.
    """
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        form = await request.form()
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise DataError("the form needs a 'file' field holding the CSV (curl -F file=@data.csv)")
        data = await upload.read()
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        return await run_in_threadpool(lambda: store(_csv_batch(data, max_rows), fields))
    body = await request.body()
    if ctype in ("text/csv", "text/plain", "application/csv"):
        query = dict(request.query_params)
        return await run_in_threadpool(lambda: store(_csv_batch(body, max_rows), query))
    if ctype in ("application/json", ""):
        return await run_in_threadpool(lambda: store(*_json_batch(body, max_rows)))
    raise DataError(f"unsupported content type {ctype!r}: send application/json, text/csv or a "
                    "multipart/form-data upload with a 'file' field")


# The batch (summary and stored bytes) is made on the parser's thread, from the rows it has just
# validated: the storage takes it as it is, without a second validation inside its write.
def _csv_batch(data: bytes, max_rows: int) -> Batch:
    return Batch.of_valid(parse.frame_from_csv(data, max_rows=max_rows))


def _json_batch(body: bytes, max_rows: int) -> tuple[Batch, dict]:
    columns, rest = parse.columns_from_json_body(body, max_rows=max_rows)
    return Batch.of_columns(columns), rest


@router.post("", status_code=201, response_model=DatasetPublic, openapi_extra=_body_doc(DatasetCreate),
             summary="Create a dataset from JSON rows or a CSV upload")
async def create_dataset(request: Request, storage: WriteStorage, settings: SettingsDep) -> DatasetPublic:
    def create(batch: Batch, fields: dict[str, Any]):
        about = _dataset_fields(fields)
        return storage.create_dataset(batch, name=about.name, description=about.description)

    return DatasetPublic.of(await _store_rows(request, settings.max_rows_per_request, create))


def _dataset_fields(fields: dict[str, Any]) -> DatasetCreate:
    """Name and description, held to DatasetCreate's limits whichever body form brought them."""
    unknown = sorted(set(fields) - {"name", "description"})
    if unknown:
        raise DataError(f"unknown field(s) {', '.join(unknown)[:200]}; a dataset takes name, description and rows")
    try:
        return DatasetCreate.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise DataError(f"{where + ': ' if where else ''}{first['msg']}") from None


@router.get("", response_model=PagePublic[DatasetPublic], summary="List datasets, newest first")
def list_datasets(storage: ReadStorage, paging: PagingDep) -> PagePublic[DatasetPublic]:
    page = storage.list_datasets(offset=paging.offset, limit=paging.limit)
    return PagePublic(items=[DatasetPublic.of(d) for d in page.items], total=page.total,
                      offset=page.offset, limit=page.limit)


@router.get("/{dataset_id}", response_model=DatasetPublic,
            summary="A dataset: columns with ranges, row count, groups (text columns)")
def get_dataset(dataset_id: DatasetId, storage: ReadStorage) -> DatasetPublic:
    ds = storage.get_dataset(dataset_id)
    task = storage.find_task_spec(dataset_id)
    return DatasetPublic.of(ds, task=task.name if task else None)


@router.post("/{dataset_id}/rows", response_model=DatasetPublic, openapi_extra=_body_doc(RowsAppend),
             summary="Append rows (JSON or CSV) with the dataset's columns")
async def append_rows(dataset_id: DatasetId, request: Request, storage: WriteStorage,
                      settings: SettingsDep) -> DatasetPublic:
    def append(batch: Batch, fields: dict[str, Any]):
        if fields:
            raise DataError(f"unknown field(s) {', '.join(sorted(fields))}; send only rows")
        return storage.append_rows(dataset_id, batch)

    return DatasetPublic.of(await _store_rows(request, settings.max_rows_per_request, append))


@router.get("/{dataset_id}/rows", summary="The dataset's rows as JSON (paged)")
def get_rows(dataset_id: DatasetId, storage: ReadStorage, paging: PagingDep) -> dict[str, Any]:
    part, total = storage.load_rows_page(dataset_id, paging.offset, paging.limit)
    return {"items": part.to_dict(orient="records"), "total": total, "offset": paging.offset,
            "limit": paging.limit}


@router.delete("/{dataset_id}", status_code=204, summary="Delete a dataset with its runs")
def delete_dataset(dataset_id: DatasetId, storage: WriteStorage) -> Response:
    storage.delete_dataset(dataset_id)
    return Response(status_code=204)


@router.get("/{dataset_id}/best-law", response_model=BestLawPublic,
            summary="The best law over the dataset's finished runs")
async def dataset_best_law(dataset_id: DatasetId, request: Request, storage: ReadStorage) -> Response:
    version = await current_version(request, storage, best_of_dataset=dataset_id)
    if version is None:
        await run_in_threadpool(storage.get_dataset, dataset_id)  # 404 names the dataset if it is the one missing
        raise NotFoundError(f"dataset {dataset_id} has no finished run yet")
    return await cached_read(request, ("best", version_key(version)),
                             lambda: best_law(storage, storage.get_run(version.id)))
