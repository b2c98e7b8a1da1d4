"""Against a real OpenAI-compatible server: llama.cpp serving SmolLM2-135M-Instruct.

The model is tiny and its formulas are mostly junk: the proposer must survive
that, reject junk with reasons, hand on only what the parser accepts, and count
the tokens the server reports.
"""
import numpy as np
import pytest

from agent.expressions import parse_law
from agent.llm import make_llm_proposer
from agent.llm.local import MODEL_ALIAS, free_port
from agent.search.proposers.base import ProposerUnavailable
from llm_helpers import parent_candidate


@pytest.mark.llm
@pytest.mark.slow
def test_smollm2_replies_are_parsed_or_rejected_with_reasons(local_llm, context, frame):
    llm = make_llm_proposer(MODEL_ALIAS, base_url=local_llm.base_url, laws_per_call=2, max_tokens=200,
                            concurrency=1, timeout_s=180, max_calls=3)
    context = type(context)(problem=context.problem, summary=context.summary, parents=[parent_candidate()],
                            inspirations=[parent_candidate(3, ("loss = a * D ** b + c",), r2=0.4)])
    proposals = llm.propose(context, 4, np.random.default_rng(0))
    events = llm.drain_events()
    calls = {e["call_id"]: e for e in events if e["type"] == "llm_call"}
    rejections = [e for e in events if e["type"] == "llm_rejection"]
    usage = llm.usage()

    assert 2 <= len(calls) <= 3 and usage["calls"] == len(calls)
    assert all(c["error"] is None and c["json_mode"] for c in calls.values())  # llama.cpp honours json_object
    assert all(c["prompt_tokens"] > 200 and c["completion_tokens"] > 0 and not c["usage_estimated"]
               for c in calls.values())
    assert usage["prompt_tokens"] == sum(c["prompt_tokens"] for c in calls.values())
    assert usage["cost_usd"] == 0.0  # a local model has no price
    for repair in (c for c in calls.values() if c["purpose"] == "repair"):
        assert calls[repair["repair_of"]]["purpose"] == "propose"
        assert repair["messages"][0]["role"] == "assistant"  # the same conversation, continued
    assert usage["proposals_accepted"] == len(proposals)
    assert len(proposals) + len(rejections) > 0
    assert all(r["reason"] and r["call_id"] in calls for r in rejections)
    X = {name: frame[name].to_numpy() for name in context.problem.inputs}
    for proposal in proposals:  # whatever survived parses again and evaluates on the data
        law = parse_law(proposal.lines, context.problem.inputs, context.problem.targets,
                        max_constants=context.problem.max_constants)
        assert law.evaluate(X, {c: 1.0 for c in law.constants}).shape == (len(frame), 1)
        assert set(proposal.meta["llm_call_ids"]) <= set(calls)


def test_an_endpoint_nobody_listens_on_makes_the_proposer_unavailable(context):
    llm = make_llm_proposer("any-model", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=2,
                            backoff_s=0.01, timeout_s=5)
    with pytest.raises(ProposerUnavailable, match="failed after 2 retries: APIConnectionError"):
        llm.propose(context, 2, np.random.default_rng(0))
    [call] = [e for e in llm.drain_events() if e["type"] == "llm_call"]
    assert call["error"] and len(call["retry_errors"]) == 2
