"""Prompts: built from templates with the task, data, rules, parent, inspirations and rejections."""
import json

import pytest

from agent.expressions import ALLOWED_FUNCTIONS, parse_law
from agent.llm.prompt import example_reply, load_template, propose_messages, repair_messages
from agent.problem import Problem
from llm_helpers import parent_candidate


def user_text(problem, summary, **kw):
    args = {"parent": None, "inspirations": (), "rejections": (), "n_laws": 3, **kw}
    return propose_messages(problem, summary, **args)[-1]["content"]


def test_the_prompt_states_the_task_and_the_rules(problem, context):
    text = user_text(problem, context.summary)
    assert "Pretraining loss of language models." in text
    assert "Predict loss from N, D." in text
    assert "column model" in text and "fitted per group" in text
    assert "At most 5 constants" in text
    assert ", ".join(ALLOWED_FUNCTIONS) in text
    assert "Propose 3 new law(s)" in text
    assert "40 training rows." in text  # the data summary


def test_the_prompt_shows_parent_and_inspirations_with_scores(problem, context):
    parent = parent_candidate(1, ("loss = a + b / N ** c",), r2=0.875)
    other = parent_candidate(2, ("loss = a * log(D) + b",), r2=0.5)
    text = user_text(problem, context.summary, parent=parent, inspirations=[other])
    assert "CURRENT LAW" in text and "loss = a + b / N ** c" in text and "r2 0.875" in text
    assert "OTHER LAWS TRIED" in text and "loss = a * log(D) + b" in text and "r2 0.5" in text


def test_without_a_parent_the_prompt_asks_for_laws_from_scratch(problem, context):
    assert "none yet" in user_text(problem, context.summary)


def test_rejections_are_quoted_and_cut_to_a_bounded_length(problem, context):
    long_law = "loss = " + " + ".join(["a"] * 400)
    text = user_text(problem, context.summary, rejections=[(("loss = a ^ N",), "use ** for powers"),
                                                           ((long_law,), "too long")])
    assert "loss = a ^ N  -> rejected: use ** for powers" in text
    assert long_law not in text and "..." in text


def test_llm_text_in_the_prompt_is_inserted_verbatim_never_expanded(problem, context):
    sneaky = "loss = $inputs_text ${max_constants} {n_laws}"
    text = user_text(problem, context.summary, rejections=[((sneaky,), "$targets_text")])
    assert sneaky in text and "rejected: $targets_text" in text


def test_the_format_example_is_a_law_the_parser_accepts(problem):
    example = example_reply(problem)
    json.dumps(example)
    for law in example["laws"]:
        parse_law(law["lines"], problem.inputs, problem.targets, max_constants=problem.max_constants)


@pytest.mark.parametrize("targets, cap", [(("y1", "y2", "y3"), 9), (("y",), 1), (("y1", "y2"), 3), (("y1", "y2", "y3"), 2)])
def test_the_example_fits_multi_target_problems_and_small_caps(targets, cap):
    problem = Problem(inputs=("x", "z"), targets=targets, max_constants=cap)
    for law in example_reply(problem)["laws"]:
        parse_law(law["lines"], problem.inputs, problem.targets, max_constants=cap)


def test_the_repair_message_continues_the_conversation_and_quotes_errors(problem, context):
    first = propose_messages(problem, context.summary, parent=None, inspirations=(), rejections=(), n_laws=2)
    messages = repair_messages(first, "my bad reply", ["line 1: use ** for powers"], problem, 2)
    assert messages[:2] == first
    assert messages[2] == {"role": "assistant", "content": "my bad reply"}
    assert "- line 1: use ** for powers" in messages[3]["content"] and "holding 2 law(s)" in messages[3]["content"]


def test_templates_are_files_in_the_package():
    for name in ("system", "propose", "repair"):
        assert load_template(name).template.strip()
