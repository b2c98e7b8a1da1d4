"""Comparisons with a posted law as queued work: the API checks and queues, a worker fits.

Fitting two laws on every fold of a run holds a core for seconds; a request must not.  The API
refuses at once what cannot work (a law that does not parse, one over the run's constant cap, a run
too large to compare) and queues the rest; workers claim queued comparisons before runs and between
a run's generations, so one is answered within a generation even while a long run is going.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from agent.errors import SldError
from agent.storage import BaseStorage, ComparisonRecord
from app.services.compare import comparison_inputs, run_comparison
from app.services.compare_budget import check_posted_law, comparison_options
from app.worker_faults import DATABASE_UNAVAILABLE

log = logging.getLogger("sld.worker")


def queue_comparison(storage: BaseStorage, settings, run_id: int, law: Mapping[str, Any]) -> ComparisonRecord:
    """Check the posted law against the run (SldError names the problem), then queue it."""
    inputs = comparison_inputs(storage, run_id)
    other = {"name": law["name"], "lines": list(law["lines"]), "max_constants": inputs["problem"].max_constants}
    check_posted_law(other, inputs["problem"])
    comparison_options(inputs, settings)  # a run too large to compare is refused now, not by the worker
    return storage.create_comparison(run_id, other)


def serve_comparisons(storage: BaseStorage, settings, worker_id: str, limit: int | None = None) -> int:
    """Fit queued comparisons, oldest first (at most ``limit``); how many were answered."""
    served = 0
    while limit is None or served < limit:
        job = storage.claim_comparison(worker_id, stale_after=settings.stale_after)
        if job is None:
            return served
        execute_comparison(storage, settings, worker_id, job)
        served += 1
    return served


def execute_comparison(storage: BaseStorage, settings, worker_id: str, job: ComparisonRecord) -> None:
    try:
        inputs = comparison_inputs(storage, job.run_id)
        result = run_comparison(inputs, job.law, comparison_options(inputs, settings))
    except SldError as exc:  # a law that cannot be fitted: the user's answer, not a fault
        storage.finish_comparison(job.id, worker_id, error=str(exc))
    except DATABASE_UNAVAILABLE:
        raise  # the worker waits and retries; the comparison is claimed again once stale
    except Exception:
        log.exception("comparison %s of run %s failed", job.id, job.run_id)
        storage.finish_comparison(job.id, worker_id, error="the comparison failed inside sld (see the worker's log)")
    else:
        storage.finish_comparison(job.id, worker_id, result=result)
        log.info("comparison %s of run %s done", job.id, job.run_id)
