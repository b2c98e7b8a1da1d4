"""Loading task data: SLD_DATA_DIR in the Hub layout, else the Hugging Face Hub, else a clear error."""
from __future__ import annotations

import pandas as pd
import pytest
from huggingface_hub.errors import LocalEntryNotFoundError

import tasks.data
from tasks import HUB_REPO, TaskError, all_tasks, load_split

# Row counts of the source (train, test), as listed in shared/sldbench/README.md.
ROWS = {
    "parallel_scaling_law": (36, 12), "vocab_scaling_law": (1080, 120), "sft_scaling_law": (504, 42),
    "domain_mixture_scaling_law": (80, 24), "moe_scaling_law": (193, 28),
    "data_constrained_scaling_law": (161, 21), "lr_bsz_scaling_law": (2702, 117),
    "easy_question_scaling_law": (389, 127),
}


@pytest.fixture
def toy_parquet(tmp_path) -> pd.DataFrame:
    df = pd.DataFrame({"group": ["a", "a", "b"], "N": [1e6, 1e7, 1e6], "loss": [3.0, 2.5, 3.1]})
    (tmp_path / "toy_law").mkdir()
    df.to_parquet(tmp_path / "toy_law" / "train-00000-of-00001.parquet")
    return df


def test_sld_data_dir_is_read_in_the_hub_layout(tmp_path, toy_parquet, monkeypatch):
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path))
    pd.testing.assert_frame_equal(load_split("toy_law", "train"), toy_parquet)


def test_every_task_split_has_the_specs_columns_and_published_groups(sldbench_env):
    for spec in all_tasks():
        for split, n_rows in zip(("train", "test"), ROWS[spec.name]):
            df = load_split(spec.name, split)
            assert len(df) == n_rows
            assert {spec.group, *spec.inputs, *spec.targets} <= set(df.columns)
            assert set(df[spec.group]) <= set(spec.groups)


def test_columns_that_are_not_inputs_stay_in_the_frame(sldbench_env):
    # The U-shaped task also stores flops and model_name; only log_flops is an input.
    df = load_split("easy_question_scaling_law", "test")
    assert {"flops", "model_name"} <= set(df.columns)


def test_a_missing_data_directory_says_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(TaskError, match=r"SLD_DATA_DIR=.*nowhere is not a directory.*unset it to download"):
        load_split("parallel_scaling_law", "train")


def test_a_data_directory_without_the_task_names_the_missing_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path))
    with pytest.raises(TaskError, match="parallel_scaling_law/test-00000-of-00001.parquet does not exist"):
        load_split("parallel_scaling_law", "test")


def test_an_unreadable_file_is_a_task_error(tmp_path, monkeypatch):
    (tmp_path / "toy_law").mkdir()
    (tmp_path / "toy_law" / "test-00000-of-00001.parquet").write_text("not parquet")
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path))
    with pytest.raises(TaskError, match="cannot read"):
        load_split("toy_law", "test")


def test_an_unknown_split_is_rejected(tmp_path, monkeypatch):
    monkeypatch.setenv("SLD_DATA_DIR", str(tmp_path))
    with pytest.raises(TaskError, match="unknown split 'validation'; splits: train, test"):
        load_split("toy_law", "validation")


def test_without_sld_data_dir_the_split_comes_from_the_hub(tmp_path, toy_parquet, monkeypatch):
    monkeypatch.delenv("SLD_DATA_DIR", raising=False)
    calls = []

    def fake_download(**kwargs):
        calls.append(kwargs)
        return str(tmp_path / kwargs["filename"])

    monkeypatch.setattr(tasks.data, "hf_hub_download", fake_download)
    pd.testing.assert_frame_equal(load_split("toy_law", "train"), toy_parquet)
    assert calls == [{"repo_id": HUB_REPO, "repo_type": "dataset",
                      "filename": "toy_law/train-00000-of-00001.parquet"}]
    assert HUB_REPO == "pkuHaowei/sldbench"


def test_offline_without_a_cached_copy_says_how_to_fix_it(monkeypatch):
    monkeypatch.delenv("SLD_DATA_DIR", raising=False)

    def offline(**kwargs):
        raise LocalEntryNotFoundError("offline and not in the cache")

    monkeypatch.setattr(tasks.data, "hf_hub_download", offline)
    with pytest.raises(TaskError) as info:
        load_split("moe_scaling_law", "test")
    message = str(info.value)
    assert "moe_scaling_law/test-00000-of-00001.parquet" in message
    assert "go online once, or set SLD_DATA_DIR" in message and "\n" not in message


def test_other_hub_failures_keep_their_first_line(monkeypatch):
    monkeypatch.delenv("SLD_DATA_DIR", raising=False)

    def refused(**kwargs):
        raise ConnectionError("connection refused\nlong details")

    monkeypatch.setattr(tasks.data, "hf_hub_download", refused)
    with pytest.raises(TaskError, match=r"connection refused; check the connection, or set SLD_DATA_DIR"):
        load_split("moe_scaling_law", "test")
