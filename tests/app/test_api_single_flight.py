"""Cached answers that expire under load: one query for everyone waiting, and refreshed before they expire."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from app.api.auth import TokenLookups
from app.api.single_flight import SingleFlight


def test_requests_that_miss_at_the_same_moment_share_one_call():
    calls, release = [], threading.Event()

    def query():
        calls.append(1)
        release.wait(5)
        return "answer"

    async def fifty_requests():
        flight = SingleFlight()
        asks = [asyncio.create_task(flight.run("key", query)) for _ in range(50)]
        await asyncio.sleep(0.05)
        release.set()
        answers = await asyncio.gather(*asks)
        assert not flight.running("key")
        return answers

    assert asyncio.run(fifty_requests()) == ["answer"] * 50
    assert len(calls) == 1


def test_a_failed_call_fails_every_request_that_waited_on_it_and_the_next_ask_tries_again():
    attempts = []

    def flaky():
        attempts.append(1)
        time.sleep(0.02)
        if len(attempts) == 1:
            raise ConnectionError("database gone")
        return "back"

    async def scenario():
        flight = SingleFlight()
        first = await asyncio.gather(*[flight.run("k", flaky) for _ in range(3)], return_exceptions=True)
        return first, await flight.run("k", flaky)

    first, again = asyncio.run(scenario())
    assert all(isinstance(e, ConnectionError) for e in first) and again == "back" and len(attempts) == 2


class CountingTokens:
    """A storage whose token table answers ``active`` and counts the questions."""

    def __init__(self):
        self.active, self.asked = True, 0

    def has_tokens(self):
        self.asked += 1
        return self.active


def test_an_answer_past_half_its_life_is_served_while_it_is_refreshed_and_never_trusted_longer():
    storage = CountingTokens()

    async def scenario():
        lookups = TokenLookups(storage, seconds=0.2)
        assert await lookups.any_active() is True and storage.asked == 1
        storage.active = False                      # the last token revoked elsewhere
        assert await lookups.any_active() is True   # fresh: trusted, no question
        await asyncio.sleep(0.12)                   # past half its life: still served, refreshed meanwhile
        assert await lookups.any_active() is True
        await asyncio.sleep(0.05)
        assert storage.asked == 2                   # the refresh happened without anyone waiting for it
        assert await lookups.any_active() is False  # and its answer is the one served now

    asyncio.run(scenario())


def test_an_expired_answer_is_asked_again_before_it_is_served():
    storage = CountingTokens()

    async def scenario():
        lookups = TokenLookups(storage, seconds=0.05)
        assert await lookups.any_active() is True
        storage.active = False
        await asyncio.sleep(0.08)
        assert await lookups.any_active() is False and storage.asked == 2

    asyncio.run(scenario())


@pytest.mark.parametrize("seconds", [0, -1])
def test_without_a_cache_every_ask_is_a_question(seconds):
    storage = CountingTokens()

    async def scenario():
        lookups = TokenLookups(storage, seconds=seconds)
        for _ in range(3):
            await lookups.any_active()

    asyncio.run(scenario())
    assert storage.asked == 3
