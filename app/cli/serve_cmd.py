"""``sld serve`` (the API with embedded workers) and ``sld worker`` (standalone workers).

Workers are separate processes, not threads: a search is CPU-bound Python and
would starve the API of the GIL.  They share nothing but the database.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import typer

from app.cli import cli

URL_HELP = "Database URL (default: DATABASE_URL, else sqlite:///./sld.db)."


def _use_database(database_url: str | None) -> None:
    """Make the URL the process's (and its workers') setting."""
    from app.core.config import get_settings

    if database_url:
        os.environ["DATABASE_URL"] = database_url
        os.environ.pop("SLD_DATABASE_URL", None)
    get_settings.cache_clear()


def _check_database() -> str:
    """Open the storage once: creates an empty schema, refuses an outdated one (one-line error)."""
    from app.core.config import get_settings
    from app.main import open_storage

    storage = open_storage(get_settings())
    try:
        return storage.info()["backend"]
    finally:
        storage.close()


def _api_access(host: str) -> str:
    """How requests are let in; refuses to listen beyond this machine while no API token exists."""
    from agent.errors import SldError
    from app.core.auth import is_loopback
    from app.core.config import get_settings
    from app.main import open_storage

    storage = open_storage(get_settings())
    try:
        active = sum(t.active for t in storage.list_tokens())
    finally:
        storage.close()
    if is_loopback(host):
        if not active:
            return ("no API token configured: requests need none, and only this machine can reach "
                    f"{host} (`sld token create` makes requests need one)")
        return f"API tokens required ({active} active)"
    if not active:
        raise SldError(f"refusing to listen on {host} with no API token: anyone who reaches the port could read, "
                       "change and delete every dataset. Create one first: `sld token create --name admin "
                       "--scope admin` (requests then send `Authorization: Bearer <secret>`), or serve on 127.0.0.1")
    # The API processes require a token from now on, even if every token is later revoked.
    os.environ["SLD_AUTH_REQUIRED"] = "true"
    get_settings.cache_clear()
    return f"API tokens required ({active} active)"


class _WorkerPool:
    """Worker processes, restarted if one dies (sooner or later: one that keeps dying young waits
    longer each time); stopped with SIGTERM (they release their runs); gone when this process is."""

    LIVED_LONG_ENOUGH = 60.0  # seconds; a worker that died younger is restarted after a growing wait

    def __init__(self, n: int, args: list[str] | None = None):
        self.n, self.args = n, args or []
        self.procs: list[subprocess.Popen] = []
        self._started: list[float] = []
        self._stopping = threading.Event()
        self._watch = threading.Thread(target=self._supervise, daemon=True)

    def start(self) -> "_WorkerPool":
        self.procs = [self._spawn() for _ in range(self.n)]
        self._started = [time.monotonic()] * self.n
        self._watch.start()
        return self

    def _spawn(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "app.worker", f"--parent-pid={os.getpid()}", *self.args],
                                env=dict(os.environ))

    def _supervise(self) -> None:
        import random

        from app.worker_faults import Backoff

        backoffs = [Backoff(2.0, 60.0, random.Random(i)) for i in range(self.n)]
        restart_at: dict[int, float] = {}
        while not self._stopping.wait(0.5):
            for i, p in enumerate(self.procs):
                if p.poll() is None or self._stopping.is_set() or self.args:
                    continue
                now = time.monotonic()
                if i not in restart_at:
                    if now - self._started[i] >= self.LIVED_LONG_ENOUGH:
                        backoffs[i].reset()
                    delay = backoffs[i].next()
                    restart_at[i] = now + delay
                    typer.echo(f"worker process {p.pid} exited ({p.returncode}); starting another in {delay:.0f} s",
                               err=True)
                if now >= restart_at[i]:
                    del restart_at[i]
                    self.procs[i], self._started[i] = self._spawn(), now

    def wait(self) -> int:
        return max((p.wait() for p in self.procs), default=0)

    def stop(self, grace: float = 30.0) -> None:
        self._stopping.set()
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()


@cli.command("serve")
def serve(
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (0.0.0.0 for all)."),
    port: int = typer.Option(8000, help="Port."),
    workers: int = typer.Option(None, "--workers", "-w",
                                help="Embedded worker processes (default SLD_EMBEDDED_WORKERS, 1); 0: API only."),
    api_workers: int = typer.Option(1, "--api-workers", help="uvicorn processes serving the API."),
    database_url: str = typer.Option(None, "--database-url", help=URL_HELP),
    log_level: str = typer.Option("info", help="uvicorn log level."),
):
    """Start the REST API (docs at /docs) with embedded workers that execute queued runs."""
    import uvicorn

    from app.core.config import get_settings

    _use_database(database_url)
    backend = _check_database()
    access = _api_access(host)
    n = get_settings().embedded_workers if workers is None else workers
    typer.echo(f"sld serve: http://{host}:{port} (docs at /docs), {backend} database, {n} worker process(es)")
    typer.echo(f"sld serve: {access}")
    pool = _WorkerPool(n).start() if n > 0 else None
    # uvicorn re-raises the signal that stopped it once it has shut down; with the default
    # SIGTERM handler that would kill this process before the workers are stopped.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.run("app.main:app", host=host, port=port, workers=api_workers, log_level=log_level)
    except KeyboardInterrupt:
        pass
    finally:
        if pool is not None:
            pool.stop()


def _exit_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


@cli.command("worker")
def worker(
    processes: int = typer.Option(1, "--processes", "-p", help="Worker processes to run."),
    database_url: str = typer.Option(None, "--database-url", help=URL_HELP),
    max_runs: int = typer.Option(None, "--max-runs", help="Exit after executing this many runs (each process)."),
    exit_when_idle: bool = typer.Option(False, "--exit-when-idle", help="Exit when no run is queued."),
):
    """Execute queued runs (many workers on many machines can share one PostgreSQL)."""
    _use_database(database_url)
    _check_database()
    if processes == 1:
        from app.worker import main

        main(max_runs=max_runs, exit_when_idle=exit_when_idle)
        return
    args = ([f"--max-runs={max_runs}"] if max_runs else []) + (["--exit-when-idle"] if exit_when_idle else [])
    pool = _WorkerPool(processes, args)
    pool.start()
    signal.signal(signal.SIGTERM, lambda *_: pool.stop())
    try:
        raise SystemExit(pool.wait())
    except KeyboardInterrupt:
        pool.stop()
