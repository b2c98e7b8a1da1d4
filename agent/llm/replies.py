"""Reading an LLM reply: find the JSON object, then let the law parser judge every law.

Nothing here evaluates the reply: ``json`` decodes it and
:func:`agent.expressions.parse_law` (ast + whitelist) validates each law.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from agent.errors import LawError
from agent.expressions import Law, parse_law
from agent.problem import Problem

MAX_REPLY_CHARS = 60_000
MAX_DECODE_STARTS = 64  # how many '{' positions to try in chatty replies
RATIONALE_CHARS = 300
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_LAW_KEYS = ("lines", "law", "formula", "expression", "equation")
_LIST_KEYS = ("laws", "law", "formulas", "equations")


class ReplyError(ValueError):
    """The reply as a whole is unusable (no JSON, no laws); the message says why."""


@dataclass(frozen=True)
class Suggestion:
    """A law that the parser accepted, with the LLM's optional hints for its constants."""

    law: Law
    init: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    rationale: str = ""


@dataclass(frozen=True)
class Rejection:
    lines: tuple[str, ...]
    reason: str


@dataclass
class ReadReply:
    suggestions: list[Suggestion] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    rationale: str = ""


def extract_json(text: str | None) -> dict[str, Any]:
    """The first JSON object in ``text``: bare, inside code fences, or after chatter."""
    if text is None or not text.strip():
        raise ReplyError("the reply is empty")
    text = text[:MAX_REPLY_CHARS]
    for chunk in [*_FENCE.findall(text), text]:
        found = _first_object(chunk)
        if found is not None:
            return found
    raise ReplyError("the reply holds no JSON object")


def read_reply(text: str | None, problem: Problem, *, limit: int = 10) -> ReadReply:
    """Parse every law of a reply; raises :class:`ReplyError` when there is no law to judge."""
    obj = extract_json(text)
    items = _law_items(obj)
    if not items:
        raise ReplyError('the JSON object has no "laws" list')
    result = ReadReply(rationale=_text(obj.get("rationale")))
    seen: set[str] = set()
    for item in items[:limit]:
        lines, hints = _lines_and_hints(item)
        if isinstance(lines, str):  # an explanation of why the item is unusable
            result.rejections.append(Rejection((), lines))
            continue
        try:
            law = parse_law(lines, problem.inputs, problem.targets, max_constants=problem.max_constants)
        except LawError as exc:
            result.rejections.append(Rejection(lines, str(exc)))
            continue
        if law.canonical in seen:
            result.rejections.append(Rejection(lines, "repeats another law of the same reply"))
            continue
        seen.add(law.canonical)
        init, bounds = _constant_hints(hints, law.constants)
        rationale = _text(item.get("rationale")) if isinstance(item, dict) else ""
        result.suggestions.append(Suggestion(law, init, bounds, rationale or result.rationale))
    return result


def _first_object(chunk: str) -> dict[str, Any] | None:
    """The whole chunk as JSON, else the first embedded object that holds laws, else the first object."""
    stripped = chunk.strip()
    try:
        value = json.loads(stripped)
        if isinstance(value, dict):
            return value
        if isinstance(value, list):
            return {"laws": value}
    except (json.JSONDecodeError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    first = None
    start, tries = stripped.find("{"), 0
    while start >= 0 and tries < MAX_DECODE_STARTS:
        try:
            value, _ = decoder.raw_decode(stripped, start)
        except (json.JSONDecodeError, RecursionError):
            value = None
        if isinstance(value, dict):
            if _law_items(value):
                return value
            first = first or value
        # a truncated outer object fails to decode; an inner one may still hold a law
        start, tries = stripped.find("{", start + 1), tries + 1
    return first


def _law_items(obj: dict[str, Any]) -> list[Any]:
    for key in _LIST_KEYS:  # {"laws": [...]}, also the singular some models write
        value = obj.get(key)
        if isinstance(value, list) and value and (key == "laws" or not all(isinstance(v, str) for v in value)):
            return value
    laws = obj.get("laws")
    if isinstance(laws, (dict, str)):
        return [laws]
    if any(k in obj for k in _LAW_KEYS):
        return [obj]
    return []


def _lines_and_hints(item: Any) -> tuple[tuple[str, ...] | str, Any]:
    """The law's lines and its constants hints, or a string saying why there are none."""
    if isinstance(item, str):
        return (item,), None
    if isinstance(item, list):
        item = {"lines": item}
    if not isinstance(item, dict):
        return f"a law must be an object with \"lines\", got {type(item).__name__}", None
    raw = next((item[k] for k in _LAW_KEYS if k in item), None)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return 'a law object needs "lines": a list of strings', None
    if not all(isinstance(line, str) for line in raw):
        return 'every entry of "lines" must be a string', None
    return tuple(raw), item.get("constants")


def _constant_hints(hints: Any, constants: tuple[str, ...]) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Keep well-formed, finite hints for constants the law really has; ignore the rest."""
    init: dict[str, float] = {}
    bounds: dict[str, tuple[float, float]] = {}
    if not isinstance(hints, dict):
        return init, bounds
    for name, hint in hints.items():
        if name not in constants:
            continue
        if _finite(hint):
            init[name] = float(hint)
            continue
        if not isinstance(hint, dict):
            continue
        value = hint.get("init", hint.get("value"))
        if _finite(value):
            init[name] = float(value)
        pair = hint.get("bounds")
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_finite(b) for b in pair) \
                and float(pair[0]) < float(pair[1]):
            bounds[name] = (float(pair[0]), float(pair[1]))
    for name, (low, high) in bounds.items():
        if name in init:
            init[name] = min(max(init[name], low), high)
    return init, bounds


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and abs(value) < 1e15


def _text(value: Any) -> str:
    if not isinstance(value, str):
        return ""
    value = " ".join(value.split())
    return value[:RATIONALE_CHARS]
