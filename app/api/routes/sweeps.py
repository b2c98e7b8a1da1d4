"""Training sweeps: plan one (``POST /sweeps``), watch it, and the trainer workers' side of the queue.

A trainer (``sld train worker``) claims the cheapest queued point, heartbeats while it trains,
and posts the run's row, which the sweep's dataset gains in the same transaction as the point's
``done``.  A trainer that no longer owns its point (it was silent for ``SLD_SWEEP_STALE_AFTER``
seconds and another claimed it) gets 409 and must drop its result.
"""
from __future__ import annotations

from fastapi import APIRouter, Response

from agent.storage import ConflictError
from app.api.deps import PagingDep, PointId, ReadStorage, SettingsDep, SweepId, WriteStorage
from app.schemas.common import PagePublic
from app.schemas.sweeps import (
    ClaimRequest, Heartbeat, PointClaim, PointFailure, PointResult, SweepCreate, SweepPointPublic, SweepPointsAdd,
    SweepPublic,
)
from app.services.sweeps import add_points, create_sweep, row_frame

router = APIRouter(prefix="/sweeps", tags=["sweeps"])
LOST = "this trainer no longer owns point {id}: it was silent too long and the point was queued again"


@router.post("", status_code=201, response_model=SweepPublic,
             summary="Plan a sweep (an N × D grid or IsoFLOP budgets × sizes); trainer workers train its points")
def post_sweep(req: SweepCreate, storage: WriteStorage, settings: SettingsDep) -> SweepPublic:
    return SweepPublic.of(create_sweep(storage, req, settings))


@router.get("", response_model=PagePublic[SweepPublic], summary="List sweeps, newest first")
def list_sweeps(storage: ReadStorage, paging: PagingDep) -> PagePublic[SweepPublic]:
    page = storage.list_sweeps(offset=paging.offset, limit=paging.limit)
    return PagePublic(items=[SweepPublic.of(s) for s in page.items], total=page.total, offset=page.offset,
                      limit=page.limit)


@router.get("/{sweep_id}", response_model=SweepPublic, summary="A sweep: its dataset, progress and every point")
def get_sweep(sweep_id: SweepId, storage: ReadStorage) -> SweepPublic:
    return SweepPublic.of(storage.get_sweep(sweep_id), storage.list_sweep_points(sweep_id))


@router.post("/{sweep_id}/points", status_code=201, response_model=SweepPublic,
             summary="Queue more runs in a sweep (a suggested next run): their rows join the sweep's dataset")
def add_sweep_points(sweep_id: SweepId, req: SweepPointsAdd, storage: WriteStorage,
                     settings: SettingsDep) -> SweepPublic:
    return SweepPublic.of(add_points(storage, sweep_id, req, settings), storage.list_sweep_points(sweep_id))


@router.post("/claim", response_model=PointClaim, responses={204: {"description": "no point to train"}},
             summary="A trainer claims the cheapest queued point (204 when there is none)")
def claim_point(req: ClaimRequest, storage: WriteStorage, settings: SettingsDep):
    point = storage.claim_sweep_point(req.worker_id, stale_after=settings.sweep_stale_after)
    if point is None:
        return Response(status_code=204)
    return PointClaim(point=SweepPointPublic.of(point), heartbeat_interval=settings.sweep_heartbeat_interval,
                      stale_after=settings.sweep_stale_after)


@router.post("/points/{point_id}/heartbeat", status_code=204, summary="The trainer is still training the point")
def heartbeat(point_id: PointId, req: Heartbeat, storage: WriteStorage) -> Response:
    if not storage.heartbeat_sweep_point(point_id, req.worker_id):
        raise ConflictError(LOST.format(id=point_id))
    return Response(status_code=204)


@router.post("/points/{point_id}/result", response_model=SweepPointPublic,
             summary="The finished run's row: appended to the sweep's dataset with the point's done, atomically")
def post_result(point_id: PointId, req: PointResult, storage: WriteStorage) -> SweepPointPublic:
    point = storage.finish_sweep_point(point_id, req.worker_id, row_frame(req.row))
    if point is None:
        raise ConflictError(LOST.format(id=point_id))
    return SweepPointPublic.of(point)


@router.post("/points/{point_id}/fail", response_model=SweepPointPublic,
             summary="The trainer could not train the point: it is queued again, or failed after a few tries")
def post_failure(point_id: PointId, req: PointFailure, storage: WriteStorage, settings: SettingsDep) -> SweepPointPublic:
    point = storage.fail_sweep_point(point_id, req.worker_id, req.error, max_attempts=settings.sweep_max_attempts)
    if point is None:
        raise ConflictError(LOST.format(id=point_id))
    return SweepPointPublic.of(point)
