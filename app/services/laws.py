"""Reading laws out of runs, and predicting with them (evaluation only: cheap enough for a request)."""
from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from agent.errors import DataError, FitError, LawError
from agent.expressions import Law, parse_law
from agent.fitting import predict as predict_rows
from agent.problem import DEFAULT_GROUP, Problem, Table, make_table
from agent.storage import BaseStorage, NotFoundError, RunRecord
from app.schemas.laws import BestLawPublic, LineageStep, PredictCreate, PredictPublic, finite_json
from app.services.non_finite import explain_non_finite
from app.services.uncertainty import constant_report, stored_forms, stored_replicates

MAX_LINEAGE = 50


@functools.lru_cache(maxsize=512)
def _rendered(lines: tuple[str, ...], inputs: tuple[str, ...], targets: tuple[str, ...]):
    """(law, LaTeX, sympy text): immutable, and sympy takes milliseconds, so reads share the work."""
    law = parse_law(lines, inputs, targets)
    return law, law.latex(), {t: str(e) for t, e in law.sympy().items()}


def _spec_law(lines, spec) -> Law:
    return _rendered(tuple(lines), tuple(spec["inputs"]), tuple(spec["targets"]))[0]


def best_law(storage: BaseStorage, run: RunRecord) -> BestLawPublic:
    final = run.final
    if final and final.get("law"):
        if "lineage" in final:  # stored by the worker: no further query
            lineage = [LineageStep(**step) for step in final["lineage"]]
            proposer, score = final.get("proposer"), final.get("score")
        else:
            cid = final.get("candidate_id")
            found = storage.get_candidates(run.id, [cid]) if cid is not None else []
            source = found[0] if found else None
            lineage = _stored_lineage(storage, run.id, source)
            proposer, score = (source.proposer, source.score) if source else (None, run.best_score)
        return _public(run, list(final["law"]), final["constants"], final=True, candidate_id=final.get("candidate_id"),
                       score=score, validation=final.get("validation", {}), train=final.get("train", {}),
                       test=final.get("test"), proposer=proposer, lineage=lineage,
                       selection=final.get("selection") or None, intervals=constant_report(final))
    best = storage.best_candidate(run.id)
    if best is None:
        n = run.progress.get("candidates", 0)
        raise NotFoundError(f"run {run.id} has no fitted law yet (state {run.state.value}, {n} candidate(s) evaluated)")
    return _public(run, list(best.lines), best.constants, final=False, candidate_id=best.id, score=best.score,
                   validation=finite_json(best.validation), train={}, test=None, proposer=best.proposer,
                   lineage=_stored_lineage(storage, run.id, best))


def _public(run: RunRecord, lines, constants, **kw) -> BestLawPublic:
    spec = run.spec
    law, latex, sympy_text = _rendered(tuple(lines), tuple(spec["inputs"]), tuple(spec["targets"]))
    score = kw.pop("score")
    return BestLawPublic(
        run_id=run.id, dataset_id=run.dataset_id, run_state=run.state.value, lines=list(law.lines),
        text="\n".join(law.lines), latex=latex, sympy=sympy_text,
        inputs=list(law.inputs), targets=list(law.targets), group=spec.get("group"), constants=constants,
        n_constants=law.n_constants, complexity=law.complexity,
        score=None if score is None or not np.isfinite(score) else float(score), **kw)


def _stored_lineage(storage: BaseStorage, run_id: int, cand) -> list[LineageStep]:
    def lookup(candidate_id):
        found = storage.get_candidates(run_id, [candidate_id])
        return found[0] if found else None

    return lineage_of(cand, lookup)


def lineage_of(cand, lookup) -> list[LineageStep]:
    """Ancestors through first parents, nearest first; ``lookup(id)`` gives a candidate or None."""
    steps, seen = [], set()
    while cand is not None and cand.parent_ids and len(steps) < MAX_LINEAGE:
        parent_id = cand.parent_ids[0]
        if parent_id in seen:
            break
        seen.add(parent_id)
        cand = lookup(parent_id)
        if cand is None:
            break
        steps.append(LineageStep(id=cand.id, generation=cand.generation, proposer=cand.proposer,
                                 lines=list(cand.lines), score=cand.score if np.isfinite(cand.score) else None))
    return steps


# ---------------------------------------------------------------- predictions

def predict(storage: BaseStorage, req: PredictCreate) -> PredictPublic:
    if req.run_id is not None:
        if req.lines is not None or req.constants is not None:
            raise DataError("give either run_id (and candidate_id) or a law's lines and constants, not both")
        law, constants, group, source = _run_law(storage, req.run_id, req.candidate_id)
    else:
        if req.candidate_id is not None:
            raise DataError("candidate_id needs the run_id it belongs to")
        if req.lines is None or req.constants is None:
            raise DataError("give run_id, or a law's 'lines' and 'constants'")
        law, constants, group, source = _posted_law(req)
    values = predict_points(law, constants, req.points, group)
    rows = [{t: float(v) for t, v in zip(law.targets, row)} for row in values]
    interval = None
    if req.interval is not None:
        if req.run_id is None:
            raise DataError("intervals need a run's law: its training runs say how sure the constants are")
        if len(req.points) > MAX_INTERVAL_POINTS:
            raise DataError(f"intervals are computed for at most {MAX_INTERVAL_POINTS} points per request, "
                            f"not {len(req.points)}")
        lo, hi, method, n_draws, n_forms = _run_interval(storage, req, law, constants, group)
        for row, l_row, h_row in zip(rows, lo, hi):
            for t, l, h in zip(law.targets, l_row, h_row):
                row[f"{t}_lo"], row[f"{t}_hi"] = float(l), float(h)
        interval = {"level": req.interval, "kind": req.kind, "method": method, "draws": n_draws, "forms": n_forms}
    return PredictPublic(lines=list(law.lines), targets=list(law.targets), predictions=rows, source=source,
                         interval=interval)


MAX_INTERVAL_POINTS = 2_000
INTERVAL_DRAWS = 200  # draws from the linearised covariance: 2,000 points x 200 draws stays well under a second


def _run_interval(storage: BaseStorage, req: PredictCreate, law: Law, constants, group):
    """(lo, hi, method, draws, forms) at the points: from the draws the worker stored with the run's
    final law (the delta method's, or the bootstrap's where the run names its run column), else from
    the delta method on the run's training rows now (cheap enough for a request: one Jacobian per
    group and a few hundred evaluations at the points, no refit)."""
    from agent.uncertainty import interval, laplace
    from app.services.compare import comparison_inputs

    record = storage.get_run(req.run_id)
    draws = stored_replicates(record.final) if req.candidate_id is None else None
    method = ((record.final or {}).get("uncertainty") or {}).get("method", "delta") if draws else "delta"
    seed = int((record.spec.get("config") or {}).get("seed", 0))
    if draws is None:  # a candidate, or a run from before replicates were stored: the delta method now
        run = comparison_inputs(storage, req.run_id)  # the run's problem and training rows, as compare reads them
        table = make_table(run["train"], run["problem"])
        try:
            draws = laplace(law, table, constants, n=INTERVAL_DRAWS, seed=seed, loss=run["loss"])
        except FitError as exc:
            raise DataError(f"no interval for this law: {exc}") from None
    df = pd.DataFrame(req.points)
    points = make_table(df, Problem(inputs=law.inputs, targets=law.targets,
                                    group=group if group in df.columns else None), require_targets=False)
    if group not in df.columns:
        points = Table(points.X, points.y, np.full(len(points), next(iter(constants)), dtype=object))
    forms = stored_forms(record.final, law.inputs, law.targets) if req.candidate_id is None else []
    lo, hi = interval(law, points, draws, level=req.interval, kind=req.kind, seed=seed, others=forms)
    return lo, hi, method, len(draws.replicates), 1 + len(forms)


def _run_law(storage: BaseStorage, run_id: int, candidate_id: int | None):
    run = storage.get_run(run_id)
    spec = run.spec
    if candidate_id is not None:
        cand = storage.get_candidate(run_id, candidate_id)
        if not cand.ok:
            raise DataError(f"candidate {candidate_id} of run {run_id} was rejected ({cand.reason}); "
                            "it has no constants")
        lines, constants, source = cand.lines, cand.constants, f"run {run_id}, candidate {candidate_id} (fit split)"
    else:
        best = best_law(storage, run)
        lines, constants = best.lines, best.constants
        source = (f"run {run_id}, final law (candidate {best.candidate_id}, refitted on all training rows)"
                  if best.final else f"run {run_id}, best candidate so far ({best.candidate_id})")
    return _spec_law(lines, spec), constants, spec.get("group"), source


def _posted_law(req: PredictCreate):
    lines = [req.lines] if isinstance(req.lines, str) else list(req.lines)
    keys = list(dict.fromkeys(k for p in req.points for k in p))
    inputs = req.inputs or [k for k in keys if k != req.group]
    targets = req.targets or [_last_target(lines)]
    law = parse_law(lines, [i for i in inputs if i not in targets], targets)
    constants = normalize_constants(req.constants, law)
    return law, constants, req.group, "posted law"


def _last_target(lines: Sequence[str]) -> str:
    text = "\n".join(lines).strip().splitlines()
    last = text[-1] if text else ""
    if "=" not in last:
        raise LawError("each law line must look like 'name = expression'")
    return last.split("=", 1)[0].strip()


def normalize_constants(constants: Mapping[str, Any], law: Law) -> dict[str, dict[str, float]]:
    """``{name: value}`` (one set) or ``{group: {name: value}}`` (per group) -> per group, checked."""
    if all(isinstance(v, Mapping) for v in constants.values()) and constants:
        per_group = {str(g): dict(v) for g, v in constants.items()}
    else:
        per_group = {DEFAULT_GROUP: dict(constants)}
    for group, values in per_group.items():
        missing = [c for c in law.constants if c not in values]
        if missing:
            where = "" if group == DEFAULT_GROUP else f" for group {group!r}"
            raise LawError(f"no value{where} for constant(s) {', '.join(missing)} (the law's constants: "
                           f"{', '.join(law.constants) or 'none'})")
        for name, v in values.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
                raise DataError(f"constant {name!r} must be a finite number, not {v!r}")
        per_group[group] = {c: float(values[c]) for c in law.constants}
    return per_group


def predict_points(law: Law, constants: dict[str, dict[str, float]], points: list[dict[str, Any]],
                   group: str | None) -> np.ndarray:
    df = pd.DataFrame(points)
    problem = Problem(inputs=law.inputs, targets=law.targets, group=group if group in df.columns else None)
    if group and group not in df.columns and len(constants) > 1:
        raise DataError(f"each point needs its group in {group!r} (groups: {', '.join(list(constants)[:10])})")
    table = make_table(df, problem, require_targets=False)
    groups = table.groups
    if problem.group is None:
        if len(constants) != 1:
            raise DataError(f"the law has constants for {len(constants)} groups; "
                            f"give each point its group ({group or 'group'} key)")
        groups = np.full(len(table), next(iter(constants)), dtype=object)
    try:
        values = predict_rows(law, table, constants, groups)
    except Exception as exc:  # FitError for unknown groups, names them
        raise DataError(str(exc)) from None
    bad = np.flatnonzero(~np.all(np.isfinite(values), axis=1))
    if len(bad):
        i = int(bad[0])
        raise LawError(f"the prediction at point {i + 1} is not finite: "
                       f"{explain_non_finite(law, table, constants, groups, i)}")
    return values
