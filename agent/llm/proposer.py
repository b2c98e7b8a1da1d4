"""The LLM proposer: asks an OpenAI-compatible model for laws, keeps what the parser accepts.

Each call is recorded as an ``llm_call`` event (prompt, reply, tokens, latency,
cost) and every dropped law as an ``llm_rejection`` event with its reason.  A
reply without a single valid law gets one repair round that quotes the errors.
Budgets on calls, tokens and cost raise :class:`BudgetExhausted`; an endpoint
that stays down raises :class:`ProposerUnavailable` so the search can go on
without it.
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np
from pydantic import ValidationError

from agent.llm.prompt import Message, propose_messages, repair_messages
from agent.llm.replies import ReplyError, read_reply
from agent.llm.settings import LLMConfigError, LLMSettings
from agent.llm.transport import CallError, ChatTransport, Completion, RetryNotice
from agent.search.proposers.base import BudgetExhausted, ProposalContext, Proposer, ProposerUnavailable
from agent.search.records import Candidate, Proposal

MAX_CONSECUTIVE_FAILURES = 3  # refused requests in a row before the endpoint counts as unusable
INSPIRATIONS = 3
COUNTERS = ("calls", "repair_calls", "failed_calls", "retries", "prompt_tokens", "completion_tokens",
            "proposals_accepted", "proposals_rejected")


@dataclass
class _Plan:
    call_id: str
    index: int
    messages: list[Message]
    seed: int
    n_laws: int
    parent: Candidate | None
    inspirations: Sequence[Candidate]
    generation: int


@dataclass
class _Outcome:
    proposals: list[Proposal] = field(default_factory=list)


class LLMProposer(Proposer):
    """Proposes laws with a chat model.  ``client`` is the seam for tests (see ``agent.llm.fake``)."""

    slow = True

    def __init__(self, settings: LLMSettings, *, client: Any = None, sleep: Callable[[float], None] = time.sleep):
        self.settings = settings
        self.name = settings.name
        if client is None:
            import openai

            client = openai.OpenAI(api_key=settings.resolved_api_key(), base_url=settings.resolved_base_url(),
                                   timeout=settings.timeout_s, max_retries=0)
        self.transport = ChatTransport(client, settings, sleep=sleep, secret=settings.known_secret())
        self._lock = threading.Lock()
        self._events: list[dict[str, Any]] = []
        self._counts = {k: 0 for k in COUNTERS}
        self._cost = 0.0
        self._next_call = 0
        self._consecutive_failures = 0
        self._cooldown_left = 0
        self._started: set[str] = set()  # call ids that went out during the current propose()
        self._down_reason = ""
        self._recent_rejections: deque[tuple[tuple[str, ...], str]] = deque(
            maxlen=settings.max_rejections_in_prompt)

    # -- the Proposer interface -------------------------------------------------------------
    def propose(self, context: ProposalContext, n: int, rng: np.random.Generator) -> list[Proposal]:
        if n <= 0 or context.past_deadline():
            return []
        self._check_budget()
        self._check_cooldown()
        with self._lock:
            self._started.clear()
        plans = self._plan(context, n, rng)
        if not plans:
            raise BudgetExhausted(f"LLM call budget of {self.settings.max_calls} calls is spent")
        try:
            if self.settings.concurrency == 1 or len(plans) == 1:
                outcomes = [self._run(plan, context) for plan in plans]
            else:
                with ThreadPoolExecutor(max_workers=min(self.settings.concurrency, len(plans))) as pool:
                    outcomes = list(pool.map(lambda plan: self._run(plan, context), plans))
        except ProposerUnavailable as exc:
            with self._lock:
                self._cooldown_left = self.settings.down_cooldown
                self._down_reason = str(exc)
                self._counts["calls"] -= sum(1 for plan in plans if plan.call_id not in self._started)
            raise
        proposals = [p for outcome in outcomes for p in outcome.proposals][:n]
        with self._lock:
            self._counts["proposals_accepted"] += len(proposals)
        return proposals

    def expected_usage(self, proposals: int) -> dict[str, Any]:
        """What a run asking this proposer for ``proposals`` laws should spend, before it starts:
        calls (before repairs, within the call cap) and the caps that end the LLM's turns."""
        calls = -(-max(proposals, 0) // self.settings.laws_per_call)
        if self.settings.max_calls is not None:
            calls = min(calls, self.settings.max_calls)
        return {"model": self.settings.model, "expected_proposals": proposals, "expected_calls": calls,
                "max_tokens_per_call": self.settings.max_tokens, "max_calls": self.settings.max_calls,
                "max_total_tokens": self.settings.max_total_tokens, "max_cost_usd": self.settings.max_cost_usd}

    def usage(self) -> dict[str, Any]:
        with self._lock:
            counts = dict(self._counts)
            cost = self._cost
        total = counts["prompt_tokens"] + counts["completion_tokens"]
        accepted = counts.get("proposals_accepted", 0)
        # what one law that reached the search cost: the figure to weigh an LLM by
        per_accepted = {"tokens_per_accepted": round(total / accepted, 1) if accepted else None,
                        "cost_usd_per_accepted": round(cost / accepted, 6) if accepted else None}
        return {"model": self.settings.model, **counts, "total_tokens": total, "cost_usd": round(cost, 6),
                **per_accepted}

    def __deepcopy__(self, memo) -> "LLMProposer":
        """Its own counters and state, through the same client: a connection pool is shared, not
        copied (``LawSearch.fit`` and ``sklearn.base.clone`` copy the proposers they are given)."""
        twin = type(self)(self.settings, client=self.transport.client, sleep=self.transport.sleep)
        twin.load_state_dict(self.state_dict())
        return twin

    def state_dict(self) -> dict[str, Any]:
        with self._lock:
            return {
                "version": 1, "model": self.settings.model, "counts": dict(self._counts), "cost_usd": self._cost,
                "next_call": self._next_call, "consecutive_failures": self._consecutive_failures,
                "cooldown_left": self._cooldown_left, "down_reason": self._down_reason,
                "recent_rejections": [[list(lines), reason] for lines, reason in self._recent_rejections],
                "server_flags": dict(self.transport.flags),
            }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        with self._lock:
            self._counts = {k: int(state.get("counts", {}).get(k, 0)) for k in COUNTERS}
            self._cost = float(state.get("cost_usd", 0.0))
            self._next_call = int(state.get("next_call", 0))
            self._consecutive_failures = int(state.get("consecutive_failures", 0))
            self._cooldown_left = int(state.get("cooldown_left", 0))
            self._down_reason = str(state.get("down_reason", ""))
            self._recent_rejections.clear()
            for lines, reason in state.get("recent_rejections", []):
                self._recent_rejections.append((tuple(lines), str(reason)))
            flags = state.get("server_flags") or {}
            self.transport.flags.update({k: v for k, v in flags.items() if k in self.transport.flags})

    def drain_events(self) -> list[dict[str, Any]]:
        with self._lock:
            events, self._events = self._events, []
        return events

    # -- planning ---------------------------------------------------------------------------
    def _plan(self, context: ProposalContext, n: int, rng: np.random.Generator) -> list[_Plan]:
        per_call = self.settings.laws_per_call
        n_calls = math.ceil(n / per_call)
        with self._lock:
            if self.settings.max_calls is not None:
                n_calls = min(n_calls, self.settings.max_calls - self._counts["calls"])
            first = self._next_call
            self._next_call += max(n_calls, 0)
            self._counts["calls"] += max(n_calls, 0)
            rejections = self._rejections_for_prompt(context)
        parents = list(context.parents) or ([context.best] if context.best is not None else [])
        plans = []
        for i in range(max(n_calls, 0)):
            parent = parents[i % len(parents)] if parents else None
            inspirations = self._inspirations(context, parent)
            n_laws = min(per_call, n - i * per_call)
            messages = propose_messages(context.problem, context.summary, parent=parent,
                                        inspirations=inspirations, rejections=rejections, n_laws=n_laws)
            plans.append(_Plan(f"{self.name}:{first + i}", first + i, messages, int(rng.integers(0, 2**31 - 1)),
                               n_laws, parent, inspirations, context.generation))
        return plans

    def _inspirations(self, context: ProposalContext, parent: Candidate | None) -> list[Candidate]:
        pool = [*context.inspirations, *([context.best] if context.best is not None else [])]
        chosen: list[Candidate] = []
        for candidate in pool:
            if candidate is parent or (parent is not None and candidate.id == parent.id):
                continue
            if all(candidate.id != c.id for c in chosen):
                chosen.append(candidate)
        return chosen[:INSPIRATIONS]

    def _rejections_for_prompt(self, context: ProposalContext) -> list[tuple[tuple[str, ...], str]]:
        merged: dict[tuple[tuple[str, ...], str], None] = {}
        for lines, reason in [*context.rejections, *self._recent_rejections]:
            merged[(tuple(lines), str(reason))] = None
        limit = self.settings.max_rejections_in_prompt
        return list(merged)[-limit:] if limit else []

    # -- one call (and its repair) ----------------------------------------------------------
    def _run(self, plan: _Plan, context: ProposalContext) -> _Outcome:
        if context.past_deadline():  # planned, but the search's time is up: do not start it
            with self._lock:
                self._counts["calls"] -= 1
            return _Outcome()
        with self._lock:
            self._started.add(plan.call_id)
        completion = self._complete(plan, plan.messages, purpose="propose")
        if completion is None:
            return _Outcome()
        call_ids = [plan.call_id]
        suggestions, errors = self._read(plan, plan.call_id, completion, context)
        if not suggestions and errors and not context.past_deadline():
            reserved = self._reserve_repair()
            if reserved is None:
                self._reject(plan, plan.call_id, (), "not repaired: the LLM budget is spent", count=False)
                return _Outcome()
            messages = repair_messages(plan.messages, completion.text or "", errors, context.problem, plan.n_laws)
            repair_id, repair_index = reserved
            repaired = self._complete(plan, messages, purpose="repair", call_id=repair_id, index=repair_index)
            if repaired is None:
                return _Outcome()
            call_ids.append(repair_id)
            suggestions, _ = self._read(plan, repair_id, repaired, context)
        return _Outcome([self._proposal(plan, s, call_ids, completion.model) for s in suggestions])

    def _complete(self, plan: _Plan, messages: list[Message], *, purpose: str,
                  call_id: str | None = None, index: int | None = None) -> Completion | None:
        call_id = call_id or plan.call_id
        retries: list[RetryNotice] = []
        event: dict[str, Any] = {
            "type": "llm_call", "proposer": self.name, "call_id": call_id, "purpose": purpose,
            "repair_of": plan.call_id if purpose == "repair" else None, "generation": plan.generation,
            "model": self.settings.model,
            "messages": messages if purpose == "propose" else messages[-2:],
        }
        try:
            completion = self.transport.complete(messages, call_index=plan.index if index is None else index,
                                                 seed=plan.seed, on_retry=retries.append)
        except (CallError, ProposerUnavailable) as exc:
            self._record_failure(event, retries, exc)
            if isinstance(exc, ProposerUnavailable):
                raise
            return None
        cost = self.settings.cost_usd(self.settings.model, completion.prompt_tokens, completion.completion_tokens)
        if cost == 0.0 and completion.model != self.settings.model:
            cost = self.settings.cost_usd(completion.model, completion.prompt_tokens, completion.completion_tokens)
        event.update(
            response=completion.text, finish_reason=completion.finish_reason,
            prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
            usage_estimated=completion.usage_estimated, latency_s=round(completion.latency_s, 4),
            cost_usd=cost, retries=len(retries), json_mode=completion.json_mode, error=None,
        )
        with self._lock:
            self._consecutive_failures = 0
            self._counts["retries"] += len(retries)
            self._counts["prompt_tokens"] += completion.prompt_tokens
            self._counts["completion_tokens"] += completion.completion_tokens
            self._cost += cost
            self._events.append(event)
        return completion

    def _record_failure(self, event: dict[str, Any], retries: list[RetryNotice], exc: Exception) -> None:
        event.update(response=None, prompt_tokens=0, completion_tokens=0, cost_usd=0.0, retries=len(retries),
                     error=self.transport.redact(str(exc)),
                     retry_errors=[{"attempt": r.attempt, "error": r.error, "delay_s": round(r.delay_s, 3)}
                                   for r in retries])
        with self._lock:
            self._counts["failed_calls"] += 1
            self._counts["retries"] += len(retries)
            self._consecutive_failures += 1
            self._events.append(event)
            too_many = self._consecutive_failures >= MAX_CONSECUTIVE_FAILURES
        if too_many and isinstance(exc, CallError):
            raise ProposerUnavailable(
                f"LLM endpoint refused {MAX_CONSECUTIVE_FAILURES} requests in a row; last: {event['error']}")

    def _read(self, plan: _Plan, call_id: str, completion: Completion, context: ProposalContext):
        """Valid laws of a reply, and the error messages to quote if none is valid."""
        try:
            reply = read_reply(completion.text, context.problem, limit=2 * plan.n_laws)
        except ReplyError as exc:
            reason = str(exc)
            if completion.finish_reason == "length":
                reason += " (the reply was cut off at max_tokens)"
            self._reject(plan, call_id, (), reason, response=completion.text)
            return [], [reason]
        for rejection in reply.rejections:
            self._reject(plan, call_id, rejection.lines, rejection.reason)
        errors = [f"{'; '.join(r.lines)}: {r.reason}" if r.lines else r.reason for r in reply.rejections]
        return reply.suggestions, errors

    def _reject(self, plan: _Plan, call_id: str, lines: tuple[str, ...], reason: str, *,
                response: str | None = None, count: bool = True) -> None:
        event = {"type": "llm_rejection", "proposer": self.name, "call_id": call_id,
                 "generation": plan.generation, "lines": list(lines), "reason": reason}
        if response is not None:
            event["response_excerpt"] = response[:500]
        with self._lock:
            if count:
                self._counts["proposals_rejected"] += 1
            self._events.append(event)
            if lines or count:
                self._recent_rejections.append((tuple(lines), reason))

    def _reserve_repair(self) -> tuple[str, int] | None:
        with self._lock:
            if self._budget_problem() is not None:
                return None
            self._counts["calls"] += 1
            self._counts["repair_calls"] += 1
            index = self._next_call
            self._next_call += 1
            return f"{self.name}:{index}", index

    def _proposal(self, plan: _Plan, suggestion, call_ids: list[str], model: str) -> Proposal:
        meta: dict[str, Any] = {"llm_call_ids": list(call_ids), "llm_model": model,
                                "inspiration_ids": [c.id for c in plan.inspirations]}
        if suggestion.rationale:
            meta["rationale"] = suggestion.rationale
        if suggestion.init:
            meta["constants_init"] = dict(suggestion.init)
        if suggestion.bounds:
            meta["constants_bounds"] = {k: list(v) for k, v in suggestion.bounds.items()}
        return Proposal(lines=suggestion.law.lines, proposer=self.name,
                        parent_ids=(plan.parent.id,) if plan.parent is not None else (), meta=meta)

    # -- budgets and a down endpoint ---------------------------------------------------------
    def _check_cooldown(self) -> None:
        """Do not hammer an endpoint that was just found down: answer at once for a while."""
        with self._lock:
            if self._cooldown_left <= 0:
                return
            self._cooldown_left -= 1
        # The same text every time, so that faces can show it once.
        raise ProposerUnavailable(f"LLM endpoint still considered down: {self._down_reason}")

    def _check_budget(self) -> None:
        with self._lock:
            problem = self._budget_problem()
        if problem is not None:
            raise BudgetExhausted(problem)

    def _budget_problem(self) -> str | None:
        """Why no further call may start (caller holds the lock), or None."""
        s, c = self.settings, self._counts
        if s.max_calls is not None and c["calls"] >= s.max_calls:
            return f"LLM call budget of {s.max_calls} calls is spent"
        tokens = c["prompt_tokens"] + c["completion_tokens"]
        if s.max_total_tokens is not None and tokens >= s.max_total_tokens:
            return f"LLM token budget of {s.max_total_tokens} tokens is spent ({tokens} used)"
        if s.max_cost_usd is not None and self._cost >= s.max_cost_usd:
            return f"LLM cost budget of ${s.max_cost_usd:g} is spent (${self._cost:.4f} used)"
        return None


def make_llm_proposer(model: str, base_url: str | None = None, api_key: str | None = None, *,
                      client: Any = None, **options: Any) -> LLMProposer:
    """Build an :class:`LLMProposer` for the CLI and the service.

    ``options`` are :class:`LLMSettings` fields (temperature, max_tokens, concurrency,
    timeout_s, max_calls, max_total_tokens, max_cost_usd, prices, name, seed, ...);
    an unknown option raises a pydantic ``ValidationError`` naming it.
    """
    try:
        settings = LLMSettings(model=model, base_url=base_url, api_key=api_key, **options)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "settings"
        raise LLMConfigError(f"invalid LLM option {where}: {first['msg']}") from None
    return LLMProposer(settings, client=client)
