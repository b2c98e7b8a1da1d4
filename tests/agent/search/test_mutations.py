"""Mutation operators: children depend on the seed only, never on the process they run in."""
import os
import subprocess
import sys

CROSSOVER_IN_A_FRESH_PROCESS = """
import numpy as np
from types import SimpleNamespace
from agent.expressions import parse_law
from agent.search.mutations import Fresh, crossover
def expr(text):
    return parse_law(f"y = {text}", ["N", "D"], ["y"]).expressions[0]
mine = expr("E + A*N**(-p)")
theirs = expr("B*D**(-q) + C*N**(-r)*D**(-s) + G*N**(-t)")
for seed in range(20):
    ctx = SimpleNamespace(inputs=["N", "D"], rng=np.random.default_rng(seed), fresh=Fresh(mine.free_symbols))
    print(crossover(mine, theirs, ctx))
"""


def test_crossover_names_new_constants_the_same_whatever_the_string_hash_salt():
    """Python salts string hashes per process, so iterating a set of symbols gives another
    order in another run; the renamed constants (x0, x1, ...) must not follow that order."""
    def run(hash_seed):
        env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
        return subprocess.run([sys.executable, "-c", CROSSOVER_IN_A_FRESH_PROCESS], env=env, check=True,
                              capture_output=True, text=True).stdout

    outputs = {run(hash_seed) for hash_seed in range(1, 7)}
    assert len(outputs) == 1
    assert "x0" in next(iter(outputs))
