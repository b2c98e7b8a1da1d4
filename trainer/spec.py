"""What one training run is (:class:`TrainSpec`) and what it reports (:class:`TrainResult`); no torch.

A result is one dataset row: its field names are the sweep dataset's columns.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from trainer.corpus import CORPORA
from trainer.shapes import CONTEXT, ModelShape, flops_6nd, shape_for

DEFAULT_BATCH = 8
REFERENCE_WIDTH = 96


def default_lr(d_model: int) -> float:
    """About 3e-3·(96/d)^0.75: near-best from width 32 to 128 on this corpus (measured, issue #15)."""
    return 3e-3 * (REFERENCE_WIDTH / d_model) ** 0.75


@dataclass(frozen=True)
class TrainSpec:
    """One run: a model of ``d_model``/``n_layers`` trained on ``tokens`` tokens.

    ``lr`` None takes :func:`default_lr`.  ``threads`` is torch's intra-op threads on the CPU:
    one per run, with runs side by side, is the faster use of a few cores (measured, issue #15).
    ``corpus`` names the training text (:data:`trainer.corpus.CORPORA`); ``eval_sequences`` how
    many fixed held-out sequences score the run (64 are enough to rank CPU runs; a GPU sweep
    whose losses are compared to 1 % wants thousands).
    """

    d_model: int
    n_layers: int
    tokens: int
    batch: int = DEFAULT_BATCH
    lr: float | None = None
    seed: int = 0
    context: int = CONTEXT
    warmup_fraction: float = 0.05
    final_lr_fraction: float = 0.1
    weight_decay: float = 0.1
    eval_sequences: int = 64
    corpus: str = "stdlib"
    device: str = "auto"
    threads: int = 1
    compile: bool = False

    def __post_init__(self):
        if self.d_model < 16 or self.d_model % 16:
            raise ValueError(f"d_model must be a positive multiple of 16 (got {self.d_model})")
        if self.n_layers < 1:
            raise ValueError(f"n_layers must be at least 1 (got {self.n_layers})")
        if self.batch < 1 or self.context < 8:
            raise ValueError("batch must be at least 1 and context at least 8")
        if self.steps < 1:
            raise ValueError(f"{self.tokens} tokens are less than one step of {self.batch}x{self.context}")
        if self.corpus not in CORPORA:
            raise ValueError(f"unknown corpus {self.corpus!r}: use one of {', '.join(CORPORA)}")
        if self.eval_sequences < 1:
            raise ValueError(f"eval_sequences must be at least 1 (got {self.eval_sequences})")
        if self.lr is not None and not (0 < self.lr < 1):
            raise ValueError(f"lr must be in (0, 1) (got {self.lr})")

    @classmethod
    def for_params(cls, n_params: float, tokens: float, **options) -> "TrainSpec":
        shape = shape_for(n_params, options.get("context", CONTEXT))
        return cls(d_model=shape.d_model, n_layers=shape.n_layers, tokens=int(tokens), **options)

    @property
    def shape(self) -> ModelShape:
        return ModelShape(self.d_model, self.n_layers, self.context)

    @property
    def steps(self) -> int:
        return int(self.tokens // (self.batch * self.context))

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else default_lr(self.d_model)

    @property
    def cost(self) -> float:
        """6·N·D of the tokens actually trained: the order in which a sweep's points are claimed."""
        return flops_6nd(self.shape.non_embedding_params, self.steps * self.batch * self.context)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "TrainSpec":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown training option(s): {', '.join(sorted(unknown))}")
        return cls(**data)


@dataclass(frozen=True)
class TrainResult:
    """One finished run; field names are the columns of a sweep's dataset."""

    N: int  # non-embedding parameters (Kaplan's N)
    N_total: int  # with the token and position embeddings
    D: int  # tokens trained
    C: float  # 6·N·D
    C_detailed: float  # with attention and the output layer
    d_model: int
    n_layers: int
    lr: float
    batch: int
    seed: int
    steps: int
    train_loss: float  # mean of the last tenth of the steps, nats per byte
    val_loss: float  # on held-out files, nats per byte
    seconds: float
    tokens_per_s: float
    flops_per_s: float
    device: str
    torch: str
    python: str

    def to_row(self) -> dict:
        return asdict(self)


ROW_COLUMNS = tuple(f.name for f in fields(TrainResult))
