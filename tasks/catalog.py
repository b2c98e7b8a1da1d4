"""The bundled SLDBench tasks: one JSON spec per task in ``tasks/specs``."""
from __future__ import annotations

import functools
import json
from importlib import resources

from tasks.spec import TaskError, TaskSpec, load_spec_file, parse_spec

SLDBENCH_CITATION = (
    "Lin et al. 2026, Can Language Models Discover Scaling Laws? (SLDBench), ICLR 2026, arXiv 2507.21184"
)
# The paper's order (its tables read parallel, vocab, sft, domain, moe, data-constrained, lr/bsz, U-shaped).
TASK_ORDER = (
    "parallel_scaling_law",
    "vocab_scaling_law",
    "sft_scaling_law",
    "domain_mixture_scaling_law",
    "moe_scaling_law",
    "data_constrained_scaling_law",
    "lr_bsz_scaling_law",
    "easy_question_scaling_law",
)


@functools.lru_cache(maxsize=1)
def _bundled() -> dict[str, TaskSpec]:
    specs: dict[str, TaskSpec] = {}
    folder = resources.files("tasks") / "specs"
    for entry in folder.iterdir():
        if not entry.name.endswith(".json"):
            continue
        spec = parse_spec(json.loads(entry.read_text(encoding="utf-8")), source=f"tasks/specs/{entry.name}")
        if f"{spec.name}.json" != entry.name:
            raise TaskError(f"tasks/specs/{entry.name}: its name is {spec.name!r}; the file must be named after it")
        specs[spec.name] = spec
    rank = {n: i for i, n in enumerate(TASK_ORDER)}
    return dict(sorted(specs.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def task_names() -> list[str]:
    return list(_bundled())


def all_tasks() -> list[TaskSpec]:
    return list(_bundled().values())


def get_task(name: str) -> TaskSpec:
    """A bundled task by name, or a user-written spec given as a path to a ``.json`` file."""
    specs = _bundled()
    if name in specs:
        return specs[name]
    if name.endswith(".json"):
        return load_spec_file(name)
    raise TaskError(f"unknown task {name!r}; known tasks: {', '.join(specs)}")
