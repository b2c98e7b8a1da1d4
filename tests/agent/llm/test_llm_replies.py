"""Reading replies: JSON is found wherever the model put it, and only the law parser judges laws."""
import json

import pytest

from agent.llm.replies import ReplyError, extract_json, read_reply
from llm_helpers import GOOD_LAW, reply


def test_bare_json_object_is_read():
    assert extract_json('{"laws": []}') == {"laws": []}


def test_json_inside_a_code_fence_after_chatter_is_read():
    text = 'Sure! Here are my laws:\n```json\n{"laws": [{"lines": ["loss = a * N"]}]}\n```\nHope it helps.'
    assert extract_json(text) == {"laws": [{"lines": ["loss = a * N"]}]}


def test_json_after_leading_chatter_without_fence_is_read():
    assert extract_json('I think {this} is it: {"laws": ["loss = a * N"]} done')["laws"] == ["loss = a * N"]


def test_a_bare_list_is_taken_as_the_laws():
    assert extract_json('["loss = a * N"]') == {"laws": ["loss = a * N"]}


@pytest.mark.parametrize("text, reason", [
    ("", "empty"), (None, "empty"), ("I cannot help with that.", "no JSON object"),
    ('{"laws": [', "no JSON object"),
])
def test_replies_without_json_are_refused_with_a_reason(text, reason):
    with pytest.raises(ReplyError, match=reason):
        extract_json(text)


def test_a_valid_law_becomes_a_suggestion(problem):
    result = read_reply(reply(GOOD_LAW), problem)
    assert [s.law.lines for s in result.suggestions] == [(GOOD_LAW,)]
    assert result.rejections == []
    assert result.suggestions[0].rationale == "because"


def test_invalid_laws_are_rejected_with_the_parser_reason(problem):
    result = read_reply(reply(GOOD_LAW, "loss = a ^ N", "loss = foo(N)", "loss = a + b + c + d + e + f * N"), problem)
    assert len(result.suggestions) == 1
    reasons = [r.reason for r in result.rejections]
    assert "use ** for powers" in reasons[0]
    assert "unknown function 'foo'" in reasons[1]
    assert "more than the cap of 5" in reasons[2]


@pytest.mark.parametrize("hostile", [
    "loss = __import__('os').system('rm -rf /')",
    "loss = N.__class__",
    "loss = (lambda: 1)() * N",
    "loss = open('/etc/passwd') * N",
    "import os",
    "loss = [x for x in ().__class__.__bases__][0] * N",
])
def test_hostile_formulas_are_rejected_never_run(problem, hostile):
    result = read_reply(reply(hostile), problem)
    assert result.suggestions == []
    assert result.rejections[0].lines == (hostile,)
    assert result.rejections[0].reason


def test_a_repeated_law_in_one_reply_is_dropped(problem):
    result = read_reply(reply("loss = a * N ** b", "loss = c * N ** d"), problem)
    assert len(result.suggestions) == 1
    assert result.rejections[0].reason == "repeats another law of the same reply"


def test_law_shapes_the_models_use_are_all_accepted(problem):
    text = '{"laws": ["loss = a * N", {"law": "loss = a / N"}, ["h = a * N", "loss = h + b"], {"lines": "loss = exp(a) * D"}]}'
    result = read_reply(text, problem)
    assert len(result.suggestions) == 4, result.rejections


def test_a_single_law_object_without_a_laws_list_is_accepted(problem):
    assert len(read_reply('{"lines": ["loss = a * N"]}', problem).suggestions) == 1


def test_malformed_law_items_are_rejected_with_a_reason(problem):
    result = read_reply('{"laws": [{"lines": [{"x": 1}]}, 42, {"rationale": "no lines"}]}', problem)
    assert [r.reason for r in result.rejections] == [
        'every entry of "lines" must be a string',
        'a law must be an object with "lines", got int',
        'a law object needs "lines": a list of strings',
    ]


def test_json_without_laws_is_a_reply_error(problem):
    with pytest.raises(ReplyError, match='no "laws" list'):
        read_reply('{"answer": 42}', problem)


def test_constant_hints_keep_only_sane_values_for_real_constants(problem):
    text = json.dumps({"laws": [{"lines": ["loss = E + A / N ** alpha"], "constants": {
        "E": 1.5, "A": {"init": 50, "bounds": [0, 10]}, "alpha": {"init": "x", "bounds": [1, 0]},
        "ghost": 3, "B": {"init": True}}}]})
    suggestion = read_reply(text, problem).suggestions[0]
    assert suggestion.init == {"E": 1.5, "A": 10.0}  # clipped into its bounds
    assert suggestion.bounds == {"A": (0.0, 10.0)}


def test_only_the_first_laws_up_to_the_limit_are_judged(problem):
    result = read_reply(reply(*[f"loss = a * N ** {k}" for k in range(1, 8)]), problem, limit=3)
    assert len(result.suggestions) == 3


def test_a_law_inside_a_truncated_reply_is_still_found(problem):
    cut = '{"laws": [{"lines": ["loss = c + a * N ** (-alpha)"], "rationale": "x"}, {"lines": ["loss = a *'
    assert [s.law.lines for s in read_reply(cut, problem).suggestions] == [("loss = c + a * N ** (-alpha)",)]


def test_an_object_with_laws_wins_over_an_earlier_object_without(problem):
    text = 'Constants: {"a": 1} and laws: {"laws": ["loss = a * N"]}'
    assert len(read_reply(text, problem).suggestions) == 1


def test_a_singular_law_key_holding_a_list_of_laws_is_read(problem):
    text = '{"law": [{"lines": ["loss = c + a * N"]}, "denominator_list:"]}'
    result = read_reply(text, problem)
    assert len(result.suggestions) == 1
    assert result.rejections[0].lines == ("denominator_list:",)
