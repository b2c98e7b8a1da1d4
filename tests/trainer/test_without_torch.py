"""Without the ``train`` extra the service and the CLI still work, and ``sld train`` says what to install."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

SLD = [sys.executable, "-c", "from app.cli import main; main()"]


@pytest.fixture
def no_torch(tmp_path):
    """An environment where ``import torch`` fails as it does when torch is not installed."""
    shim = tmp_path / "torch"
    shim.mkdir()
    (shim / "__init__.py").write_text('raise ModuleNotFoundError("No module named \'torch\'", name="torch")\n')
    return {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


@pytest.mark.parametrize("args", [["train", "run", "--params", "1e5", "--tokens", "1e6"],
                                  ["train", "worker", "--server", "http://127.0.0.1:9"]])
def test_sld_train_says_how_to_install_the_extra(no_torch, args):
    done = subprocess.run([*SLD, *args], env=no_torch, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("error: the trainer needs PyTorch: install the extra with "
                                   "`pip install -e '.[train]'` (it pins the CPU build of torch)")


def test_the_service_plans_sweeps_without_torch(no_torch):
    code = ("from fastapi.testclient import TestClient; from app.main import create_app; "
            "from app.core.config import Settings; import sys; "
            "c = TestClient(create_app(Settings(database_url='sqlite://'))).__enter__(); "
            "r = c.post('/sweeps', json={'n_params': [25e3], 'tokens': [2.5e5]}); "
            "assert r.status_code == 201, r.text; assert 'torch' not in sys.modules; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], env=no_torch, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
