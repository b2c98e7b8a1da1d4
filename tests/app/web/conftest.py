"""One finished run on the toy sweep, shared by the tests that only read it (SQLite; the tests that
write run on both backends through the API fixtures)."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from agent.storage.rdb import RDBStorage
from app.core.config import Settings
from app.main import create_app
from app.worker import Worker
from tests.app.conftest import toy_csv


@dataclass
class Site:
    client: TestClient
    storage: RDBStorage
    settings: Settings
    dataset_id: int
    run_id: int


def open_site(database_url: str):
    # auth_cache_seconds=0: a page's queries are counted, and a token lookup cached for a second would
    # make the count depend on how long the previous page took
    settings = Settings(database_url=database_url, default_budget=20, compare_time_limit=10, heartbeat_interval=0.2,
                        poll_interval=0.05, auth_cache_seconds=0)
    storage = RDBStorage(database_url)
    client = TestClient(create_app(settings, storage))
    dataset = client.post("/datasets", files={"file": ("toy.csv", toy_csv(), "text/csv")}, data={"name": "toy"})
    run = client.post("/runs", json={"dataset_id": dataset.json()["id"], "inputs": ["N"], "targets": ["loss"],
                                     "group": "group", "max_constants": 4, "budget": 16})
    Worker(storage, settings, worker_id="web-test").run_once()
    return Site(client, storage, settings, dataset.json()["id"], run.json()["id"])


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    s = open_site(f"sqlite:///{tmp_path_factory.mktemp('web')}/sld.db")
    with s.client:
        yield s
    s.storage.close()


def grown_copy(site: Site, n_candidates: int, dataset_id: int | None = None) -> int:
    """A finished run like the site's, with ``n_candidates`` candidates (the site's, repeated under new
    ids and generations): what a long search leaves behind, without running one."""
    import dataclasses

    from agent.storage import Checkpoint, RunState

    storage = site.storage
    source = storage.get_run(site.run_id)
    seen = list(storage.list_candidates(site.run_id, order_by="id", descending=False, limit=10_000).items)
    run = storage.create_run(dataset_id if dataset_id is not None else site.dataset_id, source.spec)
    claimed = storage.claim_run("grower", stale_after=3600)
    assert claimed is not None and claimed.id == run.id
    batch = 2_000
    for start in range(0, n_candidates, batch):
        made = [dataclasses.replace(seen[i % len(seen)], id=i, generation=i // 50,
                                    parent_ids=(i - 1,) if i else ())
                for i in range(start, min(start + batch, n_candidates))]
        storage.save_generation(run.id, "grower", candidates=made,
                                checkpoint=Checkpoint(run.id, start // batch, {}), progress=source.progress,
                                best_score=source.best_score)
    final = dict(source.final or {})
    final["candidate_id"] = n_candidates - 1
    storage.finish_run(run.id, "grower", RunState.DONE, final=final, progress=source.progress,
                       best_score=source.best_score)
    return run.id
