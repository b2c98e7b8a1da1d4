"""Prompts for the LLM proposer, rendered from the text templates in ``templates/``.

Templates are filled with :class:`string.Template`, which only substitutes
values: text that came from an LLM (laws quoted in rejections) is inserted
verbatim and never interpreted.
"""
from __future__ import annotations

import functools
import json
from importlib import resources
from string import Template
from typing import Any, Sequence

from agent.expressions import ALLOWED_FUNCTIONS
from agent.llm.summary import render_summary
from agent.problem import Problem
from agent.search.records import Candidate

MAX_QUOTED_CHARS = 300  # a quoted law or reason longer than this is cut, to bound the prompt
SCORE_KEYS = ("r2", "nmse", "nmae")

Message = dict[str, str]


@functools.lru_cache(maxsize=None)
def load_template(name: str) -> Template:
    text = resources.files("agent.llm").joinpath("templates", f"{name}.txt").read_text(encoding="utf-8")
    return Template(text)


def propose_messages(
    problem: Problem,
    summary: dict[str, Any],
    *,
    parent: Candidate | None,
    inspirations: Sequence[Candidate],
    rejections: Sequence[tuple[Sequence[str], str]],
    n_laws: int,
) -> list[Message]:
    """The system and user messages asking for ``n_laws`` new laws."""
    user = load_template("propose").substitute(
        task=_task_text(problem),
        summary=render_summary(summary),
        targets_text=_names(problem.targets),
        inputs_text=", ".join(problem.inputs),
        functions_text=", ".join(ALLOWED_FUNCTIONS),
        group_note=" separately for every group" if problem.group else "",
        max_constants=problem.max_constants,
        parent_section=_parent_section(parent),
        inspirations_section=_inspirations_section(inspirations),
        rejections_section=_rejections_section(rejections),
        n_laws=n_laws,
        example=json.dumps(example_reply(problem)),
    )
    return [
        {"role": "system", "content": load_template("system").substitute()},
        {"role": "user", "content": user},
    ]


def repair_messages(previous: Sequence[Message], reply: str, errors: Sequence[str], problem: Problem,
                    n_laws: int) -> list[Message]:
    """The conversation so far plus one request to fix the quoted errors."""
    user = load_template("repair").substitute(
        errors="\n".join(f"- {_cut(e)}" for e in errors) or "- the reply held no law",
        n_laws=n_laws,
        inputs_text=", ".join(problem.inputs),
        functions_text=", ".join(ALLOWED_FUNCTIONS),
        targets_text=_names(problem.targets),
    )
    return [*previous, {"role": "assistant", "content": reply}, {"role": "user", "content": user}]


def example_reply(problem: Problem) -> dict[str, Any]:
    """A format example that the parser accepts: a generic offset power law per target."""
    x = problem.inputs[0]
    n_targets = len(problem.targets)
    per_target = max(1, min(3, problem.max_constants // n_targets))
    lines, constants = [], {}
    for j, target in enumerate(problem.targets):
        shared = n_targets == 1 or problem.max_constants < n_targets  # cap too small for one each
        names = [f"{base}{'' if shared else j + 1}" for base in ("c", "a", "alpha")[:per_target]]
        if per_target == 1:
            lines.append(f"{target} = {names[0]} * {x}")
        elif per_target == 2:
            lines.append(f"{target} = {names[0]} + {names[1]} * {x}")
        else:
            lines.append(f"{target} = {names[0]} + {names[1]} * {x} ** (-{names[2]})")
        constants.update({n: {"init": 1.0} for n in names})
        if per_target == 3:
            constants[names[2]] = {"init": 0.5, "bounds": [0.0, 3.0]}
    return {"laws": [{"lines": lines, "constants": constants}], "rationale": "one short sentence"}


def _task_text(problem: Problem) -> str:
    parts = []
    if problem.description:
        parts.append(_cut(problem.description, 1500))
    parts.append(f"Predict {_names(problem.targets)} from {_names(problem.inputs)}.")
    if problem.group:
        parts.append(f"Rows belong to groups (column {problem.group}); one functional form is shared by all "
                     "groups while its constants are fitted per group.")
    if problem.axis:
        parts.append(f"Laws are judged on rows with the largest {_names(problem.axis)} (extrapolation).")
    return "\n".join(parts)


def _parent_section(parent: Candidate | None) -> str:
    if parent is None:
        return "CURRENT LAW\n(none yet: propose laws from scratch)\n"
    return "CURRENT LAW (improve on it)\n" + _candidate_text(parent) + "\n"


def _inspirations_section(inspirations: Sequence[Candidate]) -> str:
    if not inspirations:
        return ""
    return "OTHER LAWS TRIED\n" + "\n".join(_candidate_text(c) for c in inspirations) + "\n"


def _rejections_section(rejections: Sequence[tuple[Sequence[str], str]]) -> str:
    if not rejections:
        return ""
    rows = [f"- {_cut('; '.join(lines)) or '(a reply)'}  -> rejected: {_cut(reason)}" for lines, reason in rejections]
    return "RECENTLY REJECTED (avoid these mistakes)\n" + "\n".join(rows) + "\n"


def _candidate_text(candidate: Candidate) -> str:
    scores = ", ".join(f"{k} {candidate.validation[k]:.4g}" for k in SCORE_KEYS
                       if isinstance(candidate.validation.get(k), (int, float)))
    lines = "\n".join(f"    {_cut(line)}" for line in candidate.lines)
    return f"  law (validation: {scores or 'not scored'}; {candidate.n_constants} constants):\n{lines}"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def _cut(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
