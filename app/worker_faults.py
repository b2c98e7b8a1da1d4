"""How a worker outlives a lost database and does not outlive the process that started it.

A worker that cannot reach the database waits and tries again, longer each time up to
``SLD_DB_RETRY_MAX`` seconds, each wait scaled by a random factor so that workers that lost
the database together do not all come back in the same instant; it never exits for it, so
its supervisor has nothing to restart in a loop.  An embedded worker (``sld serve``, ``sld
worker -p N``) stops when its parent is gone, even after ``kill -9``: Linux sends it SIGTERM
(``PR_SET_PDEATHSIG``), and elsewhere it notices that its parent process changed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import random
import signal
import sys
import threading

from sqlalchemy.exc import InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

log = logging.getLogger("sld.worker")

# The connection is gone, refused or exhausted: the same call may succeed later.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError, PoolTimeout)
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class Backoff:
    """Waits of base, 2 base, 4 base ... up to ``cap`` seconds, each times a random factor in [0.5, 1]."""

    def __init__(self, base: float, cap: float, rng: random.Random):
        self.base, self.cap, self.rng = base, max(cap, base), rng
        self.failures = 0

    def next(self) -> float:
        delay = min(self.cap, self.base * 2 ** min(self.failures, 30)) * self.rng.uniform(0.5, 1.0)
        self.failures += 1
        return delay

    def reset(self) -> None:
        self.failures = 0


def one_line(exc: BaseException) -> str:
    """The driver's reason without its SQL and parameters (they can be long)."""
    reason = getattr(exc, "orig", None) or exc
    return " ".join(str(reason).split())[:300]


def die_with_parent(parent_pid: int, stop: threading.Event, check_every: float = 1.0) -> None:
    """Set ``stop`` (finish the generation, release the run, exit) once ``parent_pid`` is gone."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):  # no prctl: the watch below still notices
            pass

    def parent_gone() -> bool:
        return os.getppid() != parent_pid  # an orphan is adopted by init or a subreaper

    def watch() -> None:
        while not stop.wait(check_every):
            if parent_gone():
                log.warning("parent process %s is gone: stopping after the current generation", parent_pid)
                stop.set()
                return

    if parent_gone():  # it died before the death signal was armed
        stop.set()
        return
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
