"""LLM proposer: laws from any OpenAI-compatible chat model, validated by the law parser."""
from agent.llm.proposer import LLMProposer, make_llm_proposer
from agent.llm.settings import DEFAULT_PRICES, LLMConfigError, LLMSettings, ModelPrice
from agent.llm.summary import render_summary, summarize_data

__all__ = [
    "DEFAULT_PRICES", "LLMConfigError", "LLMProposer", "LLMSettings", "ModelPrice",
    "make_llm_proposer", "render_summary", "summarize_data",
]
