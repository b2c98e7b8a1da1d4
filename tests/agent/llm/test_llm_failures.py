"""Retries with seeded backoff on timeouts, 429 and 5xx; endpoints that stay down; server quirks."""
import numpy as np
import pytest

from agent.llm.fake import connection_refused, rate_limited, server_error, status_error, timed_out
from agent.search.proposers.base import ProposerUnavailable
from llm_helpers import GOOD_LAW, events_of, reply


def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("error", [rate_limited, server_error, timed_out, connection_refused,
                                   lambda: server_error(502)])
def test_transient_errors_are_retried_then_succeed(make_proposer, context, error):
    proposer, fake = make_proposer([error(), error(), reply(GOOD_LAW)], max_retries=3)
    assert len(proposer.propose(context, 1, rng())) == 1
    assert len(fake.requests) == 3
    [call] = events_of(proposer, "llm_call")
    assert call["retries"] == 2 and call["error"] is None
    assert proposer.usage()["retries"] == 2


def test_backoff_doubles_with_seeded_jitter_and_is_bounded(make_proposer, context):
    def waits(seed):
        proposer, _ = make_proposer([server_error()] * 5 + [reply(GOOD_LAW)], max_retries=5, backoff_s=1.0,
                                    backoff_max_s=6.0, seed=seed)
        proposer.propose(context, 1, rng())
        return proposer.sleeps

    first = waits(0)
    assert first == waits(0)  # same seed, same schedule
    assert first != waits(1)
    assert [0.5 <= w / base <= 1.5 for w, base in zip(first, [1, 2, 4, 6, 6])] == [True] * 5
    assert max(first) <= 9.0


def test_retry_after_header_is_respected_up_to_the_cap(make_proposer, context):
    proposer, _ = make_proposer([rate_limited(retry_after=5), reply(GOOD_LAW)], backoff_s=0.1, backoff_max_s=30)
    proposer.propose(context, 1, rng())
    assert proposer.sleeps == [5.0]


def test_an_endpoint_that_stays_down_raises_proposer_unavailable(make_proposer, context):
    proposer, fake = make_proposer([connection_refused()] * 4, max_retries=3)
    with pytest.raises(ProposerUnavailable, match="failed after 3 retries: APIConnectionError"):
        proposer.propose(context, 1, rng())
    assert len(fake.requests) == 4 and len(proposer.sleeps) == 3
    [call] = events_of(proposer, "llm_call")
    assert call["error"] and len(call["retry_errors"]) == 3
    assert proposer.usage()["failed_calls"] == 1


def test_persistent_rate_limiting_also_makes_the_proposer_unavailable(make_proposer, context):
    proposer, _ = make_proposer([rate_limited()] * 3, max_retries=2)
    with pytest.raises(ProposerUnavailable, match="HTTP 429"):
        proposer.propose(context, 1, rng())


@pytest.mark.parametrize("status", [401, 403, 404])
def test_wrong_key_or_model_is_not_retried(make_proposer, context, status):
    proposer, fake = make_proposer([status_error(status, "nope")])
    with pytest.raises(ProposerUnavailable, match=f"HTTP {status}"):
        proposer.propose(context, 1, rng())
    assert len(fake.requests) == 1


def test_a_server_that_refuses_json_mode_is_asked_again_without_it(make_proposer, context):
    refusal = status_error(400, "response_format json_object is not supported by this model")
    proposer, fake = make_proposer([refusal, reply(GOOD_LAW), reply(GOOD_LAW)])
    proposer.propose(context, 1, rng())
    proposer.propose(context, 1, rng())
    assert "response_format" in fake.requests[0]
    assert "response_format" not in fake.requests[1] and "response_format" not in fake.requests[2]
    assert proposer.state_dict()["server_flags"]["json_mode"] is False


def test_json_mode_on_is_not_dropped(make_proposer, context):
    refusal = status_error(400, "response_format is not supported")
    proposer, fake = make_proposer([refusal, reply(GOOD_LAW)], json_mode="on")
    assert proposer.propose(context, 1, rng()) == []  # this request failed; no silent downgrade
    assert len(fake.requests) == 1


def test_max_tokens_switches_to_max_completion_tokens_when_refused(make_proposer, context):
    refusal = status_error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
    proposer, fake = make_proposer([refusal, reply(GOOD_LAW)], max_tokens=300)
    assert len(proposer.propose(context, 1, rng())) == 1
    assert fake.requests[1]["max_completion_tokens"] == 300 and "max_tokens" not in fake.requests[1]


def test_other_bad_requests_fail_that_call_only_until_they_repeat(make_proposer, context):
    bad = lambda: status_error(400, "prompt is too long")  # noqa: E731
    proposer, fake = make_proposer([bad(), reply(GOOD_LAW), bad(), bad(), bad()], laws_per_call=1)
    assert len(proposer.propose(context, 2, rng())) == 1  # the second call still worked
    assert proposer.usage()["failed_calls"] == 1
    with pytest.raises(ProposerUnavailable, match="refused 3 requests in a row"):
        proposer.propose(context, 3, rng())


def test_a_down_endpoint_is_left_alone_for_a_while_then_tried_again(make_proposer, context):
    proposer, fake = make_proposer([connection_refused()] * 2 + [reply(GOOD_LAW)], max_retries=1, down_cooldown=2)
    with pytest.raises(ProposerUnavailable, match="failed after 1 retries"):
        proposer.propose(context, 1, rng())
    for _ in range(2):
        with pytest.raises(ProposerUnavailable, match="still considered down"):
            proposer.propose(context, 1, rng())
    assert len(fake.requests) == 2  # no traffic while cooling down
    assert len(proposer.propose(context, 1, rng())) == 1
    assert len(fake.requests) == 3


def test_calls_that_never_went_out_are_not_counted(make_proposer, context):
    proposer, fake = make_proposer([connection_refused()] * 2, max_retries=1, laws_per_call=1)
    with pytest.raises(ProposerUnavailable):
        proposer.propose(context, 3, rng())  # three calls planned; the first finds the endpoint down
    assert len(fake.requests) == 2 and proposer.usage()["calls"] == 1
