"""The training text every machine has: the Python standard library's own ``.py`` sources.

Whole files are held out for validation (``crc32(relative path) % 20 == 0``, about 5 % of the
bytes), so validation text is never seen in training, not even as a prefix.  The tests of the
standard library (``test/``, ``tests/``, ``idle_test/``) and ``site-packages`` are left out.
Losses are comparable only within one Python version: the version is part of every result.
"""
from __future__ import annotations

import os
import platform
import sysconfig
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SKIPPED_DIRS = frozenset({"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"})
HOLDOUT_MODULUS = 20
SEPARATOR = b"\n\x00\n"  # between files: a byte the sources never hold marks a document boundary


@dataclass(frozen=True)
class Corpus:
    train: np.ndarray  # uint8 bytes
    val: np.ndarray
    python: str  # the version whose sources these are
    n_files: int


def source_files(root: Path) -> list[Path]:
    """Every ``.py`` file under ``root`` outside the skipped directories, in a stable order."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        found.extend(Path(here) / f for f in sorted(files) if f.endswith(".py"))
    return found


def is_heldout(relative: str) -> bool:
    return zlib.crc32(relative.encode()) % HOLDOUT_MODULUS == 0


def build_corpus(root: Path | None = None) -> Corpus:
    root = Path(root or sysconfig.get_paths()["stdlib"])
    train, val = [], []
    files = source_files(root)
    for path in files:
        data = path.read_bytes()
        (val if is_heldout(path.relative_to(root).as_posix()) else train).append(data)
    as_array = lambda parts: np.frombuffer(SEPARATOR.join(parts), dtype=np.uint8)  # noqa: E731
    return Corpus(as_array(train), as_array(val), platform.python_version(), len(files))


def cache_dir() -> Path:
    return Path(os.environ.get("SLD_CACHE_DIR") or Path.home() / ".cache" / "sld")


def load_corpus() -> Corpus:
    """The corpus of this interpreter's standard library, cached as two ``.npy`` files per version."""
    version = platform.python_version()
    where = cache_dir() / f"corpus-py{version}"
    try:
        meta = (where / "n_files").read_text()
        return Corpus(np.load(where / "train.npy"), np.load(where / "val.npy"), version, int(meta))
    except (OSError, ValueError):
        pass
    corpus = build_corpus()
    try:
        where.mkdir(parents=True, exist_ok=True)
        np.save(where / "train.npy", corpus.train)
        np.save(where / "val.npy", corpus.val)
        (where / "n_files").write_text(str(corpus.n_files))  # written last: marks the cache complete
    except OSError:
        pass  # a read-only home still trains, from the sources each time
    return corpus
