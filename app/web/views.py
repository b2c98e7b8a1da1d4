"""What each dashboard page shows, read through the same storage and services as the API routes.

Each function does a fixed number of queries, whatever the size of a run: a leaderboard page reads
one page of candidates, plots read the candidates' indexed columns in one query (``candidate_points``),
and a law page reads the run, its rows and its lineage's candidates by id in one query each.
"""
from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from agent.display import law_mathml
from agent.expressions import Law, parse_law
from agent.problem import axis_values, make_table
from agent.search.records import Candidate
from agent.splits import make_folds
from agent.storage import BaseStorage, DatasetRecord, NotFoundError, RunRecord
from app.schemas.runspec import RunSpec
from app.services.uncertainty import constant_report, stored_replicates
from app.web import plots

LEADERBOARD_PAGE = 25


@functools.lru_cache(maxsize=4096)
def mathml(lines: tuple[str, ...], targets: tuple[str, ...]) -> str:
    """Presentation MathML of a law as written (Chromium draws it natively); laws are immutable."""
    return law_mathml(lines, targets)


@dataclass
class DatasetView:
    dataset: DatasetRecord
    numbers: list[str]
    texts: list[str]
    task: Any | None  # TaskSpecRecord
    runs: list[RunRecord]
    target: str | None
    x: str | None
    group: str | None
    plot: plots.PlotSpec | None


def dataset_view(storage: BaseStorage, dataset_id: int, target: str | None = None, x: str | None = None,
                 group: str | None = None) -> DatasetView:
    ds = storage.get_dataset(dataset_id)
    task = storage.find_task_spec(dataset_id)
    numbers = [c.name for c in ds.columns if c.kind == "number"]
    texts = [c.name for c in ds.columns if c.kind == "text"]
    problem = (task.problem if task else {}) or {}
    target = _pick(target, numbers, (problem.get("targets") or [None])[0], numbers[-1:] or [None])
    inputs = [c for c in numbers if c != target]
    x = _pick(x, inputs, (problem.get("axis") or problem.get("inputs") or [None])[0], inputs[:1] or [None])
    if group not in texts:  # "" is none; otherwise the task's group, else the first text column
        split = task.split_column if task else None
        group = None if group == "" else problem.get("group") if task else next(
            (c for c in texts if c != split), None)

    runs = list(storage.list_runs(dataset_id=dataset_id, limit=20).items)
    plot = None
    if target and x:
        key = (_database(storage), "dataset", ds.id, ds.n_rows, ds.n_batches, ds.updated_at)
        rows = _cached(key, lambda: storage.load_rows(dataset_id))  # not re-read on every page view
        plot = plots.dataset_plot(rows, target, x, group)
    return DatasetView(ds, numbers, texts, task, runs, target, x, group, plot)


def _pick(asked: str | None, allowed: list[str], preferred: str | None, fallback: list[str | None]) -> str | None:
    if asked in allowed:
        return asked
    return preferred if preferred in allowed else fallback[0]


@dataclass
class LineageLink:
    candidate: Candidate
    operator: str


@dataclass
class LawView:
    run: RunRecord
    candidate_id: int | None
    law: Law
    constants: dict[str, dict[str, float]]
    final: bool
    scores: dict[str, Any]
    math: str
    groups: list[str]
    shown_groups: list[str]
    axis: str | None
    target: str
    data_plot: plots.PlotSpec | None
    residual_plot: plots.PlotSpec | None
    lineage: list[LineageLink] = field(default_factory=list)
    intervals: dict | None = None  # the stored confidence intervals on the constants (final laws)


def law_view(storage: BaseStorage, run_id: int, candidate_id: int | None = None,
             group: str | None = None, target: str | None = None) -> LawView:
    run = storage.get_run(run_id)
    spec = RunSpec.model_validate(run.spec)
    final = candidate_id is None and bool(run.final and run.final.get("law"))
    if final:
        lines, constants = tuple(run.final["law"]), run.final["constants"]
        candidate_id = run.final.get("candidate_id")
        scores = {k: run.final.get(k) for k in ("validation", "train", "test")}
    else:
        cand = storage.get_candidate(run_id, candidate_id) if candidate_id is not None \
            else storage.best_candidate(run_id)
        if cand is None:
            raise NotFoundError(f"run {run_id} has no fitted law yet (state {run.state.value})")
        lines, constants, candidate_id = cand.lines, cand.constants, cand.id
        scores = {"validation": cand.validation}
    law = parse_law(lines, tuple(spec.inputs), tuple(spec.targets))
    target = target if target in law.targets else law.targets[0]
    groups = sorted(constants)
    shown = [group] if group in constants else groups[:plots.MAX_GROUPS]
    plan = spec.plan()
    axis = (plan.problem.axis or plan.problem.inputs)[0]
    rows = _rows_by_split(storage, run, plan)
    replicates = stored_replicates(run.final) if final else None
    data_plot, residual_plot = plots.law_plots(law, constants, plan.problem, rows, axis, target, shown, replicates)
    view = LawView(run, candidate_id, law, constants, final, scores,
                   mathml(tuple(law.lines), law.targets), groups, shown, axis, target,
                   data_plot, residual_plot)
    view.intervals = constant_report(run.final) if final else None
    stored = run.final.get("lineage") if final else None
    view.lineage = _lineage(storage, run_id, candidate_id, [s["id"] for s in stored] if stored else None)
    return view


_KEPT = 16  # runs whose split rows or plots are kept in memory (a 100k-row dataset is a few MB)
_CACHE: dict[tuple, Any] = {}
_CACHE_LOCK = threading.Lock()  # pages are served from a thread pool


def _cached(key: tuple, make):
    """``make()``, kept under ``key`` (which names the data's version) for the last ``_KEPT`` keys."""
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    value = make()  # outside the lock: two requests may both make it, and one result is kept
    with _CACHE_LOCK:
        while len(_CACHE) >= _KEPT:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = value
    return value


def _database(storage: BaseStorage) -> str:
    return str(getattr(getattr(storage, "engine", None), "url", id(storage)))


def run_plot(storage: BaseStorage, run: RunRecord, kind: str) -> plots.PlotSpec:
    """The run's progress or Pareto plot, from every candidate's indexed columns (one query), redrawn
    when the run has new candidates."""
    make = plots.progress_plot if kind == "progress" else plots.pareto_plot
    key = (_database(storage), kind, run.id, run.state.value, run.generation, run.progress.get("candidates"))
    return _cached(key, lambda: make(storage.candidate_points(run.id)))


def _rows_by_split(storage: BaseStorage, run: RunRecord, plan) -> dict[str, pd.DataFrame]:
    """The run's rows as its search saw them: fit and validation (its first fold), and test.

    Kept for the last few runs asked, keyed by the dataset's version (rows can be appended): loading
    and splitting 100,000 rows takes longer than drawing the page."""
    ds = storage.get_dataset(run.dataset_id)
    key = (_database(storage), "rows", run.id, ds.n_rows, ds.n_batches, ds.updated_at)
    return _cached(key, lambda: _split_rows(storage, run, plan))


def _split_rows(storage: BaseStorage, run: RunRecord, plan) -> dict[str, pd.DataFrame]:
    train, test = plan.split(storage.load_rows(run.dataset_id))
    problem = plan.problem
    table = make_table(train, problem)
    folds = make_folds(axis_values(train, problem), table.groups, table.X, list(problem.inputs),
                       seed=plan.config.seed, n_folds=plan.config.n_folds)
    out = {}
    if folds:
        validate = folds[0].validate
        fit = sorted(set(range(len(train))) - set(int(i) for i in validate))
        out["fit"], out["validation"] = train.iloc[fit], train.iloc[validate]
    else:
        out["fit"] = train
    if len(test):
        out["test"] = test
    return out


def _lineage(storage: BaseStorage, run_id: int, candidate_id: int | None,
             known: list[int] | None) -> list[LineageLink]:
    """The chain of first parents, nearest first, each with the operator that made it.  A final law's
    chain is stored with the run (``known``): one query; another candidate's is walked."""
    if candidate_id is None:
        return []
    if known is not None:
        found = {c.id: c for c in storage.get_candidates(run_id, [candidate_id, *known])}
        return [LineageLink(found[i], str(found[i].meta.get("operator", found[i].proposer)))
                for i in [candidate_id, *known] if i in found]
    chain: list[Candidate] = storage.get_candidates(run_id, [candidate_id])
    while chain and chain[-1].parent_ids and len(chain) <= 50:
        # one query per step, bounded by the chain's length (at most 50), never by the run's size
        found = storage.get_candidates(run_id, [chain[-1].parent_ids[0]])
        if not found or found[0].id in {c.id for c in chain}:
            break
        chain.append(found[0])
    return [LineageLink(c, str(c.meta.get("operator", c.proposer))) for c in chain]


@dataclass
class LeaderboardView:
    run: RunRecord
    rows: list[tuple[Candidate, str]]  # candidate, its MathML
    total: int
    offset: int
    sort: str
    order: str
    pareto: plots.PlotSpec


def leaderboard_view(storage: BaseStorage, run_id: int, sort: str, order: str, offset: int) -> LeaderboardView:
    run = storage.get_run(run_id)
    page = storage.list_candidates(run_id, order_by=sort, descending=order == "desc", offset=offset,
                                   limit=LEADERBOARD_PAGE)
    targets = tuple(run.spec["targets"])
    rows = [(c, mathml(tuple(c.lines), targets)) for c in page.items]
    pareto = run_plot(storage, run, "pareto")
    return LeaderboardView(run, rows, page.total, page.offset, sort, order, pareto)


def comparison_plot(storage: BaseStorage, run_id: int, laws: list[tuple[str, list[str], dict]],
                    group: str | None = None) -> plots.PlotSpec:
    """Both laws' curves over the run's data, per group: ``laws`` is (name, lines, constants) each."""
    run = storage.get_run(run_id)
    plan = RunSpec.model_validate(run.spec).plan()
    problem = plan.problem
    rows = _rows_by_split(storage, run, plan)
    axis, target = (problem.axis or problem.inputs)[0], problem.targets[0]
    merged: plots.PlotSpec | None = None
    for name, lines, constants in laws:
        law = parse_law(tuple(lines), problem.inputs, problem.targets)
        groups = [group] if group in constants else sorted(constants)[:plots.MAX_GROUPS]
        data, _ = plots.law_plots(law, constants, problem, rows, axis, target, groups)
        curves = [plots.Series(s.label.replace("law", name), s.x, s.y, s.style, key=name) for s in data.series
                  if s.style == "line"]
        if merged is None:
            merged = data
            merged.title = f"{target} against {axis}: the laws compared"
            merged.series = [s for s in data.series if s.style != "line"]
        merged.series.extend(curves)
    assert merged is not None
    return merged
