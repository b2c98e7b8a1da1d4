"""Plain records that flow through a search: proposals in, candidates out.

Records are frozen and JSON-serializable (``to_dict``/``from_dict``) so that a
run can be checkpointed to a file or a database and resumed exactly.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


SEARCHED = "searched"  # proposed and screened during the search
FINALIST = "finalist"  # a searched law re-scored with careful fits before reporting (see ``Search.refine``)
_OLD_FINALIST_PREFIX = "finalist:"  # how candidates stored before ``kind`` existed marked finalists


@dataclass(frozen=True)
class Proposal:
    """A law suggested by a proposer; untrusted until the parser accepts it."""

    lines: tuple[str, ...]
    proposer: str
    parent_ids: tuple[int, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)
    kind: str = SEARCHED  # FINALIST: a law already searched, proposed again to be re-scored with careful fits

    @property
    def finalist(self) -> bool:
        return self.kind == FINALIST


@dataclass(frozen=True)
class Candidate:
    """One evaluated (or rejected) law of a run.

    ``score`` is the selection score on validation: higher is better; it is
    ``-inf`` for rejected candidates.  ``constants`` are fitted on the fit split,
    one mapping per group.
    """

    id: int
    generation: int
    lines: tuple[str, ...]
    proposer: str
    status: str  # "ok" | "rejected"
    reason: str | None = None
    canonical: str = ""
    parent_ids: tuple[int, ...] = ()
    island: int = 0
    n_constants: int = 0
    complexity: int = 0
    constants: dict[str, dict[str, float]] = field(default_factory=dict)
    fit: dict[str, Any] = field(default_factory=dict)  # {"loss": objective, "method": fit loss}
    validation: dict[str, float] = field(default_factory=dict)
    score: float = float("-inf")
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    kind: str = SEARCHED  # or FINALIST: re-scored with careful fits before reporting (see ``Search.refine``)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def finalist(self) -> bool:
        return self.kind == FINALIST

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lines"] = list(self.lines)
        d["parent_ids"] = list(self.parent_ids)
        d["score"] = _finite_or_none(self.score)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Candidate":
        d = dict(d)
        d["lines"] = tuple(d["lines"])
        d["parent_ids"] = tuple(d.get("parent_ids") or ())
        d["score"] = float("-inf") if d.get("score") is None else float(d["score"])
        if "kind" not in d:  # stored before candidates had a kind: the proposer's name said it
            d["kind"] = FINALIST if str(d.get("proposer", "")).startswith(_OLD_FINALIST_PREFIX) else SEARCHED
        return cls(**d)


def _finite_or_none(x: float) -> float | None:
    return None if x != x or x in (float("inf"), float("-inf")) else x
