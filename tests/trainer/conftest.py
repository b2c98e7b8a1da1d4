"""Trainer tests need torch (the ``train`` extra); CI installs it and must not skip them."""
from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def torch():
    try:
        import torch
    except ModuleNotFoundError:
        if os.environ.get("SLD_REQUIRE_TORCH"):
            pytest.fail("SLD_REQUIRE_TORCH is set but torch is not installed: install the extra '.[train]'")
        pytest.skip("needs torch: pip install -e '.[train]'")
    return torch


@pytest.fixture(scope="session")
def corpus(torch):
    from trainer.corpus import load_corpus

    return load_corpus()
