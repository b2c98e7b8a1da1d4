"""The training text every machine has: the Python standard library's own ``.py`` sources.

Whole files are held out for validation (``crc32(relative path) % 20 == 0``, about 5 % of the
bytes), so validation text is never seen in training, not even as a prefix.  The tests of the
standard library (``test/``, ``tests/``, ``idle_test/``) and ``site-packages`` are left out.
Losses are comparable only within one Python version: the version is part of every result.

The standard library is about 11.6 MB of training text: a GPU sweep of 100M tokens would see it
nine times over.  The corpus ``stdlib+torch`` adds the installed torch package's own sources
(about 46 MB), held out by the same rule; its losses are comparable within one Python and one
torch version, both of which every row records.
"""
from __future__ import annotations

import os
import platform
import sysconfig
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SKIPPED_DIRS = frozenset({"test", "tests", "idle_test", "site-packages", "dist-packages", "__pycache__"})
HOLDOUT_MODULUS = 20
SEPARATOR = b"\n\x00\n"  # between files: a byte the sources never hold marks a document boundary
CORPORA = ("stdlib", "stdlib+torch")


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


def build_corpus(root: Path | None = None, *extra_packages: Path) -> Corpus:
    """The sources under ``root`` (the standard library by default) and of each extra package.

    A file's holdout key is its path relative to ``root``, or ``<package>/<path>`` in an extra
    package, so the standard library's split is the same with or without the extras.
    """
    root = Path(root or sysconfig.get_paths()["stdlib"])
    train, val = [], []
    n_files = 0
    for base, prefix in [(root, ""), *((Path(p), Path(p).name + "/") for p in extra_packages)]:
        files = source_files(base)
        n_files += len(files)
        for path in files:
            data = path.read_bytes()
            (val if is_heldout(prefix + path.relative_to(base).as_posix()) else train).append(data)
    as_array = lambda parts: np.frombuffer(SEPARATOR.join(parts), dtype=np.uint8)  # noqa: E731
    return Corpus(as_array(train), as_array(val), platform.python_version(), n_files)


def cache_dir() -> Path:
    return Path(os.environ.get("SLD_CACHE_DIR") or Path.home() / ".cache" / "sld")


def _extra_packages(name: str) -> tuple[list[Path], str]:
    """The packages a corpus adds to the standard library, and the versions its cache is keyed by."""
    if name not in CORPORA:
        raise ValueError(f"unknown corpus {name!r}: use one of {', '.join(CORPORA)}")
    if name == "stdlib":
        return [], ""
    from trainer import require_torch

    torch = require_torch()
    return [Path(torch.__file__).parent], f"-torch{torch.__version__}"


def load_corpus(name: str = "stdlib") -> Corpus:
    """A corpus of this interpreter's sources, cached as two ``.npy`` files per version.

    The cache is written through temporary files renamed into place, so trainers started side by
    side never read a half-written one.
    """
    packages, versions = _extra_packages(name)
    version = platform.python_version()
    where = cache_dir() / f"corpus-{name.replace('+', '-')}-py{version}{versions}"
    try:
        meta = (where / "n_files").read_text()
        return Corpus(np.load(where / "train.npy"), np.load(where / "val.npy"), version, int(meta))
    except (OSError, ValueError):
        pass
    corpus = build_corpus(None, *packages)
    try:
        where.mkdir(parents=True, exist_ok=True)
        _write_atomically(where / "train.npy", lambda f: np.save(f, corpus.train))
        _write_atomically(where / "val.npy", lambda f: np.save(f, corpus.val))
        _write_atomically(where / "n_files", lambda f: f.write(str(corpus.n_files).encode()))  # last: marks it complete
    except OSError:
        pass  # a read-only home still trains, from the sources each time
    return corpus


def _write_atomically(path: Path, write) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.name, delete=False) as f:
        write(f)
    os.replace(f.name, path)
