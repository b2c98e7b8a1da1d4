"""Candidate evaluation inline or on a process pool (the context is sent once per worker)."""
from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from agent.search.evaluate import EvaluationContext, evaluate_lines

_CTX: EvaluationContext | None = None


def _init(ctx: EvaluationContext) -> None:
    global _CTX
    _CTX = ctx


def _work(args):
    lines, seed, options, warm = args
    return evaluate_lines(lines, _CTX, seed, options, warm)


class Evaluator:
    """Maps proposals to result dicts in order; deterministic whatever the worker count."""

    def __init__(self, ctx: EvaluationContext, workers: int = 1):
        self.ctx, self.workers = ctx, max(1, int(workers))
        self._pool: ProcessPoolExecutor | None = None

    def map(self, lines_list, seeds, options=None, warms=None) -> list[dict]:
        """``options``: per proposal, fit options overriding the context's (None keeps them);
        ``warms``: per proposal, constants of an earlier fit to start from (or None)."""
        options = list(options) if options is not None else [None] * len(lines_list)
        warms = list(warms) if warms is not None else [None] * len(lines_list)
        if self.workers == 1 or len(lines_list) <= 1:
            return [evaluate_lines(lines, self.ctx, seed, opts, warm)
                    for lines, seed, opts, warm in zip(lines_list, seeds, options, warms)]
        if self._pool is None:
            # spawn, not fork: the service runs searches from threads, and fork + threads can deadlock
            self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_init, initargs=(self.ctx,))
        return list(self._pool.map(_work, list(zip(lines_list, seeds, options, warms)), chunksize=1))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
