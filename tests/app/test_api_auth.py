"""API tokens and tenants, on SQLite and PostgreSQL.

No token configured: requests need none (the local tenant, as before tokens).  Once one is
active, a request without one is 401, a read token on a write route is 403, and a tenant
never sees another's datasets or runs: their ids are 404, exactly like ids that do not exist.
"""
from __future__ import annotations

import asyncio
import re
import time

import pytest
from fastapi.testclient import TestClient

from app.core.auth import issue_token
from app.main import create_app
from tests.app.conftest import toy_csv

OPEN_PATHS = {"/health"}  # and the docs, which are not in the OpenAPI


def bearer(storage, name, scope, tenant=None) -> dict[str, str]:
    _, secret = issue_token(storage, name, scope=scope, tenant=tenant)
    return {"Authorization": f"Bearer {secret}"}


def upload(client, headers=None, name="toy"):
    return client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, data={"name": name},
                       headers=headers)


RUN = {"inputs": ["N"], "targets": ["loss"], "group": "group", "max_constants": 4, "budget": 16}


def test_without_any_token_the_local_api_needs_none(client):
    assert upload(client).status_code == 201
    assert client.get("/datasets").json()["total"] == 1


def test_once_a_token_exists_a_request_without_one_is_401_naming_the_fix(client, storage):
    headers = bearer(storage, "ci", "write")
    r = client.get("/datasets")
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert r.json()["detail"].startswith("this server needs an API token: send `Authorization: Bearer <secret>`")
    assert client.get("/datasets", headers=headers).status_code == 200
    assert client.get("/health").status_code == 200  # load balancers probe without a token


@pytest.mark.parametrize("header, detail", [
    ("Bearer sld_wrong", "unknown or revoked API token"),
    ("Basic dXNlcjpwdw==", "send the API token as `Authorization: Bearer <secret>`"),
    ("Bearer ", "send the API token as `Authorization: Bearer <secret>`"),
])
def test_a_wrong_token_is_401_even_while_none_is_needed(client, header, detail):
    r = client.get("/datasets", headers={"Authorization": header})
    assert (r.status_code, r.json()["detail"]) == (401, detail)


def test_a_revoked_token_is_401_once_the_servers_trust_in_the_token_table_runs_out(settings, storage):
    """The API remembers what the token table said for SLD_AUTH_CACHE_SECONDS (a query per request
    cost as much as the cached read it guarded); `sld token revoke` in another process takes effect
    within that time, and at once with 0."""
    headers = bearer(storage, "ci", "read")
    bearer(storage, "other", "read")
    with TestClient(create_app(settings.model_copy(update={"auth_cache_seconds": 0.3}), storage)) as client:
        assert client.get("/datasets", headers=headers).status_code == 200
        storage.revoke_token("ci")
        assert client.get("/datasets", headers=headers).status_code == 200  # still trusted, for 0.3 s at most
        time.sleep(0.35)
        r = client.get("/datasets", headers=headers)
        assert (r.status_code, r.json()["detail"]) == (401, "unknown or revoked API token")
    headers = bearer(storage, "ci2", "read")
    with TestClient(create_app(settings.model_copy(update={"auth_cache_seconds": 0}), storage)) as client:
        assert client.get("/datasets", headers=headers).status_code == 200
        storage.revoke_token("ci2")
        assert client.get("/datasets", headers=headers).status_code == 401


def test_guessed_secrets_cannot_grow_the_servers_memory_of_the_token_table(storage):
    from app.api.auth import TokenLookups

    async def guess_them_all():
        lookups = TokenLookups(storage, seconds=60.0)
        for k in range(TokenLookups.MAX_ENTRIES + 10):
            assert await lookups.find(f"guess-{k}") is None
        return lookups

    lookups = asyncio.run(guess_them_all())
    assert len(lookups._entries) <= TokenLookups.MAX_ENTRIES


def test_a_server_that_requires_tokens_refuses_requests_without_one_even_when_none_exists(settings, storage):
    with TestClient(create_app(settings.model_copy(update={"auth_required": True}), storage)) as client:
        assert client.get("/datasets").status_code == 401
        assert client.get("/health").status_code == 200


def test_every_route_but_health_and_the_docs_needs_a_token(client, storage):
    bearer(storage, "ci", "admin")
    checked = []
    for template, operations in client.get("/openapi.json").json()["paths"].items():
        if template in OPEN_PATHS:
            continue
        path = re.sub(r"\{[^}]+\}", "1", template)
        for method in operations:
            r = client.request(method.upper(), path, json={})
            assert r.status_code == 401, f"{method} {template}: {r.status_code} {r.text[:200]}"
            checked.append(f"{method} {template}")
    assert len(checked) >= 18


def test_a_read_token_reads_and_predicts_but_every_write_is_403(client, storage, dataset_id):
    run = client.post("/runs", json={"dataset_id": dataset_id, **RUN}).json()
    read = bearer(storage, "viewer", "read")
    assert client.get(f"/datasets/{dataset_id}", headers=read).status_code == 200
    assert client.get(f"/runs/{run['id']}", headers=read).status_code == 200
    predicted = client.post("/predict", headers=read, json={"lines": ["loss = a * N ** b"],
                                                            "constants": {"a": 3, "b": -0.1}, "points": [{"N": 1e9}]})
    assert predicted.status_code == 200, predicted.text
    writes = [("POST", "/datasets"), ("POST", f"/datasets/{dataset_id}/rows"), ("DELETE", f"/datasets/{dataset_id}"),
              ("POST", "/runs"), ("POST", f"/runs/{run['id']}/cancel"), ("POST", "/tasks/parallel_scaling_law/import")]
    for method, path in writes:
        r = client.request(method, path, headers=read, json={"dataset_id": dataset_id, **RUN})
        assert r.status_code == 403, f"{method} {path}: {r.status_code}"
        assert r.json()["detail"].startswith("token 'viewer' has scope read; this request needs ")
    assert client.get(f"/runs/{run['id']}", headers=read).json()["state"] == "queued"
    assert client.get(f"/datasets/{dataset_id}", headers=read).json()["n_rows"] == 20


def test_a_write_token_works_in_its_own_tenant_and_another_tenant_sees_none_of_it(client, storage, worker):
    alice, bob = bearer(storage, "alice", "write", "team-a"), bearer(storage, "bob", "write", "team-b")
    mine = upload(client, alice, name="alice's").json()
    run = client.post("/runs", headers=alice, json={"dataset_id": mine["id"], **RUN})
    assert run.status_code == 202, run.text
    worker.run_once()  # workers serve every tenant
    run = client.get(f"/runs/{run.json()['id']}", headers=alice).json()
    assert run["state"] == "done"
    assert client.get("/datasets", headers=alice).json()["total"] == 1
    theirs = upload(client, bob, name="bob's").json()
    assert [d["name"] for d in client.get("/datasets", headers=bob).json()["items"]] == ["bob's"]
    assert client.get("/runs", headers=bob).json()["total"] == 0
    assert_nothing_of_theirs_is_reachable(client, bob, mine["id"], run["id"])
    assert_nothing_of_theirs_is_reachable(client, alice, theirs["id"], 10**6)
    assert client.get(f"/runs/{run['id']}/best", headers=alice).status_code == 200
    assert client.get(f"/datasets/{mine['id']}", headers=alice).json()["n_rows"] == 20


def assert_nothing_of_theirs_is_reachable(client, headers, dataset_id, run_id):
    """Every route that takes one of their ids answers 404 (never 403: that would confirm the id exists)."""
    law = {"lines": ["loss = a * N ** b"]}
    calls = [
        ("GET", f"/datasets/{dataset_id}", None), ("GET", f"/datasets/{dataset_id}/rows", None),
        ("GET", f"/datasets/{dataset_id}/best-law", None), ("DELETE", f"/datasets/{dataset_id}", None),
        ("POST", f"/datasets/{dataset_id}/rows", {"rows": [{"N": 1e6, "group": "a", "loss": 3.0}]}),
        ("POST", "/runs", {"dataset_id": dataset_id, **RUN}),
        ("GET", f"/runs/{run_id}", None), ("GET", f"/runs/{run_id}/events", None),
        ("GET", f"/runs/{run_id}/candidates", None), ("GET", f"/runs/{run_id}/candidates/0", None),
        ("GET", f"/runs/{run_id}/best", None), ("GET", f"/runs/{run_id}/compare", None),
        ("POST", f"/runs/{run_id}/compare", law), ("POST", f"/runs/{run_id}/cancel", None),
        ("POST", "/predict", {"run_id": run_id, "points": [{"N": 1e9, "group": "a"}]}),
    ]
    for method, path, body in calls:
        r = client.request(method, path, headers=headers, json=body)
        assert r.status_code == 404, f"{method} {path}: {r.status_code} {r.text[:200]}"
        assert "not found" in r.json()["detail"]
    runs = client.get(f"/runs?dataset_id={dataset_id}", headers=headers).json()
    assert runs["total"] == 0


def test_the_rows_made_before_tokens_belong_to_tokens_without_a_tenant(client, storage, done_run):
    local, team = bearer(storage, "me", "read"), bearer(storage, "team", "write", "team-a")
    assert client.get(f"/runs/{done_run['id']}/best", headers=local).status_code == 200
    assert client.get("/datasets", headers=local).json()["total"] == 1
    assert client.get("/datasets", headers=team).json()["total"] == 0
    assert_nothing_of_theirs_is_reachable(client, team, done_run["dataset_id"], done_run["id"])


def test_each_tenant_imports_a_bundled_task_for_itself_with_an_admin_token(client, storage, sldbench_env):
    task = "parallel_scaling_law"
    a, b = bearer(storage, "a", "admin", "team-a"), bearer(storage, "b", "admin", "team-b")
    first = client.post(f"/tasks/{task}/import", headers=a)
    second = client.post(f"/tasks/{task}/import", headers=b)
    assert (first.status_code, second.status_code) == (201, 201)
    assert client.post(f"/tasks/{task}/import", headers=a).json()["id"] == first.json()["id"]  # once per tenant
    listed = {t["name"]: t["dataset_id"] for t in client.get("/tasks", headers=b).json()}
    assert listed[task] == second.json()["id"] != first.json()["id"]
    assert client.get(f"/datasets/{first.json()['id']}", headers=b).status_code == 404
    writer = bearer(storage, "w", "write", "team-a")
    assert client.post(f"/tasks/{task}/import", headers=writer).status_code == 403
