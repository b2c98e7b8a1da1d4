"""``synthetic_suite(seed)``: every problem of the catalogue, generated from one suite seed.

Each problem draws from its own streams, derived from the suite seed and its name, so a
problem's data do not depend on which other problems are generated.  The suite seed (0 by
default) is independent of the search seed: the benchmark varies the search, not the data.
"""
from __future__ import annotations

import zlib
from typing import Iterable

import numpy as np

from tasks.synthetic.catalog import entries
from tasks.synthetic.common import Draw
from tasks.synthetic.record import Draft, SyntheticProblem, finish, with_recorded

SUITE_SEED = 0


class UnknownProblem(KeyError):
    pass


def synthetic_suite(seed: int = SUITE_SEED, *, noiseless: bool = False,
                    names: Iterable[str] | None = None, families: Iterable[str] | None = None) -> list[SyntheticProblem]:
    """The problems in catalogue order; ``names``/``families`` keep only those (unknown ones are errors).

    ``noiseless``: the same designs and constants with no noise, outliers or schedule bend.
    """
    catalogue = entries()
    wanted_names, wanted_families = set(names or ()), set(families or ())
    unknown = (wanted_names - {n for n, _, _ in catalogue}) | (wanted_families - set(family_names()))
    if unknown:
        raise UnknownProblem(", ".join(sorted(unknown)))
    return [_generate(name, builder, options, seed, noiseless) for name, builder, options in catalogue
            if (not wanted_names or name in wanted_names) and (not wanted_families or builder.__name__ in wanted_families)]


def get_problem(name: str, seed: int = SUITE_SEED, *, noiseless: bool = False) -> SyntheticProblem:
    return synthetic_suite(seed, noiseless=noiseless, names=[name])[0]


def problems_in_family(family: str, seed: int = SUITE_SEED, *, noiseless: bool = False) -> list[SyntheticProblem]:
    return synthetic_suite(seed, noiseless=noiseless, families=[family])


def problem_names() -> list[str]:
    return [name for name, _, _ in entries()]


def family_names() -> list[str]:
    return list(dict.fromkeys(builder.__name__ for _, builder, _ in entries()))


def get_draft(name: str, seed: int = SUITE_SEED) -> Draft:
    """The problem's design and truth before noise (its ``mean`` evaluates the truth anywhere)."""
    for entry, builder, options in entries():
        if entry == name:
            return _draft(builder, options, Draw(np.random.default_rng(_streams(name, seed)[0])))
    raise UnknownProblem(name)


def _streams(name: str, seed: int) -> list[np.random.SeedSequence]:
    return np.random.SeedSequence([seed, zlib.crc32(name.encode())]).spawn(3)


def _generate(name: str, builder, options: dict, seed: int, noiseless: bool) -> SyntheticProblem:
    design_seq, noise_seq, split_seq = _streams(name, seed)
    draft = _draft(builder, options, Draw(np.random.default_rng(design_seq)))
    return finish(name, draft, np.random.default_rng(noise_seq), np.random.default_rng(split_seq), noiseless)


def _draft(builder, options: dict, draw: Draw) -> Draft:
    """The family's draft; a catalogue entry's ``recorded`` option, (column, values, what), adds an input."""
    options = dict(options)
    recorded = options.pop("recorded", None)
    draft = builder(draw, **options)
    return with_recorded(draft, *recorded) if recorded else draft
