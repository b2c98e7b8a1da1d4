from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.search.records import Candidate
from app.schemas.common import MAX_ID, RequestModel


def _finite(x: float | None) -> float | None:
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else x


def finite_json(obj: Any) -> Any:
    """``obj`` with every non-finite float as null (JSON has none; a fold's NMSE can be inf)."""
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    return _finite(obj) if isinstance(obj, float) else obj


class CandidatePublic(BaseModel):
    id: int
    generation: int
    lines: list[str]
    proposer: str
    kind: str = Field(description="searched, or finalist: a searched law re-scored with careful fits before "
                                  "reporting")
    status: str
    reason: str | None
    parent_ids: list[int]
    island: int
    n_constants: int
    complexity: int
    score: float | None = Field(description="selection score on validation (higher is better); null if rejected")
    validation: dict[str, Any]
    constants: dict[str, dict[str, float]] = Field(description="fitted on the fit split, per group")
    seconds: float
    meta: dict[str, Any]

    @classmethod
    def of(cls, c: Candidate) -> "CandidatePublic":
        return cls(id=c.id, generation=c.generation, lines=list(c.lines), proposer=c.proposer, kind=c.kind,
                   status=c.status,
                   reason=c.reason, parent_ids=list(c.parent_ids), island=c.island, n_constants=c.n_constants,
                   complexity=c.complexity, score=_finite(c.score),
                   validation=finite_json(c.validation),
                   constants=c.constants, seconds=c.seconds, meta=c.meta)


class LineageStep(BaseModel):
    id: int
    generation: int
    proposer: str
    lines: list[str]
    score: float | None


class BestLawPublic(BaseModel):
    run_id: int
    dataset_id: int
    run_state: str
    final: bool = Field(description="true: refitted on all training rows at the end of the run; "
                                    "false: the best candidate so far (constants from the fit split)")
    candidate_id: int | None
    lines: list[str]
    text: str
    latex: str
    sympy: dict[str, str] = Field(description="each target's expression as sympy prints it")
    inputs: list[str]
    targets: list[str]
    group: str | None
    constants: dict[str, dict[str, float]]
    n_constants: int
    complexity: int
    score: float | None
    validation: dict[str, Any]
    train: dict[str, Any] = Field(default_factory=dict)
    test: dict[str, Any] | None = None
    proposer: str | None = None
    lineage: list[LineageStep] = Field(default_factory=list, description="ancestors, nearest first")
    intervals: dict[str, Any] | None = Field(
        default=None, description="confidence intervals on every constant (exponents included) of the final "
        "law, per group: {level, method, draws, kind, constants: {group: {name: [lo, hi]}}}, from the "
        "delta method on the training rows, computed when the run ended")
    selection: dict[str, Any] | None = Field(
        default=None, description="how the final law was chosen: the parsimony margin in decades, how many "
        "finalists scored within it, and the spread of their predictions beyond the data (median of "
        "(max - min)/|law| at 2x, 4x and 10x the largest axis value): the form's own uncertainty")


class PredictCreate(RequestModel):
    """Predict with a run's law (``run_id``; ``candidate_id`` for one candidate) or a posted law."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"run_id": 1, "points": [{"N": 1e10, "D": 2e11}]},
        {"lines": ["loss = E + A / N ** alpha"], "constants": {"E": 1.7, "A": 400, "alpha": 0.34},
         "points": [{"N": 1e10}]}]})

    run_id: int | None = Field(None, ge=0, le=MAX_ID)
    candidate_id: int | None = Field(None, ge=0, le=MAX_ID)
    lines: list[str] | str | None = None
    constants: dict[str, Any] | None = Field(
        None, description="posted law: {name: value}, or {group: {name: value}} for per-group constants")
    inputs: list[str] | None = Field(None, description="posted law: default the keys of the points")
    targets: list[str] | None = Field(None, description="posted law: default the name on the last line")
    group: str | None = Field(None, description="the key of each point that names its group")
    points: list[dict[str, Any]] = Field(min_length=1, max_length=100_000)
    interval: float | None = Field(
        None, gt=0, lt=1, description="a run's law: also return <target>_lo and <target>_hi at this level, "
        "from the delta method on the run's training rows (at most 2,000 points)")
    kind: Literal["confidence", "prediction"] = Field(
        "confidence", description="confidence: where the curve lies; prediction: where a new run would land")


class PredictPublic(BaseModel):
    lines: list[str]
    targets: list[str]
    predictions: list[dict[str, float]]
    source: str = Field(description="where the law and its constants come from")
    interval: dict[str, Any] | None = Field(None, description=(
        "level, kind and method of the _lo/_hi values; forms: how many laws (the reported one and the run's close "
        "finalists) the band pools"))


class LawCreate(RequestModel):
    """A law to compare with: lines over the run's input columns; constants are fitted."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [
        {"name": "Chinchilla", "lines": ["loss = E + A / N ** alpha + B / D ** beta"]}]})

    name: str = Field("posted", max_length=100)
    lines: list[str] | str


class LawScores(BaseModel):
    name: str
    lines: list[str]
    n_constants: int
    validation: dict[str, Any] = Field(description="fit on the fit split, scored on the validation rows: "
                                                   "overall and per group")
    folds: list[dict[str, Any]] = Field(description="the same for every validation fold of the search")
    test: dict[str, Any] | None = Field(None, description="refit on all training rows, scored on the held-out "
                                                          "test rows (when the run has them)")
    constants: dict[str, dict[str, float]] = Field(description="refitted on all training rows")
    error: str | None = None
    published_test: dict[str, Any] | None = Field(None, description="human law with its published constants")


class ComparisonPublic(BaseModel):
    run_id: int
    protocol: dict[str, Any]
    laws: list[LawScores]
    best: str | None = Field(description="the law with the higher validation R²")


class ComparisonJobPublic(BaseModel):
    """A comparison with a posted law: queued by the API, fitted by a worker (poll ``url``)."""

    id: int
    run_id: int
    state: Literal["queued", "running", "done", "failed"]
    law: dict[str, Any] = Field(description="the posted law: name and lines")
    url: str = Field(description="where to read it until it is done")
    created_at: datetime
    finished_at: datetime | None = None
    error: str | None = Field(None, description="why it failed: a law that cannot be fitted, a run too large")
    result: ComparisonPublic | None = Field(None, description="the comparison, once done")

    @classmethod
    def of(cls, job) -> "ComparisonJobPublic":
        law = {"name": job.law.get("name"), "lines": list(job.law.get("lines") or [])}
        result = ComparisonPublic(run_id=job.run_id, **job.result) if job.result else None
        return cls(id=job.id, run_id=job.run_id, state=job.state, law=law,
                   url=f"/runs/{job.run_id}/comparisons/{job.id}", created_at=job.created_at,
                   finished_at=job.finished_at, error=job.error, result=result)


class SuggestCreate(RequestModel):
    """Candidate runs to rank, and the points whose predictions they should make surer."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "candidates": [{"N": 1e9, "D": 2e10}, {"N": 3e9, "D": 6e10}], "targets": [{"N": 7e10, "D": 1.4e12}]}]})

    candidates: list[dict[str, Any]] = Field(min_length=1, max_length=2_000, description=(
        "runs you could do next, each with the law's inputs (and its group); an optional 'cost' per run"))
    targets: list[dict[str, Any]] = Field(min_length=1, max_length=100, description="where you need the prediction")
    cost_inputs: list[str] | None = Field(None, max_length=10, description=(
        "a run without 'cost' costs cost_factor times the product of these inputs; default: the run's axis"))
    cost_factor: float = Field(6.0, gt=0, le=1e30)
    top: int = Field(10, ge=1, le=100)


class SuggestionPublic(BaseModel):
    rank: int
    point: dict[str, Any]
    score: float = Field(description="the share of the target predictions' variance it removes, per unit cost")
    reduction: float = Field(description="the share of the target predictions' variance it removes")
    cost: float
    explanation: str


class SuggestPublic(BaseModel):
    run_id: int
    method: str
    suggestions: list[SuggestionPublic]
