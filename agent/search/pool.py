"""Candidate evaluation inline, on a local process pool, or on a Dask cluster.

The context (the run's rows, folds and probes) is sent once per worker: as the pool's initializer
locally, scattered to every Dask worker otherwise.  Each proposal carries its own seed and results
come back in the order asked, so the same seed gives the same candidates on any of the three.
"""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from threadpoolctl import threadpool_limits

from agent.search.evaluate import EvaluationContext, evaluate_lines

_CTX: EvaluationContext | None = None


def _init(ctx: EvaluationContext) -> None:
    """A pool worker's start: the context, and one BLAS thread.

    The pool is the parallelism.  Each spawned worker would otherwise run a BLAS thread pool as wide
    as the machine, so the workers oversubscribe the cores, and OpenBLAS's spinning threads then
    make large fits several times slower (SLDBench's lr/bsz task, 2,700 rows, on 2 cores: 387 s
    with two workers against 94 s inline, 47 s with this limit; README, "Measured in this version")."""
    global _CTX
    _CTX = ctx
    threadpool_limits(limits=1)


def _work(args):
    lines, seed, options, warm = args
    return evaluate_lines(lines, _CTX, seed, options, warm)


def _work_on(args, ctx: EvaluationContext):
    """One proposal on a Dask worker, against the context scattered there."""
    lines, seed, options, warm = args
    return evaluate_lines(lines, ctx, seed, options, warm)


class Evaluator:
    """Maps proposals to result dicts in order; deterministic whatever the worker count or cluster.

    ``scheduler``: a Dask scheduler's address (``tcp://host:8786``); the evaluations of each
    generation fan out to its workers, which need this package installed."""

    def __init__(self, ctx: EvaluationContext, workers: int = 1, scheduler: str | None = None):
        self.ctx, self.workers, self.scheduler = ctx, max(1, int(workers)), scheduler
        self._pool: ProcessPoolExecutor | None = None
        self._client = None
        self._ctx_future = None

    def map(self, lines_list, seeds, options=None, warms=None) -> list[dict]:
        """``options``: per proposal, fit options overriding the context's (None keeps them);
        ``warms``: per proposal, constants of an earlier fit to start from (or None)."""
        options = list(options) if options is not None else [None] * len(lines_list)
        warms = list(warms) if warms is not None else [None] * len(lines_list)
        tasks = list(zip(lines_list, seeds, options, warms))
        if self.scheduler and tasks:
            return self._on_dask(tasks)
        if self.workers == 1 or len(lines_list) <= 1:
            return [evaluate_lines(lines, self.ctx, seed, opts, warm)
                    for lines, seed, opts, warm in zip(lines_list, seeds, options, warms)]
        if self._pool is None:
            # spawn, not fork: the service runs searches from threads, and fork + threads can deadlock
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_init, initargs=(self.ctx,))
        return list(self._pool.map(_work, tasks, chunksize=1))

    def _on_dask(self, tasks: list) -> list[dict]:
        if self._client is None:
            from distributed import Client  # optional: only a run sent to a cluster needs it

            self._client = Client(self.scheduler, set_as_default=False)
            self._ctx_future = self._client.scatter(self.ctx, broadcast=True, hash=False)
        futures = self._client.map(_work_on, tasks, ctx=self._ctx_future, pure=False)
        return self._client.gather(futures)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
