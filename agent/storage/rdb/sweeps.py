"""Training sweeps of :class:`RDBStorage`: points planned by the API, claimed by trainer workers.

A trainer claims the cheapest queued point (compare-and-set, ``SKIP LOCKED`` on PostgreSQL),
heartbeats while it trains, and finishes the point with its one row.  The row and the point's
``done`` are one transaction, conditional on the trainer still owning the point: a trainer that
was killed loses only its point, which is claimable again once its heartbeat is ``stale_after``
old, and a late answer from a trainer that lost its point is refused.  So no point is lost, and
none is trained twice into the dataset.  The first row creates the sweep's dataset.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable, Sequence

import pandas as pd
from sqlalchemy import and_, func, or_, select, update

from agent.storage import frames
from agent.storage.errors import NotFoundError
from agent.storage.rdb import convert as cv
from agent.storage.rdb import models as m
from agent.storage.rdb.claims import claim_first
from agent.storage.records import SWEEP_POINT_STATES, Page, SweepPointRecord, SweepRecord


def point_record(row: m.SweepPointRow) -> SweepPointRecord:
    return SweepPointRecord(id=row.id, sweep_id=row.sweep_id, seq=row.seq, spec=dict(row.spec), cost=row.cost,
                            state=row.state, attempts=row.attempts, worker_id=row.worker_id,
                            claimed_at=cv.aware(row.claimed_at), heartbeat_at=cv.aware(row.heartbeat_at),
                            finished_at=cv.aware(row.finished_at), result=row.result, error=row.error)


class SweepVerbs:
    """The sweep part of :class:`RDBStorage` (it provides ``_read``, ``_write``, ``_owned`` and the dataset helpers)."""

    _skip_locked: bool
    _tenant: str | None
    _owned: Callable[[Any], list]

    def create_sweep(self, name: str, design, points: Sequence[tuple[dict, float]]) -> SweepRecord:
        """A sweep of ``points`` (each a training spec and its cost), all queued."""
        if not points:
            raise ValueError("a sweep needs at least one point")
        t = cv.now()
        with self._write() as s:
            sweep = m.SweepRow(name=name[:200], design=cv.jsonable(dict(design)), created_at=t, tenant=self._tenant)
            s.add(sweep)
            s.flush()
            s.add_all(m.SweepPointRow(sweep_id=sweep.id, seq=i, spec=cv.jsonable(dict(spec)), cost=float(cost),
                                      state="queued", attempts=0, tenant=self._tenant)
                      for i, (spec, cost) in enumerate(points))
            s.flush()
            return self._sweep_record(s, sweep)

    def add_sweep_points(self, sweep_id: int, points: Sequence[tuple[dict, float]]) -> SweepRecord:
        if not points:
            raise ValueError("give at least one point to add")
        with self._write() as s:
            sweep = self._sweep_row(s, sweep_id)
            p = m.SweepPointRow
            first = (s.scalar(select(func.max(p.seq)).where(p.sweep_id == sweep_id)) or 0) + 1
            s.add_all(p(sweep_id=sweep_id, seq=first + i, spec=cv.jsonable(dict(spec)), cost=float(cost),
                        state="queued", attempts=0, tenant=sweep.tenant) for i, (spec, cost) in enumerate(points))
            s.flush()
            return self._sweep_record(s, sweep)

    def get_sweep(self, sweep_id: int) -> SweepRecord:
        with self._read() as s:
            return self._sweep_record(s, self._sweep_row(s, sweep_id))

    def list_sweeps(self, *, dataset_id: int | None = None, offset: int = 0, limit: int = 50) -> Page[SweepRecord]:
        with self._read() as s:
            where = self._owned(m.SweepRow.tenant)
            if dataset_id is not None:
                where = [*where, m.SweepRow.dataset_id == dataset_id]
            total = s.scalar(select(func.count()).select_from(m.SweepRow).where(*where))
            rows = list(s.scalars(select(m.SweepRow).where(*where).order_by(m.SweepRow.id.desc())
                                  .offset(offset).limit(limit)))
            counts = self._point_counts(s, [r.id for r in rows])  # one grouped query for the page, not one a sweep
            return Page(tuple(self._sweep_record(s, r, counts.get(r.id, {})) for r in rows), total, offset, limit)

    def list_sweep_points(self, sweep_id: int) -> list[SweepPointRecord]:
        """Every point of the sweep, in the order they were planned."""
        with self._read() as s:
            self._sweep_row(s, sweep_id)
            rows = s.scalars(select(m.SweepPointRow).where(m.SweepPointRow.sweep_id == sweep_id)
                             .order_by(m.SweepPointRow.seq))
            return [point_record(r) for r in rows]

    def claim_sweep_point(self, worker_id: str, *, stale_after: float) -> SweepPointRecord | None:
        """The cheapest claimable point (queued, or running with a heartbeat older than ``stale_after``)."""
        t = cv.now()
        p = m.SweepPointRow
        claimable = or_(p.state == "queued",
                        and_(p.state == "running", p.heartbeat_at < t - timedelta(seconds=stale_after)))
        q = (select(p.id, p.state, p.worker_id).where(claimable, *self._owned(p.tenant))
             .order_by(p.cost, p.id).limit(1))
        with self._write() as s:
            seen = claim_first(s, q, p, dict(state="running", worker_id=worker_id, claimed_at=t, heartbeat_at=t,
                                             attempts=p.attempts + 1), skip_locked=self._skip_locked)
            return None if seen is None else point_record(s.get(p, seen.id))

    def heartbeat_sweep_point(self, point_id: int, worker_id: str) -> bool:
        """False when the trainer no longer owns the point (it went stale and was claimed again)."""
        p = m.SweepPointRow
        with self._write() as s:
            done = s.execute(update(p).where(p.id == point_id, p.worker_id == worker_id, p.state == "running",
                                             *self._owned(p.tenant))
                             .values(heartbeat_at=cv.now()).execution_options(synchronize_session=False))
            if done.rowcount != 1:
                self._point_exists(s, point_id)
            return done.rowcount == 1

    def finish_sweep_point(self, point_id: int, worker_id: str, row: pd.DataFrame) -> SweepPointRecord | None:
        """Store the point's row in the sweep's dataset and mark it done, in one transaction.

        None (nothing written) when ``worker_id`` no longer owns the point.  DataError when the
        row does not fit the dataset's columns (nothing written either).
        """
        batch = frames.Batch.of(row)
        p = m.SweepPointRow
        with self._write() as s:
            done = s.execute(update(p).where(p.id == point_id, p.worker_id == worker_id, p.state == "running",
                                             *self._owned(p.tenant))
                             .values(state="done", finished_at=cv.now(), error=None,
                                     result=cv.jsonable(batch.to_frame().to_dict("records")[0]))
                             .execution_options(synchronize_session=False))
            if done.rowcount != 1:
                self._point_exists(s, point_id)
                return None
            point = s.get(p, point_id)
            q = select(m.SweepRow).where(m.SweepRow.id == point.sweep_id)
            sweep = s.scalar(q.with_for_update() if self._skip_locked else q)  # one dataset, however many finish at once
            if sweep.dataset_id is None:
                ds = self._insert_dataset(s, batch, name=sweep.name or f"sweep {sweep.id}",
                                          description=f"training sweep {sweep.id}", source=f"sweep:{sweep.id}",
                                          tenant=sweep.tenant)
                sweep.dataset_id = ds.id
            else:
                q = select(m.DatasetRow).where(m.DatasetRow.id == sweep.dataset_id)
                self._append_batch(s, s.scalar(q.with_for_update() if self._skip_locked else q), batch)
            return point_record(point)

    def fail_sweep_point(self, point_id: int, worker_id: str, error: str, *, max_attempts: int) -> SweepPointRecord | None:
        """The trainer could not train the point: queue it again, or fail it after ``max_attempts``."""
        p = m.SweepPointRow
        with self._write() as s:
            point = s.scalar(select(p).where(p.id == point_id, p.worker_id == worker_id, p.state == "running",
                                             *self._owned(p.tenant)))
            if point is None:
                self._point_exists(s, point_id)
                return None
            point.state = "failed" if point.attempts >= max_attempts else "queued"
            point.error, point.finished_at = error[:2000], cv.now() if point.state == "failed" else None
            return point_record(point)

    def _point_exists(self, s, point_id: int) -> None:
        """NotFoundError for a point id that names no point: a trainer that lost its point hears 409,
        a request for one that never existed 404 (only asked after an update found nothing)."""
        p = m.SweepPointRow
        if s.scalar(select(p.id).where(p.id == point_id, *self._owned(p.tenant))) is None:
            raise NotFoundError(f"sweep point {point_id} not found")

    def _sweep_row(self, s, sweep_id: int) -> m.SweepRow:
        row = s.scalar(select(m.SweepRow).where(m.SweepRow.id == sweep_id, *self._owned(m.SweepRow.tenant)))
        if row is None:
            raise NotFoundError(f"sweep {sweep_id} not found")
        return row

    @staticmethod
    def _point_counts(s, sweep_ids: list[int]) -> dict[int, dict[str, int]]:
        """Points per state, per sweep."""
        p = m.SweepPointRow
        out: dict[int, dict[str, int]] = {}
        if sweep_ids:
            grouped = select(p.sweep_id, p.state, func.count()).where(p.sweep_id.in_(sweep_ids))
            for sweep_id, state, n in s.execute(grouped.group_by(p.sweep_id, p.state)).all():
                out.setdefault(sweep_id, {})[state] = n
        return out

    @classmethod
    def _sweep_record(cls, s, row: m.SweepRow, counted: dict[str, int] | None = None) -> SweepRecord:
        counts = dict.fromkeys(SWEEP_POINT_STATES, 0)
        counts.update(cls._point_counts(s, [row.id]).get(row.id, {}) if counted is None else counted)
        return SweepRecord(id=row.id, name=row.name, design=dict(row.design), created_at=cv.aware(row.created_at),
                           dataset_id=row.dataset_id, counts=counts, tenant=row.tenant)
