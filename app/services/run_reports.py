"""What a worker stores beside a run: its progress, and at the end the reports that go with the final
law (the one-time test score, the stored uncertainty, the comparison with the task's human law, who
proposed the law and its ancestry), so that reading them later recomputes nothing."""
from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from agent.errors import SldError
from agent.search import FinalLaw, Search, report_on_test


def final_reports(search: Search, final: dict[str, Any], train: pd.DataFrame, test: pd.DataFrame,
                  human_law: Mapping[str, Any] | None) -> dict[str, Any]:
    """The one-time test score, the law's uncertainty and the comparison with the human law."""
    from app.services.compare import compare_laws
    from app.services.uncertainty import uncertainty_report

    out: dict[str, Any] = {}
    problem = search.problem
    if len(test):
        try:
            out["test"] = report_on_test(FinalLaw.from_dict(final), problem, test)
        except SldError as exc:
            out["test_error"] = str(exc)
    out.update(uncertainty_report(final, problem, train, search.config.seed))
    if human_law:
        human = {"name": "human", "lines": human_law["lines"], "constants": human_law.get("constants")}
        try:
            out["comparison"] = compare_laws(problem, train, test, [{"name": "discovered", "lines": final["law"]}, human],
                                             seed=search.config.seed, n_folds=search.config.n_folds)
        except SldError as exc:
            out["comparison_error"] = str(exc)
    return out


def best_facts(search: Search) -> dict[str, Any]:
    """Who proposed the reported law, its score and its ancestry, stored with the final law
    so that reading the best law is one query."""
    from app.services.laws import lineage_of

    best = search.chosen()
    by_id = {c.id: c for c in search.candidates}
    return {"proposer": best.proposer, "score": best.score,
            "lineage": [step.model_dump() for step in lineage_of(best, by_id.get)]}


def progress_of(search: Search) -> dict[str, Any]:
    progress = dict(search.progress)
    usage = {p.name: p.usage() for p, _ in search.proposers if p.usage()}
    if usage:
        progress["proposers"] = usage
    return progress


def build_proposers(specs: list[dict[str, Any]], endpoints=None):
    """(proposer, weight) pairs from a stored run spec; None means the offline proposer alone.

    An LLM proposer talks only to the operator's endpoint the run names (``endpoints``).
    """
    if not specs or all(p["kind"] == "offline" for p in specs):
        return None
    from agent.search import OfflineProposer

    out = []
    for p in specs:
        if p["kind"] == "offline":
            out.append((OfflineProposer(), float(p["weight"])))
        else:
            from agent.llm import LLMProposer
            from app.services.llm_endpoints import llm_settings_for_run

            out.append((LLMProposer(llm_settings_for_run(p["llm"], endpoints or {})), float(p["weight"])))
    return out
