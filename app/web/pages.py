"""The dashboard's pages: server-rendered Jinja2 with htmx, at ``/`` and ``/ui/...``.

Pages read and write through the same storage dependencies (and so the same token scopes) and the
same services as the API routes; forms post to these routes and are checked by the API's own
request models.  Nothing here fits a law except a comparison, which goes through the API's bounded
comparison pool.  Plot data is embedded in each page and also served as JSON under ``/ui/api/``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from agent.errors import DataError
from agent.fitting import LOSSES
from agent.storage import CANDIDATE_ORDERS, NotFoundError
from app.api.deps import (
    AdminStorage, CandidateId, ComparisonId, DatasetId, ReadStorage, RunId, SettingsDep, SweepId, TaskName,
    WriteStorage,
)
from app.api.auth import SESSION_COOKIE
from app.api.routes.runs import compare_run
from app.core.auth import hash_secret
from app.core.errors import describe_validation
from app.schemas.laws import ComparisonPublic, LawCreate, PredictCreate
from app.schemas.runs import RunCreate
from app.services import laws as law_service
from app.services import rows as parse
from app.services.compare_jobs import queue_comparison
from app.services.runspec import resolve_run_spec
from app.services.task_import import import_task
from app.web import views

templates = Jinja2Templates(directory=str(Path(__file__).parent / "templates"))
router = APIRouter(include_in_schema=False)
GroupQuery = Annotated[str | None, Query(max_length=200)]
ColumnQuery = Annotated[str | None, Query(max_length=200)]


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status)


def error_page(request: Request, detail: str, status: int, headers=None) -> HTMLResponse:
    response = page(request, "error.html", status, detail=detail, code=status)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def checked_form(model, body: dict[str, Any]):
    """A form's fields through the API's request model: the same checks, the same one-line errors."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise DataError(describe_validation(RequestValidationError(exc.errors()))) from None


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)  # after a form's POST, GET the page it made


@router.get("/", response_class=HTMLResponse)
def home(request: Request, storage: ReadStorage) -> HTMLResponse:
    import tasks

    imported = {t.name: t.dataset_id for t in storage.list_task_specs()}
    bundled = [(t, imported.get(t.name)) for t in tasks.all_tasks()]
    datasets = storage.list_datasets(limit=50)
    runs = storage.list_runs(limit=20)
    sweeps = storage.list_sweeps(limit=20)
    return page(request, "home.html", datasets=datasets, runs=runs.items, tasks=bundled, sweeps=sweeps.items)


@router.get("/ui/sweeps/{sweep_id}", response_class=HTMLResponse)
def sweep_page(request: Request, sweep_id: SweepId, storage: ReadStorage) -> HTMLResponse:
    return page(request, "sweep.html", sweep=storage.get_sweep(sweep_id), points=storage.list_sweep_points(sweep_id))


@router.get("/ui/sweeps/{sweep_id}/points", response_class=HTMLResponse)
def sweep_points(request: Request, sweep_id: SweepId, storage: ReadStorage) -> HTMLResponse:
    return page(request, "_sweep_points.html", sweep=storage.get_sweep(sweep_id),
                points=storage.list_sweep_points(sweep_id))


@router.get("/ui/sign-in", response_class=HTMLResponse)
def sign_in_page(request: Request) -> HTMLResponse:
    return page(request, "sign_in.html")


@router.post("/ui/sign-in")
async def sign_in(request: Request):
    """Check the API token's secret, then keep it in an HttpOnly, SameSite=Strict cookie: pages then
    read and write with that token's scope and tenant, exactly as its API requests do."""
    form = await request.form()
    secret = str(form.get("token") or "").strip()
    if not secret or request.app.state.storage.find_token(hash_secret(secret)) is None:
        raise HTTPException(401, "unknown or revoked API token")
    response = _see("/")
    response.set_cookie(SESSION_COOKIE, secret, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", max_age=7 * 24 * 3600)
    return response


@router.post("/ui/sign-out")
def sign_out():
    response = _see("/ui/sign-in")
    response.delete_cookie(SESSION_COOKIE)
    return response


@router.post("/ui/tasks/{name}/import")
async def import_bundled(name: TaskName, storage: AdminStorage):
    ds, _ = await run_in_threadpool(import_task, storage, name)
    return _see(f"/ui/datasets/{ds.id}")


@router.post("/ui/datasets")
async def upload(request: Request, storage: WriteStorage, settings: SettingsDep):
    form = await request.form()
    upload = form.get("file")
    if upload is None or isinstance(upload, str) or not upload.filename:
        raise DataError("choose a CSV file to upload")
    data = await upload.read()
    df = await run_in_threadpool(parse.frame_from_csv, data, max_rows=settings.max_rows_per_request)
    name = str(form.get("name") or upload.filename)[:200]
    ds = await run_in_threadpool(storage.create_dataset, df, name=name, description="uploaded from the dashboard")
    return _see(f"/ui/datasets/{ds.id}")


@router.get("/ui/datasets/{dataset_id}", response_class=HTMLResponse)
def dataset(request: Request, dataset_id: DatasetId, storage: ReadStorage, settings: SettingsDep,
            target: ColumnQuery = None, x: ColumnQuery = None, group: GroupQuery = None) -> HTMLResponse:
    view = views.dataset_view(storage, dataset_id, target, x, group)
    return page(request, "dataset.html", view=view, endpoints=sorted(settings.llm_endpoints),
                losses=("auto", *LOSSES))


@router.post("/ui/datasets/{dataset_id}/runs")
async def start_run(request: Request, dataset_id: DatasetId, storage: WriteStorage, settings: SettingsDep):
    form = await request.form()
    body: dict[str, Any] = {"dataset_id": dataset_id, "seed": form.get("seed") or 0}
    for key in ("inputs", "targets", "axis"):
        values = [str(v) for v in form.getlist(key) if str(v)]
        if values or key == "axis" and form.get("axis_given"):
            body[key] = values
    for key in ("group", "run", "loss"):
        if form.get(key):
            body[key] = str(form.get(key))
    for key in ("max_constants", "budget"):
        if form.get(key):
            body[key] = form.get(key)
    if form.get("llm_model"):
        llm = {"model": str(form.get("llm_model"))}
        if form.get("llm_endpoint"):
            llm["endpoint"] = str(form.get("llm_endpoint"))
        body["proposers"] = [{"kind": "offline", "weight": 1.0}, {"kind": "llm", "weight": 1.0, "llm": llm}]
    req = checked_form(RunCreate, body)
    spec = await run_in_threadpool(resolve_run_spec, req, storage, settings)
    run = await run_in_threadpool(storage.create_run, dataset_id, spec)
    return _see(f"/ui/runs/{run.id}")


@router.get("/ui/runs/{run_id}", response_class=HTMLResponse)
def run_page(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    run = storage.get_run(run_id)
    return page(request, "run.html", run=run, **_progress(storage, run))


@router.get("/ui/runs/{run_id}/progress", response_class=HTMLResponse)
def run_progress(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    """The live part of the run page, polled by htmx while the run is queued or running."""
    run = storage.get_run(run_id)
    return page(request, "_progress.html", run=run, **_progress(storage, run))


def _progress(storage, run) -> dict[str, Any]:
    events = storage.list_events(run.id, limit=30, newest_first=True)
    return {"events": events, "progress_plot": views.run_plot(storage, run, "progress")}


@router.post("/ui/runs/{run_id}/cancel")
def cancel(run_id: RunId, storage: WriteStorage):
    storage.request_cancel(run_id)
    return _see(f"/ui/runs/{run_id}")


@router.get("/ui/runs/{run_id}/leaderboard", response_class=HTMLResponse)
def leaderboard(request: Request, run_id: RunId, storage: ReadStorage,
                sort: Annotated[str, Query(max_length=20)] = "score", order: Literal["asc", "desc"] = "desc",
                offset: Annotated[int, Query(ge=0, le=10**9)] = 0) -> HTMLResponse:
    if sort not in CANDIDATE_ORDERS:
        raise DataError(f"cannot sort by {sort!r}; choose one of {', '.join(CANDIDATE_ORDERS)}")
    view = views.leaderboard_view(storage, run_id, sort, order, offset)
    return page(request, "leaderboard.html", view=view, orders=CANDIDATE_ORDERS, page_size=views.LEADERBOARD_PAGE)


@router.get("/ui/runs/{run_id}/law", response_class=HTMLResponse)
def law_page(request: Request, run_id: RunId, storage: ReadStorage, candidate: CandidateId | None = None,
             group: GroupQuery = None, target: ColumnQuery = None) -> HTMLResponse:
    view = views.law_view(storage, run_id, candidate, group, target)
    return page(request, "law.html", view=view)


@router.post("/ui/runs/{run_id}/predict", response_class=HTMLResponse)
async def predict(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    """One point typed into the law page: the law's prediction there (an htmx fragment)."""
    form = await request.form()
    run = await run_in_threadpool(storage.get_run, run_id)
    point: dict[str, Any] = {}
    for name in run.spec["inputs"]:
        try:
            point[name] = float(str(form.get(name, "")))
        except ValueError:
            raise DataError(f"{name} must be a number, not {str(form.get(name, ''))[:40]!r}") from None
    if run.spec.get("group") and form.get("group"):
        point[run.spec["group"]] = str(form.get("group"))
    candidate = form.get("candidate")
    body = {"run_id": run_id, "candidate_id": candidate or None, "points": [point]}
    if not candidate and (run.final or {}).get("uncertainty"):  # the final law's stored draws: a band at no cost
        body.update(interval=0.9, kind="prediction")
    result = await run_in_threadpool(law_service.predict, storage, checked_form(PredictCreate, body))
    return page(request, "_prediction.html", point=point, result=result)


@router.get("/ui/runs/{run_id}/compare", response_class=HTMLResponse)
def compare_page(request: Request, run_id: RunId, storage: ReadStorage) -> HTMLResponse:
    run = storage.get_run(run_id)
    task = storage.find_task_spec(run.dataset_id)
    human = task.human_law["lines"] if task and task.human_law else None
    return page(request, "compare.html", run=run, human=human)


@router.post("/ui/runs/{run_id}/compare", response_class=HTMLResponse)
async def compare(request: Request, run_id: RunId, storage: ReadStorage, settings: SettingsDep) -> HTMLResponse:
    """The run's law against the human law (``which=human``) or a typed one, under the run's protocol:
    the scores and both curves (an htmx fragment).  A typed law is queued for a worker and the
    fragment polls until it is fitted; the human law's comparison is the one stored at the run's end."""
    form = await request.form()
    if form.get("which") == "human":
        run = await run_in_threadpool(storage.get_run, run_id)
        stored = (run.final or {}).get("comparison")
        task = await run_in_threadpool(storage.find_task_spec, run.dataset_id)
        if stored:
            result = ComparisonPublic(run_id=run_id, **stored)
        elif task is not None and task.human_law:
            result = await compare_run(request, storage, settings, run_id,
                                       {"name": "human", "lines": task.human_law["lines"]})
        else:
            raise NotFoundError(f"run {run_id}'s dataset has no human law; type a law to compare with")
    else:
        text = str(form.get("lines") or "").strip()
        if not text:
            raise DataError("type a law to compare with, one line per target (e.g. loss = E + A*N**(-a))")
        law = checked_form(LawCreate, {"name": str(form.get("name") or "yours")[:100], "lines": text.splitlines()})
        lines = [law.lines] if isinstance(law.lines, str) else law.lines
        job = await run_in_threadpool(queue_comparison, storage, settings, run_id, {"name": law.name, "lines": lines})
        return page(request, "_comparison_pending.html", job=job)
    return await _comparison_fragment(request, storage, run_id, result)


@router.get("/ui/runs/{run_id}/comparisons/{comparison_id}", response_class=HTMLResponse)
async def comparison(request: Request, run_id: RunId, comparison_id: ComparisonId,
                     storage: ReadStorage) -> HTMLResponse:
    """A queued comparison: still pending (the fragment polls again), failed with its reason, or done."""
    job = await run_in_threadpool(storage.get_comparison, run_id, comparison_id)
    if not job.finished or job.error:
        return page(request, "_comparison_pending.html", job=job)
    return await _comparison_fragment(request, storage, run_id, ComparisonPublic(run_id=run_id, **job.result))


async def _comparison_fragment(request: Request, storage, run_id: int, result: ComparisonPublic) -> HTMLResponse:
    fitted = [(s.name, s.lines, s.constants) for s in result.laws if s.constants]
    chart = await run_in_threadpool(views.comparison_plot, storage, run_id, fitted) if fitted else None
    return page(request, "_comparison.html", result=result, comparison_plot=chart)


# ------------------------------------------------------------------ the JSON behind the plots

@router.get("/ui/api/datasets/{dataset_id}/plot")
def dataset_plot(dataset_id: DatasetId, storage: ReadStorage, target: ColumnQuery = None, x: ColumnQuery = None,
                 group: GroupQuery = None) -> dict:
    view = views.dataset_view(storage, dataset_id, target, x, group)
    if view.plot is None:
        raise NotFoundError(f"dataset {dataset_id} has no two numeric columns to plot")
    return view.plot.to_json()


@router.get("/ui/api/runs/{run_id}/law-plot")
def law_plot(run_id: RunId, storage: ReadStorage, candidate: CandidateId | None = None,
             group: GroupQuery = None) -> dict:
    view = views.law_view(storage, run_id, candidate, group)
    return {"data": view.data_plot.to_json(), "residuals": view.residual_plot.to_json()}


@router.get("/ui/api/runs/{run_id}/pareto")
def pareto(run_id: RunId, storage: ReadStorage) -> dict:
    return views.run_plot(storage, storage.get_run(run_id), "pareto").to_json()


@router.get("/ui/api/runs/{run_id}/progress")
def progress(run_id: RunId, storage: ReadStorage) -> dict:
    return views.run_plot(storage, storage.get_run(run_id), "progress").to_json()
