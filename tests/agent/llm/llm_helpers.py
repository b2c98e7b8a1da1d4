"""Helpers for the LLM proposer tests (imported by the test modules)."""
from __future__ import annotations

import json

from agent.search.records import Candidate

GOOD_LAW = "loss = E + A / N ** alpha + B / D ** beta"


def parent_candidate(cid: int = 7, lines=("loss = E + A / N ** alpha",), r2: float = 0.91) -> Candidate:
    return Candidate(id=cid, generation=1, lines=tuple(lines), proposer="offline", status="ok",
                     n_constants=3, validation={"r2": r2, "nmse": 1 - r2}, score=r2)


def reply(*laws, **extra) -> str:
    """A well-formed JSON reply holding the given laws (a string or a list of lines each)."""
    items = [{"lines": [law] if isinstance(law, str) else law} for law in laws]
    return json.dumps({"laws": items, "rationale": "because", **extra})


def events_of(proposer, kind: str) -> list[dict]:
    return [e for e in proposer.drain_events() if e["type"] == kind]
