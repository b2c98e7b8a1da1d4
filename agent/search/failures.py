"""Why a search came back empty, in one line a user can act on."""
from __future__ import annotations

import re


def empty_search_message(candidates, stop_reason: str | None, cap: int) -> str:
    """Why a search has nothing to report: how many candidates failed at which stage, and the
    most common reason at each."""
    if not candidates:
        return (f"no law was evaluated: no proposal parsed within the cap of {cap} constants (the search "
                f"stopped: {stop_reason or 'no proposals'}); raise the constant cap")
    stages: dict[str, list[str]] = {}
    for c in candidates:
        reason = c.reason or "unknown"
        stage, _, detail = reason.partition(": ") if reason.startswith(("parse: ", "fit: ")) else \
            ("validation", "", reason)
        stages.setdefault(stage, []).append(detail)
    parts = []
    for stage, details in sorted(stages.items(), key=lambda kv: -len(kv[1])):
        kinds = [re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "#", d) for d in details]  # "on 3 of 12 rows" alike
        common = max(sorted(set(kinds)), key=kinds.count)
        parts.append(f"{len(details)} failed at {stage} (most often: {details[kinds.index(common)]})")
    return f"no candidate could be fitted among {len(candidates)}: " + "; ".join(parts)
