from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.storage.records import DatasetRecord
from app.schemas.common import RequestModel


class DatasetCreate(RequestModel):
    """JSON form of ``POST /datasets``: ``rows`` (list of objects) or ``columns`` (object of lists).

    A CSV file is the other form: ``multipart/form-data`` with a ``file`` field
    (and optional ``name``, ``description``), or a raw ``text/csv`` body.
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "name": "my sweep", "rows": [{"N": 1e7, "D": 2e9, "loss": 3.2}, {"N": 3e7, "D": 2e9, "loss": 3.0}]}]})

    name: str = Field("", max_length=200)
    description: str = Field("", max_length=10_000)
    rows: list[dict[str, Any]] | None = None
    columns: dict[str, list[Any]] | None = None


class RowsAppend(RequestModel):
    """JSON form of ``POST /datasets/{id}/rows`` (CSV works too, as for ``POST /datasets``)."""

    model_config = ConfigDict(extra="forbid")

    rows: list[dict[str, Any]] | None = None
    columns: dict[str, list[Any]] | None = None


class ColumnPublic(BaseModel):
    name: str
    kind: str = Field(description="number or text")
    min: float | None = None
    max: float | None = None
    n_distinct: int | None = Field(None, description="text columns: distinct values (null when over 1000)")
    values: list[str] = Field(default_factory=list, description="text columns: the distinct values (first 1000)")


class DatasetPublic(BaseModel):
    id: int
    name: str
    description: str
    source: str | None
    n_rows: int
    n_batches: int
    columns: list[ColumnPublic]
    groups: dict[str, list[str]] = Field(
        default_factory=dict, description="text columns (candidate group columns) and their values")
    task: str | None = Field(None, description="the bundled task this dataset was imported from")
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, ds: DatasetRecord, task: str | None = None) -> "DatasetPublic":
        return cls(id=ds.id, name=ds.name, description=ds.description, source=ds.source, n_rows=ds.n_rows,
                   n_batches=ds.n_batches, columns=[ColumnPublic(**c.to_dict()) for c in ds.columns],
                   groups={c.name: list(c.values) for c in ds.columns if c.kind == "text"},
                   task=task, created_at=ds.created_at, updated_at=ds.updated_at)


class TaskPublic(BaseModel):
    name: str
    description: str
    inputs: list[str]
    targets: list[str]
    group: str | None
    axis: list[str]
    max_constants: int
    human_law: list[str] | None
    dataset_id: int | None = Field(None, description="set once the task was imported")


class TaskImport(RequestModel):
    model_config = ConfigDict(extra="forbid")

    force: bool = Field(False, description="import again even if the task was imported before")
