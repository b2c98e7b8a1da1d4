"""The one way a worker claims queued work (a run, a comparison, a sweep point): compare-and-set.

The first claimable row is read (``SKIP LOCKED`` on PostgreSQL, so workers do not queue on each
other's row locks), then updated only if nobody changed it since: two workers that read the same
row cannot both take it, on either database.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from sqlalchemy import Row, Select, update
from sqlalchemy.orm import Session


def claim_first(s: Session, query: Select, table, values: Mapping[str, Any], *, skip_locked: bool,
                also: Sequence[str] = ()) -> Row | None:
    """The first row ``query`` finds, as it was before this claim updated it with ``values``; None when
    there was none, or another worker took it between the look and the claim.

    ``query`` selects ``id``, ``state``, ``worker_id`` and the ``also`` columns; the update requires all of
    them unchanged.
    """
    seen = s.execute(query.with_for_update(skip_locked=True) if skip_locked else query).first()
    if seen is None:
        return None
    unchanged = [table.id == seen.id, table.state == seen.state, table.worker_id.is_not_distinct_from(seen.worker_id),
                 *(getattr(table, c).is_not_distinct_from(getattr(seen, c)) for c in also)]
    done = s.execute(update(table).where(*unchanged).values(**values).execution_options(synchronize_session=False))
    return seen if done.rowcount == 1 else None
