"""``sld token`` and what ``sld serve`` does with tokens: none needed on 127.0.0.1 while none exists (it
says so), no listening beyond this machine without one, and every request needing one there."""
from __future__ import annotations

import hashlib
import os

import httpx
import pytest
from sqlalchemy import text

import migrations
from agent.storage.rdb import RDBStorage
from agent.storage.rdb.engine import make_engine
from tests.agent.storage.test_storage_migrations import empty_database  # noqa: F401
from tests.app.test_service_e2e import free_port, start, stop, wait_healthy


@pytest.fixture(autouse=True)
def _isolated_settings(monkeypatch, tmp_path):
    from app.core.config import get_settings

    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path}/default.db")
    monkeypatch.delenv("SLD_AUTH_REQUIRED", raising=False)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_a_token_is_created_with_its_secret_shown_once_and_stored_hashed(sld, database_url):
    made = sld("token", "create", "--name", "ci", "--scope", "write", "--tenant", "team-a",
               "--database-url", database_url)
    assert made.exit_code == 0, made.stderr
    secret = made.stdout.strip()
    assert secret.startswith("sld_") and len(secret) > 40
    assert "token 'ci' created (scope write, tenant team-a)" in made.stderr
    listed = sld("token", "list", "--database-url", database_url)
    assert listed.exit_code == 0 and "ci" in listed.stdout and "team-a" in listed.stdout
    assert secret not in listed.stdout
    storage = RDBStorage(database_url)
    try:
        token = storage.find_token(hashlib.sha256(secret.encode()).hexdigest())
        assert (token.name, token.scope, token.tenant) == ("ci", "write", "team-a")
        with storage.engine.connect() as conn:
            assert not any(secret in str(v) for row in conn.execute(text("SELECT * FROM api_tokens")) for v in row)
    finally:
        storage.close()
    assert sld("token", "revoke", "ci", "--database-url", database_url).stdout.strip() == "token 'ci' revoked"
    again = sld("token", "revoke", "ci", "--database-url", database_url)
    assert (again.exit_code, again.stderr.strip()) == (2, "error: no active token named 'ci' (`sld token list` "
                                                          "shows them)")


@pytest.mark.parametrize("args, message", [
    (["--name", "ci", "--scope", "root"], "error: unknown scope 'root'; choose one of read, write, admin"),
    (["--name", "a b"], "error: token name 'a b': use 1-100 letters, digits"),
    (["--name", "ci", "--tenant", "x" * 101], "error: token tenant 'xxxxx"),
])
def test_a_bad_token_request_is_one_line(sld, tmp_path, args, message):
    result = sld("token", "create", *args, "--database-url", f"sqlite:///{tmp_path}/t.db")
    assert result.exit_code == 2 and result.stderr.startswith(message) and "Traceback" not in result.stderr


def test_serving_beyond_this_machine_without_a_token_is_refused_with_the_fix(sld, tmp_path):
    result = sld("serve", "--host", "0.0.0.0", "--database-url", f"sqlite:///{tmp_path}/s.db", "--workers", "0")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: refusing to listen on 0.0.0.0 with no API token")
    assert "`sld token create --name admin --scope admin`" in result.stderr and "or serve on 127.0.0.1" in result.stderr


def test_db_upgrade_brings_an_older_database_to_tokens_and_tenants(sld, empty_database):
    migrations.upgrade(empty_database, "0001")
    engine = make_engine(empty_database)
    try:
        result = sld("db", "upgrade", "--database-url", empty_database)
        head = migrations.head_revision()
        assert result.exit_code == 0 and result.stdout.strip() == f"schema at revision {head} (was 0001)"
        with engine.connect() as conn:
            assert migrations.current_revision(conn) == migrations.head_revision()
    finally:
        engine.dispose()


@pytest.mark.slow
def test_serve_on_localhost_needs_no_token_and_says_so(tmp_path):
    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/local.db"}
    env.pop("SLD_AUTH_REQUIRED", None)
    server = start(["serve", "--port", str(port), "--workers", "0", "--log-level", "warning"], env)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        assert httpx.get(f"http://127.0.0.1:{port}/datasets", timeout=10).status_code == 200
    finally:
        output = stop(server)
    assert ("sld serve: no API token configured: requests need none, and only this machine can reach 127.0.0.1"
            in output)


@pytest.mark.slow
def test_serve_on_all_interfaces_requires_a_token_even_after_every_token_is_revoked(sld, tmp_path):
    url = f"sqlite:///{tmp_path}/shared.db"
    secret = sld("token", "create", "--name", "admin", "--scope", "admin", "--database-url", url).stdout.strip()
    port = free_port()
    env = {**os.environ, "DATABASE_URL": url}
    env.pop("SLD_AUTH_REQUIRED", None)
    server = start(["serve", "--host", "0.0.0.0", "--port", str(port), "--workers", "0", "--log-level", "warning"], env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base, server)
        assert httpx.get(f"{base}/datasets", timeout=10).status_code == 401
        ok = httpx.get(f"{base}/datasets", headers={"Authorization": f"Bearer {secret}"}, timeout=10)
        assert ok.status_code == 200
        assert sld("token", "revoke", "admin", "--database-url", url).exit_code == 0
        assert httpx.get(f"{base}/datasets", timeout=10).status_code == 401
    finally:
        output = stop(server)
    assert "sld serve: API tokens required (1 active)" in output
