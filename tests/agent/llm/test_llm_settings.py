"""Settings: strict, the API key never leaves the process, prices, the factory the faces call."""
import json

import numpy as np
import pytest
from pydantic import ValidationError

from agent.llm import LLMConfigError, LLMProposer, LLMSettings, make_llm_proposer
from agent.llm.fake import FakeChatClient, status_error
from agent.search.proposers.base import ProposerUnavailable
from llm_helpers import GOOD_LAW, reply

SECRET = "sk-test-SECRET-0123456789abcdef"


def test_unknown_settings_are_refused():
    with pytest.raises(ValidationError, match="temprature"):
        LLMSettings(model="m", temprature=0.5)


def test_the_key_is_excluded_from_repr_and_dumps():
    settings = LLMSettings(model="m", api_key=SECRET)
    assert SECRET not in repr(settings)
    assert SECRET not in json.dumps(settings.model_dump(mode="json"))
    assert SECRET not in settings.model_dump_json()
    assert "api_key" not in settings.model_dump()
    assert settings.resolved_api_key() == SECRET


def test_the_key_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://llm.example:8000/v1")
    settings = LLMSettings(model="m")
    assert settings.resolved_api_key() == SECRET
    assert settings.resolved_base_url() == "http://llm.example:8000/v1"


def test_openai_itself_without_a_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigError, match="set OPENAI_API_KEY"):
        make_llm_proposer("gpt-4o-mini")


def test_a_local_server_needs_no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proposer = make_llm_proposer("smollm2", base_url="http://127.0.0.1:8080/v1")
    assert str(proposer.transport.client.base_url).startswith("http://127.0.0.1:8080/v1")


def test_the_factory_turns_bad_options_into_one_line_errors():
    with pytest.raises(LLMConfigError, match="invalid LLM option temperature"):
        make_llm_proposer("m", base_url="http://x/v1", temperature=7)
    with pytest.raises(LLMConfigError, match="invalid LLM option bogus"):
        make_llm_proposer("m", base_url="http://x/v1", bogus=1)


def test_the_factory_passes_options_and_the_client_seam():
    fake = FakeChatClient()
    proposer = make_llm_proposer("m", api_key=SECRET, client=fake, max_calls=9, concurrency=4, name="llm-b")
    assert isinstance(proposer, LLMProposer) and proposer.transport.client is fake
    assert (proposer.settings.max_calls, proposer.settings.concurrency, proposer.name) == (9, 4, "llm-b")


def test_prices_match_dated_snapshots_but_not_other_models():
    settings = LLMSettings(model="m")
    assert settings.price_for("gpt-4o-mini-2024-07-18") == settings.prices["gpt-4o-mini"]
    assert settings.price_for("gpt-5-pro") is None
    assert settings.cost_usd("gpt-4o", 1_000_000, 1_000_000) == pytest.approx(12.5)


def test_a_custom_price_table_replaces_the_default():
    settings = LLMSettings(model="m", prices={"m": {"prompt": 1.0, "completion": 2.0}})
    assert settings.cost_usd("m", 500_000, 500_000) == pytest.approx(1.5)
    assert settings.price_for("gpt-4o") is None


def test_the_key_never_appears_in_events_state_usage_or_errors(context, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    auth_error = status_error(401, f"Incorrect API key provided: {SECRET}")
    fake = FakeChatClient(["junk", reply(GOOD_LAW), auth_error])
    proposer = LLMProposer(LLMSettings(model="gpt-4o-mini", concurrency=1), client=fake)
    proposals = proposer.propose(context, 1, np.random.default_rng(0))
    with pytest.raises(ProposerUnavailable) as raised:
        proposer.propose(context, 1, np.random.default_rng(0))
    dumped = json.dumps([proposer.drain_events(), proposer.state_dict(), proposer.usage(),
                         [dict(p.meta) for p in proposals], proposer.settings.model_dump(mode="json")])
    assert "SECRET" not in dumped and "SECRET" not in str(raised.value)
    assert "***" in str(raised.value)


def test_a_real_client_is_built_with_the_key_but_does_not_show_it(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proposer = make_llm_proposer("gpt-4o-mini", api_key=SECRET)
    assert SECRET not in json.dumps(proposer.state_dict()) and SECRET not in repr(proposer.settings)
    assert proposer.transport.redact(f"bad key {SECRET}") == "bad key ***"
