"""A worker runs a run with the config stored in its spec, on the first claim and on resume alike;
its own defaults play no part, and specs stored before the whole config was kept still run."""
from __future__ import annotations

from dataclasses import replace

import pytest

from agent.search import Search
from agent.storage import Checkpoint, RunState
from app.schemas.runs import RunCreate
from app.schemas.runspec import RunSpec
from app.services.runspec import resolve_run_spec
from tests.app.conftest import toy_rows

BUDGET, WORK = 52, 123_456.0  # neither is a default of the service or the engine; 52 is past generation 0 (48)


@pytest.fixture
def spy_on_resume(monkeypatch):
    """The config each Search.from_state call gets."""
    seen = []
    resume = Search.from_state.__func__

    def spy(cls, problem, train_df, state, config, proposers=None, candidates=None):
        seen.append(config)
        return resume(cls, problem, train_df, state, config, proposers, candidates)

    monkeypatch.setattr(Search, "from_state", classmethod(spy))
    return seen


@pytest.mark.slow  # a full search and its finalists: about 30 s
def test_a_resumed_run_searches_with_its_stored_config(storage, settings, worker, spy_on_resume):
    dataset = storage.create_dataset(toy_rows())
    request = RunCreate(dataset_id=dataset.id, inputs=["N"], targets=["loss"], group="group", max_constants=4,
                        budget=BUDGET, work_budget=WORK, seed=2)
    run = storage.create_run(dataset.id, resolve_run_spec(request, storage, settings))
    stored = RunSpec.model_validate(run.spec)

    # a first worker searches one generation, saves it, and is shut down
    storage.claim_run("first", stale_after=settings.stale_after)
    plan = stored.plan()
    first = Search(plan.problem, plan.split(storage.load_rows(dataset.id))[0], plan.config)
    new = first.step()
    first.close()
    storage.save_generation(run.id, "first", candidates=new, checkpoint=Checkpoint(run.id, 1, first.state_dict()),
                            progress=first.progress, best_score=first.best.score)
    storage.release_run(run.id, "first")

    worker.run_once()
    assert spy_on_resume == [replace(stored.config, workers=settings.eval_workers)]
    assert (spy_on_resume[0].budget, spy_on_resume[0].work_budget, spy_on_resume[0].seed) == (BUDGET, WORK, 2)
    done = storage.get_run(run.id)
    assert len(new) < BUDGET and done.state is RunState.DONE and done.progress["candidates"] == BUDGET


def test_a_spec_stored_with_only_four_search_fields_still_loads_and_runs(storage, worker):
    dataset = storage.create_dataset(toy_rows())
    old = {"inputs": ["N"], "targets": ["loss"], "group": "group", "axis": ["N"], "max_constants": 4,
           "description": "", "budget": 8, "seed": 3, "time_limit": None, "patience": None,
           "proposers": [{"kind": "offline", "weight": 1.0}], "test_split": None, "task": None}
    spec = RunSpec.model_validate(old)
    assert (spec.config.budget, spec.config.seed, spec.config.work_budget, spec.version) == (8, 3, None, 1)
    run = storage.create_run(dataset.id, old)
    worker.run_once()
    done = storage.get_run(run.id)
    assert done.state is RunState.DONE and done.progress["candidates"] == 8
