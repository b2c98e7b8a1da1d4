"""Every storage test runs against SQLite and PostgreSQL (Optuna's reusable-suite model)."""
from __future__ import annotations

import pytest

from agent.storage.rdb import RDBStorage
from agent.storage.testing import empty_tables, must_have_postgres, postgres_url, scratch_postgres


@pytest.fixture(scope="session")
def postgres_database():
    base = postgres_url()
    if base is None:
        if must_have_postgres():
            pytest.fail("CI is set but SLD_TEST_POSTGRES_URL is not: .ci/run starts PostgreSQL and sets it")
        pytest.skip("PostgreSQL tests need SLD_TEST_POSTGRES_URL (see .ci/run)")
    with scratch_postgres(base) as url:
        RDBStorage(url).close()  # creates the schema once per session
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/sld.db"
    url = request.getfixturevalue("postgres_database")
    empty_tables(url)
    return url


@pytest.fixture
def storage(database_url):
    s = RDBStorage(database_url)
    yield s
    s.close()
