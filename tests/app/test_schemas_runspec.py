"""The stored run spec holds the whole plan: it comes back from JSON as the same problem, search
config and held-out rows."""
from __future__ import annotations

import json

from agent.plan import DiscoveryPlan, HeldOut
from agent.problem import Problem
from agent.search import SearchConfig
from app.schemas.runspec import RunSpec


def test_a_plan_comes_back_from_the_stored_json_unchanged():
    config = SearchConfig(budget=77, work_budget=5e4, seed=4, time_limit=30.0, islands=3,
                          finalist_losses=("auto", "huber_log"))
    plan = DiscoveryPlan(Problem(("N", "D"), ("loss",), group="g", axis=("N",), max_constants=5),
                         config, HeldOut("split", "test"))
    spec = RunSpec.of_plan(plan, proposers=[{"kind": "offline", "weight": 1.0}], task=None)
    stored = json.loads(json.dumps(spec.to_json()))
    assert stored["config"]["budget"] == 77 and stored["proposers"] == [{"kind": "offline", "weight": 1.0}]
    assert RunSpec.model_validate(stored).plan() == plan
