"""A run's evaluations on a real Dask scheduler (a ``LocalCluster`` of worker processes): the same
seed gives the same candidates, scores and reported law as the local pool."""
from __future__ import annotations

import pytest

from agent.search import Search, SearchConfig
from tasks.synthetic import get_problem

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scheduler():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster:
        yield cluster.scheduler_address


def run(problem, **where):
    config = SearchConfig(budget=50, work_budget=None, time_limit=None, seed=1, **where)
    search = Search(problem.problem, problem.train, config)
    try:
        final = search.run()
    finally:
        search.close()
    return [(c.lines, c.score, c.constants) for c in search.candidates], final.lines, final.constants


def test_the_same_seed_gives_the_same_run_on_dask_as_on_the_local_pool(scheduler):
    problem = get_problem("hyper_bowl_01")  # groups, two inputs, a bowl: fits with many starts
    assert run(problem, scheduler=scheduler) == run(problem, workers=2)
