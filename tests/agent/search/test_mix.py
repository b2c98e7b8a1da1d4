"""The proposer mix's background requests: a reply still out when the run ends never holds the process."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import time
    import numpy as np
    from agent.search.proposers.base import Proposer
    from agent.search.proposers.mix import ProposerMix

    class Slow(Proposer):
        name = "slow"
        def propose(self, context, n, rng):
            time.sleep(60)  # an LLM still computing a reply the search no longer needs
            return []

    mix = ProposerMix([(Slow(), 1.0)])
    mix.ask_later(0, mix.proposers[0][0], None, 1, np.random.default_rng(0))
    mix.ask_later(0, mix.proposers[0][0], None, 1, np.random.default_rng(1))  # queued behind it: cancelled
    assert mix.replies(wait=0.1) == []
    mix.close()
    print("closed", flush=True)
""")


def test_a_run_that_ends_with_a_reply_in_flight_exits_without_waiting_for_it():
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=50)
    assert done.returncode == 0, done.stderr
    assert "closed" in done.stdout and time.monotonic() - start < 30  # not the 60 s the reply would take
