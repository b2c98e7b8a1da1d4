"""The LLM proposer inside a real search: mixed with the offline proposer, and with the endpoint down."""
import dataclasses
import json

import numpy as np
import pytest

from agent.llm import make_llm_proposer
from agent.llm.local import MODEL_ALIAS, free_port
from agent.search import OfflineProposer, Search, SearchConfig

SMALL = SearchConfig(budget=45, seed=0, islands=2, children=3, workers=1)


def run(search: Search) -> list[dict]:
    events = []
    while not search.done:
        search.step()
        events.extend(search.drain_events())
    return events


@pytest.mark.llm
@pytest.mark.slow
def test_a_search_mixing_smollm2_and_offline_completes_with_calls_and_rejections_on_record(
        local_llm, problem, frame):
    llm = make_llm_proposer(MODEL_ALIAS, base_url=local_llm.base_url, max_tokens=200, max_calls=2,
                            timeout_s=180, concurrency=1)
    # every reply waited for, so every call the LLM makes is on record when the run ends (with the
    # default bounded wait, a reply still out when the run ends is dropped with its call's events)
    every_reply = dataclasses.replace(SMALL, slow_proposer_wait=None)
    search = Search(problem, frame, every_reply, proposers=[(llm, 0.7), (OfflineProposer(), 0.3)])
    events = run(search)
    final = search.finalize()
    search.close()

    # two calls end the LLM's turns, not the run: the offline proposer takes them up
    assert final.lines and search.stop_reason in ("budget", "work budget", "no new proposals")
    calls = {e["call_id"]: e for e in events if e["type"] == "llm_call"}
    usage = llm.usage()
    assert len(calls) == usage["calls"] >= 1
    assert usage["prompt_tokens"] == sum(c["prompt_tokens"] for c in calls.values()) > 0
    assert usage["completion_tokens"] > 0
    assert all(e["reason"] for e in events if e["type"] == "llm_rejection")
    for candidate in (c for c in search.candidates if c.proposer == "llm"):  # parsed -> evaluated
        assert set(candidate.meta["llm_call_ids"]) <= set(calls)
        assert candidate.ok or candidate.reason
    json.dumps(events)
    json.dumps(search.state_dict())


def test_with_the_endpoint_down_the_search_completes_offline_with_a_warning(problem, frame):
    down = make_llm_proposer("any-model", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1,
                             backoff_s=0.01, timeout_s=5)
    search = Search(problem, frame, SMALL, proposers=[(down, 0.7), (OfflineProposer(), 0.3)])
    events = run(search)
    final = search.finalize()
    search.close()

    assert search.stop_reason == "budget" and final.lines
    warnings = [e for e in events if e["type"] == "warning"]
    assert warnings and "unavailable" in warnings[0]["message"] and "APIConnectionError" in warnings[0]["message"]
    assert all(c.proposer != "llm" for c in search.candidates)
    assert down.usage()["failed_calls"] == 1  # tried once; then left alone while the run went on
    assert np.isfinite(search.best.score)
