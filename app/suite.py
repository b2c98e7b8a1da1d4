"""``sld bench --suite synthetic``: the search on problems whose truth is known, against textbook forms.

Each problem is searched as ``sld discover --csv`` searches a user's table with the default
options (one ``agent.plan.DiscoveryRequest``, planned by ``plan_discovery`` as the CLI plans) but a quarter of the work budget, the refitted
law is scored once on the test rows, and a few generic textbook forms are fitted the same way
(``fit_law`` with the default ``FitOptions()``, as the final law is refitted) on all training
rows and scored on the same test rows.  The best textbook form is picked on test, an oracle on
purpose: the law "wins" when its test NMSE is at most 1.1x the oracle's.
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import replace
from typing import Iterable

import numpy as np

from agent.errors import SldError
from agent.expressions import parse_law
from agent.fitting import FitOptions, fit_law, predict
from agent.problem import axis_values, make_table
from agent.scoring import score
from agent.plan import DiscoveryRequest, plan_discovery
from agent.search import FinalLaw
from tasks.synthetic import SyntheticProblem
from tasks.synthetic.common import scaled

WIN_RATIO = 1.1       # the law wins when its test NMSE is at most this times the best textbook form's
DECADE_SPAN = 10.0    # an input enters the textbook forms as a power law when it spans a decade


SUITE_WORK_SHARE = 0.25  # of the default work budget: 55 problems at full effort take ~45 min on 2 cores


def search_request(problem: SyntheticProblem, seed: int = 0, budget: int | None = None, work: float | None = None,
                   time_limit: float | None = None, workers: int = 2, loss: str = "auto") -> DiscoveryRequest:
    """What ``sld discover --csv`` asks for with the problem's columns, axis and cap and otherwise the
    default options, at a quarter of the default work budget unless ``work`` says otherwise (so the
    suite runs in under 15 minutes on 2 cores; pass ``--work 400000`` for the full default effort).
    None keeps a default, 0 = no limit."""
    base = DiscoveryRequest.for_problem(problem.problem)
    return replace(base, seed=seed, workers=workers, budget=budget or base.budget, loss=loss,
                   work_budget=base.work_budget * SUITE_WORK_SHARE if work is None else (work or None),
                   time_limit=base.time_limit if time_limit is None else (time_limit or None))


def textbook_forms(problem: SyntheticProblem) -> dict[str, tuple[str, ...]]:
    """Generic forms over the problem's inputs, and the truth's own form when it has one.

    Inputs that are positive and span a decade on the training rows enter as power laws of the
    input over a round reference: ``power_<x>`` (E + A*x^-a, one per such input), ``additive``
    (E + sum A_i*x_i^-a_i) and ``multiplicative`` (E + A*prod x_i^-a_i) over all of them.  With no
    such input (mixtures) a linear form stands in.  Several targets get one line each.
    """
    p = problem.problem
    spans = [x for x in p.inputs if _spans_decades(problem.train[x].to_numpy(dtype=float))]
    terms = {x: scaled(x, _reference(problem.train[x].to_numpy(dtype=float))) for x in spans}
    shapes: dict[str, object] = {f"power_{x}": (lambda k, x=x: f"E{k} + A{k}*{terms[x]}**(-a{k})") for x in spans}
    if len(spans) > 1:
        shapes["additive"] = lambda k: f"E{k} + " + " + ".join(
            f"A{i}{k}*{terms[x]}**(-a{i}{k})" for i, x in enumerate(spans))
        shapes["multiplicative"] = lambda k: f"E{k} + A{k}*" + "*".join(
            f"{terms[x]}**(-a{i}{k})" for i, x in enumerate(spans))
    if not spans:
        shapes["linear"] = lambda k: f"E{k} + " + " + ".join(f"b{i}{k}*{x}" for i, x in enumerate(p.inputs))
    forms = {name: tuple(f"{t} = {build(_suffix(j, len(p.targets)))}" for j, t in enumerate(p.targets))
             for name, build in shapes.items()}
    if problem.truth:
        forms["truth"] = tuple(problem.truth)
    return forms


def score_textbooks(problem: SyntheticProblem, seed: int = 0, loss: str = "auto") -> dict[str, dict]:
    """Each textbook form fitted on all training rows (default FitOptions, with the search's loss) and
    scored on test."""
    p = problem.problem
    train, test = make_table(problem.train, p), make_table(problem.test, p)
    out = {}
    for name, lines in textbook_forms(problem).items():
        law = parse_law(lines, p.inputs, p.targets)
        try:
            fitted = fit_law(law, train, seed=seed, options=FitOptions(loss=loss))
        except SldError as exc:
            out[name] = {"r2": None, "nmse": math.inf, "error": str(exc)}
            continue
        scores = score(test.y, predict(law, test, fitted.constants, test.groups))
        out[name] = {"r2": scores.r2, "nmse": scores.nmse, "n_constants": law.n_constants}
    return out


def error_at_largest(problem: SyntheticProblem, predicted: np.ndarray) -> float | None:
    """Mean relative error |pred - y| / |y| at the test rows furthest along the axis.

    Rows tied at the largest axis value (a grid's other inputs) are averaged, as are targets.
    Without an axis: the test row with the largest (first) target.
    """
    y = problem.test[list(problem.problem.targets)].to_numpy(dtype=float)
    if problem.problem.axis:
        position = axis_values(problem.test, problem.problem)
        position = position if len(problem.problem.axis) > 1 else np.log(position)
        rows = position >= position.max() - 1e-9
    else:
        rows = np.arange(len(y)) == int(np.argmax(y[:, 0]))
    with np.errstate(all="ignore"):
        value = float(np.mean(np.abs(predicted[rows] - y[rows]) / np.abs(y[rows])))
    return value if math.isfinite(value) else None


def run_problem(problem: SyntheticProblem, *, seed: int = 0, budget: int | None = None, work: float | None = None,
                time_limit: float | None = None, workers: int = 2, loss: str = "auto") -> dict:
    """Search one problem as ``sld discover --csv`` would, score it on test beside the textbook forms."""
    from app.discovery import discover

    start = time.perf_counter()
    row = {"problem": problem.name, "family": problem.family, "r2": None, "nmse": math.inf,
           "err_at_largest": None, "n_constants": None, "complexity": None, "law": None, "error": None}
    try:
        plan = plan_discovery(problem.train, search_request(problem, seed, budget, work, time_limit, workers, loss))
        result = discover(plan.problem, problem.train, config=plan.config, test=problem.test)
    except SldError as exc:  # a problem the search cannot handle loses; the suite goes on
        row["error"] = str(exc)
    else:
        final = FinalLaw.from_dict(result.final)
        predicted = final.predict(problem.test, group=problem.problem.group)
        row.update(r2=result.test["r2"], nmse=result.test["nmse"], err_at_largest=error_at_largest(problem, predicted),
                   n_constants=result.final["n_constants"], complexity=result.final["complexity"],
                   law=result.final["law"], constants=result.final["constants"],
                   alternatives=result.final.get("alternatives", []), candidates=result.search["candidates"],
                   stop_reason=result.search["stop_reason"], search_seconds=result.search["seconds"])
    textbooks = score_textbooks(problem, seed, loss)
    best = min(textbooks, key=lambda k: textbooks[k]["nmse"])
    ratio = _ratio(row["nmse"], textbooks[best]["nmse"])
    row.update(best_textbook=best, best_textbook_nmse=textbooks[best]["nmse"], ratio=ratio,
               win=ratio is not None and ratio <= WIN_RATIO,
               textbooks={k: {"r2": v["r2"], "nmse": v["nmse"]} for k, v in textbooks.items()},
               seconds=round(time.perf_counter() - start, 3))
    return row


def summarize_suite(rows: Iterable[dict]) -> dict:
    """Wins, median test R² and median error at the largest test point, per family and overall."""
    rows = list(rows)
    families = {}
    for family in dict.fromkeys(r["family"] for r in rows):
        families[family] = _aggregate([r for r in rows if r["family"] == family])
    overall = _aggregate(rows)
    done = [r for r in rows if r["n_constants"] is not None]
    overall["median_n_constants"] = statistics.median(r["n_constants"] for r in done) if done else None
    overall["median_complexity"] = statistics.median(r["complexity"] for r in done) if done else None
    overall["seconds"] = round(sum(r["seconds"] for r in rows), 3)
    return _json_safe({"problems": rows, "families": families, "overall": overall})


def _aggregate(rows: list[dict]) -> dict:
    wins = sum(bool(r["win"]) for r in rows)
    r2 = [r["r2"] if r["r2"] is not None else -math.inf for r in rows]
    errors = [r["err_at_largest"] for r in rows if r["err_at_largest"] is not None]
    return {"problems": len(rows), "wins": wins, "win_fraction": wins / len(rows) if rows else None,
            "median_r2": float(np.median(r2)) if r2 else None,
            "median_err_at_largest": float(np.median(errors)) if errors else None}


def _ratio(law_nmse: float, best_nmse: float) -> float:
    if not math.isfinite(law_nmse):
        return math.inf
    if not math.isfinite(best_nmse):  # no textbook form could be fitted at all
        return 0.0
    return law_nmse / best_nmse if best_nmse > 0 else math.inf


def _json_safe(value):
    """Non-finite floats become None, so the summary is strict JSON."""
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


def _spans_decades(x: np.ndarray) -> bool:
    return bool(np.all(x > 0) and x.max() / x.min() >= DECADE_SPAN)


def _reference(x: np.ndarray) -> float:
    """A round reference at the geometric mean (2 significant digits), as the search's library uses."""
    return float(f"{float(np.exp(np.mean(np.log(x)))):.2g}")


def _suffix(j: int, n_targets: int) -> str:
    """Constant-name suffix per target; the underscore keeps constants apart from inputs named like E."""
    return f"_{j}" if n_targets > 1 else "_"
