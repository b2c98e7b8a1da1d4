"""Bad input on the command line: one line ``error: ...``, exit code 2, never a traceback."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

PARALLEL_TEST = "parallel_scaling_law/test-00000-of-00001.parquet"


def assert_one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def parallel_copy(sldbench_dir, tmp_path, monkeypatch):
    """A writable copy of the parallel task's test split under SLD_DATA_DIR; returns (frame, writer)."""
    df = pd.read_parquet(sldbench_dir / PARALLEL_TEST)
    (tmp_path / "parallel_scaling_law").mkdir()
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path))

    def write(frame: pd.DataFrame) -> None:
        frame.to_parquet(tmp_path / PARALLEL_TEST)

    return df, write


def test_unknown_task(sld):
    assert_one_line_error(sld("tasks", "show", "gpt5_law"), "unknown task 'gpt5_law'", "known tasks: parallel_scaling_law")
    assert_one_line_error(sld("bench", "--task", "gpt5_law"), "unknown task 'gpt5_law'")


def test_missing_data_directory(sld, tmp_path, monkeypatch):
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path / "nowhere"))
    assert_one_line_error(sld("bench", "--task", "moe_scaling_law"), "nowhere is not a directory", "SLD_DATA_DIR")


def test_offline_without_data(sld, monkeypatch):
    monkeypatch.delenv("SLD_DATA_DIR", raising=False)  # the test suite's hub behaves as offline
    assert_one_line_error(sld("bench", "--task", "moe_scaling_law"), "go online once, or set SLD_DATA_DIR")


def test_missing_columns(sld, parallel_copy):
    df, write = parallel_copy
    write(df.drop(columns=["loss"]))
    assert_one_line_error(sld("bench", "--task", "parallel_scaling_law"),
                          "parallel_scaling_law (test split): missing column(s): loss")


@pytest.mark.parametrize("bad, message", [(float("inf"), "infinite values"), (float("nan"), "missing or NaN")])
def test_non_finite_values(sld, parallel_copy, bad, message):
    df, write = parallel_copy
    df = df.astype({"num_params": float})
    df.loc[3, "num_params"] = bad
    write(df)
    assert_one_line_error(sld("bench", "--task", "parallel_scaling_law"), "column 'num_params'", message)


def test_non_numeric_values(sld, parallel_copy):
    df, write = parallel_copy
    write(df.astype({"loss": str}).assign(loss=lambda d: d["loss"].where(d.index != 0, "n/a")))
    assert_one_line_error(sld("bench", "--task", "parallel_scaling_law"), "column 'loss' is not numeric", "'n/a'")


def test_a_diverged_run_in_a_csv_is_named_not_searched(sld, tmp_path):
    """A loss of 1e308 once came back as a traceback from the final choice (every score NaN)."""
    n = np.geomspace(1e6, 1e9, 12)
    path = tmp_path / "sweep.csv"
    pd.DataFrame({"N": n, "loss": np.append(2 + 30 * n[:-1] ** -0.3, 1e308)}).to_csv(path, index=False)
    assert_one_line_error(sld("discover", "--csv", str(path), "--inputs", "N", "--target", "loss", "--budget", "20"),
                          "column 'loss' holds 1e+308 (row 12)")


def test_a_law_file_with_a_constant_that_is_not_a_number_is_refused_by_every_answer(sld, tmp_path):
    law = {"law": ["loss = c0 + c1*N**(-a0)"], "inputs": ["N"], "targets": ["loss"],
           "constants": {"all_data": {"c0": 1.7, "c1": float("nan"), "a0": 0.3}}}
    (tmp_path / "law.json").write_text(json.dumps(law))
    pd.DataFrame({"N": [1e10]}).to_csv(tmp_path / "points.csv", index=False)
    assert_one_line_error(sld("predict", "--law", str(tmp_path / "law.json"), "--csv", str(tmp_path / "points.csv")),
                          "constant 'c1' must be a finite number, not nan")
    del law["inputs"]
    (tmp_path / "law.json").write_text(json.dumps(law))
    assert_one_line_error(sld("predict", "--law", str(tmp_path / "law.json"), "--csv", str(tmp_path / "points.csv")),
                          "law.json is not a law JSON from `sld discover`: it has no 'inputs'")
    assert_one_line_error(sld("predict", "--law", str(tmp_path), "--csv", str(tmp_path / "points.csv")),
                          "is not a regular file")


def test_a_law_that_does_not_parse(sld, tmp_path):
    spec = json.loads(sld("tasks", "show", "parallel_scaling_law", "--json").stdout)
    spec["human_law"]["lines"] = ["loss = (A / num_params)**alpha + E + __import__('os').system('x')"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(spec))
    for args in (("tasks", "show", str(path)), ("bench", "--task", str(path))):
        assert_one_line_error(sld(*args), "bad.json: human_law: ", "cannot be called")


def test_a_spec_with_an_unknown_field(sld, tmp_path):
    spec = json.loads(sld("tasks", "show", "moe_scaling_law", "--json").stdout)
    spec["extrapolate"] = ["num_experts"]
    path = tmp_path / "typo.json"
    path.write_text(json.dumps(spec))
    assert_one_line_error(sld("tasks", "show", str(path)), "typo.json: extrapolate: Extra inputs are not permitted")


def test_the_installed_command_prints_no_traceback(tmp_path):
    sld_exe = Path(sys.executable).with_name("sld")
    if not sld_exe.exists():
        pytest.skip(f"the sld command is not installed next to {sys.executable}")
    env = {**os.environ, "SLD_DATA_DIR": str(tmp_path / "nowhere")}
    proc = subprocess.run([str(sld_exe), "bench", "--task", "moe_scaling_law"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr + proc.stdout


@pytest.mark.parametrize("args", [("bench", "--suite", "synthetic", "--family", "saturating", "--seed", "-1"),
                                  ("bench", "--suite", "synthetic", "--family", "saturating", "--data-seed", "-1"),
                                  ("train", "run", "--params", "25000", "--tokens", "10000", "--seed", "-1")])
def test_a_negative_seed_is_a_usage_error_not_a_numpy_traceback(sld, args):
    result = sld(*args)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "Invalid value for '--" in result.stderr and "greater than or equal to 0" in result.stderr
