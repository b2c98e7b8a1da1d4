"""The proposers of a run, weighted: each island's children are shared out among them by a seeded
draw, and the offline proposer seeds the first generation and stands in for any that is down.

A proposer whose budget is spent (an LLM's calls, tokens or cost) is retired, not the run: its
share of every later generation goes to the offline proposer, so turning an LLM on never makes a
search smaller than it would be without one.  The run's summary says when and why (``retired``).

A slow proposer's latency hides behind the search: its request for generation ``g`` is sent in the
background while ``g``'s other candidates are evaluated, and its reply joins generation ``g + 1``
as extra candidates (when the offline proposer is one of the run's, it makes the slow one's share of
``g`` meanwhile, so a generation never shrinks while an LLM thinks).
How long ``g + 1`` waits for it is the caller's choice: without a bound (the client's own timeouts
end it) replies are merged in the order they were asked, each proposer drawing from a generator
seeded when it was asked, so with a deterministic endpoint the same seed gives the same run; with a
bound, a reply not yet back joins a later generation and a slow endpoint never slows the search,
at the price of that reproducibility.  A proposer with ``MAX_PENDING`` requests in flight is not
asked again until one returns: the offline proposer makes that share.  A checkpoint does not hold the replies in
flight: a run resumed from one asks again from its next generation."""
from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from agent.search.proposers.base import BudgetExhausted, ProposalContext, Proposer, ProposerUnavailable
from agent.search.proposers.offline import OfflineProposer
from agent.search.records import Proposal


MAX_PENDING = 4  # requests of one slow proposer in flight at once (one per island by default)


@dataclass
class _Asked:
    """A slow proposer's request in flight: what it was asked with, to fall back on if it fails."""

    island: int
    proposer: Proposer
    context: ProposalContext
    n: int
    rng: np.random.Generator
    reply: Future


class _Background:
    """One daemon thread that runs a slow proposer's requests in the order asked.

    A daemon, unlike a ThreadPoolExecutor's threads (which the interpreter joins at exit): a reply
    still being computed when the run ends is dropped, and the process does not wait for it."""

    def __init__(self, name: str):
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._futures: list[Future] = []
        threading.Thread(target=self._work, name=name, daemon=True).start()

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        self._futures = [f for f in self._futures if not f.done()] + [future]
        self._queue.put((future, fn, args))
        return future

    def shutdown(self) -> None:
        for future in self._futures:
            future.cancel()  # those not yet started; the one running finishes on its own and is dropped
        self._queue.put(None)

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # the caller reads it from the future, as from an executor's
                future.set_exception(exc)


class ProposerMix:
    def __init__(self, proposers: list[tuple[Proposer, float]] | None = None):
        self.proposers = list(proposers) if proposers else [(OfflineProposer(), 1.0)]
        given = [p for p, _ in self.proposers if isinstance(p, OfflineProposer)]
        self.offline = given[0] if given else OfflineProposer()
        self.retired: dict[str, dict[str, Any]] = {}  # proposer name -> {"generation", "reason"}
        self._events: list[dict[str, Any]] = []
        self._asked: list[_Asked] = []
        self._pools: dict[str, _Background] = {}
        self.waited_seconds = 0.0  # spent waiting for slow proposers' replies, over the run

    def ask_later(self, island: int, proposer: Proposer, ctx: ProposalContext, n: int,
                  rng: np.random.Generator) -> list[Proposal]:
        """Send a slow proposer's request now; :meth:`replies` returns its proposals in a later
        generation.  ``rng`` is the proposer's own (seeded by the caller now), so the merge does not
        depend on timing.  Returns proposals to use at once: the offline proposer's, when the slow
        one is retired or already has ``MAX_PENDING`` requests in flight."""
        in_flight = sum(1 for a in self._asked if a.proposer is proposer)  # not .done(): that is timing
        if proposer.name in self.retired or in_flight >= MAX_PENDING:
            return self.offline.propose(ctx, n, rng)
        # one thread per proposer: its requests go out in the order asked, so its own state (call
        # numbers, per-call seeds) does not depend on timing; its calls may still fan out inside
        pool = self._pools.get(proposer.name)
        if pool is None:
            pool = self._pools[proposer.name] = _Background(proposer.name)
        self._asked.append(_Asked(island, proposer, ctx, n, rng, pool.submit(proposer.propose, ctx, n, rng)))
        return []

    def replies(self, wait: float | None = None) -> list[tuple[int, list[Proposal]]]:
        """(island, proposals) of the requests in flight, in the order asked; a failed request's share
        comes from the offline proposer, with the context it was asked in.  ``wait``: seconds to wait
        for them in all (None: every one); a request still out stays for a later call."""
        asked, self._asked = self._asked, []
        start = time.monotonic()
        deadline = None if wait is None else start + max(wait, 0.0)
        out = []
        for a in asked:
            timeout = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            try:
                proposals = a.reply.result(timeout=timeout)
            except FutureTimeout:
                self._asked.append(a)
                continue
            except (ProposerUnavailable, BudgetExhausted) as exc:
                proposals = self._fallback(a.proposer, a.context, a.n, a.rng, exc)
            if a.proposer.name in self.retired and not proposals:
                proposals = self.offline.propose(a.context, a.n, a.rng)
            out.append((a.island, [replace(p, meta={**p.meta, "asked_at_generation": a.context.generation})
                                   for p in proposals]))
        self.waited_seconds += time.monotonic() - start
        return out

    @property
    def in_flight(self) -> int:
        """Requests sent and not yet merged."""
        return len(self._asked)

    @property
    def offline_in_mix(self) -> bool:
        """Whether the offline proposer is one of the run's own (not only the stand-in)."""
        return any(p is self.offline for p, _ in self.proposers)

    def close(self) -> None:
        """Stop waiting for replies still in flight (their calls finish on their own and are dropped)."""
        self._asked = []
        for pool in self._pools.values():
            pool.shutdown()
        self._pools = {}

    def plan(self, proposals: int) -> list[dict[str, Any]]:
        """``llm_plan`` events: each budgeted proposer's expected share of ``proposals`` and its caps."""
        total = sum(w for _, w in self.proposers)
        return [{"type": "llm_plan", "proposer": p.name,
                 **p.expected_usage(int(round(proposals * w / total)))}  # type: ignore[attr-defined]
                for p, w in self.proposers if callable(getattr(p, "expected_usage", None))]

    def allocate(self, children: int, rng: np.random.Generator) -> list[tuple[Proposer, int]]:
        """How many of ``children`` proposals each proposer makes (a weighted draw)."""
        weights = np.array([w for _, w in self.proposers], dtype=float)
        picks = rng.choice(len(self.proposers), size=children, p=weights / weights.sum())
        return [(p, int(np.sum(picks == i))) for i, (p, _) in enumerate(self.proposers) if np.any(picks == i)]

    def call(self, proposer: Proposer, ctx: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        """The proposer's proposals; the offline proposer's when it is unavailable, retired (its
        budget spent) or just retiring."""
        if proposer.name in self.retired and proposer is not self.offline:
            return self.offline.propose(ctx, n, rng)
        try:
            return proposer.propose(ctx, n, rng)
        except (ProposerUnavailable, BudgetExhausted) as exc:
            return self._fallback(proposer, ctx, n, rng, exc)

    def _fallback(self, proposer: Proposer, ctx: ProposalContext, n: int, rng: np.random.Generator,
                  exc: Exception) -> list[Proposal]:
        if isinstance(exc, BudgetExhausted):
            if proposer.name not in self.retired:
                self.retired[proposer.name] = {"generation": ctx.generation, "reason": str(exc)}
                self._events.append({"type": "budget", "proposer": proposer.name,
                                     "message": f"{proposer.name} stops at generation {ctx.generation}: {exc}; "
                                                "the offline proposer makes its proposals until the run's own "
                                                "budget ends"})
        else:
            self._events.append({"type": "warning", "proposer": proposer.name,
                                 "message": f"{proposer.name} unavailable, using the offline proposer: {exc}"})
        return self.offline.propose(ctx, n, rng) if proposer is not self.offline else []

    def drain_events(self) -> list[dict[str, Any]]:
        events, self._events = self._events, []
        for proposer, _ in self.proposers:
            events.extend(proposer.drain_events())
        return events

    def state_dict(self) -> dict[str, Any]:
        return ({p.name: p.state_dict() for p, _ in self.proposers} | {"offline": self.offline.state_dict()}
                | {"_retired": dict(self.retired)})

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        self.offline.load_state_dict(saved.get("offline", {}))
        self.retired = dict(saved.get("_retired", {}))
        for p, _ in self.proposers:
            if p is not self.offline and p.name in saved:
                p.load_state_dict(saved[p.name])
