"""The law page's answers a team acts on: compute-optimal allocation and which run to do next.

Two htmx forms on a finished run's law page post here; each goes through the API's own request
model and service (``optimal_for_run``, ``suggest_next_runs``), so a page and the API give the same
answer and the same one-line errors.  Both are evaluation of stored laws and draws, never a fit.
"""
from __future__ import annotations

import io

import pandas as pd
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from starlette.concurrency import run_in_threadpool

from agent.errors import DataError
from app.api.deps import ReadStorage, RunId, SettingsDep, SweepId, WriteStorage
from app.schemas.answers import OptimalCreate
from app.schemas.laws import SuggestCreate
from app.schemas.sweeps import SweepPointsAdd
from app.services.optimal import optimal_for_run
from app.services.suggest import suggest_next_runs
from app.services.sweeps import add_points
from app.web.pages import checked_form, page
from app.web.plots import PlotSpec, Series

router = APIRouter(include_in_schema=False)
MAX_FORM_CHARS = 200_000  # a pasted candidate table: 2,000 runs of a few columns


@router.post("/ui/runs/{run_id}/optimal", response_class=HTMLResponse)
async def optimal(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    """N*(C), D*(C) and the loss over the budgets typed on the law page, with the IsoFLOP check."""
    form = await request.form()
    body = {"size": str(form.get("size", "")), "data": str(form.get("data", "")),
            "budgets": _numbers(form.get("budgets"), "budgets"),
            "size_range": _numbers(form.get("size_range"), "size range")}
    result = await run_in_threadpool(optimal_for_run, storage, run_id, checked_form(OptimalCreate, body))
    rows = result.allocations
    curve = PlotSpec(f"Compute-optimal {result.size} and {result.data}", "compute C (FLOPs)",
                     f"{result.size}* and {result.data}*", log_x=True, log_y=True, series=[
                         Series(f"{result.size}*", [a.budget for a in rows], [a.size for a in rows], "line", "size"),
                         Series(f"{result.data}*", [a.budget for a in rows], [a.data for a in rows], "line", "data")])
    for name, key in ((result.size, "size"), (result.data, "data")):
        if all(a.interval for a in rows):
            for edge, k in (("low", 0), ("high", 1)):
                curve.series.append(Series(f"{name}* {result.level:.0%} interval, {edge}", [a.budget for a in rows],
                                           [a.interval[key][k] for a in rows], "band", key))
    isoflop = PlotSpec("IsoFLOP check: the law along each budget line", result.size, "predicted loss",
                       log_x=True, log_y=False, note="each curve's minimum is N* at that budget",
                       series=[Series(f"C = {v.budget:.3g}", v.sizes, v.loss, "line", f"c{i}")
                               for i, v in enumerate(result.isoflop)])
    return page(request, "_optimal.html", result=result, curve=curve, isoflop=isoflop)


@router.post("/ui/runs/{run_id}/suggest", response_class=HTMLResponse)
async def suggest(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    """The candidate runs pasted on the law page, ranked for the target typed there."""
    form = await request.form()
    text = str(form.get("candidates", ""))
    if len(text) > MAX_FORM_CHARS:
        raise DataError(f"the candidate table is over {MAX_FORM_CHARS:,} characters")
    try:
        candidates = pd.read_csv(io.StringIO(text)).to_dict("records")
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataError(f"the candidate runs must be CSV with a header row: {str(exc)[:120]}") from None
    run = await run_in_threadpool(storage.get_run, run_id)
    group = run.spec.get("group")
    target = {}
    for item in str(form.get("target", "")).split(","):
        name, _, value = item.partition("=")
        if name.strip():
            target[name.strip()] = value.strip() if name.strip() == group else _number(value, name.strip())
    body = {"candidates": candidates, "targets": [target], "top": 10}
    result = await run_in_threadpool(suggest_next_runs, storage, run_id, checked_form(SuggestCreate, body))
    # a law fitted on a training sweep's rows can send a suggested run back to that sweep's trainers
    sweeps = await run_in_threadpool(lambda: storage.list_sweeps(dataset_id=run.dataset_id, limit=1).items)
    return page(request, "_suggestions.html", result=result, sweep=sweeps[0] if sweeps else None)


@router.post("/ui/sweeps/{sweep_id}/points", response_class=HTMLResponse)
async def queue_point(request: Request, sweep_id: SweepId, storage: WriteStorage,
                      settings: SettingsDep) -> HTMLResponse:
    """A suggested run queued in its sweep, trained like the sweep's own points (``POST /sweeps/{id}/points``)."""
    form = await request.form()
    body = {"n_params": [_number(form.get("n_params"), "N")], "tokens": [_number(form.get("tokens"), "D")]}
    if form.get("lr"):
        body["lrs"] = [_number(form.get("lr"), "lr")]
    sweep = await run_in_threadpool(add_points, storage, sweep_id, checked_form(SweepPointsAdd, body), settings)
    return page(request, "_queued_point.html", sweep=sweep)


def _numbers(text, what: str) -> list[float]:
    return [_number(v, what) for v in str(text or "").split(",") if v.strip()]


def _number(text, what: str) -> float:
    try:
        return float(str(text).strip())
    except ValueError:
        raise DataError(f"{what} must be a number, not {str(text)[:40]!r}") from None
