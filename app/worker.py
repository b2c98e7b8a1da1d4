"""The worker: claims queued runs and executes them with the search engine.

Each generation's candidates and the search state after it are saved in one
transaction, so a worker killed at any moment loses and duplicates nothing:
another worker re-claims the run once its heartbeat is stale and resumes from
the last checkpoint, producing exactly the candidates an uninterrupted run
would.  A heartbeat thread keeps the claim alive during long generations and
notices cancellation; cancellation and shutdown take effect between generations.
A cancel that arrives during the last generation, or while the final law is being
refitted, still ends the run ``cancelled`` (``finish_run`` checks it in its transaction).
A lost database makes a worker wait and retry (``worker_faults.py``), never exit.

``python -m app.worker`` runs one worker (``sld worker`` starts several).
"""
from __future__ import annotations

import logging
import os
import random
import signal
import socket
import threading
import traceback
import uuid
from typing import Any

from agent.errors import SldError
from agent.search import Search
from agent.search.checkpoint import needs_candidates
from agent.search.failures import empty_search_message
from agent.storage import BaseStorage, Checkpoint, RunLost, RunRecord, RunState
from app.core.config import Settings, get_settings
from app.schemas.runspec import RunSpec
from app.services.compare_jobs import serve_comparisons
from app.services.run_reports import best_facts, build_proposers, final_reports, progress_of
from app.worker_faults import DATABASE_UNAVAILABLE, Backoff, die_with_parent, one_line

log = logging.getLogger("sld.worker")


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Worker:
    def __init__(self, storage: BaseStorage, settings: Settings, *, worker_id: str | None = None,
                 stop: threading.Event | None = None):
        self.storage, self.settings = storage, settings
        self.worker_id = worker_id or new_worker_id()
        self.stop = stop or threading.Event()
        # seeded by the worker's id: reproducible for one worker, different across workers
        self.backoff = Backoff(settings.poll_interval, settings.db_retry_max, random.Random(self.worker_id))

    def run_forever(self, *, max_runs: int | None = None, exit_when_idle: bool = False) -> int:
        """Claim and execute runs until stopped; returns how many runs it executed."""
        done = 0
        while not self.stop.is_set() and (max_runs is None or done < max_runs):
            try:
                run = self.run_once()
            except DATABASE_UNAVAILABLE as exc:
                delay = self.backoff.next()
                log.warning("worker %s: database unavailable (%s); trying again in %.1f s",
                            self.worker_id, one_line(exc), delay)
                self.stop.wait(delay)
                continue
            self.backoff.reset()
            if run is None:
                if exit_when_idle:
                    break
                self.stop.wait(self.settings.poll_interval)
            else:
                done += 1
        return done

    def run_once(self) -> RunRecord | None:
        """Answer the queued comparisons, then claim and execute one run (None when none is queued)."""
        serve_comparisons(self.storage, self.settings, self.worker_id)
        run = self.storage.claim_run(self.worker_id, stale_after=self.settings.stale_after)
        if run is None:
            return None
        log.info("worker %s claimed run %s (attempt %s)", self.worker_id, run.id, run.attempts)
        _RunExecution(self, run).execute()
        return run


class _RunExecution:
    def __init__(self, worker: Worker, run: RunRecord):
        self.worker, self.run = worker, run
        self.storage, self.wid = worker.storage, worker.worker_id
        self.cancelled, self.lost, self.beat_stop = threading.Event(), threading.Event(), threading.Event()

    def execute(self) -> None:
        beat = threading.Thread(target=self._heartbeat, name=f"heartbeat-{self.run.id}", daemon=True)
        beat.start()
        search = None
        try:
            search = self._open_search()
            self._loop(search)
        except RunLost as exc:
            log.warning("run %s: %s", self.run.id, exc)
        except DATABASE_UNAVAILABLE:
            self._leave()
            raise  # the worker waits before it tries the database again
        except Exception as exc:  # a failed run is recorded, the worker carries on
            self._fail(exc)
        finally:
            self.beat_stop.set()
            beat.join()
            if search is not None:
                search.close()

    # ------------------------------------------------------------ steps

    def _open_search(self) -> Search:
        spec = RunSpec.model_validate(self.run.spec)
        # the stored plan, whatever this worker's defaults: only the process count is the worker's
        settings = self.worker.settings
        plan = spec.plan().with_workers(settings.eval_workers, settings.dask_scheduler)
        self.train, self.test = plan.split(self.storage.load_rows(self.run.dataset_id))
        proposers = build_proposers([p.model_dump() for p in spec.proposers], self.worker.settings.llm_endpoints)
        checkpoint = self.storage.load_checkpoint(self.run.id)
        if checkpoint is None:
            return Search(plan.problem, self.train, plan.config, proposers)
        log.info("run %s resumes from generation %s", self.run.id, checkpoint.generation)
        n = needs_candidates(checkpoint.state)  # the checkpoint names them; the candidates table holds them
        stored = None if n is None else self.storage.get_candidates(self.run.id, range(n))
        return Search.from_state(plan.problem, self.train, checkpoint.state, plan.config, proposers, stored)

    def _loop(self, search: Search) -> None:
        while not search.done:
            if self.lost.is_set():
                raise RunLost(f"run {self.run.id} was taken over by another worker")
            if self.cancelled.is_set():
                return self._finish(search, RunState.CANCELLED)
            if self.worker.stop.is_set():
                self.storage.release_run(self.run.id, self.wid)
                log.info("run %s released for another worker (shutdown)", self.run.id)
                return None
            new = search.step()
            best = search.best
            saved = self.storage.save_generation(
                self.run.id, self.wid, candidates=new,
                checkpoint=Checkpoint(self.run.id, search.generation, search.state_dict()),
                progress=progress_of(search), best_score=None if best is None else best.score,
                events=search.drain_events())
            if saved.cancel_requested:
                self.cancelled.set()
            # comparisons are short and bounded: one is answered between generations, not after the run
            # (a flood of them delays the run by one comparison a generation, never stalls it)
            serve_comparisons(self.storage, self.worker.settings, self.wid, limit=1)
        # a cancel seen while the last generation ran still counts (and skips the final refit)
        self._finish(search, RunState.CANCELLED if self.cancelled.is_set() else RunState.DONE)

    def _finish(self, search: Search, state: RunState) -> None:
        final, error = None, None
        if search.best is not None:
            rescore = state is not RunState.CANCELLED
            finalists = search.refine() if rescore else []
            if finalists:  # stored like a generation, so the reported law's record and lineage exist
                self.storage.save_generation(
                    self.run.id, self.wid, candidates=finalists,
                    checkpoint=Checkpoint(self.run.id, search.generation, search.state_dict()),
                    progress=progress_of(search), best_score=search.best.score, events=search.drain_events())
            final = search.finalize(rescore=rescore).to_dict()
            final.update(self._reports(search, final))
            final.update(best_facts(search))
        elif state is RunState.DONE:
            # the same account of what failed where as `sld discover` gives
            state, error = RunState.FAILED, empty_search_message(search.candidates, search.stop_reason,
                                                                 search.problem.max_constants)
        best = search.best
        self.storage.finish_run(self.run.id, self.wid, state, final=final, error=error,
                                progress=progress_of(search), best_score=None if best is None else best.score)
        log.info("run %s %s", self.run.id, state.value)

    def _reports(self, search: Search, final: dict[str, Any]) -> dict[str, Any]:
        task = self.storage.find_task_spec(self.run.dataset_id)
        return final_reports(search, final, self.train, self.test, task.human_law if task else None)

    def _leave(self) -> None:
        """The database went away mid-run: not the run's fault, so it is not failed.  Hand it back if
        the database answers again at once; otherwise it is re-claimed once its heartbeat is stale,
        and resumes from its last checkpoint."""
        log.warning("run %s: database unavailable; the run resumes from its last checkpoint", self.run.id)
        try:
            self.storage.release_run(self.run.id, self.wid)
        except Exception:  # noqa: BLE001 - still down, or already re-claimed: staleness takes care of it
            pass

    def _fail(self, exc: Exception) -> None:
        if isinstance(exc, SldError):
            message = str(exc)
        else:
            log.error("run %s failed:\n%s", self.run.id, traceback.format_exc())
            message = f"internal error: {type(exc).__name__}: {exc}"
        try:
            self.storage.finish_run(self.run.id, self.wid, RunState.FAILED, error=message)
        except RunLost:
            pass

    def _heartbeat(self) -> None:
        interval = self.worker.settings.heartbeat_interval
        while not self.beat_stop.wait(interval):
            try:
                record = self.storage.heartbeat(self.run.id, self.wid)
            except RunLost:
                self.lost.set()
                return
            except Exception as exc:  # a database hiccup: try again next beat
                log.warning("heartbeat of run %s failed: %s", self.run.id, exc)
                continue
            if record.cancel_requested:
                self.cancelled.set()


def main(max_runs: int | None = None, exit_when_idle: bool = False, parent_pid: int | None = None) -> int:
    """One worker process until SIGTERM/SIGINT (the current run is released, not lost), or until
    ``parent_pid`` is gone when it is given."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    settings = get_settings()
    stop = threading.Event()

    def _stop(signum, _frame):
        log.info("signal %s: finishing the current generation, then stopping", signum)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    if parent_pid is not None:
        die_with_parent(parent_pid, stop)
    storage = _open_storage(settings, stop)
    if storage is None:
        return 0
    worker = Worker(storage, settings, stop=stop)
    log.info("worker %s polling %s", worker.worker_id, storage.info()["backend"])
    try:
        return worker.run_forever(max_runs=max_runs, exit_when_idle=exit_when_idle)
    finally:
        storage.close()


def _open_storage(settings: Settings, stop: threading.Event) -> BaseStorage | None:
    """The storage once the database answers (None if stopped first)."""
    from app.main import open_storage

    backoff = Backoff(settings.poll_interval, settings.db_retry_max, random.Random(os.getpid()))
    while not stop.is_set():
        try:
            return open_storage(settings)
        except DATABASE_UNAVAILABLE as exc:
            delay = backoff.next()
            log.warning("database unavailable at start (%s); trying again in %.1f s", one_line(exc), delay)
            stop.wait(delay)
    return None


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="one sld worker process")
    parser.add_argument("--max-runs", type=int, default=None)
    parser.add_argument("--exit-when-idle", action="store_true")
    parser.add_argument("--parent-pid", type=int, default=None, help="stop when this process is gone")
    args = parser.parse_args()
    main(max_runs=args.max_runs, exit_when_idle=args.exit_when_idle, parent_pid=args.parent_pid)
