"""The API's blocking handlers share a few threads (SLD_API_THREADS); /health has one of its own,
so a load balancer's probe answers while every handler thread is busy."""
from __future__ import annotations

import os
import threading
import time

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

from app.main import create_app


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the threads are the API's, not the database's
def test_health_answers_while_every_handler_thread_is_busy(settings, storage):
    release = threading.Event()
    with TestClient(create_app(settings.model_copy(update={"api_threads": 2}), storage)) as client:
        limiter = client.portal.call(anyio.to_thread.current_default_thread_limiter)
        assert limiter.total_tokens == 2
        for _ in range(2):  # two slow requests' worth of blocking work holds both threads
            client.portal.start_task_soon(anyio.to_thread.run_sync, release.wait)
        deadline = time.monotonic() + 5
        while limiter.borrowed_tokens < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert limiter.borrowed_tokens == 2
        answers = []
        probe = threading.Thread(target=lambda: answers.append(client.get("/health").status_code))
        probe.start()
        probe.join(timeout=1.0)  # a probe queued behind the busy threads would wait for them
        answered_in_time = list(answers)
        release.set()
        probe.join()
        assert answered_in_time == [200]


def test_the_served_app_freezes_what_it_started_with_out_of_the_collectors_walks(tmp_path):
    """``app.main:app`` (what ``sld serve`` runs) freezes the objects alive once it has started and
    collects its young objects more rarely: a full collection walked every object of the imported
    libraries, a pause that was the p99 of cached reads.  A test's own app leaves the collector alone,
    so it runs in a process of its own here."""
    import subprocess
    import sys

    probe = ("import gc; from fastapi.testclient import TestClient; import app.main as m\n"
             "assert gc.get_freeze_count() == 0\n"
             "with TestClient(m.create_app()): assert gc.get_freeze_count() == 0\n"
             "with TestClient(m.app): print(gc.get_freeze_count() > 10000, gc.get_threshold() == m.GC_THRESHOLD)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/sld.db"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]
