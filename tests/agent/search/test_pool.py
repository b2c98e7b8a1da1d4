"""The local process pool: its workers leave the parallelism to the pool."""
from __future__ import annotations

import subprocess
import sys

CHECK = """
from threadpoolctl import threadpool_info
from agent.search.pool import _init
_init(None)
print(max(pool["num_threads"] for pool in threadpool_info()))
"""


def test_a_pool_worker_runs_one_blas_thread():
    """Two workers each with a BLAS pool as wide as the machine oversubscribe its cores; OpenBLAS's
    spinning threads then made a 2,700-row task's fits five times slower.  A fresh interpreter
    stands in for a spawned worker: its BLAS starts as wide as the machine."""
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
