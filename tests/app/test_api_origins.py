"""Web pages of other sites: no CORS unless the operator lists their origins, and no cross-site writes.

A page on another site can make a browser send a text/plain or form POST without asking first
(no preflight), so CORS alone would let it write to a local ``sld serve`` that needs no token.
"""
from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.app.conftest import toy_csv

EVIL = "https://evil.example"
DASHBOARD = "https://dashboard.example.com"


@pytest.fixture
def cors_client(settings, storage):
    with TestClient(create_app(settings.model_copy(update={"cors_origins": [DASHBOARD]}), storage)) as c:
        yield c


def csv_as_text(client, origin=None):
    headers = {"content-type": "text/plain", **({"origin": origin} if origin else {})}
    return client.post("/datasets?name=forged", content=toy_csv(), headers=headers)


def test_a_text_plain_post_from_a_foreign_page_is_refused_and_stores_nothing(client):
    r = csv_as_text(client, EVIL)
    assert r.status_code == 403
    assert r.json()["detail"].startswith("cross-site POST from origin 'https://evil.example' refused")
    assert client.get("/datasets").json()["total"] == 0


def test_a_form_post_and_a_delete_from_a_foreign_page_are_refused(client, dataset_id):
    form = client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, headers={"origin": EVIL})
    assert form.status_code == 403
    for origin in (EVIL, "null", "http://127.0.0.1:3000"):  # a sandboxed page; another local server's page
        r = client.delete(f"/datasets/{dataset_id}", headers={"origin": origin})
        assert r.status_code == 403, origin
    assert client.get("/datasets").json()["total"] == 1


def test_writes_without_an_origin_or_from_this_servers_own_pages_go_through(client):
    assert csv_as_text(client).status_code == 201  # curl, scripts
    assert csv_as_text(client, "http://testserver").status_code == 201
    assert csv_as_text(client, "https://testserver:443").status_code == 201  # the same host behind a TLS proxy


def test_by_default_no_page_of_another_site_may_read_answers(client):
    r = client.get("/datasets", headers={"origin": DASHBOARD})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    preflight = client.options("/datasets", headers={"origin": DASHBOARD, "access-control-request-method": "POST"})
    assert "access-control-allow-origin" not in preflight.headers


def test_a_listed_origin_may_read_and_write_and_no_other(cors_client):
    r = cors_client.get("/datasets", headers={"origin": DASHBOARD})
    assert r.headers["access-control-allow-origin"] == DASHBOARD
    preflight = cors_client.options("/datasets", headers={
        "origin": DASHBOARD, "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type"})
    assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == DASHBOARD
    assert csv_as_text(cors_client, DASHBOARD).status_code == 201
    assert csv_as_text(cors_client, EVIL).status_code == 403
    other = cors_client.get("/datasets", headers={"origin": EVIL})
    assert "access-control-allow-origin" not in other.headers
    refused = cors_client.options("/datasets", headers={"origin": EVIL, "access-control-request-method": "POST"})
    assert refused.status_code == 400


def test_cors_origins_must_be_plain_origins(settings):
    for bad in ("*", "https://x.example/path", "evil.example"):
        with pytest.raises(ValueError, match="give scheme://host"):
            settings.model_validate({**settings.model_dump(), "cors_origins": [bad]})
