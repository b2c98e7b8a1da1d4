"""The data summary handed to proposers: generic facts only, JSON-able, readable as text."""
import json

import numpy as np
import pandas as pd

from agent.llm.summary import render_summary, summarize_data
from agent.problem import Problem, make_table


def test_summary_reports_ranges_trends_groups_and_a_few_rows(problem, frame):
    summary = summarize_data(problem, frame)
    json.dumps(summary)
    assert summary["n_rows"] == 40
    assert summary["inputs"]["N"]["min"] == 1e7 and summary["inputs"]["N"]["max"] == 1e9
    assert summary["inputs"]["N"]["decades"] == 2.0
    assert summary["groups"] == {"column": "model", "count": 2, "names": ["small", "wide"]}
    assert summary["trends"]["loss"]["N"].startswith("decreasing")
    assert summary["columns"] == ["N", "D", "loss"]
    assert set(summary["rows"]) == {"small", "wide"} and len(summary["rows"]["small"]) == 3
    first, last = summary["rows"]["small"][0], summary["rows"]["small"][-1]
    assert first[0] == 1e7 and last[0] == 1e9  # spread along the extrapolation axis


def test_summary_accepts_a_table_as_well_as_a_frame(problem, frame):
    from_table = summarize_data(problem, make_table(frame, problem))
    from_frame = summarize_data(problem, frame)
    assert from_table["trends"] == from_frame["trends"] and from_table["inputs"] == from_frame["inputs"]


def test_a_column_without_a_trend_is_labelled_so():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.uniform(1, 2, 50), "noise": rng.uniform(0, 1, 50)})
    frame["y"] = 3 * frame["x"]
    summary = summarize_data(Problem(inputs=("x", "noise"), targets=("y",)), frame)
    assert summary["trends"]["y"]["x"].startswith("increasing")
    assert summary["trends"]["y"]["noise"].startswith("no monotone trend")


def test_rendered_text_names_columns_hints_and_rows(problem, frame):
    text = render_summary(summarize_data(problem, frame))
    assert "input N: 1e+07 .. 1e+09" in text and "spans 2 decades" in text
    assert "group column model: 2 groups (small, wide)" in text
    assert "loss as each input grows (within groups): N decreasing" in text
    assert "Example rows (N, D, loss):" in text


def test_non_positive_columns_get_a_warning_about_logs():
    frame = pd.DataFrame({"x": [-1.0, 0.0, 1.0, 2.0], "y": [1.0, 2.0, 3.0, 4.0]})
    text = render_summary(summarize_data(Problem(inputs=("x",), targets=("y",)), frame))
    assert "do not take its log" in text


def test_rendering_reads_the_search_summary_layout_too():
    other = {"n_rows": 12, "n_groups": 3, "inputs": {"x": {"min": 1.0, "max": 1000.0, "decades": 3.0}},
             "targets": {"y": {"min": 0.5, "max": 2.0, "trend": {"x": -0.9}}},
             "examples": {"g1": [{"x": 1.0, "y": 2.0}, {"x": 10.0, "y": 1.5}]}}
    text = render_summary(other)
    assert "12 training rows." in text and "groups: 3 groups" in text
    assert "x decreasing (rank corr -0.90)" in text
    assert "Example rows (x, y):" in text and "g1: (1, 2); (10, 1.5)" in text


def test_an_unknown_or_empty_summary_still_renders():
    assert render_summary({}) == "(no data summary available)"
    assert render_summary({"anything": [1, 2]}) == '{"anything": [1, 2]}'


def test_on_a_grid_the_prompt_reads_each_input_with_the_others_held_fixed():
    # Over all rows of an N x D grid, D explains little of the loss beside N (rank corr about -0.4),
    # which the prompt once called "weakly decreasing"; at every N the loss falls with D.
    n, d = np.meshgrid(np.geomspace(1e7, 1e9, 5), np.geomspace(1e9, 1e11, 5))
    frame = pd.DataFrame({"N": n.ravel(), "D": d.ravel()})
    frame["loss"] = 1.7 + 400 * frame["N"] ** -0.34 + 410 * frame["D"] ** -0.28
    summary = summarize_data(Problem(inputs=("N", "D"), targets=("loss",)), frame)
    assert summary["trends"]["loss"]["D"].startswith("decreasing (rank corr -1.00)")
    assert summary["trends"]["loss"]["N"].startswith("decreasing (rank corr -1.00)")
