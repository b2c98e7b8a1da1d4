"""A compact, JSON-able picture of the data for a prompt: ranges, trends, a few rows.

The engine builds it once per run with :func:`summarize_data` and hands it to
proposers as ``ProposalContext.summary``; :func:`render_summary` turns it into
the few lines of text an LLM reads.  It never names a task: only columns.
"""
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd

from agent.problem import Problem, Table, axis_values, make_table
from agent.search.summary import input_trend

ROWS_PER_GROUP = 3
GROUPS_SHOWN = 4
GROUP_NAMES_LISTED = 6
NAME_CHARS = 40


def summarize_data(problem: Problem, table: Table | pd.DataFrame, *, rows_per_group: int = ROWS_PER_GROUP,
                   groups_shown: int = GROUPS_SHOWN) -> dict[str, Any]:
    """Summarize the training rows of ``problem``; accepts a :class:`Table` or a DataFrame."""
    order = None
    if isinstance(table, pd.DataFrame):
        positions = axis_values(table, problem)
        table = make_table(table, problem)
        order = positions
    columns = {**table.X, **{t: table.y[:, j] for j, t in enumerate(problem.targets)}}
    group_names = table.group_names
    return {
        "n_rows": len(table),
        "inputs": {name: _describe_column(table.X[name]) for name in problem.inputs},
        "targets": {t: _describe_column(table.y[:, j]) for j, t in enumerate(problem.targets)},
        "groups": {
            "column": problem.group,
            "count": len(group_names),
            "names": [_short(g) for g in group_names[:GROUP_NAMES_LISTED]],
        },
        "axis": list(problem.axis),
        "trends": _trends(problem, table),
        "columns": [*problem.inputs, *problem.targets],
        "rows": _example_rows(problem, table, columns, order, rows_per_group, groups_shown),
    }


def render_summary(summary: dict[str, Any]) -> str:
    """Plain text for the prompt.  Also reads ``agent.search.summary.summarize``'s layout
    (``n_groups``, per-target ``trend`` numbers, ``examples`` as dicts); anything else
    is shown as compact JSON."""
    if not summary:
        return "(no data summary available)"
    known = {"n_rows", "inputs", "targets", "groups", "n_groups", "trends", "rows", "examples"}
    if not known & set(summary):
        return json.dumps(summary, sort_keys=True, default=str)[:4000]
    out = [f"{summary.get('n_rows', '?')} training rows."]
    for kind in ("inputs", "targets"):
        for name, d in (summary.get(kind) or {}).items():
            if isinstance(d, dict):
                out.append(f"- {kind[:-1]} {name}: {_range_text(d)}")
    groups = summary.get("groups") if isinstance(summary.get("groups"), dict) else {}
    count = groups.get("count", summary.get("n_groups"))
    if groups.get("column") or (isinstance(count, int) and count > 1):
        names = [str(n) for n in groups.get("names") or []]
        listed = f" ({', '.join(names)}{'' if count <= len(names) else ', ...'})" if names else ""
        column = f"group column {groups['column']}" if groups.get("column") else "groups"
        out.append(f"- {column}: {count} groups{listed}; the law's constants are fitted separately for every group")
    if summary.get("axis"):
        out.append(f"- the law must extrapolate to larger {', '.join(summary['axis'])}")
    for target, by_input in _trend_labels(summary).items():
        parts = [f"{name} {label}" for name, label in by_input.items()]
        if parts:
            out.append(f"- {target} as each input grows (within groups): {'; '.join(parts)}")
    columns, rows = _rows(summary)
    if rows:
        out.append("Example rows (" + ", ".join(columns) + "):")
        for group, values in rows.items():
            shown = "; ".join("(" + ", ".join(_num(v) for v in row) + ")" for row in values)
            out.append(f"  {group}: {shown}")
    return "\n".join(out)


def _trend_labels(summary: dict[str, Any]) -> dict[str, dict[str, str]]:
    if isinstance(summary.get("trends"), dict):
        return summary["trends"]
    labels = {}
    for target, d in (summary.get("targets") or {}).items():
        trend = d.get("trend") if isinstance(d, dict) else None
        if isinstance(trend, dict):
            labels[target] = {k: _trend_label(float(v)) for k, v in trend.items() if isinstance(v, (int, float))}
    return labels


def _rows(summary: dict[str, Any]) -> tuple[list[str], dict[str, list[list[Any]]]]:
    if isinstance(summary.get("rows"), dict):
        return list(summary.get("columns") or []), summary["rows"]
    examples = summary.get("examples")
    if not isinstance(examples, dict):
        return [], {}
    columns: list[str] = []
    for rows in examples.values():
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict):
                columns.extend(k for k in row if k not in columns)
    return columns, {_short(g): [[row.get(c) for c in columns] for row in rows if isinstance(row, dict)]
                     for g, rows in list(examples.items())[:GROUPS_SHOWN] if isinstance(rows, list)}


def _describe_column(values: np.ndarray) -> dict[str, Any]:
    lo, hi = float(np.min(values)), float(np.max(values))
    d: dict[str, Any] = {"min": _round(lo), "max": _round(hi), "median": _round(float(np.median(values))),
                         "distinct": int(len(np.unique(values)))}
    if lo > 0 and hi > 0:
        d["decades"] = _round(math.log10(hi / lo), 2)
    return d


def _range_text(d: dict[str, Any]) -> str:
    notes = []
    if d.get("median") is not None:
        notes.append(f"median {_num(d['median'])}")
    if isinstance(d.get("decades"), (int, float)) and d["decades"] >= 1.5:
        notes.append(f"spans {d['decades']:.2g} decades: consider log or power forms")
    if isinstance(d.get("min"), (int, float)) and d["min"] <= 0:
        notes.append("has values <= 0: do not take its log or a fractional power directly")
    text = f"{_num(d.get('min'))} .. {_num(d.get('max'))}"
    return f"{text} ({', '.join(notes)})" if notes else text


def _trends(problem: Problem, table: Table) -> dict[str, dict[str, str]]:
    """How each target moves with each input, read as the search's own seeds read it
    (``agent.search.summary.input_trend``: per slice where every other input is held fixed,
    within groups).  Over all rows of a grid, the data size explains little of the loss beside the
    model size (a rank correlation of about -0.4), which the prompt would call "weakly decreasing"."""
    result: dict[str, dict[str, str]] = {}
    for j, target in enumerate(problem.targets):
        labels = {}
        for name in problem.inputs:
            rho = input_trend(table, problem.inputs, name, table.y[:, j])
            labels[name] = _trend_label(rho) if rho is not None else "constant"
        result[target] = labels
    return result


def _trend_label(rho: float) -> str:
    direction = "increasing" if rho > 0 else "decreasing"
    if abs(rho) >= 0.7:
        return f"{direction} (rank corr {rho:+.2f})"
    if abs(rho) >= 0.3:
        return f"weakly {direction} (rank corr {rho:+.2f})"
    return f"no monotone trend (rank corr {rho:+.2f})"


def _example_rows(problem, table, columns, order, rows_per_group, groups_shown) -> dict[str, list[list[float]]]:
    """Rows spread along the extrapolation axis (or the first input) for a few groups."""
    if order is not None:
        position = order
    else:
        along = next((a for a in problem.axis if a in table.X), problem.inputs[0])
        position = table.X[along]
    rows: dict[str, list[list[float]]] = {}
    names = table.group_names
    picked = [names[int(i)] for i in np.linspace(0, len(names) - 1, min(groups_shown, len(names)))]
    for group in dict.fromkeys(picked):
        index = np.flatnonzero(table.groups == group)
        index = index[np.argsort(position[index], kind="stable")]
        chosen = index[np.unique(np.linspace(0, len(index) - 1, min(rows_per_group, len(index))).round().astype(int))]
        rows[_short(group)] = [[_round(float(columns[c][i])) for c in columns] for i in chosen]
    return rows


def _round(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}") if np.isfinite(x) else x


def _num(x: Any) -> str:
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def _short(name: Any) -> str:
    text = str(name)
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 3] + "..."
