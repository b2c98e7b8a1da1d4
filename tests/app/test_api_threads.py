"""The API's blocking handlers share a few threads (SLD_API_THREADS); /health has one of its own,
so a load balancer's probe answers while every handler thread is busy."""
from __future__ import annotations

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
