"""A run as stored: its resolved plan (problem, the whole search config, held-out rows), proposers and task.

The spec is resolved once, when the run is queued (``app.services.runspec``),
and kept in the run's ``spec`` column.  A worker builds the search from it
alone, at the first claim and on every resume, so a run is executed exactly as
it was resolved, whatever the service's defaults are by then.  Only the number
of evaluation processes is the worker's own: it does not change the laws found.

Specs stored before the whole config was kept (``budget``, ``seed``,
``time_limit`` and ``patience`` beside the problem) still load: the rest of the
config is the engine's defaults, and they had no work budget.
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from agent.plan import DiscoveryPlan, HeldOut
from agent.problem import Problem
from agent.search import SearchConfig

SPEC_VERSION = 2
_LEGACY_SEARCH_FIELDS = ("budget", "seed", "time_limit", "patience")


class StoredProposer(BaseModel):
    kind: Literal["offline", "llm"]
    weight: float
    llm: dict[str, Any] | None = None  # checked settings naming an operator endpoint; never a key

    @model_serializer(mode="wrap")
    def _without_empty_llm(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if out.get("llm") is None:
            out.pop("llm", None)
        return out


class StoredSplit(BaseModel):
    column: str
    value: str = "test"
    at_least: float | None = None  # rows whose column is at least this are held out (instead of value)

    @model_serializer(mode="wrap")
    def _without_empty_threshold(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if out.get("at_least") is None:
            out.pop("at_least", None)
        return out


class RunSpec(BaseModel):
    inputs: list[str]
    targets: list[str]
    group: str | None = None
    axis: list[str] = Field(default_factory=list)
    max_constants: int
    description: str = ""
    run: str | None = None
    config: SearchConfig
    proposers: list[StoredProposer] = Field(default_factory=lambda: [StoredProposer(kind="offline", weight=1.0)])
    test_split: StoredSplit | None = None
    task: str | None = None
    version: int = SPEC_VERSION

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        if isinstance(data, dict) and "config" not in data:
            data = dict(data)
            data["config"] = {k: data.pop(k) for k in _LEGACY_SEARCH_FIELDS if k in data}
            # runs queued before the spec was complete had no work budget (SearchConfig's default has one)
            data["config"].setdefault("work_budget", None)
            data["version"] = 1
        return data

    @classmethod
    def of_plan(cls, plan: DiscoveryPlan, *, proposers: list[dict[str, Any]], task: str | None) -> "RunSpec":
        split = plan.held_out and StoredSplit(column=plan.held_out.column, value=plan.held_out.value,
                                              at_least=plan.held_out.at_least)
        return cls(**plan.problem.to_dict(), config=plan.config, proposers=proposers, test_split=split,
                   task=task)

    def plan(self) -> DiscoveryPlan:
        problem = Problem(tuple(self.inputs), tuple(self.targets), group=self.group, axis=tuple(self.axis),
                          max_constants=self.max_constants, description=self.description, run=self.run)
        split = self.test_split and HeldOut(self.test_split.column, self.test_split.value, self.test_split.at_least)
        return DiscoveryPlan(problem, self.config, split)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
