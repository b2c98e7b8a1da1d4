"""Seeds that follow the sweep's design rather than its inputs one by one: data seen more than
once (a data-constrained sweep) and several targets measured on the same runs.

Like the rest of the library (``agent.search.library``), nothing here knows a task: the
repeated-data pairs come from the data (``agent.search.summary.repeated_data``), the shapes
for several targets are the library's own, passed in.
"""
from __future__ import annotations

from agent.problem import Problem
from agent.search.summary import is_rate
from agent.search.terms import Names, Shape, all_and_all_but_one, per_target, rest_additive, scaled


def repetition_law(entry: dict, S, L, inf, n) -> str | None:
    """Muennighoff et al.'s data-constrained law: repeated data is worth less with every pass.

    The data term sees the effective data ``D' = u*(1 + r*(1 - exp(-R/r)))`` where ``R`` is the
    passes beyond the first over a pool of ``u`` unique items: ``t/u - 1`` for tokens ``t`` seen
    (``mode="tokens"``), ``e - 1`` for an epoch count ``e`` (``mode="epochs"``); below one pass D'
    is just the data seen.  ``r`` (fitted) is how many repetitions are worth anything: a large
    ``r`` recovers the plain additive law.  The other scale inputs add power terms.
    """
    seen, pool = entry["seen"], entry["pool"]
    if pool not in S or (entry["mode"] == "tokens" and seen not in S):
        return None
    r = n("k")
    if entry["mode"] == "epochs":
        data = f"{scaled(pool, inf[pool])}*min({seen}, 1)*(1 + {r}*(1 - exp(-max({seen} - 1, 0)/{r})))"
    else:
        ref = inf[seen].get("reference", 1.0)
        data = f"min({seen}, {pool})/{ref:g}*(1 + {r}*(1 - exp(-max({seen}/{pool} - 1, 0)/{r})))"
    rest = [x for x in S if x not in (seen, pool)]
    return f"{n('c')} + {n('c')}*({data})**(-{n('a')})" + rest_additive(rest, L, inf, n)


SHARED_EXPONENT_SHAPES = ("additive_power", "multiplicative_power", "drifting_exponent", "interacting_product",
                          "interacting_product_no_floor", "power_sum")
LEVEL_SHAPES = ("additive_power", "multiplicative_power")


def shared_target_seeds(problem: Problem, summary: dict, shapes: dict[str, Shape]) -> list[tuple[str, tuple[str, ...]]]:
    """Several targets measured on the same runs: seeds whose targets share what the runs share.

    - ``<shape>+shared_exponents``: every target gets the literature form with its own
      coefficients but one set of exponents (domains of one model family improve at the same
      rates), so the cap that cannot hold the form once per target can hold it shared.
    - ``shared_level``: one target's law is the level every other target follows through
      ``c + A*exp(-k*level)`` (Gadre et al.: downstream error falls exponentially with the loss),
      and a target that is a rate also through a sigmoid bounded by what a rate can reach
      (``rate_sigmoid_link``).  The level is written on a helper line; each target in turn is the level.
    """
    info = summary["inputs"]
    S = [x for x in problem.inputs if info[x]["scale_like"]]
    if len(problem.targets) < 2 or not S:  # without a scale input there is no exponent or level to share
        return []
    L = [scaled(x, info[x]) for x in problem.inputs if not info[x]["scale_like"]]
    out = []
    for label in SHARED_EXPONENT_SHAPES:
        lines = per_target(problem, summary, lambda names: shapes[label](S, L, info, names),
                           shared=frozenset({"a", "g", "e"}))
        if lines:
            out.append((f"{label}+shared_exponents[{','.join(problem.inputs)}]", lines))
    helper = "level"
    while helper in problem.inputs or helper in problem.targets:
        helper += "_"
    for label in LEVEL_SHAPES:
        for lead in problem.targets:
            for tag, link in LINKS.items():
                names = Names("", summary["targets"][lead]["trend"])  # each seed names its constants afresh
                expr = shapes[label](S, L, info, names)
                if expr is None:
                    break
                others = [link(t, summary["targets"][t], helper, names) for t in problem.targets if t != lead]
                if all(others):
                    lines = (f"{helper} = {expr}", f"{lead} = {helper}", *others)
                    out.append((f"shared_level+{label}[{lead}]{tag}", lines))
    return out


def exp_link(target: str, info: dict, level: str, n) -> str:
    """Gadre et al.: a downstream metric moves exponentially with the loss, ``c + A*exp(-k*level)``."""
    return f"{target} = {n('c')} + {n('c')}*exp(-{n('k')}*{level})"


def rate_sigmoid_link(target: str, info: dict, level: str, n) -> str | None:
    """A rate (every observed value in [0, 1]: an accuracy, a win rate, an error rate) as a sigmoid of
    the loss, bounded by what a rate can reach: an accuracy rising along the axis climbs from its
    chance level ``c`` (fitted) to 1 as the loss falls, an error rate falls from ``c`` to 0 (the
    sigmoid of the loss in downstream-task scaling, e.g. the Llama 3 report's accuracy against
    negative log-likelihood).  None for a target that is not a rate or has no trend."""
    if not is_rate(info["min"], info["max"]) or not info["trend"]:
        return None
    k, m = n("k"), n("m")
    rising = sum(info["trend"].values()) > 0
    if rising:  # seeds are written over the normalised target (``agent.search.units``): 1 is 1/reference
        c, one = n("c"), f"{1 / info['reference']:g}"
        return f"{target} = {c} + ({one} - {c})/(1 + exp({k}*({level} - {m})))"
    return f"{target} = {n('c')}/(1 + exp(-{k}*({level} - {m})))"


LINKS = {"": exp_link, "+rate_sigmoid": rate_sigmoid_link}  # label suffix -> link


def repetition_seeds(problem: Problem, summary: dict) -> list[tuple[str, tuple[str, ...]]]:
    """One data-constrained seed per (seen, pool) pair the summary found (``summary.repeated_data``),
    over all inputs (and, from four inputs, over all but one that keep the pair): the design of such a
    sweep, and only there (no other subset is seeded)."""
    info = summary["inputs"]
    out = []
    for entry in summary.get("repeated") or ():
        for k, subset in enumerate(all_and_all_but_one(list(problem.inputs))):
            if entry["seen"] not in subset or entry["pool"] not in subset:
                continue
            S = [x for x in subset if info[x]["scale_like"] and (x != entry["seen"] or entry["mode"] == "tokens")]
            L = [scaled(x, info[x]) for x in subset if not info[x]["scale_like"] and x != entry["seen"]]
            lines = per_target(problem, summary, lambda names: repetition_law(entry, S, L, info, names))
            if lines:
                over = "" if k == 0 else f";{','.join(subset)}"  # the full set keeps its short label
                out.append((f"data_repetition[{entry['seen']}/{entry['pool']}:{entry['mode']}{over}]", lines))
    return out
