"""LLM endpoints are the operator's list: a run names one, and the key goes only to its URL.

Two real HTTP listeners on 127.0.0.1 stand for the operator's endpoint and for
a URL an attacker would like the key sent to; they record every request.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import ValidationError

from agent.storage import RunState
from app.core.config import LLMEndpoint, Settings

SPEC = {"inputs": ["N"], "targets": ["loss"], "group": "group", "max_constants": 4, "budget": 20}
LISTED_KEY = "sk-listed-endpoint-secret"
SERVER_KEY = "sk-server-wide-openai-secret"


class Listener:
    """An HTTP server that records the path and Authorization header of each request, and answers 503."""

    def __init__(self):
        self.requests: list[dict] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                seen.append({"path": self.path, "authorization": self.headers.get("authorization"),
                             "body": self.rfile.read(length).decode(errors="replace")})
                body = json.dumps({"error": {"message": "busy"}}).encode()
                self.send_response(503)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listed():
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture
def unlisted():
    listener = Listener()
    yield listener
    listener.close()


@pytest.fixture
def keys(monkeypatch, unlisted):
    monkeypatch.setenv("SLD_TEST_LISTED_KEY", LISTED_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", unlisted.url)  # even this must not redirect a run's requests


@pytest.fixture
def settings(database_url, listed):
    return Settings(database_url=database_url, heartbeat_interval=0.2, stale_after=30, poll_interval=0.05,
                    default_budget=20, llm_endpoints={
                        "listed": LLMEndpoint(base_url=listed.url, api_key_env="SLD_TEST_LISTED_KEY"),
                        "keyless": LLMEndpoint(base_url=listed.url)})


def llm_run(client, dataset_id, **llm):
    llm = {"model": "m", "max_retries": 0, "timeout_s": 5, **llm}
    return client.post("/runs", json={"dataset_id": dataset_id, **SPEC, "proposers": [
        {"kind": "offline", "weight": 0.5}, {"kind": "llm", "weight": 0.5, "llm": llm}]})


def test_a_run_naming_a_url_is_refused_and_nothing_reaches_it(client, worker, dataset_id, keys, unlisted):
    r = llm_run(client, dataset_id, base_url=unlisted.url, endpoint="listed")
    assert r.status_code == 422
    assert "cannot send the LLM requests to a URL of its own (llm.base_url)" in r.json()["detail"]
    assert "this server has: listed, keyless" in r.json()["detail"]
    assert client.get("/runs").json()["total"] == 0
    assert worker.run_once() is None
    assert unlisted.requests == []


@pytest.mark.parametrize("endpoint, message", [
    ("elsewhere", "unknown LLM endpoint 'elsewhere' (this server has: listed, keyless)"),
    (None, "name the LLM endpoint in llm.endpoint (this server has: listed, keyless)"),
    (7, "unknown LLM endpoint 7"),
])
def test_a_run_naming_no_listed_endpoint_is_refused(client, dataset_id, endpoint, message):
    r = llm_run(client, dataset_id, **({} if endpoint is None else {"endpoint": endpoint}))
    assert r.status_code == 422 and message in r.json()["detail"]
    assert client.get("/runs").json()["total"] == 0


def test_the_named_endpoint_gets_its_own_key_and_no_other(client, worker, dataset_id, keys, listed, unlisted):
    r = llm_run(client, dataset_id, endpoint="listed")
    assert r.status_code == 202, r.text
    llm = r.json()["spec"]["proposers"][1]["llm"]
    assert llm["endpoint"] == "listed" and "base_url" not in llm and "api_key" not in llm
    worker.run_once()
    assert client.get(f"/runs/{r.json()['id']}").json()["state"] == "done"
    assert listed.requests, "the worker never called the listed endpoint"
    assert {q["path"] for q in listed.requests} == {"/v1/chat/completions"}
    assert {q["authorization"] for q in listed.requests} == {f"Bearer {LISTED_KEY}"}
    assert unlisted.requests == []
    events = json.dumps(client.get(f"/runs/{r.json()['id']}/events", params={"limit": 1000}).json())
    assert LISTED_KEY not in events and SERVER_KEY not in events


def test_an_endpoint_without_a_key_variable_is_sent_no_key_of_the_server(client, worker, dataset_id, keys, listed):
    r = llm_run(client, dataset_id, endpoint="keyless")
    worker.run_once()
    assert client.get(f"/runs/{r.json()['id']}").json()["state"] == "done"
    assert listed.requests
    assert {q["authorization"] for q in listed.requests} == {"Bearer sk-no-key-needed"}


def test_a_stored_run_that_carries_a_url_is_refused_by_the_worker(storage, worker, dataset_id, keys, unlisted):
    """A run queued by an older version (or written past the API) cannot redirect the key either."""
    spec = {"inputs": ["N"], "targets": ["loss"], "group": "group", "axis": ["N"], "max_constants": 4,
            "description": "", "budget": 20, "seed": 0, "time_limit": None, "patience": None,
            "test_split": None, "task": None, "proposers": [
                {"kind": "offline", "weight": 0.5},
                {"kind": "llm", "weight": 0.5, "llm": {"model": "m", "name": "llm", "base_url": unlisted.url}}]}
    run = storage.create_run(dataset_id, spec)
    worker.run_once()
    failed = storage.get_run(run.id)
    assert failed.state == RunState.FAILED
    assert "carry base_url; workers only send requests to the operator's endpoints" in failed.error
    assert unlisted.requests == []


def test_a_worker_without_the_endpoint_or_its_key_fails_the_run_by_name(storage, settings, dataset_id, monkeypatch):
    from app.services.llm_endpoints import llm_settings_for_run
    from agent.llm import LLMConfigError

    with pytest.raises(LLMConfigError, match="LLM endpoint 'gone' is not configured on this worker"):
        llm_settings_for_run({"model": "m", "endpoint": "gone"}, settings.llm_endpoints)
    with pytest.raises(LLMConfigError, match="the worker's environment has no SLD_TEST_LISTED_KEY"):
        llm_settings_for_run({"model": "m", "endpoint": "listed"}, settings.llm_endpoints, environ={})


def test_endpoints_are_read_from_the_environment_as_json(monkeypatch):
    monkeypatch.setenv("SLD_LLM_ENDPOINTS", json.dumps({
        "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
        "local": {"base_url": "http://127.0.0.1:8080/v1"}}))
    endpoints = Settings().llm_endpoints
    assert endpoints["openai"].api_key_env == "OPENAI_API_KEY" and endpoints["local"].api_key_env is None
    for bad in ({"x y": {"base_url": "http://h/v1"}}, {"a": {"base_url": "file:///etc/passwd"}},
                {"a": {"base_url": "http://h/v1", "api_key": "sk-inline"}}):
        monkeypatch.setenv("SLD_LLM_ENDPOINTS", json.dumps(bad))
        with pytest.raises(ValidationError):
            Settings()


def test_a_server_without_endpoints_refuses_llm_runs(storage, settings, dataset_id):
    from fastapi.testclient import TestClient

    from app.main import create_app

    with TestClient(create_app(settings.model_copy(update={"llm_endpoints": {}}), storage)) as bare:
        r = llm_run(bare, dataset_id)
    assert r.status_code == 422 and "this server has no LLM endpoints" in r.json()["detail"]
