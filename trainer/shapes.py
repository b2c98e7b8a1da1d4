"""Model shapes and what they cost, without torch: the service plans sweeps with these.

A shape is a byte-level (vocabulary 256) pre-LN GPT.  Its width is a multiple of 16 with
heads of 16 dimensions and one layer per 32 of width (rounded, at least one), so a single
number (the target count of non-embedding parameters, Kaplan's N) picks the whole shape and a
sweep over N stays one family of one aspect ratio.  Counts are exact: ``test_shapes`` checks them against the torch model.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

VOCAB = 256
HEAD_DIM = 16
CONTEXT = 128
MAX_WIDTH = 8192


@dataclass(frozen=True)
class ModelShape:
    d_model: int
    n_layers: int
    context: int = CONTEXT
    vocab: int = VOCAB

    @property
    def n_heads(self) -> int:
        return max(1, self.d_model // HEAD_DIM)

    @property
    def non_embedding_params(self) -> int:
        """N: attention and MLP weights with their biases, the layer norms, the output layer."""
        d = self.d_model
        per_layer = (3 * d * d + 3 * d) + (d * d + d) + (4 * d * d + 4 * d) + (4 * d * d + d) + 2 * (2 * d)
        return self.n_layers * per_layer + 2 * d + (d * self.vocab + self.vocab)

    @property
    def embedding_params(self) -> int:
        return (self.vocab + self.context) * self.d_model

    @property
    def total_params(self) -> int:
        return self.non_embedding_params + self.embedding_params

    def to_dict(self) -> dict:
        return asdict(self)


def shape_for(n_params: float, context: int = CONTEXT) -> ModelShape:
    """The shape whose non-embedding parameter count is nearest ``n_params`` (log distance)."""
    if not n_params > 0:
        raise ValueError(f"a model needs a positive parameter count (got {n_params})")
    best, best_gap = None, float("inf")
    for width in range(HEAD_DIM, MAX_WIDTH + 1, HEAD_DIM):
        shape = family_shape(width, context)
        gap = abs(math.log(shape.non_embedding_params / n_params))
        if gap < best_gap:
            best, best_gap = shape, gap
        if shape.non_embedding_params > n_params:
            break
    return best


def family_shape(width: int, context: int = CONTEXT) -> ModelShape:
    return ModelShape(width, max(1, round(width / (2 * HEAD_DIM))), context)


def flops_6nd(n_params: float, tokens: float) -> float:
    """Training compute as the literature counts it: 6 FLOPs per parameter per token."""
    return 6.0 * n_params * tokens


def flops_detailed(shape: ModelShape, tokens: float) -> float:
    """Training compute with attention's score and value products and the output layer counted.

    Forward per token: 2 FLOPs per weight (output layer included) plus 2·context·d per layer for
    the attention scores and weighted values (Kaplan et al. 2020, table 1); backward twice that.
    Causal masking is not discounted, as Kaplan does not.
    """
    weights = shape.non_embedding_params  # includes the output layer
    attention = 2 * shape.n_layers * shape.context * shape.d_model
    return 3.0 * (2.0 * weights + attention) * tokens
