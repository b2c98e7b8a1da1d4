"""Compute-optimal allocation of a finished run's law: the request and the answer."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import RequestModel

MAX_BUDGETS = 20
MAX_ISOFLOP = 5


class OptimalCreate(RequestModel):
    """Which columns are the model's size and its data, how compute is counted, and the budgets."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "size": "N", "data": "D", "budgets": [1e21, 1e23], "size_range": [1e7, 1e12]}]})

    size: str = Field(max_length=200, description="the law's model-size input (N)")
    data: str = Field(max_length=200, description="the law's data input (D, tokens)")
    budgets: list[float] = Field(min_length=1, max_length=MAX_BUDGETS, description="compute budgets C, in FLOPs")
    size_range: tuple[float, float] = Field(description=(
        "the sizes you would train, [low, high]: the optimum is searched there and flagged on an edge"))
    flops_per: float = Field(6.0, gt=0, le=1e6, description="k in C = k*N*D (6: forward and backward passes)")
    fixed: dict[str, float] = Field(default_factory=dict, max_length=20, description="values of the law's other inputs")
    group: str | None = Field(None, max_length=200, description="whose constants (default: the first group)")
    level: float = Field(0.9, gt=0, lt=1, description="the level of the intervals")
    isoflop: list[float] | None = Field(None, max_length=MAX_ISOFLOP, description=(
        "budgets for the IsoFLOP view (loss against size along each budget line); default: the first three budgets"))

    @model_validator(mode="after")
    def _positive(self) -> "OptimalCreate":
        for name, values in (("budgets", self.budgets), ("size_range", self.size_range),
                             ("isoflop", self.isoflop or [])):
            if not all(0 < v < 1e60 for v in values):
                raise ValueError(f"{name} must be positive numbers below 1e60")
        return self


class AllocationPublic(BaseModel):
    budget: float
    size: float = Field(description="N*: the size that minimises the predicted loss at this budget")
    data: float = Field(description="D* = C / (k N*)")
    loss: float = Field(description="the predicted loss at the optimum")
    on_edge: bool = Field(description="the optimum sits on the edge of size_range: widen it or distrust it")
    interval: dict[str, list[float]] = Field(default_factory=dict, description=(
        "[lo, hi] of size, data and loss over the law's stored replicates (parameter uncertainty)"))
    forms: list[dict[str, Any]] = Field(default_factory=list, description=(
        "the optimum under each of the run's other close finalists (form uncertainty): size, data, loss, on_edge"))


class IsoflopPublic(BaseModel):
    budget: float
    sizes: list[float]
    loss: list[float | None]


class OptimalPublic(BaseModel):
    run_id: int
    size: str
    data: str
    flops_per: float
    level: float
    method: str
    allocations: list[AllocationPublic]
    isoflop: list[IsoflopPublic] = Field(description="the law along a few budget lines: a check of N* by eye")
    warnings: list[str] = Field(default_factory=list, description=(
        "what makes this answer less sure than its intervals say, e.g. a law not validated along the data column"))
