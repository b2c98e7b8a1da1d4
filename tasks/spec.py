"""A task definition as data: columns, cap, extrapolation axis and the human law.

Specs are strict (unknown fields are errors) because a typo in a hand-written
spec, say ``max_constant``, would otherwise silently fall back to a default.
The human law is parsed with the core's parser at validation time, so a spec
whose law does not parse, exceeds the cap or lacks constants never loads.
"""
from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent.errors import LawError, SldError
from agent.expressions import Law, parse_law
from agent.problem import Problem

_COLUMN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class TaskError(SldError):
    """A task cannot be found, read or loaded; the message says how to fix it."""


class HumanLaw(BaseModel):
    """The literature's law for a task and its published constants per group."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1)
    lines: tuple[str, ...] = Field(min_length=1)
    constants: dict[str, dict[str, float]] = Field(default_factory=dict)

    @field_validator("constants")
    @classmethod
    def _finite(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for group, values in value.items():
            bad = [k for k, v in values.items() if not math.isfinite(v)]
            if bad:
                raise ValueError(f"group {group!r}: constant(s) {', '.join(bad)} are not finite")
        return value


class TaskSpec(BaseModel):
    """One bundled (or user-written) task; ``problem()`` hands it to the search core."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = ""
    citation: str = ""
    inputs: tuple[str, ...] = Field(min_length=1)
    targets: tuple[str, ...] = Field(min_length=1)
    group: str | None = None
    axis: tuple[str, ...] = ()
    max_constants: int = Field(ge=1, le=200)
    human_law: HumanLaw | None = None

    @field_validator("inputs", "targets", "axis")
    @classmethod
    def _columns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for col in value:
            if not re.match(_COLUMN, col):
                raise ValueError(f"{col!r} is not a usable column name")
        if len(set(value)) != len(value):
            raise ValueError("a column is listed twice")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "TaskSpec":
        both = set(self.inputs) & set(self.targets)
        if both:
            raise ValueError(f"column(s) {', '.join(sorted(both))} are both inputs and targets")
        if self.group and self.group in (*self.inputs, *self.targets):
            raise ValueError(f"the group column {self.group!r} cannot be an input or a target")
        stray = [c for c in self.axis if c not in self.inputs]
        if stray:
            raise ValueError(f"axis column(s) {', '.join(stray)} are not inputs")
        if self.human_law is not None:
            try:
                law = self.law()
            except LawError as exc:
                raise ValueError(f"human_law: {exc}") from None
            want = set(law.constants)
            for group, values in self.human_law.constants.items():
                if set(values) != want:
                    missing, extra = sorted(want - set(values)), sorted(set(values) - want)
                    detail = "; ".join(
                        part for part in (missing and f"missing {', '.join(missing)}",
                                          extra and f"unknown {', '.join(extra)}") if part
                    )
                    raise ValueError(f"human_law.constants[{group!r}]: {detail}")
        return self

    def problem(self) -> Problem:
        return Problem(
            inputs=self.inputs, targets=self.targets, group=self.group, axis=self.axis,
            max_constants=self.max_constants, description=self.description,
        )

    def law(self) -> Law:
        """The human law, parsed under the task's cap."""
        if self.human_law is None:
            raise TaskError(f"task {self.name!r} has no human law")
        return _parse(self.human_law.lines, self.inputs, self.targets, self.max_constants)

    @property
    def groups(self) -> list[str]:
        """Groups that have published constants (empty without a human law)."""
        return list(self.human_law.constants) if self.human_law else []


@functools.lru_cache(maxsize=64)
def _parse(lines: tuple[str, ...], inputs: tuple[str, ...], targets: tuple[str, ...], cap: int) -> Law:
    return parse_law(lines, inputs, targets, max_constants=cap)


def parse_spec(data: Mapping[str, Any], source: str = "task spec") -> TaskSpec:
    """Validate a spec; any problem becomes one :class:`TaskError` line naming where."""
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        loc = ".".join(str(part) for part in first["loc"])
        where = f"{loc}: " if loc else ""  # model-level checks name their field in the message
        msg = first["msg"].removeprefix("Value error, ")
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise TaskError(f"{source}: {where}{msg}{more}") from None
    except LawError as exc:  # defensive: pydantic normally wraps it
        raise TaskError(f"{source}: human_law: {exc}") from None


def load_spec_file(path: str | Path) -> TaskSpec:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"no task spec file {str(path)!r}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read task spec {str(path)!r}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise TaskError(f"{path}: a task spec must be a JSON object")
    return parse_spec(data, source=str(path))
