"""Whether the database changed, known without a query: the guard of the API's cached reads.

A cached read (a run's best law) is keyed by the run's version, and the version itself costs a query.
With a *generation* that moves whenever a run row may have changed, the version read at one
generation serves every read until the generation moves (``app.api.reads``).  Two sources:

- the commits of this process's own storage, counted where they happen (``RDBStorage._write``):
  a client that wrote through the API reads its write back at once;
- the commits of other processes (workers, the CLI):
  - SQLite: ``PRAGMA data_version`` on a connection of its own, which changes whenever another
    connection commits (any process; a few microseconds, WAL shared memory, no row read);
  - PostgreSQL: ``LISTEN`` on the channel that a trigger on ``runs`` notifies (migration 0005),
    heard by a thread; a notification arrives milliseconds after its commit.

``generation()`` is None while the source cannot tell (the listener is reconnecting, SQLite is busy):
the caller then reads the version from the database, as without this module.
"""
from __future__ import annotations

import itertools
import logging
import sqlite3
import threading
import time
import uuid
from typing import Hashable

import psycopg
from sqlalchemy import Engine

log = logging.getLogger(__name__)

CHANNEL = "sld_changes"  # the trigger's pg_notify channel (migrations/versions/0005_change_notifications.py)


class ChangeWatch:
    """Commits seen by this process; subclasses add those of other processes."""

    def __init__(self):
        self._local = itertools.count()  # next() is atomic under the GIL
        self.local = next(self._local)

    def committed(self) -> None:
        """Called after each commit of this process's storage."""
        self.local = next(self._local)

    def generation(self) -> Hashable | None:
        return self.local

    def close(self) -> None:
        pass


class SqliteDataVersion(ChangeWatch):
    """``PRAGMA data_version`` of a connection that never writes: it moves on every other commit."""

    def __init__(self, path: str):
        super().__init__()
        self._path = path
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def generation(self) -> Hashable | None:
        if not self._lock.acquire(blocking=False):  # another thread is asking: read the database instead
            return None
        try:
            if self._conn is None:
                # timeout 0: a check that would wait for a lock says "unknown" instead of stalling a read
                self._conn = sqlite3.connect(self._path, timeout=0, check_same_thread=False, isolation_level=None)
            return (self.local, self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return None
        finally:
            self._lock.release()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class PostgresNotifications(ChangeWatch):
    """A thread that LISTENs on ``CHANNEL`` and counts notifications; unknown while not listening."""

    RETRY_SECONDS = (0.5, 1, 2, 5, 10)
    PROBE_SECONDS = 5.0

    def __init__(self, engine: Engine):
        super().__init__()
        url = engine.url.set(drivername="postgresql")
        self._dsn = url.render_as_string(hide_password=False)
        self._heard = 0
        self._listening = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def generation(self) -> Hashable | None:
        if self._thread is None:
            self._start()
        return (self.local, self._heard) if self._listening else None

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._listen_forever, name="sld-change-listener", daemon=True)
                self._thread.start()

    def _listen_forever(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._dsn, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    if not self._delivered(conn):
                        log.warning("change notifications sent on another connection never arrived (a pooler "
                                    "in transaction mode?): every cached read asks the database for its version")
                        return
                    self._heard += 1  # anything may have changed while nobody listened
                    self._listening, failures = True, 0
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=1.0):
                            self._heard += 1
            except Exception as exc:  # a lost connection: unknown until listening again
                self._listening = False
                delay = self.RETRY_SECONDS[min(failures, len(self.RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("change listener lost the database (%s); cached reads check it until it is back",
                            type(exc).__name__)
                self._stop.wait(delay)
        self._listening = False

    def _delivered(self, conn) -> bool:
        """Whether a notification sent on another connection reaches this one: behind a pooler in
        transaction mode LISTEN succeeds and then hears nothing, which would serve stale versions."""
        probe = f"probe-{uuid.uuid4().hex}"
        self._send(probe)
        deadline = time.monotonic() + self.PROBE_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            if any(n.payload == probe for n in conn.notifies(timeout=left)):
                return True
        return False

    def _send(self, payload: str) -> None:
        with psycopg.connect(self._dsn, autocommit=True, connect_timeout=5) as other:
            other.execute("SELECT pg_notify(%s, %s)", (CHANNEL, payload))

    def close(self) -> None:
        self._stop.set()
        self._listening = False


class Unknown(ChangeWatch):
    """A database this module cannot watch: every read asks it."""

    def generation(self) -> Hashable | None:
        return None


def watch_for(engine: Engine) -> ChangeWatch:
    url = engine.url
    if engine.dialect.name == "postgresql":
        return PostgresNotifications(engine)
    if engine.dialect.name == "sqlite" and url.database in (None, "", ":memory:"):
        return ChangeWatch()  # one in-memory database, written only through this process's storage
    if engine.dialect.name == "sqlite" and not url.query:
        return SqliteDataVersion(url.database)
    return Unknown()  # a SQLite URI (file:...?mode=...): a plain path could name another database
