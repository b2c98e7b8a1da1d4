"""Train one :class:`TrainSpec` and measure it: the only module that runs torch's training loop.

Deterministic for a seed on the CPU: one seeded generator draws the batches, torch's seed the
initial weights, and the validation set is the same fixed slice of the held-out files for every
run (so runs of one sweep are compared on the same text).  On CUDA the step runs under bf16
autocast; ``compile`` hands the model to ``torch.compile``.
"""
from __future__ import annotations

import contextlib
import math
import platform
import time
from typing import Callable

import numpy as np

from trainer import require_torch
from trainer.corpus import Corpus, load_corpus
from trainer.shapes import flops_6nd, flops_detailed
from trainer.spec import TrainResult, TrainSpec

VALIDATION_SEED = 20240601  # fixed: every run is scored on the same held-out sequences
Progress = Callable[[int, int, float], None]  # (step, steps, train loss)


def pick_device(requested: str) -> str:
    torch = require_torch()
    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for, but torch sees no CUDA device")
    return requested


def lr_at(step: int, spec: TrainSpec) -> float:
    """Linear warmup, then cosine decay to ``final_lr_fraction`` of the peak."""
    steps, peak = spec.steps, spec.learning_rate
    warmup = max(1, int(spec.warmup_fraction * steps))
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    floor = spec.final_lr_fraction
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def sequences(data: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    return np.stack([data[s:s + length] for s in starts]).astype(np.int64)


def train(spec: TrainSpec, corpus: Corpus | None = None, progress: Progress | None = None) -> TrainResult:
    torch = require_torch()
    from trainer.model import GPT

    corpus = corpus or load_corpus(spec.corpus)
    device = pick_device(spec.device)
    on_gpu = device.startswith("cuda")
    if device == "cpu":
        torch.set_num_threads(spec.threads)
    torch.manual_seed(spec.seed)
    model = GPT(spec.shape).to(device)
    n_params, n_total = model.count_params()
    step_model = torch.compile(model) if spec.compile else model
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": spec.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=spec.learning_rate, betas=(0.9, 0.95), fused=on_gpu or None)
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if on_gpu else contextlib.nullcontext()
    span = spec.context + 1
    # Every batch's offsets are drawn up front, in the order the steps take them, and the text
    # lives on the device: a step gathers its batch there, with no copy from the host and no wait.
    rng = np.random.default_rng(spec.seed)
    starts = np.stack([rng.integers(0, len(corpus.train) - span, spec.batch) for _ in range(spec.steps)])
    text = torch.from_numpy(corpus.train if corpus.train.flags.writeable else corpus.train.copy()).to(device)
    starts = torch.from_numpy(starts).to(device)
    offsets = torch.arange(span, device=device)
    tail, losses = max(1, spec.steps // 10), []
    started = time.perf_counter()
    model.train()
    for step in range(spec.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, spec)
        batch = text[starts[step, :, None] + offsets].long()
        with autocast:
            loss = step_model(batch[:, :-1], batch[:, 1:])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step >= spec.steps - tail:
            losses.append(loss.detach())  # read once at the end: .item() here would wait for the GPU each step
        if progress is not None and (step % 50 == 0 or step == spec.steps - 1):
            progress(step + 1, spec.steps, loss.item())
    train_loss = torch.stack(losses).float().mean().item()
    if on_gpu:
        torch.cuda.synchronize()
    seconds = time.perf_counter() - started
    val_loss = evaluate(model, corpus, spec, device, autocast)
    tokens = spec.steps * spec.batch * spec.context
    return TrainResult(
        N=n_params, N_total=n_total, D=tokens, C=flops_6nd(n_params, tokens),
        C_detailed=flops_detailed(spec.shape, tokens), d_model=spec.d_model, n_layers=spec.n_layers,
        lr=spec.learning_rate, batch=spec.batch, seed=spec.seed, steps=spec.steps,
        train_loss=train_loss, val_loss=val_loss, seconds=round(seconds, 3),
        tokens_per_s=round(tokens / seconds, 1), flops_per_s=flops_detailed(spec.shape, tokens) / seconds,
        device=device if device == "cpu" else torch.cuda.get_device_name(), torch=torch.__version__,
        python=platform.python_version())


def evaluate(model, corpus: Corpus, spec: TrainSpec, device: str, autocast) -> float:
    """Mean next-byte cross-entropy (nats) on the fixed validation sequences."""
    torch = require_torch()
    span = spec.context + 1
    starts = np.random.default_rng(VALIDATION_SEED).integers(0, len(corpus.val) - span, spec.eval_sequences)
    data = torch.from_numpy(sequences(corpus.val, starts, span)).to(device)
    model.eval()
    total = 0.0
    with torch.no_grad(), autocast:
        for chunk in data.split(16 if device == "cpu" else 512):
            total += model(chunk[:, :-1], chunk[:, 1:]).item() * len(chunk)
    return total / len(data)
