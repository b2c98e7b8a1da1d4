"""Where datasets, runs, candidates and checkpoints live, behind one interface in domain verbs.

``get_storage(url)`` opens the storage for a database URL: ``sqlite:///./sld.db``
(the default) or ``postgresql+psycopg://user:password@host/db``.
"""
from agent.storage.base import CANDIDATE_ORDERS, BaseStorage
from agent.storage.errors import ConflictError, NotFoundError, RunLost, SchemaOutdated
from agent.storage.records import (
    TOKEN_SCOPES, CandidatePoint, Checkpoint, ColumnInfo, ComparisonRecord, DatasetRecord, Page, RunEvent, RunRecord,
    RunState, RunVersion, SweepPointRecord, SweepRecord, TaskSpecRecord, TokenRecord,
)


def get_storage(url: str, **kwargs) -> BaseStorage:
    from agent.storage.rdb import RDBStorage

    return RDBStorage(url, **kwargs)


__all__ = [
    "BaseStorage", "CANDIDATE_ORDERS", "CandidatePoint", "Checkpoint", "ColumnInfo", "ComparisonRecord", "ConflictError", "DatasetRecord",
    "NotFoundError", "Page", "RunEvent", "RunLost", "RunRecord", "RunState", "RunVersion", "SchemaOutdated", "SweepPointRecord", "SweepRecord",
    "TOKEN_SCOPES", "TaskSpecRecord", "TokenRecord", "get_storage",
]
