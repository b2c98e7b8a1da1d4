"""The LLM proposer on a scripted fake client: proposals, repairs, rejections, events, budgets, state."""
import dataclasses
import json
import os
import time

import numpy as np
import pytest

from agent.llm.fake import FakeReply
from agent.search.proposers.base import BudgetExhausted
from llm_helpers import GOOD_LAW, events_of, reply


def rng():
    return np.random.default_rng(0)


def test_a_valid_reply_becomes_proposals_linked_to_their_call(make_proposer, context):
    text = reply(GOOD_LAW, "loss = E + A / (N * D) ** alpha")
    proposer, fake = make_proposer([text])
    proposals = proposer.propose(context, 2, rng())
    assert [p.lines for p in proposals] == [(GOOD_LAW,), ("loss = E + A / (N * D) ** alpha",)]
    assert all(p.proposer == "llm" and p.parent_ids == (7,) for p in proposals)
    assert proposals[0].meta["llm_call_ids"] == ["llm:0"]
    assert proposals[0].meta["rationale"] == "because"
    [call] = events_of(proposer, "llm_call")
    assert call["call_id"] == "llm:0" and call["purpose"] == "propose" and call["error"] is None
    assert call["response"] == text
    assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0
    assert call["messages"][0]["role"] == "system"


def test_the_request_asks_for_json_and_carries_the_settings(make_proposer, context):
    proposer, fake = make_proposer([reply(GOOD_LAW)], temperature=0.3, max_tokens=256)
    proposer.propose(context, 1, rng())
    request = fake.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert request["model"] == "gpt-4o-mini"
    assert request["temperature"] == 0.3 and request["max_tokens"] == 256
    assert isinstance(request["seed"], int)


def test_n_proposals_are_spread_over_calls_of_laws_per_call(make_proposer, context):
    laws = [f"loss = a + b * N ** (-{k})" for k in range(1, 6)]
    proposer, fake = make_proposer([reply(*laws[:2]), reply(*laws[2:4]), reply(laws[4])], laws_per_call=2)
    proposals = proposer.propose(context, 5, rng())
    assert len(fake.requests) == 3
    assert [p.meta["llm_call_ids"] for p in proposals] == [["llm:0"], ["llm:0"], ["llm:1"], ["llm:1"], ["llm:2"]]


def test_concurrent_calls_keep_proposals_in_call_order(make_proposer, context):
    first = FakeReply(reply("loss = a * N ** b"), delay_s=0.05)
    proposer, fake = make_proposer([first, reply("loss = a * D ** b")], laws_per_call=1, concurrency=2)
    proposals = proposer.propose(context, 2, rng())
    assert sorted(p.meta["llm_call_ids"][0] for p in proposals) == ["llm:0", "llm:1"]
    assert len(proposals) == 2


def test_fenced_json_with_chatter_is_accepted_without_repair(make_proposer, context):
    text = "Here you go:\n```json\n" + reply(GOOD_LAW) + "\n```"
    proposer, fake = make_proposer([text])
    assert len(proposer.propose(context, 1, rng())) == 1
    assert len(fake.requests) == 1


def test_junk_gets_one_repair_round_that_quotes_the_error(make_proposer, context):
    proposer, fake = make_proposer(["I love scaling laws!", reply(GOOD_LAW)])
    proposals = proposer.propose(context, 1, rng())
    assert [p.lines for p in proposals] == [(GOOD_LAW,)]
    assert proposals[0].meta["llm_call_ids"] == ["llm:0", "llm:1"]
    repair_request = fake.requests[1]["messages"]
    assert repair_request[-2] == {"role": "assistant", "content": "I love scaling laws!"}
    assert "the reply holds no JSON object" in repair_request[-1]["content"]
    events = proposer.drain_events()
    calls = [e for e in events if e["type"] == "llm_call"]
    assert [(c["call_id"], c["purpose"], c["repair_of"]) for c in calls] == [
        ("llm:0", "propose", None), ("llm:1", "repair", "llm:0")]
    [rejection] = [e for e in events if e["type"] == "llm_rejection"]
    assert rejection["call_id"] == "llm:0" and rejection["reason"] == "the reply holds no JSON object"


def test_a_failed_repair_drops_the_reply_with_its_reasons(make_proposer, context):
    proposer, fake = make_proposer([reply("loss = a ^ N"), reply("loss = sin(N)")])
    assert proposer.propose(context, 1, rng()) == []
    assert len(fake.requests) == 2  # exactly one repair, then give up
    assert "use ** for powers" in fake.requests[1]["messages"][-1]["content"]
    reasons = [e["reason"] for e in events_of(proposer, "llm_rejection")]
    assert "use ** for powers" in reasons[0] and "unknown function 'sin'" in reasons[1]
    usage = proposer.usage()
    assert (usage["calls"], usage["repair_calls"], usage["proposals_accepted"], usage["proposals_rejected"]) == (
        2, 1, 0, 2)


def test_a_reply_with_some_valid_laws_is_not_repaired(make_proposer, context):
    proposer, fake = make_proposer([reply(GOOD_LAW, "loss = a ^ N")])
    assert len(proposer.propose(context, 2, rng())) == 1
    assert len(fake.requests) == 1
    assert proposer.usage()["proposals_rejected"] == 1


def test_hostile_formulas_are_rejected_with_reason_and_never_proposed(make_proposer, context):
    hostile = "loss = __import__('os').system('touch /tmp/pwned')"
    proposer, fake = make_proposer([reply(hostile), reply(hostile, "loss = N.__class__")])
    assert proposer.propose(context, 1, rng()) == []
    rejections = events_of(proposer, "llm_rejection")
    assert rejections[0]["lines"] == [hostile]
    assert "cannot be called" in rejections[0]["reason"]
    assert [r["lines"] for r in rejections[1:]] == [[hostile], ["loss = N.__class__"]]
    assert "attribute access" in rejections[2]["reason"]
    assert not os.path.exists("/tmp/pwned")


def test_rejection_reasons_feed_the_next_prompt(make_proposer, context):
    proposer, fake = make_proposer([reply(GOOD_LAW, "loss = a ^ N"), reply(GOOD_LAW)])
    proposer.propose(context, 2, rng())
    proposer.propose(context, 1, rng())
    prompt = fake.requests[1]["messages"][-1]["content"]
    assert "RECENTLY REJECTED" in prompt and "loss = a ^ N" in prompt and "use ** for powers" in prompt


def test_a_truncated_reply_says_it_was_cut_off(make_proposer, context):
    proposer, _ = make_proposer([FakeReply('{"laws": [{"lines": ["loss = a', finish_reason="length"), "junk"])
    proposer.propose(context, 1, rng())
    assert "cut off at max_tokens" in events_of(proposer, "llm_rejection")[0]["reason"]


def test_tokens_and_cost_are_counted_from_usage(make_proposer, context):
    proposer, _ = make_proposer([FakeReply(reply(GOOD_LAW), prompt_tokens=1_000_000, completion_tokens=500_000)])
    proposer.propose(context, 1, rng())
    usage = proposer.usage()
    assert usage["prompt_tokens"] == 1_000_000 and usage["completion_tokens"] == 500_000
    assert usage["total_tokens"] == 1_500_000
    assert usage["cost_usd"] == pytest.approx(0.15 + 0.30)  # gpt-4o-mini: $0.15 and $0.60 per 1M
    assert events_of(proposer, "llm_call")[0]["cost_usd"] == pytest.approx(0.45)


def test_an_unknown_model_costs_nothing_but_its_tokens_count(make_proposer, context):
    proposer, _ = make_proposer([FakeReply(reply(GOOD_LAW), prompt_tokens=100, completion_tokens=20)],
                                model="my-local-model")
    proposer.propose(context, 1, rng())
    assert proposer.usage()["cost_usd"] == 0.0 and proposer.usage()["total_tokens"] == 120


def test_a_server_without_usage_gets_estimated_tokens(make_proposer, context):
    proposer, _ = make_proposer([FakeReply(reply(GOOD_LAW), usage=False)])
    proposer.propose(context, 1, rng())
    [call] = events_of(proposer, "llm_call")
    assert call["usage_estimated"] is True and call["prompt_tokens"] > 100


def test_the_call_budget_stops_further_proposals(make_proposer, context):
    proposer, fake = make_proposer([reply(GOOD_LAW)] * 3, max_calls=2, laws_per_call=1)
    assert len(proposer.propose(context, 5, rng())) == 2  # only two calls were allowed
    with pytest.raises(BudgetExhausted, match="call budget of 2"):
        proposer.propose(context, 1, rng())
    assert len(fake.requests) == 2


def test_the_token_budget_stops_the_next_call(make_proposer, context):
    proposer, fake = make_proposer([FakeReply(reply(GOOD_LAW), prompt_tokens=900, completion_tokens=200)] * 2,
                                   max_total_tokens=1000)
    proposer.propose(context, 1, rng())
    with pytest.raises(BudgetExhausted, match="token budget of 1000"):
        proposer.propose(context, 1, rng())
    assert len(fake.requests) == 1


def test_the_cost_budget_stops_the_next_call(make_proposer, context):
    proposer, _ = make_proposer([FakeReply(reply(GOOD_LAW), prompt_tokens=10_000_000, completion_tokens=0)],
                                max_cost_usd=1.0)
    proposer.propose(context, 1, rng())  # $1.50 spent
    with pytest.raises(BudgetExhausted, match=r"cost budget of \$1"):
        proposer.propose(context, 1, rng())


def test_no_repair_when_the_budget_is_spent(make_proposer, context):
    proposer, fake = make_proposer(["junk"], max_calls=1)
    assert proposer.propose(context, 1, rng()) == []
    assert len(fake.requests) == 1
    assert any("budget is spent" in e["reason"] for e in events_of(proposer, "llm_rejection"))


def test_state_round_trip_keeps_budgets_and_call_numbering(make_proposer, context):
    proposer, _ = make_proposer([reply(GOOD_LAW, "loss = a ^ N")], max_calls=3)
    proposer.propose(context, 2, rng())
    state = json.loads(json.dumps(proposer.state_dict()))
    resumed, fake = make_proposer([reply(GOOD_LAW)], max_calls=3)
    resumed.load_state_dict(state)
    assert resumed.usage() == proposer.usage()
    resumed.propose(context, 1, rng())
    assert events_of(resumed, "llm_call")[0]["call_id"] == "llm:1"
    assert "loss = a ^ N" in fake.requests[0]["messages"][-1]["content"]  # remembered rejection


def test_a_deep_copy_keeps_the_state_and_the_client_and_counts_on_its_own(make_proposer, context):
    import copy

    proposer, fake = make_proposer([reply(GOOD_LAW), reply("loss = a * N ** b")], max_calls=3)
    proposer.propose(context, 1, rng())
    twin = copy.deepcopy(proposer)  # what LawSearch.fit and sklearn's clone do to the proposers they get
    assert twin.usage() == proposer.usage() and twin.transport.client is fake
    twin.propose(context, 1, rng())
    assert twin.usage()["calls"] == 2 and proposer.usage()["calls"] == 1


def test_proposals_and_events_are_json_serializable(make_proposer, context):
    proposer, _ = make_proposer(["junk", reply(GOOD_LAW)])
    proposals = proposer.propose(context, 1, rng())
    json.dumps([dict(p.meta) for p in proposals])
    json.dumps(proposer.drain_events())
    json.dumps(proposer.usage())
    assert proposer.drain_events() == []  # drained


def test_no_call_starts_after_the_search_deadline(make_proposer, context):
    proposer, fake = make_proposer([reply(GOOD_LAW)])
    late = dataclasses.replace(context, deadline=time.time() - 1)
    assert proposer.propose(late, 2, rng()) == []
    assert fake.requests == [] and proposer.usage()["calls"] == 0
    soon = dataclasses.replace(context, deadline=time.time() + 60)
    assert len(proposer.propose(soon, 1, rng())) == 1


def test_usage_reports_the_counters_a_run_summary_needs(make_proposer, context):
    proposer, _ = make_proposer([reply(GOOD_LAW, "loss = a ^ N")])
    proposer.propose(context, 2, rng())
    assert set(proposer.usage()) == {
        "model", "calls", "repair_calls", "failed_calls", "retries", "prompt_tokens", "completion_tokens",
        "total_tokens", "cost_usd", "proposals_accepted", "proposals_rejected", "tokens_per_accepted",
        "cost_usd_per_accepted"}
    usage = proposer.usage()
    assert (usage["proposals_accepted"], usage["proposals_rejected"]) == (1, 1)
    # one law accepted: it cost every token and dollar spent
    assert usage["tokens_per_accepted"] == usage["total_tokens"] and usage["cost_usd_per_accepted"] == usage["cost_usd"]


def test_the_expected_calls_of_a_run_are_known_before_it_starts_and_stay_within_the_cap(make_proposer):
    proposer, fake = make_proposer([], laws_per_call=2, max_calls=5, max_total_tokens=9000)
    assert proposer.expected_usage(7)["expected_calls"] == 4
    plan = proposer.expected_usage(30)
    assert plan["expected_calls"] == 5 and plan["max_total_tokens"] == 9000
    assert proposer.usage()["calls"] == 0  # nothing was asked to find this out
