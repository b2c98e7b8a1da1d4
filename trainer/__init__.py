"""sld's bundled trainer: byte-level GPT sweeps that feed the service (``sld train ...``).

torch is an optional extra (``pip install -e '.[train]'``) and is imported only where a
model is built or trained: planning a sweep, counting parameters and FLOPs, and the worker's
HTTP loop need no torch, so the service can expand a sweep design without it.
"""
from __future__ import annotations

from agent.errors import SldError

INSTALL_HINT = ("the trainer needs PyTorch: install the extra with `pip install -e '.[train]'` "
                "(it pins the CPU build of torch)")


class TrainerUnavailable(SldError):
    """torch is not installed; the message says how to install it."""


def require_torch():
    """The ``torch`` module, or TrainerUnavailable naming the extra to install."""
    try:
        import torch
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        raise TrainerUnavailable(INSTALL_HINT) from None
    return torch


class ServiceRefused(SldError):
    """The service answered a trainer's request with an error; the message quotes it."""
