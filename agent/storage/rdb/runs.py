"""Runs, candidates and events of the RDB storage: claiming, heartbeats, atomic generations.

Run ownership is a compare-and-set on ``(state, worker_id)``: a worker whose run
was re-claimed after a stale heartbeat cannot write anything more to it.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Mapping, Sequence

from sqlalchemy import and_, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from agent.search.records import Candidate
from agent.storage.base import CANDIDATE_ORDERS
from agent.storage.errors import ConflictError, NotFoundError, RunLost
from agent.storage.rdb import convert as cv
from agent.storage.rdb import models as m
from agent.storage.rdb.claims import claim_first
from agent.storage.records import CandidatePoint, Checkpoint, Page, RunEvent, RunRecord, RunState, RunVersion

MAX_PAGE = 1000


class RunVerbs:
    """The run half of :class:`RDBStorage` (it provides ``_read``, ``_write``, ``_dataset_row``)."""

    _skip_locked: bool
    _scoped: bool
    _owned: Callable[[Any], list]  # the tenant view's condition on a tenant column

    # -- runs ---------------------------------------------------------------------------------
    def create_run(self, dataset_id, spec) -> RunRecord:
        with self._write() as s:
            ds = self._dataset_row(s, dataset_id)
            t = cv.now()
            run = m.RunRow(dataset_id=dataset_id, tenant=ds.tenant, state=RunState.QUEUED.value,
                           spec=cv.jsonable(dict(spec)),
                           progress={}, generation=0, cancel_requested=False, attempts=0, created_at=t)
            s.add(run)
            s.flush()
            s.add(m.EventRow(run_id=run.id, kind="queued", payload={}, created_at=t))
            return cv.run_record(run)

    def get_run(self, run_id) -> RunRecord:
        with self._read() as s:
            return cv.run_record(self._run_row(s, run_id))

    def list_runs(self, *, dataset_id=None, state=None, offset=0, limit=50) -> Page[RunRecord]:
        offset, limit = paging(offset, limit)
        where = self._owned(m.RunRow.tenant)
        if dataset_id is not None:
            where.append(m.RunRow.dataset_id == dataset_id)
        if state is not None:
            where.append(m.RunRow.state == RunState(state).value)
        with self._read() as s:
            total = s.scalar(select(func.count()).select_from(m.RunRow).where(*where))
            rows = s.scalars(select(m.RunRow).where(*where).order_by(m.RunRow.id.desc()).offset(offset).limit(limit))
            return Page(tuple(cv.run_record(r) for r in rows), total, offset, limit)

    def claim_run(self, worker_id, *, stale_after) -> RunRecord | None:
        t = cv.now()
        claimable = or_(
            m.RunRow.state == RunState.QUEUED.value,
            and_(m.RunRow.state == RunState.RUNNING.value,
                 or_(m.RunRow.heartbeat_at.is_(None), m.RunRow.heartbeat_at < t - timedelta(seconds=stale_after))),
        )
        q = select(m.RunRow.id, m.RunRow.state, m.RunRow.worker_id, m.RunRow.heartbeat_at) \
            .where(claimable).order_by(m.RunRow.id).limit(1)
        with self._write() as s:
            seen = claim_first(s, q, m.RunRow, dict(
                state=RunState.RUNNING.value, worker_id=worker_id, heartbeat_at=t,
                started_at=func.coalesce(m.RunRow.started_at, t), attempts=m.RunRow.attempts + 1),
                skip_locked=self._skip_locked, also=("heartbeat_at",))
            if seen is None:
                return None
            run = self._run_row(s, seen.id)
            payload = {"worker_id": worker_id, "attempt": run.attempts}
            if seen.state == RunState.RUNNING.value:
                payload["resumed_from_worker"] = seen.worker_id
            s.add(m.EventRow(run_id=run.id, kind="claimed", payload=payload, created_at=t))
            return cv.run_record(run)

    def heartbeat(self, run_id, worker_id) -> RunRecord:
        with self._write() as s:
            self._touch_owned(s, run_id, worker_id)
            return cv.run_record(self._run_row(s, run_id))

    def save_generation(self, run_id, worker_id, *, candidates, checkpoint, progress, best_score, events=()):
        t = cv.now()
        try:
            with self._write() as s:
                self._touch_owned(s, run_id, worker_id, {
                    "progress": cv.jsonable(dict(progress)), "best_score": cv.finite_or_none(best_score),
                    "generation": checkpoint.generation})
                if candidates:
                    s.execute(insert(m.CandidateRow), [cv.candidate_row(run_id, c) for c in candidates])
                row = s.get(m.CheckpointRow, run_id)
                if row is None:
                    s.add(m.CheckpointRow(run_id=run_id, generation=checkpoint.generation,
                                          state=cv.pack_state(checkpoint.state), updated_at=t))
                else:
                    row.generation, row.updated_at = checkpoint.generation, t
                    row.state = cv.pack_state(checkpoint.state)
                self._insert_events(s, run_id, events, t)
                return cv.run_record(self._run_row(s, run_id))
        except IntegrityError:
            ids = [c.id for c in candidates]
            raise ConflictError(f"run {run_id}: candidates {min(ids)}..{max(ids)} are already stored") from None

    def load_checkpoint(self, run_id) -> Checkpoint | None:
        with self._read() as s:
            row = s.get(m.CheckpointRow, run_id)
            if row is None or self._scoped:
                self._run_row(s, run_id)  # names a missing run; in a tenant's view, another tenant's
            if row is None:
                return None
            return Checkpoint(run_id, row.generation, cv.unpack_state(row.state), cv.aware(row.updated_at))

    def finish_run(self, run_id, worker_id, state, *, final=None, error=None, progress=None, best_score=None):
        state = RunState(state)
        if not state.finished:
            raise ValueError(f"finish_run needs a final state, not {state.value}")
        values: dict[str, Any] = {"state": state.value, "finished_at": cv.now(), "error": error}
        if final is not None:
            values["final"] = cv.jsonable(dict(final))
        if progress is not None:
            values["progress"] = cv.jsonable(dict(progress))
        if best_score is not None:
            values["best_score"] = cv.finite_or_none(best_score)
        with self._write() as s:
            if state is RunState.DONE and self._run_row(s, run_id, lock=True).cancel_requested:
                # A cancel that came while the worker finished its last generation is not lost.  The row
                # lock (PostgreSQL) or the write transaction (SQLite) orders it with request_cancel: a
                # later cancel finds the run done and gets 409, an earlier one is seen here.
                state = RunState.CANCELLED
                values["state"] = state.value
            self._touch_owned(s, run_id, worker_id, values)
            self._insert_events(s, run_id, [{"kind": state.value, **({"error": error} if error else {})}], cv.now())
            return cv.run_record(self._run_row(s, run_id))

    def release_run(self, run_id, worker_id) -> None:
        with self._write() as s:
            self._touch_owned(s, run_id, worker_id, values={"state": RunState.QUEUED.value, "worker_id": None,
                                                            "heartbeat_at": None})
            self._insert_events(s, run_id, [{"kind": "released", "worker_id": worker_id}], cv.now())

    def request_cancel(self, run_id) -> RunRecord:
        with self._write() as s:
            run = self._run_row(s, run_id, lock=True)
            if RunState(run.state).finished:
                raise ConflictError(f"run {run_id} is already {run.state}")
            if run.state == RunState.QUEUED.value:
                run.state, run.finished_at = RunState.CANCELLED.value, cv.now()
            run.cancel_requested = True
            s.add(m.EventRow(run_id=run_id, kind="cancel_requested", payload={}, created_at=cv.now()))
            s.flush()
            return cv.run_record(run)

    def _touch_owned(self, s: Session, run_id: int, worker_id: str, values: Mapping[str, Any] = ()) -> None:
        done = s.execute(update(m.RunRow).where(
            m.RunRow.id == run_id, m.RunRow.worker_id == worker_id, m.RunRow.state == RunState.RUNNING.value,
        ).values({"heartbeat_at": cv.now(), **dict(values)}).execution_options(synchronize_session=False))
        if done.rowcount != 1:
            run = self._run_row(s, run_id)
            raise RunLost(f"run {run_id} is {run.state} and owned by {run.worker_id or 'nobody'}, not {worker_id}")

    def _run_row(self, s: Session, run_id: int, lock: bool = False) -> m.RunRow:
        q = select(m.RunRow).where(m.RunRow.id == run_id, *self._owned(m.RunRow.tenant))
        row = s.scalar(q.with_for_update() if lock and self._skip_locked else q)
        if row is None:
            raise NotFoundError(f"run {run_id} not found")
        return row

    # -- candidates ---------------------------------------------------------------------------
    def list_candidates(self, run_id, *, order_by="score", descending=True, status=None, offset=0, limit=50):
        if order_by not in CANDIDATE_ORDERS:
            raise ValueError(f"cannot sort by {order_by!r}; choose one of {', '.join(CANDIDATE_ORDERS)}")
        offset, limit = paging(offset, limit)
        col = getattr(m.CandidateRow, order_by)
        key = (col.desc() if descending else col.asc()).nulls_last()
        where = [m.CandidateRow.run_id == run_id] + ([m.CandidateRow.status == status] if status else [])
        with self._read() as s:
            self._run_row(s, run_id)
            total = s.scalar(select(func.count()).select_from(m.CandidateRow).where(*where))
            payloads = s.scalars(select(m.CandidateRow.payload).where(*where)
                                 .order_by(key, m.CandidateRow.id).offset(offset).limit(limit))
            return Page(tuple(cv.candidate(p) for p in payloads), total, offset, limit)

    def get_candidates(self, run_id, ids) -> list[Candidate]:
        ids = list(ids)
        if not ids:
            return []
        with self._read() as s:
            if self._scoped:
                self._run_row(s, run_id)  # another tenant's run is not found
            payloads = s.scalars(select(m.CandidateRow.payload).where(
                m.CandidateRow.run_id == run_id, m.CandidateRow.id.in_(ids)).order_by(m.CandidateRow.id))
            return [cv.candidate(p) for p in payloads]

    def candidate_points(self, run_id, *, limit=100_000) -> list[CandidatePoint]:
        c = m.CandidateRow
        with self._read() as s:
            self._run_row(s, run_id)
            rows = s.execute(select(c.id, c.generation, c.status, c.proposer, c.score, c.r2, c.n_constants,
                                    c.complexity).where(c.run_id == run_id).order_by(c.id).limit(limit))
            return [CandidatePoint(*row) for row in rows]

    def best_run(self, dataset_id) -> RunRecord | None:
        with self._read() as s:
            row = s.scalar(select(m.RunRow).where(*self._best_of(dataset_id))
                           .order_by(m.RunRow.best_score.desc().nulls_last(), m.RunRow.id.desc()).limit(1))
            return None if row is None else cv.run_record(row)

    def run_version(self, run_id=None, *, best_of_dataset=None) -> RunVersion | None:
        r = m.RunRow.__table__.c  # Core columns: this query guards every cached read (see _read_rows)
        columns = (r.id, r.state, r.generation, r.best_score, r.finished_at)
        with self._read_rows() as s:
            if best_of_dataset is not None:
                row = s.execute(select(*columns).where(*self._best_of(best_of_dataset, r))
                                .order_by(r.best_score.desc().nulls_last(), r.id.desc()).limit(1)).first()
                if row is None:
                    return None
            else:
                row = s.execute(select(*columns).where(r.id == run_id, *self._owned(r.tenant))).first()
                if row is None:
                    raise NotFoundError(f"run {run_id} not found")
            return RunVersion(row.id, row.state, row.generation, row.best_score, cv.aware(row.finished_at))

    def _best_of(self, dataset_id, r=m.RunRow) -> list:
        return [r.dataset_id == dataset_id, r.state == RunState.DONE.value, r.final.is_not(None),
                *self._owned(r.tenant)]

    # -- events -------------------------------------------------------------------------------
    def add_events(self, run_id, events) -> None:
        with self._write() as s:
            self._run_row(s, run_id)
            self._insert_events(s, run_id, events, cv.now())

    def list_events(self, run_id, *, after_id=0, limit=100, newest_first=False) -> list[RunEvent]:
        _, limit = paging(0, limit)
        order = m.EventRow.id.desc() if newest_first else m.EventRow.id
        with self._read() as s:
            self._run_row(s, run_id)
            rows = s.scalars(select(m.EventRow).where(m.EventRow.run_id == run_id, m.EventRow.id > after_id)
                             .order_by(order).limit(limit))
            return [cv.event_record(r) for r in rows]

    @staticmethod
    def _insert_events(s: Session, run_id: int, events: Sequence[Mapping[str, Any]], t) -> None:
        rows = [{"run_id": run_id, "kind": str(e.get("kind") or e.get("type") or "event")[:50],
                 "payload": cv.jsonable(dict(e)), "created_at": t} for e in events]
        if rows:
            s.execute(insert(m.EventRow), rows)


def paging(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0 or limit < 1:
        raise ValueError("offset must be >= 0 and limit >= 1")
    return int(offset), min(int(limit), MAX_PAGE)
