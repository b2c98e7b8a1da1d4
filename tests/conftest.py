"""Fixtures shared by every test folder: the SLDBench data, the CLI, no network."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from huggingface_hub.errors import LocalEntryNotFoundError

import tasks.data

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def sldbench_dir() -> Path:
    """The local SLDBench copy: $SLD_DATA_DIR, else ../shared/sldbench next to the repo.

    Skipped only on a developer machine without the data; under CI its absence is a failure.
    """
    path = Path(os.environ.get("SLD_DATA_DIR") or REPO.parent / "shared" / "sldbench")
    if not path.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"SLDBench data not found at {path} (CI is set: set SLD_DATA_DIR)")
        pytest.skip(f"SLDBench data not found at {path}; set SLD_DATA_DIR to run this test")
    return path.resolve()


@pytest.fixture
def sldbench_env(sldbench_dir, monkeypatch) -> Path:
    """SLD_DATA_DIR set to the local SLDBench copy for this test."""
    monkeypatch.setenv("SLD_DATA_DIR", str(sldbench_dir))
    return sldbench_dir


@pytest.fixture(autouse=True)
def _no_hub_downloads(monkeypatch):
    """No test reaches the Hugging Face Hub: a download behaves as offline with an empty cache.

    Tests of the download path replace ``tasks.data.hf_hub_download`` themselves.
    """
    def offline(*args, **kwargs):
        raise LocalEntryNotFoundError("tests run offline")

    monkeypatch.setattr(tasks.data, "hf_hub_download", offline)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def sld(monkeypatch, capsys):
    """Run the real ``sld`` entry point in-process: ``sld("tasks", "list") -> CliResult``.

    Output is 200 columns wide, so that assertions do not depend on where rich wraps.
    """
    from app.cli import main

    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        monkeypatch.setattr(sys, "argv", ["sld", *args])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run
