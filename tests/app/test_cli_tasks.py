"""``sld tasks``: the bundled tasks on the command line."""
from __future__ import annotations

import json

from tasks import task_names


def test_list_shows_every_task_with_its_cap(sld):
    result = sld("tasks", "list")
    assert result.exit_code == 0
    for name in task_names():
        assert name in result.stdout
    assert "none (no scale axis)" in result.stdout


def test_list_json_is_the_specs_without_laws(sld):
    specs = json.loads(sld("tasks", "list", "--json").stdout)
    assert [s["name"] for s in specs] == task_names()
    assert specs[0]["max_constants"] == 4 and "human_law" not in specs[0]


def test_show_prints_the_columns_and_the_human_law(sld):
    result = sld("tasks", "show", "data_constrained_scaling_law")
    assert result.exit_code == 0
    out = result.stdout
    assert "unique_tokens, params, tokens" in out and "tokens, params" in out and "7 per group" in out
    assert "U_N = min(0.051*unique_tokens, params)" in out and "Muennighoff" in out


def test_show_constants_prints_the_published_values(sld):
    out = sld("tasks", "show", "parallel_scaling_law", "--constants").stdout
    assert "pile" in out and "stack" in out and "0.344689" in out


def test_show_json_round_trips_to_the_same_spec(sld):
    from tasks import get_task, parse_spec

    data = json.loads(sld("tasks", "show", "sft_scaling_law", "--json").stdout)
    assert parse_spec(data) == get_task("sft_scaling_law")
