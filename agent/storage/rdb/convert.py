"""Between table rows and frozen records; JSON hygiene for payloads."""
from __future__ import annotations

import json
import math
import zlib
from datetime import datetime, timezone
from typing import Any

import numpy as np

from agent.search.records import Candidate
from agent.storage.frames import ColumnInfo
from agent.storage.records import DatasetRecord, RunEvent, RunRecord, RunState, TaskSpecRecord, TokenRecord
from agent.storage.rdb import models as m


def now() -> datetime:
    """Naive UTC: both SQLite and PostgreSQL keep it as given."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def aware(dt: datetime | None) -> datetime | None:
    return None if dt is None else dt.replace(tzinfo=timezone.utc)


def jsonable(obj: Any) -> Any:
    """A copy that strict JSON (PostgreSQL's jsonb) accepts: non-finite floats become null."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"not JSON-able: {type(obj).__name__}")


def pack_state(state: dict[str, Any]) -> bytes:
    # Checkpoints round-trip exactly (NaN and inf included): they are opaque to SQL.
    return zlib.compress(json.dumps(state, allow_nan=True, separators=(",", ":")).encode(), 6)


def unpack_state(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob).decode())


def finite_or_none(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def dataset_record(row: m.DatasetRow) -> DatasetRecord:
    return DatasetRecord(
        id=row.id, name=row.name, description=row.description, source=row.source,
        n_rows=int(row.n_rows), n_batches=row.n_batches,
        columns=tuple(ColumnInfo.from_dict(c) for c in row.columns or ()),
        created_at=aware(row.created_at), updated_at=aware(row.updated_at), tenant=row.tenant,
    )


def task_spec_record(row: m.TaskSpecRow) -> TaskSpecRecord:
    return TaskSpecRecord(name=row.name, dataset_id=row.dataset_id, problem=dict(row.problem),
                          human_law=row.human_law, split_column=row.split_column,
                          created_at=aware(row.created_at), tenant=row.tenant)


def run_record(row: m.RunRow) -> RunRecord:
    return RunRecord(
        id=row.id, dataset_id=row.dataset_id, state=RunState(row.state), spec=dict(row.spec),
        progress=dict(row.progress or {}), best_score=row.best_score, generation=row.generation,
        cancel_requested=bool(row.cancel_requested), worker_id=row.worker_id,
        heartbeat_at=aware(row.heartbeat_at), attempts=row.attempts,
        created_at=aware(row.created_at), started_at=aware(row.started_at),
        finished_at=aware(row.finished_at), error=row.error, final=row.final, tenant=row.tenant,
    )


# A candidate's scores must come back exactly (a resumed run reloads its candidates from the table
# and ranks them again); strict JSON has no inf or NaN, so in these fields they are spelled out.
_EXACT_FIELDS = ("fit", "validation")
_SPELLED = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


def _spell_nonfinite(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _spell_nonfinite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_spell_nonfinite(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not isinstance(obj, bool) and not math.isfinite(obj):
        return "nan" if obj != obj else ("inf" if obj > 0 else "-inf")
    return obj


def _read_nonfinite(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _read_nonfinite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_read_nonfinite(v) for v in obj]
    if isinstance(obj, str) and obj in _SPELLED:
        return _SPELLED[obj]
    return float("nan") if obj is None else obj  # rows stored before the spelling: null was non-finite


def candidate_row(run_id: int, c: Candidate) -> dict[str, Any]:
    d = c.to_dict()
    for key in _EXACT_FIELDS:
        d[key] = _spell_nonfinite(d[key])
    return {
        "run_id": run_id, "id": c.id, "generation": c.generation, "status": c.status,
        "proposer": c.proposer[:100], "score": finite_or_none(c.score),
        "r2": finite_or_none(c.validation.get("r2")), "n_constants": c.n_constants,
        "complexity": c.complexity, "seconds": float(c.seconds), "canonical": c.canonical,
        "payload": jsonable(d),
    }


def candidate(payload: dict[str, Any]) -> Candidate:
    d = dict(payload)
    for key in _EXACT_FIELDS:
        d[key] = {k: _read_nonfinite(v) for k, v in (d.get(key) or {}).items()}
    return Candidate.from_dict(d)


def token_record(row: m.ApiTokenRow) -> TokenRecord:
    return TokenRecord(id=row.id, name=row.name, tenant=row.tenant, scope=row.scope,
                       created_at=aware(row.created_at), revoked_at=aware(row.revoked_at))


def event_record(row: m.EventRow) -> RunEvent:
    return RunEvent(id=row.id, run_id=row.run_id, kind=row.kind, payload=dict(row.payload or {}),
                    created_at=aware(row.created_at))
