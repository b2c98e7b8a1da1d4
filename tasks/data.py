"""Task data: a local copy in the Hub layout, or the Hugging Face Hub dataset repo.

``SLD_DATA_DIR`` points at a folder laid out like the Hub repo
(``<task>/train-00000-of-00001.parquet``); without it the split is downloaded
once into the user's Hugging Face cache and read from there afterwards.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
from huggingface_hub import hf_hub_download
from huggingface_hub.errors import LocalEntryNotFoundError

from tasks.spec import TaskError

HUB_REPO = "pkuHaowei/sldbench"
SPLITS = ("train", "test")
DATA_DIR_ENV = "SLD_DATA_DIR"


def split_filename(task: str, split: str) -> str:
    """The split's path inside the Hub repo (and inside ``SLD_DATA_DIR``)."""
    return f"{task}/{split}-00000-of-00001.parquet"


def data_dir() -> Path | None:
    """The local data folder from ``SLD_DATA_DIR``; a set but missing folder is an error."""
    value = os.environ.get(DATA_DIR_ENV, "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        raise TaskError(
            f"{DATA_DIR_ENV}={value} is not a directory; point it at a copy of SLDBench "
            f"(<task>/train-00000-of-00001.parquet) or unset it to download from the Hugging Face Hub"
        )
    return path


def split_path(task: str, split: str) -> Path:
    """A local file for the split, downloading it when there is no local copy."""
    if split not in SPLITS:
        raise TaskError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    filename = split_filename(task, split)
    local = data_dir()
    if local is not None:
        path = local / filename
        if not path.is_file():
            raise TaskError(f"{path} does not exist; {DATA_DIR_ENV}={local} has no {split} split for task {task!r}")
        return path
    return _download(filename)


def _download(filename: str) -> Path:
    try:
        return Path(hf_hub_download(repo_id=HUB_REPO, repo_type="dataset", filename=filename))
    except LocalEntryNotFoundError:
        raise TaskError(
            f"cannot download {filename} from the Hugging Face Hub ({HUB_REPO}) and it is not in the cache: "
            f"go online once, or set {DATA_DIR_ENV} to a local copy of SLDBench"
        ) from None
    except Exception as exc:  # the hub client raises many kinds (HTTP, auth, not found, I/O)
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TaskError(
            f"cannot download {filename} from the Hugging Face Hub ({HUB_REPO}): {detail}; "
            f"check the connection, or set {DATA_DIR_ENV} to a local copy of SLDBench"
        ) from None


def load_split(task: str, split: str) -> pd.DataFrame:
    """One split of a task's data, as stored (all columns, rows in file order)."""
    path = split_path(task, split)
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow's errors do not share a useful base class
        raise TaskError(f"cannot read {path}: {type(exc).__name__}: {exc}") from None
