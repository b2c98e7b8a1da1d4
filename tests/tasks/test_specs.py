"""The bundled task specs: strict, consistent with the core's parser and with the data."""
from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from agent.problem import Problem
from tasks import TaskError, TaskSpec, all_tasks, get_task, parse_spec, task_names
from tasks.catalog import TASK_ORDER

# task -> (constants in the human law = the cap except where noted, groups with published constants)
EXPECTED = {
    "parallel_scaling_law": (4, 4, 2),
    "vocab_scaling_law": (7, 7, 1),
    "sft_scaling_law": (4, 4, 42),
    "domain_mixture_scaling_law": (35, 35, 4),
    "moe_scaling_law": (6, 6, 1),
    "data_constrained_scaling_law": (7, 7, 1),
    "lr_bsz_scaling_law": (12, 12, 1),
    "easy_question_scaling_law": (6, 6, 9),
}


def minimal_spec(**overrides) -> dict:
    spec = {
        "name": "toy_law", "inputs": ["N"], "targets": ["loss"], "group": "group", "axis": ["N"],
        "max_constants": 3,
        "human_law": {"source": "a paper", "lines": ["loss = A/N**alpha + E"],
                      "constants": {"all_data": {"A": 400.0, "alpha": 0.3, "E": 1.7}}},
    }
    spec.update(overrides)
    return spec


def test_the_eight_sldbench_tasks_are_bundled_in_the_papers_order():
    assert task_names() == list(TASK_ORDER) == list(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_human_law_parses_within_its_cap_with_constants_for_every_group(name):
    spec = get_task(name)
    n_constants, cap, n_groups = EXPECTED[name]
    law = spec.law()
    assert (law.n_constants, spec.max_constants, len(spec.groups)) == (n_constants, cap, n_groups)
    assert law.targets == spec.targets and law.inputs == spec.inputs
    for values in spec.human_law.constants.values():
        assert set(values) == set(law.constants)


def test_a_spec_converts_to_the_core_problem():
    spec = get_task("data_constrained_scaling_law")
    problem = spec.problem()
    assert problem == Problem(inputs=("unique_tokens", "params", "tokens"), targets=("loss",), group="group",
                              axis=("tokens", "params"), max_constants=7, description=spec.description)


def test_the_domain_mixture_has_five_targets_and_no_scale_axis():
    spec = get_task("domain_mixture_scaling_law")
    assert len(spec.targets) == 5 and spec.axis == ()
    assert spec.law().depends_on("loss_domain_2") == ("c2", "k2", "t21", "t22", "t23", "t24", "t25")


def test_every_task_has_a_description_and_a_citation():
    for spec in all_tasks():
        assert len(spec.description) > 40 and "arXiv" in spec.citation and spec.group == "group"


def test_an_unknown_field_is_rejected_not_ignored():
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        TaskSpec.model_validate(minimal_spec(max_constant=5))
    with pytest.raises(TaskError, match=r"toy\.json: max_constant: Extra inputs are not permitted"):
        parse_spec(minimal_spec(max_constant=5), source="toy.json")


def test_an_unknown_field_inside_the_human_law_is_rejected():
    spec = minimal_spec()
    spec["human_law"]["note"] = "typo"
    with pytest.raises(TaskError, match="human_law.note"):
        parse_spec(spec)


def test_a_minimal_valid_spec_loads():
    spec = parse_spec(minimal_spec())
    assert spec.law().constants == ("A", "alpha", "E")


@pytest.mark.parametrize("overrides, reason", [
    ({"max_constants": 2}, "more than the cap of 2"),
    ({"axis": ["D"]}, "axis column.*D.*not inputs"),
    ({"targets": ["N"]}, "both inputs and targets"),
    ({"group": "N"}, "group column"),
    ({"inputs": ["N", "N"]}, "listed twice"),
    ({"inputs": ["N-1"]}, "not a usable column name"),
    ({"name": "Toy Law"}, "name"),
    ({"max_constants": 0}, "max_constants"),
])
def test_inconsistent_specs_are_rejected_with_the_reason(overrides, reason):
    with pytest.raises(TaskError, match=reason):
        parse_spec(minimal_spec(**overrides))


@pytest.mark.parametrize("lines, reason", [
    (["loss = __import__('os').system('x')"], "cannot be called"),
    (["loss = A/N**alpha +"], "syntax error"),
    (["loss = foo(N)"], "unknown function 'foo'"),
])
def test_a_human_law_that_does_not_parse_is_rejected(lines, reason):
    spec = minimal_spec()
    spec["human_law"]["lines"] = lines
    with pytest.raises(TaskError, match=reason):
        parse_spec(spec)


def test_published_constants_must_match_the_laws_constants():
    spec = minimal_spec()
    spec["human_law"]["constants"]["all_data"] = {"A": 1.0, "alpha": 0.3, "B": 2.0}
    with pytest.raises(TaskError, match="missing E; unknown B"):
        parse_spec(spec)
    spec["human_law"]["constants"]["all_data"] = {"A": float("nan"), "alpha": 0.3, "E": 1.0}
    with pytest.raises(TaskError, match="not finite"):
        parse_spec(spec)


def test_an_unknown_task_names_the_known_ones():
    with pytest.raises(TaskError, match="unknown task 'parallel'; known tasks: parallel_scaling_law, vocab"):
        get_task("parallel")


def test_a_spec_file_can_stand_for_a_task(tmp_path):
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(minimal_spec()))
    assert get_task(str(path)).name == "toy_law"
    path.write_text("{not json")
    with pytest.raises(TaskError, match="not valid JSON"):
        get_task(str(path))
    with pytest.raises(TaskError, match="no task spec file"):
        get_task(str(tmp_path / "missing.json"))


def test_the_specs_carry_exactly_the_human_laws_of_the_shared_copy(sldbench_dir):
    shared = json.loads((sldbench_dir / "human_laws.json").read_text())
    for spec in all_tasks():
        assert list(spec.human_law.lines) == shared[spec.name]["law"]
        assert spec.human_law.constants == shared[spec.name]["constants"]
