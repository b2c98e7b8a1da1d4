"""Training one point: deterministic for a seed on the CPU, the schedule as documented, held-out text unseen."""
from __future__ import annotations

import math

import pytest

from trainer.corpus import build_corpus, is_heldout, source_files
from trainer.spec import TrainSpec
from trainer.train import lr_at

TINY = dict(d_model=16, n_layers=1, tokens=8 * 128 * 30, eval_sequences=16, device="cpu")


def test_the_same_seed_gives_the_same_run_and_another_seed_another(torch, corpus):
    from trainer.train import train

    a, b = train(TrainSpec(**TINY, seed=1), corpus), train(TrainSpec(**TINY, seed=1), corpus)
    c = train(TrainSpec(**TINY, seed=2), corpus)
    assert (a.train_loss, a.val_loss) == (b.train_loss, b.val_loss)
    assert (c.train_loss, c.val_loss) != (a.train_loss, a.val_loss)
    assert a.N == TrainSpec(**TINY).shape.non_embedding_params and a.D == 8 * 128 * 30 and a.steps == 30
    assert a.C == 6 * a.N * a.D and a.C_detailed > a.C and a.device == "cpu" and a.torch == torch.__version__
    assert 0 < a.val_loss < math.log(256) + 0.5  # nats per byte: below a uniform guess (5.55) or close to it


def test_more_training_lowers_the_loss(torch, corpus):
    from trainer.train import train

    short, longer = train(TrainSpec(**TINY), corpus), train(TrainSpec(**{**TINY, "tokens": 8 * 128 * 200}), corpus)
    assert longer.val_loss < short.val_loss - 0.1


def test_the_schedule_warms_up_then_decays_by_cosine_to_its_floor():
    spec = TrainSpec(d_model=32, n_layers=1, tokens=8 * 128 * 1000, lr=1e-3)
    warmup = int(0.05 * spec.steps)
    assert lr_at(0, spec) == pytest.approx(1e-3 / warmup)
    assert lr_at(warmup - 1, spec) == pytest.approx(1e-3)
    assert lr_at(warmup, spec) == pytest.approx(1e-3)
    assert lr_at(spec.steps - 1, spec) == pytest.approx(1e-4, rel=1e-2)  # final_lr_fraction 0.1
    values = [lr_at(s, spec) for s in range(warmup, spec.steps)]
    assert values == sorted(values, reverse=True)


def test_validation_files_are_whole_files_never_trained_on(tmp_path):
    for i in range(60):
        (tmp_path / f"m{i}.py").write_text(f"x = {i}\n")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "skipped.py").write_text("nope\n")
    files = source_files(tmp_path)
    assert len(files) == 60  # test/ is left out
    corpus = build_corpus(tmp_path)
    held = [f for f in files if is_heldout(f.relative_to(tmp_path).as_posix())]
    assert 0 < len(held) < 60 and corpus.n_files == 60
    val_text = bytes(corpus.val)
    for f in files:
        inside = f.read_bytes() in val_text
        assert inside == (f in held)
        assert (f.read_bytes() in bytes(corpus.train)) != inside


def test_an_extra_package_adds_its_files_under_the_same_holdout_rule_keyed_by_its_name(tmp_path):
    """``stdlib+torch``: the standard library's split is unchanged, and a package file is held out by
    ``<package>/<path>``, so the same relative path in both trees can fall on either side."""
    stdlib, package = tmp_path / "lib", tmp_path / "pkg"
    for root in (stdlib, package):
        root.mkdir()
        for i in range(40):
            (root / f"m{i}.py").write_text(f"{root.name} = {i}\n")
    alone, both = build_corpus(stdlib), build_corpus(stdlib, package)
    assert both.n_files == 80 and bytes(alone.val) in bytes(both.val)
    val_text = bytes(both.val)
    assert 0 < sum(is_heldout(f"pkg/{f.name}") for f in source_files(package)) < 40
    for f in source_files(package):
        assert (f.read_bytes() in val_text) == is_heldout(f"pkg/{f.name}")
