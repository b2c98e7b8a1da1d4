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


@pytest.mark.postgres
def test_rows_appended_to_a_dataset_leave_the_generation_of_runs_alone(postgres_database):
    """Appends change no run, so the cached reads of runs survive them: under a mix of appends and
    reads each append would otherwise send the next reads to the database.  (SQLite's data_version
    cannot tell which table a commit touched, so there the generation moves anyway.)"""
    from agent.storage.testing import empty_tables

    empty_tables(postgres_database)
    storage = RDBStorage(postgres_database)
    try:
        ds = storage.create_dataset(pd.DataFrame({"N": [1.0, 2.0], "loss": [3.0, 2.5]}))
        storage.create_run(ds.id, {})
        before = known_generation(storage)
        storage.append_rows(ds.id, pd.DataFrame({"N": [4.0], "loss": [2.1]}))
        storage.create_dataset(pd.DataFrame({"N": [1.0], "loss": [3.0]}))
        time.sleep(0.2)  # a notification, had one been sent, arrives within milliseconds
        assert storage.generation() == before
        storage.create_run(ds.id, {})
        assert storage.generation() != before
    finally:
        storage.close()


@pytest.mark.postgres
def test_a_lost_listener_makes_the_generation_unknown_until_it_listens_again(postgres_database, monkeypatch):
    """While nobody listens, a commit could go unheard: the generation is None (every read asks the
    database) until the listener is back, and then it differs from every value before the loss."""
    from sqlalchemy import text

    from agent.storage.rdb.changes import PostgresNotifications
    from agent.storage.testing import empty_tables

    empty_tables(postgres_database)
    storage = RDBStorage(postgres_database)
    monkeypatch.setattr(PostgresNotifications, "RETRY_SECONDS", (0.05,))  # from 0.5 s: keep the test short
    try:
        before = known_generation(storage)
        with storage.engine.connect() as conn:  # an operator, a failover or a proxy drops the connection
            dropped = conn.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                        "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()")).all()
        assert dropped
        unknown_seen = False
        deadline = time.monotonic() + 10
        while (g := storage.generation()) is None or g == before:
            unknown_seen |= g is None
            assert time.monotonic() < deadline, "the listener never came back"
            time.sleep(0.01)
        assert unknown_seen
    finally:
        storage.close()


def test_a_database_it_cannot_watch_is_asked_every_time(tmp_path):
    """A SQLite URI (``file:...?mode=rwc&uri=true``) is not a path another connection could open
    the same way: the generation stays unknown, so no read is ever served from a guess."""
    storage = RDBStorage(f"sqlite:///file:{tmp_path}/uri.db?mode=rwc&uri=true")
    try:
        assert storage.generation() is None
    finally:
        storage.close()
    memory = RDBStorage("sqlite://")
    try:  # one in-memory database, written only through this storage: its own commits are the changes
        ds = memory.create_dataset(pd.DataFrame({"N": [1.0, 2.0], "loss": [3.0, 2.5]}))
        before = memory.generation()
        memory.create_run(ds.id, {})
        assert memory.generation() not in (None, before)
    finally:
        memory.close()


@pytest.mark.postgres
def test_notifications_that_never_arrive_leave_every_read_asking_the_database(postgres_database, monkeypatch):
    """Behind a pooler in transaction mode LISTEN succeeds and then hears nothing. The listener checks
    that a notification sent on another connection arrives; when it does not, the generation stays
    unknown for good instead of holding a stale version."""
    from agent.storage.rdb.changes import PostgresNotifications

    monkeypatch.setattr(PostgresNotifications, "PROBE_SECONDS", 0.3)
    monkeypatch.setattr(PostgresNotifications, "_send", lambda self, payload: None)  # lost on the way
    storage = RDBStorage(postgres_database)
    try:
        assert storage.generation() is None
        storage._changes._thread.join(5)
        assert not storage._changes._thread.is_alive() and storage.generation() is None
    finally:
        storage.close()
