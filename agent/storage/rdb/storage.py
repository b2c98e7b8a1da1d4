"""The RDB storage: SQLAlchemy 2.0 on SQLite (default) or PostgreSQL (many workers).

Every public method is one transaction.  Datasets and task specs are here; runs,
candidates and events in ``runs.py``; comparisons in ``comparisons.py``; training sweeps in ``sweeps.py``; API tokens in ``tokens.py``.  A tenant's view
(``for_tenant``) adds its condition to every query that finds a dataset or a run, in the
same transaction as the work, so a check and the action it guards cannot drift apart.
"""
from __future__ import annotations

import contextlib
import copy
import threading
from datetime import datetime
from typing import Any, Iterator, Mapping

import pandas as pd
from sqlalchemy import ColumnElement, Connection, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session

from agent.storage import frames
from agent.storage.base import BaseStorage
from agent.storage.errors import ConflictError, NotFoundError
from agent.storage.rdb import convert as cv
from agent.storage.rdb import models as m
from agent.storage.rdb.changes import watch_for
from agent.storage.rdb.comparisons import ComparisonVerbs
from agent.storage.rdb.engine import WRITE_OPTION, make_engine
from agent.storage.rdb.runs import RunVerbs, paging
from agent.storage.rdb.schema import ensure_schema
from agent.storage.rdb.sweeps import SweepVerbs
from agent.storage.rdb.tokens import TokenVerbs
from agent.storage.records import ColumnInfo, DatasetRecord, Page, RunState, TaskSpecRecord

ACTIVE = (RunState.QUEUED.value, RunState.RUNNING.value)


class RDBStorage(RunVerbs, ComparisonVerbs, SweepVerbs, TokenVerbs, BaseStorage):
    """``RDBStorage("sqlite:///./sld.db")`` or ``RDBStorage("postgresql+psycopg://...")``.

    An empty database gets the schema (Alembic ``upgrade head``); an older one
    is refused with a message that says to run ``sld db upgrade``.
    """

    def __init__(self, url: str, *, engine_kwargs: Mapping[str, Any] | None = None,
                 create_schema: bool = True):
        self.url = url
        self.engine = make_engine(url, **dict(engine_kwargs or {}))
        self._writer = self.engine.execution_options(**{WRITE_OPTION: True})
        self._skip_locked = self.engine.dialect.name == "postgresql"
        # SQLite has one writer at a time, and a writer that finds the lock taken sleeps in SQLite's
        # busy handler (1, 2, 5 ... 100 ms naps) however soon the lock frees: threads of one process
        # queue here instead, woken the moment the last write commits (other processes still meet
        # at SQLite's lock).  Views of this storage (for_tenant) share it.
        self._write_turn = threading.RLock() if self.engine.dialect.name == "sqlite" else contextlib.nullcontext()
        self._tenant: str | None = None  # the tenant this storage creates rows for
        self._scoped = False             # whether it sees only that tenant's datasets and runs
        self._owns_engine = True
        ensure_schema(self.engine, url, create=create_schema)
        self._changes = watch_for(self.engine)  # shared by the views, as the engine is
        # datasets' column summaries as last written by this process, with the dataset's creation time
        # (its identity, with the id): summaries only grow, so a batch one covers needs no read of the
        # dataset (``append_rows``).  Shared by the views.
        self._summaries: dict[int, tuple[datetime, tuple[ColumnInfo, ...]]] = {}
        # the counted append's statements by ``scope_key`` (each view's own tenant condition), built once
        self._counted_built: dict[tuple, tuple[Any, Any]] = {}

    def for_tenant(self, tenant: str | None) -> "RDBStorage":
        view = copy.copy(self)
        view._tenant, view._scoped, view._owns_engine = tenant, True, False
        return view

    def generation(self):
        return self._changes.generation()

    @property
    def scope_key(self):
        return (self._scoped, self._tenant)

    def _owned(self, column) -> list[ColumnElement[bool]]:
        """The view's condition on a tenant column (none for the unrestricted storage)."""
        if not self._scoped:
            return []
        # `= value` / `IS NULL` rather than IS NOT DISTINCT FROM, which PostgreSQL cannot answer from an index
        return [column.is_(None) if self._tenant is None else column == self._tenant]

    @contextlib.contextmanager
    def _read(self) -> Iterator[Session]:
        with Session(self.engine, expire_on_commit=False) as s, s.begin():
            yield s

    @contextlib.contextmanager
    def _read_rows(self) -> Iterator[Connection]:
        """A read of plain rows, without the ORM's session: for the queries behind every cached read,
        where building a session cost as much as the query."""
        with self.engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def _write(self, *, runs: bool = True) -> Iterator[Session]:
        """A write transaction.  ``runs=False`` for one that changes no run row (dataset rows): the
        generation then stays, and the cached reads of runs with it (under a mix of appends and reads,
        every append would otherwise send the next reads to the database)."""
        with self._write_turn, Session(self._writer, expire_on_commit=False) as s, s.begin():
            yield s
        if runs:
            self._changes.committed()

    def close(self) -> None:
        if self._owns_engine:
            self._changes.close()
            self.engine.dispose()

    def info(self) -> dict[str, Any]:
        import migrations

        with self.engine.connect() as conn:
            revision = migrations.current_revision(conn)
        return {"backend": self.engine.dialect.name, "schema_revision": revision}

    # -- datasets ---------------------------------------------------------------------------
    def create_dataset(self, rows, *, name="", description="", source=None, task=None) -> DatasetRecord:
        batch = rows if isinstance(rows, frames.Batch) else frames.Batch.of(rows)
        with self._write(runs=False) as s:
            ds = self._insert_dataset(s, batch, name=name, description=description, source=source,
                                      tenant=self._tenant)
            if task is not None:
                self._put_task_spec(s, task["name"], ds.id, task["problem"], task.get("human_law"),
                                    task.get("split_column"))
        return self._remember(cv.dataset_record(ds))

    def append_rows(self, dataset_id, rows) -> DatasetRecord:
        batch = rows if isinstance(rows, frames.Batch) else frames.Batch.of(rows)
        created, seen = self._summaries.get(dataset_id, (None, None))
        if seen is not None and frames.covers(seen, batch.columns):
            # The common append: no new range, no new label, so only the counters move.  Summaries only
            # grow, so one seen earlier that covers the batch covers it now; and the dataset row is
            # locked for one statement, not over the read-merge-write that every append to the
            # dataset would queue behind (5 ms under load).  A dataset this view may not see, or one
            # gone, takes the full path below, which says so.
            appended = self._append_counted(dataset_id, created, batch)
            if appended is not None:
                return appended
        with self._write(runs=False) as s:
            ds = self._append_batch(s, self._dataset_row(s, dataset_id, lock=True), batch)
        return self._remember(cv.dataset_record(ds))

    def _remember(self, ds: DatasetRecord) -> DatasetRecord:
        if len(self._summaries) >= 1024:  # a bound, not a cache policy: a miss costs one ordinary append
            self._summaries.clear()
        self._summaries[ds.id] = (ds.created_at.replace(tzinfo=None), ds.columns)
        return ds

    def _append_counted(self, dataset_id: int, created: datetime, batch: frames.Batch) -> DatasetRecord | None:
        """Append ``batch`` moving only the counters; None when the dataset is not there (for this view),
        or is another one under the same id (SQLite reuses the id of the last row deleted)."""
        built = self._counted_built.get(self.scope_key)
        if built is None:
            built = self._counted_built[self.scope_key] = self._counted_statements()
        counted, insert_batch = built
        values = {"dataset_id": dataset_id, "created": created, "n": len(batch), "t": cv.now(),
                  "format": batch.format, "data": batch.data}
        if insert_batch is None:
            # one statement in autocommit: the row lock lasts while PostgreSQL runs it, not over round
            # trips and this process's waits for the GIL between statements
            with self._writer.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                row = conn.execute(counted, values).one_or_none()
        else:  # SQLite has no writing CTE; its writers queue on the database lock anyway
            with self._write(runs=False) as s:
                row = s.execute(counted, values).one_or_none()
                if row is not None:
                    s.execute(insert_batch, {**values, "seq": row.n_batches - 1})
        return None if row is None else cv.dataset_record(row)  # a Row reads by column name, as the ORM row

    def _counted_statements(self) -> tuple[Any, Any]:
        """The counted append's statements with bound parameters, for this view's tenant condition: built
        once per scope (``_append_counted``), as composing the writing CTE took more of the GIL than
        everything else in an append (a tenth of a millisecond each time)."""
        d, b = m.DatasetRow.__table__, m.DatasetBatchRow.__table__
        n, t = bindparam("n", type_=b.c.n_rows.type), bindparam("t", type_=d.c.updated_at.type)
        counted = (update(d).where(d.c.id == bindparam("dataset_id"),
                                   d.c.created_at == bindparam("created", type_=d.c.created_at.type),
                                   *self._owned(d.c.tenant))
                   .values(n_rows=d.c.n_rows + n, n_batches=d.c.n_batches + 1, updated_at=t)
                   .returning(*d.c))
        stored = {"n_rows": n, "format": bindparam("format", type_=b.c.format.type),
                  "data": bindparam("data", type_=b.c.data.type), "created_at": t}
        if self.engine.dialect.name != "postgresql":
            return counted, insert(b).values(dataset_id=bindparam("dataset_id"), seq=bindparam("seq"), **stored)
        moved = counted.cte("moved")
        insert_batch = insert(b).from_select(["dataset_id", "seq", *stored],
                                             select(moved.c.id, moved.c.n_batches - 1, *stored.values()))
        return select(moved).add_cte(insert_batch.cte("stored")), None

    @staticmethod
    def _insert_dataset(s: Session, batch: frames.Batch, *, name: str, description: str, source: str | None,
                        tenant: str | None) -> m.DatasetRow:
        """A new dataset holding ``batch``, inside the caller's transaction."""
        t = cv.now()
        ds = m.DatasetRow(name=name[:200], description=description, source=source, tenant=tenant,
                          n_rows=len(batch), n_batches=1, created_at=t, updated_at=t,
                          columns=[c.to_dict() for c in batch.columns])
        s.add(ds)
        s.flush()
        s.add(m.DatasetBatchRow(dataset_id=ds.id, seq=0, n_rows=len(batch), format=batch.format, data=batch.data,
                                created_at=t))
        return ds

    @staticmethod
    def _append_batch(s: Session, ds: m.DatasetRow, batch: frames.Batch) -> m.DatasetRow:
        """Add ``batch`` to the locked dataset ``ds``, inside the caller's transaction."""
        t = cv.now()
        current = cv.dataset_record(ds)
        frames.check_compatible(current.columns, batch.columns)
        merged = frames.merge_summaries(current.columns, batch.columns)
        s.add(m.DatasetBatchRow(dataset_id=ds.id, seq=ds.n_batches, n_rows=len(batch), format=batch.format,
                                data=batch.data, created_at=t))
        ds.columns = [c.to_dict() for c in merged]
        ds.n_rows, ds.n_batches, ds.updated_at = ds.n_rows + len(batch), ds.n_batches + 1, t
        return ds

    def get_dataset(self, dataset_id) -> DatasetRecord:
        with self._read() as s:
            return cv.dataset_record(self._dataset_row(s, dataset_id))

    def list_datasets(self, *, offset=0, limit=50) -> Page[DatasetRecord]:
        offset, limit = paging(offset, limit)
        with self._read() as s:
            where = self._owned(m.DatasetRow.tenant)
            total = s.scalar(select(func.count()).select_from(m.DatasetRow).where(*where))
            rows = s.scalars(select(m.DatasetRow).where(*where).order_by(m.DatasetRow.id.desc())
                             .offset(offset).limit(limit))
            return Page(tuple(cv.dataset_record(r) for r in rows), total, offset, limit)

    def delete_dataset(self, dataset_id) -> None:
        with self._write() as s:
            self._dataset_row(s, dataset_id, lock=True)
            active = s.scalar(select(func.count()).select_from(m.RunRow).where(
                m.RunRow.dataset_id == dataset_id, m.RunRow.state.in_(ACTIVE)))
            if active:
                raise ConflictError(f"dataset {dataset_id} has {active} queued or running run(s); cancel them first")
            s.execute(delete(m.DatasetRow).where(m.DatasetRow.id == dataset_id))

    def load_rows(self, dataset_id) -> pd.DataFrame:
        with self._read() as s:
            ds = self._dataset_row(s, dataset_id)
            blobs = s.scalars(select(m.DatasetBatchRow.data).where(
                m.DatasetBatchRow.dataset_id == dataset_id).order_by(m.DatasetBatchRow.seq)).all()
            columns = [c["name"] for c in ds.columns]
        return frames.from_blobs(blobs, columns)

    def load_rows_page(self, dataset_id, offset, limit) -> tuple[pd.DataFrame, int]:
        """Only the batches that hold the page are read (their sizes come from an indexed query)."""
        b = m.DatasetBatchRow
        with self._read() as s:
            ds = self._dataset_row(s, dataset_id)
            sizes = s.execute(select(b.seq, b.n_rows).where(b.dataset_id == dataset_id).order_by(b.seq)).all()
            wanted, first_row, start = [], None, 0
            for seq, n in sizes:
                if start + n > offset and start < offset + limit:
                    wanted.append(seq)
                    first_row = start if first_row is None else first_row
                start += n
            blobs = s.scalars(select(b.data).where(b.dataset_id == dataset_id, b.seq.in_(wanted))
                              .order_by(b.seq)).all() if wanted else []
            columns = [c["name"] for c in ds.columns]
        df = frames.from_blobs(blobs, columns)
        skip = offset - (first_row or 0)
        return df.iloc[skip: skip + limit].reset_index(drop=True), int(ds.n_rows)

    def _dataset_row(self, s: Session, dataset_id: int, lock: bool = False) -> m.DatasetRow:
        q = select(m.DatasetRow).where(m.DatasetRow.id == dataset_id, *self._owned(m.DatasetRow.tenant))
        row = s.scalar(q.with_for_update() if lock and self._skip_locked else q)
        if row is None:
            raise NotFoundError(f"dataset {dataset_id} not found")
        return row

    # -- task specs ---------------------------------------------------------------------------
    def save_task_spec(self, name, *, dataset_id, problem, human_law=None, split_column=None):
        with self._write() as s:
            if dataset_id is not None:
                self._dataset_row(s, dataset_id)
            return self._put_task_spec(s, name, dataset_id, problem, human_law, split_column)

    def _put_task_spec(self, s: Session, name, dataset_id, problem, human_law, split_column) -> TaskSpecRecord:
        q = self._task_spec_query(name)
        row = s.scalar(q.with_for_update() if self._skip_locked else q)
        if row is None:
            row = m.TaskSpecRow(name=name, tenant=self._tenant, created_at=cv.now())
            s.add(row)
        row.dataset_id, row.problem = dataset_id, cv.jsonable(dict(problem))
        row.human_law = None if human_law is None else cv.jsonable(dict(human_law))
        row.split_column = split_column
        s.flush()
        return cv.task_spec_record(row)

    def get_task_spec(self, name) -> TaskSpecRecord:
        with self._read() as s:
            row = s.scalar(self._task_spec_query(name))
            if row is None:
                raise NotFoundError(f"task {name!r} not found")
            return cv.task_spec_record(row)

    def _task_spec_query(self, name: str):
        """This storage's tenant's spec of that name (the unrestricted storage: the local tenant's)."""
        tenant = m.TaskSpecRow.tenant
        return select(m.TaskSpecRow).where(m.TaskSpecRow.name == name,
                                           tenant.is_(None) if self._tenant is None else tenant == self._tenant)

    def find_task_spec(self, dataset_id) -> TaskSpecRecord | None:
        with self._read() as s:
            if self._scoped:
                self._dataset_row(s, dataset_id)  # another tenant's dataset is not found
            row = s.scalar(select(m.TaskSpecRow).where(m.TaskSpecRow.dataset_id == dataset_id)
                           .order_by(m.TaskSpecRow.name).limit(1))
            return None if row is None else cv.task_spec_record(row)

    def list_task_specs(self) -> list[TaskSpecRecord]:
        with self._read() as s:
            q = select(m.TaskSpecRow).where(*self._owned(m.TaskSpecRow.tenant))
            return [cv.task_spec_record(r) for r in s.scalars(q.order_by(m.TaskSpecRow.name, m.TaskSpecRow.id))]
