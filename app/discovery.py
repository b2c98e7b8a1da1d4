"""Compose tasks and the search core into a discovery run (used by the CLI and the bench).

The search sees only the training rows.  For a bundled task the test split is
read once, after the search has finished and the law has been refitted on all
training rows, and only to report.
"""
from __future__ import annotations

import io
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from agent.errors import DataError
from agent.expressions import parse_law
from agent.fitting import FitOptions
from agent.problem import Problem, make_table
from agent.search import Search, SearchConfig, refit_law, report_on_test
from agent.search.proposers.base import Proposer

MAX_CSV_BYTES = 200 * 1024 * 1024


@dataclass
class DiscoveryResult:
    final: dict
    search: dict
    test: dict | None = None
    human: dict | None = None
    usage: dict = field(default_factory=dict)
    events: list = field(default_factory=list)

    def to_json(self) -> dict:
        out = {**self.final, "validation": self.final.get("validation", {}), "test": self.test,
               "search": self.search}
        if self.human is not None:
            out["human"] = self.human
        if self.usage:
            out["usage"] = self.usage
        return out


def require_file(path: str | Path, what: str) -> Path:
    """``path`` as a Path when it names a regular file; DataError saying which of the two it is not."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} {str(path)!r} " + ("is not a regular file" if p.exists() else "does not exist"))
    return p


def read_csv(path: str | Path) -> pd.DataFrame:
    """A user CSV with errors that name the problem."""
    p = require_file(path, "CSV file")
    if p.stat().st_size > MAX_CSV_BYTES:
        raise DataError(f"CSV file is {p.stat().st_size} bytes, over the limit of {MAX_CSV_BYTES}")
    try:
        df = pd.read_csv(io.BytesIO(p.read_bytes()))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataError(f"cannot parse {p.name} as CSV: {str(exc).splitlines()[0]}") from None
    if df.empty:
        raise DataError(f"{p.name} has no data rows")
    return df


def discover(problem: Problem, train: pd.DataFrame, *, config: SearchConfig,
             proposers: list[tuple[Proposer, float]] | None = None,
             test: pd.DataFrame | None = None, human_lines: tuple[str, ...] | None = None,
             on_generation: Callable[[Search], None] | None = None) -> DiscoveryResult:
    """Search, refit the best law on all training rows, then (optionally) report on test once."""
    t0 = time.perf_counter()
    search = Search(problem, train, config, proposers)
    events: list = []
    try:
        while not search.done:
            search.step()
            events.extend(search.drain_events())
            if on_generation:
                on_generation(search)
        final = search.finalize()
    finally:
        search.close()
    usage = {p.name: p.usage() for p, _ in search.proposers if p.usage()}
    summary = {**search.progress, "seconds": round(time.perf_counter() - t0, 3),
               "rejected": sum(1 for c in search.candidates if not c.ok)}
    out = DiscoveryResult(final=final.to_dict(), search=summary, usage=usage, events=events)
    if test is not None:
        out.test = report_on_test(final, problem, test)
        if human_lines:
            out.human = human_refit(problem, human_lines, train, test, seed=config.seed, options=config.final_fit)
    return out


def human_refit(problem: Problem, lines, train: pd.DataFrame, test: pd.DataFrame, seed: int = 0,
                options: FitOptions | None = None) -> dict:
    """The human law's form fitted on train with our backend (and the run's loss), scored on test
    (the comparison row)."""
    law = parse_law(lines, problem.inputs, problem.targets)
    refit = refit_law(law, make_table(train, problem), make_table(test, problem), seed=seed, options=options)
    return {"law": list(law.lines), **refit.test.to_dict()}
