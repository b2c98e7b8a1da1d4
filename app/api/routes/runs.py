"""Runs: queue a discovery, watch it, cancel it, read its leaderboard, best law and comparison."""
from __future__ import annotations

from typing import Annotated, Literal

from anyio import CapacityLimiter
from fastapi import APIRouter, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from agent.errors import DataError
from agent.storage import CANDIDATE_ORDERS, NotFoundError, RunState
from app.api.deps import (
    CandidateId, ComparisonId, DatasetIdQuery, EventIdQuery, PagingDep, ReadStorage, RunId, SettingsDep, WriteStorage,
)
from app.api.reads import cached_read, current_version, fresh_read, version_key
from app.schemas.answers import OptimalCreate, OptimalPublic
from app.schemas.common import PagePublic
from app.schemas.laws import (
    BestLawPublic, CandidatePublic, ComparisonJobPublic, ComparisonPublic, LawCreate, SuggestCreate, SuggestPublic,
)
from app.schemas.runs import EventPublic, RunCreate, RunPublic
from app.services.laws import best_law
from app.services.runspec import resolve_run_spec
from app.services.optimal import optimal_for_run
from app.services.suggest import suggest_next_runs
from app.services.compare import comparison_inputs, run_comparison
from app.services.compare_budget import comparison_options
from app.services.compare_jobs import queue_comparison

router = APIRouter(prefix="/runs", tags=["runs"])


@router.post("", status_code=202, response_model=RunPublic,
             summary="Queue a discovery run (a worker picks it up)")
def create_run(req: RunCreate, storage: WriteStorage, settings: SettingsDep) -> RunPublic:
    spec = resolve_run_spec(req, storage, settings)
    return RunPublic.of(storage.create_run(req.dataset_id, spec))


@router.get("", response_model=PagePublic[RunPublic], summary="List runs, newest first")
def list_runs(storage: ReadStorage, paging: PagingDep, dataset_id: DatasetIdQuery = None,
              state: Literal["queued", "running", "done", "failed", "cancelled"] | None = None):
    page = storage.list_runs(dataset_id=dataset_id, state=RunState(state) if state else None,
                             offset=paging.offset, limit=paging.limit)
    return PagePublic(items=[RunPublic.of(r, with_final=False) for r in page.items], total=page.total,
                      offset=page.offset, limit=page.limit)


@router.get("/{run_id}", response_model=RunPublic,
            summary="A run: state and progress (candidates evaluated, best validation score, elapsed)")
def get_run(run_id: RunId, request: Request, storage: ReadStorage) -> Response:
    return fresh_read(request, RunPublic.of(storage.get_run(run_id)))


@router.post("/{run_id}/cancel", response_model=RunPublic,
             summary="Cancel: at once when queued, at the end of the current generation when running")
def cancel_run(run_id: RunId, storage: WriteStorage) -> RunPublic:
    return RunPublic.of(storage.request_cancel(run_id))


@router.get("/{run_id}/events", response_model=list[EventPublic],
            summary="The run's events: claims, warnings, LLM calls, the end")
def run_events(run_id: RunId, storage: ReadStorage, after_id: EventIdQuery = 0,
               limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[EventPublic]:
    return [EventPublic(id=e.id, kind=e.kind, payload=e.payload, created_at=e.created_at)
            for e in storage.list_events(run_id, after_id=after_id, limit=limit)]


@router.get("/{run_id}/candidates", response_model=PagePublic[CandidatePublic],
            summary="The leaderboard: every candidate law, sorted and paged")
def list_candidates(run_id: RunId, storage: ReadStorage, paging: PagingDep,
                    sort: Annotated[str, Query(description=f"one of {', '.join(CANDIDATE_ORDERS)}")] = "score",
                    order: Literal["desc", "asc"] = "desc",
                    status: Literal["ok", "rejected"] | None = None) -> PagePublic[CandidatePublic]:
    if sort not in CANDIDATE_ORDERS:
        raise DataError(f"cannot sort by {sort!r}; choose one of {', '.join(CANDIDATE_ORDERS)}")
    page = storage.list_candidates(run_id, order_by=sort, descending=order == "desc", status=status,
                                   offset=paging.offset, limit=paging.limit)
    return PagePublic(items=[CandidatePublic.of(c) for c in page.items], total=page.total,
                      offset=page.offset, limit=page.limit)


@router.get("/{run_id}/candidates/{candidate_id}", response_model=CandidatePublic, summary="One candidate")
def get_candidate(run_id: RunId, candidate_id: CandidateId, storage: ReadStorage) -> CandidatePublic:
    return CandidatePublic.of(storage.get_candidate(run_id, candidate_id))


@router.get("/{run_id}/best", response_model=BestLawPublic,
            summary="The run's best law: formula (text, LaTeX, sympy), constants per group, scores, lineage")
async def run_best(run_id: RunId, request: Request, storage: ReadStorage) -> Response:
    version = await current_version(request, storage, run_id)
    return await cached_read(request, ("best", version_key(version)),
                             lambda: best_law(storage, storage.get_run(run_id)))


@router.get("/{run_id}/compare", response_model=ComparisonPublic,
            summary="The discovered law against the task's human law, with the same protocol")
async def compare_with_human(run_id: RunId, request: Request, storage: ReadStorage,
                             settings: SettingsDep) -> ComparisonPublic:
    run = await run_in_threadpool(storage.get_run, run_id)
    stored = (run.final or {}).get("comparison")
    if stored:
        return ComparisonPublic(run_id=run_id, **stored)
    task = await run_in_threadpool(storage.find_task_spec, run.dataset_id)
    if task is None or not task.human_law:
        raise NotFoundError(f"run {run_id}'s dataset has no human law to compare with; "
                            f"POST a law to /runs/{run_id}/compare")
    human = {"name": "human", "lines": task.human_law["lines"], "constants": task.human_law.get("constants")}
    return await compare_run(request, storage, settings, run_id, human)


@router.post("/{run_id}/suggest", response_model=SuggestPublic,
             summary="Which runs to do next: candidates ranked by how much they narrow the target predictions, per cost")
def suggest_runs(run_id: RunId, req: SuggestCreate, storage: ReadStorage) -> SuggestPublic:
    return suggest_next_runs(storage, run_id, req)


@router.post("/{run_id}/optimal", response_model=OptimalPublic,
             summary="Compute-optimal allocation: for each budget, the size and data that minimise the law's loss")
def optimal(run_id: RunId, req: OptimalCreate, storage: ReadStorage) -> OptimalPublic:
    return optimal_for_run(storage, run_id, req)


@router.post("/{run_id}/compare", status_code=202, response_model=ComparisonJobPublic,
             summary="Queue a comparison of the discovered law with a law you post (a worker fits both, "
                     "with the same protocol); read it at the returned url")
def compare_with_posted(run_id: RunId, law: LawCreate, storage: ReadStorage,
                        settings: SettingsDep) -> ComparisonJobPublic:
    lines = [law.lines] if isinstance(law.lines, str) else law.lines
    return ComparisonJobPublic.of(queue_comparison(storage, settings, run_id, {"name": law.name, "lines": lines}))


@router.get("/{run_id}/comparisons/{comparison_id}", response_model=ComparisonJobPublic,
            summary="A queued comparison: its state, and its result once a worker has fitted it")
def get_comparison(run_id: RunId, comparison_id: ComparisonId, storage: ReadStorage) -> ComparisonJobPublic:
    return ComparisonJobPublic.of(storage.get_comparison(run_id, comparison_id))


async def compare_run(request: Request, storage, settings, run_id: int, other: dict) -> ComparisonPublic:
    """The discovered law against the task's human law, when the run did not store it (bounded, in a
    limited thread pool: a worker stores it when a run of a task ends, so this is rare)."""
    inputs = await run_in_threadpool(comparison_inputs, storage, run_id)
    options = comparison_options(inputs, settings)
    limiter: CapacityLimiter = request.app.state.compare_limiter
    result = await run_in_threadpool_limited(limiter, run_comparison, inputs, other, options)
    return ComparisonPublic(run_id=run_id, **result)


async def run_in_threadpool_limited(limiter: CapacityLimiter, fn, *args):
    import anyio.to_thread

    return await anyio.to_thread.run_sync(lambda: fn(*args), limiter=limiter)
