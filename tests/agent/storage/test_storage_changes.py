"""The storage's generation: a value that moves whenever a run may have changed, known without a query.

The API keeps a run's version while the generation holds, so these tests pin the one property it
relies on: after any commit that touches runs, by this storage or by another process's (here a
second storage on the same database), the generation is no longer the one read before it.
On PostgreSQL the other process's commit is heard through LISTEN/NOTIFY, milliseconds later.
"""
from __future__ import annotations

import time

import pandas as pd
import pytest
from sqlalchemy import event

from agent.storage import RunState
from agent.storage.rdb import RDBStorage


def known_generation(storage, timeout=10.0):
    """The generation, once the storage can tell (PostgreSQL's listener starts on the first ask)."""
    deadline = time.monotonic() + timeout
    while (g := storage.generation()) is None:
        assert time.monotonic() < deadline, "the storage never learnt its generation"
        time.sleep(0.02)
    return g


def moved_from(storage, before, timeout=10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        g = storage.generation()
        if g is not None and g != before:
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def dataset(storage):
    return storage.create_dataset(pd.DataFrame({"N": [1.0, 2.0, 3.0], "loss": [3.0, 2.5, 2.2]}))


def test_the_generation_holds_while_nothing_is_written_and_reading_it_runs_no_query(storage, dataset):
    storage.create_run(dataset.id, {})
    before = known_generation(storage)
    statements = []
    event.listen(storage.engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
    storage.list_runs()  # reads do not move it
    statements.clear()
    assert [storage.generation() for _ in range(5)] == [before] * 5
    assert statements == []


def test_this_storages_own_commit_moves_the_generation_at_once(storage, dataset):
    before = known_generation(storage)
    storage.create_run(dataset.id, {})
    assert storage.generation() != before


def test_another_processs_commit_moves_the_generation(storage, database_url, dataset):
    """A worker is another process with its own connections: its commits reach this storage through
    SQLite's data_version or PostgreSQL's notifications, not through this storage's counter."""
    other = RDBStorage(database_url)
    try:
        run = other.create_run(dataset.id, {})
        before = known_generation(storage)
        claimed = other.claim_run("w1", stale_after=60)
        assert claimed.id == run.id
        assert moved_from(storage, before)
        before = known_generation(storage)
        other.finish_run(run.id, "w1", RunState.DONE, final={"law": ["loss = a"]})
        assert moved_from(storage, before)
    finally:
        other.close()


def test_a_tenants_view_shares_the_generation_but_not_the_scope(storage):
    view = storage.for_tenant("acme")
    assert known_generation(storage) == known_generation(view)
    assert view.scope_key != storage.scope_key and view.scope_key == storage.for_tenant("acme").scope_key
