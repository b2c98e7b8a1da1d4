"""The byte-level pre-LN GPT (torch): learned positions, causal attention, a 4x GELU MLP.

Its parameter counts are exactly those of :class:`trainer.shapes.ModelShape` (a test checks it).
"""
from __future__ import annotations

from trainer import require_torch
from trainer.shapes import ModelShape

torch = require_torch()
nn = torch.nn
F = torch.nn.functional


class Block(nn.Module):
    def __init__(self, d: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(b, t, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, shape: ModelShape):
        super().__init__()
        d = shape.d_model
        self.shape = shape
        self.token = nn.Embedding(shape.vocab, d)
        self.position = nn.Embedding(shape.context, d)
        self.blocks = nn.ModuleList(Block(d, shape.n_heads) for _ in range(shape.n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, shape.vocab)
        self.apply(self._init)
        for block in self.blocks:  # GPT-2's scaling of the residual projections by depth
            for layer in (block.proj, block.down):
                nn.init.normal_(layer.weight, std=0.02 / (2 * shape.n_layers) ** 0.5)

    @staticmethod
    def _init(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        t = idx.shape[1]
        x = self.token(idx) + self.position(torch.arange(t, device=idx.device))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.reshape(-1))

    def count_params(self) -> tuple[int, int]:
        """(non-embedding, total) as built."""
        total = sum(p.numel() for p in self.parameters())
        embedding = self.token.weight.numel() + self.position.weight.numel()
        return total - embedding, total
