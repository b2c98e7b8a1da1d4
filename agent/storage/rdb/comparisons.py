"""Comparisons of :class:`RDBStorage`: queued by the API, claimed and finished by a worker.

A comparison refits two laws on every fold of a run, which is CPU work no request may hold,
so the API only queues it.  Workers claim queued comparisons as they claim runs (compare-and-set,
``SKIP LOCKED`` on PostgreSQL); one whose worker died (started longer ago than ``stale_after``)
is claimed again.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Callable

from sqlalchemy import and_, or_, select, update

from agent.storage.errors import NotFoundError
from agent.storage.rdb import convert as cv
from agent.storage.rdb import models as m
from agent.storage.rdb.claims import claim_first
from agent.storage.records import ComparisonRecord


def comparison_record(row: m.ComparisonRow) -> ComparisonRecord:
    return ComparisonRecord(id=row.id, run_id=row.run_id, state=row.state, law=dict(row.law),
                            created_at=cv.aware(row.created_at), result=row.result, error=row.error,
                            worker_id=row.worker_id, started_at=cv.aware(row.started_at),
                            finished_at=cv.aware(row.finished_at), tenant=row.tenant)


class ComparisonVerbs:
    """The comparison part of :class:`RDBStorage` (it provides ``_read``, ``_write``, ``_run_row``)."""

    _skip_locked: bool
    _owned: Callable[[Any], list]

    def create_comparison(self, run_id, law) -> ComparisonRecord:
        with self._write() as s:
            run = self._run_row(s, run_id)
            row = m.ComparisonRow(run_id=run_id, tenant=run.tenant, state="queued", law=cv.jsonable(dict(law)),
                                  created_at=cv.now())
            s.add(row)
            s.flush()
            return comparison_record(row)

    def get_comparison(self, run_id, comparison_id) -> ComparisonRecord:
        with self._read() as s:
            row = s.scalar(select(m.ComparisonRow).where(
                m.ComparisonRow.id == comparison_id, m.ComparisonRow.run_id == run_id,
                *self._owned(m.ComparisonRow.tenant)))
            if row is None:
                self._run_row(s, run_id)  # names the run when it is the run that is missing
                raise NotFoundError(f"run {run_id} has no comparison {comparison_id}")
            return comparison_record(row)

    def claim_comparison(self, worker_id, *, stale_after) -> ComparisonRecord | None:
        t = cv.now()
        c = m.ComparisonRow
        claimable = or_(c.state == "queued",
                        and_(c.state == "running", c.started_at < t - timedelta(seconds=stale_after)))
        q = select(c.id, c.state, c.worker_id).where(claimable).order_by(c.id).limit(1)
        with self._write() as s:
            seen = claim_first(s, q, c, dict(state="running", worker_id=worker_id, started_at=t),
                               skip_locked=self._skip_locked)
            return None if seen is None else comparison_record(s.get(m.ComparisonRow, seen.id))

    def finish_comparison(self, comparison_id, worker_id, *, result=None, error=None) -> ComparisonRecord | None:
        """Store the outcome; None (nothing written) when another worker has taken the comparison since."""
        c = m.ComparisonRow
        with self._write() as s:
            done = s.execute(update(c).where(c.id == comparison_id, c.worker_id == worker_id, c.state == "running")
                             .values(state="failed" if error is not None else "done",
                                     result=None if result is None else cv.jsonable(result),
                                     error=error, finished_at=cv.now())
                             .execution_options(synchronize_session=False))
            if done.rowcount != 1:
                return None
            return comparison_record(s.get(m.ComparisonRow, comparison_id))
