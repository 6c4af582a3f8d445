"""The lesson's 2019 GPT-2 as an `nn.Module`, in nanoGPT's spirit but with every intermediate tensor exposed.

Each tensor the lesson draws passes through a named `Tap` (an identity module), so forward hooks see the
tensors inside attention that are no module's output (q, k, v, scores, the masked scores, ...). Attention
is written out, not `F.scaled_dot_product_attention`, so the (B, h, T, T) score tensor really exists.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import Config


class Tap(nn.Identity):
    """Identity module that names a tensor for tracing; costs nothing in a plain forward pass."""


class CausalSelfAttention(nn.Module):
    """Fused QKV, h heads of d_head features, scores / sqrt(d_head), causal mask, softmax, output projection."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h = cfg.h
        self.qkv = nn.Linear(cfg.d, 3 * cfg.d)  # W_qkv: (d, 3d) + bias
        self.proj = nn.Linear(cfg.d, cfg.d)  # W_o: (d, d) + bias
        for name in ("q", "k", "v", "scores", "masked", "attn", "attn_v", "merged"):
            setattr(self, name, Tap())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        h, d_head = self.h, d // self.h
        q, k, v = self.qkv(x).split(d, dim=2)  # each (B, T, d)
        q = self.q(q.view(B, T, h, d_head).transpose(1, 2))  # (B, h, T, d_head)
        k = self.k(k.view(B, T, h, d_head).transpose(1, 2))  # (B, h, T, d_head)
        v = self.v(v.view(B, T, h, d_head).transpose(1, 2))  # (B, h, T, d_head)
        scores = self.scores(q @ k.transpose(-2, -1) / math.sqrt(d_head))  # (B, h, T, T)
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)  # True above the diagonal
        masked = self.masked(scores.masked_fill(future, float("-inf")))  # (B, h, T, T)
        attn = self.attn(F.softmax(masked, dim=-1))  # (B, h, T, T), rows sum to 1
        y = self.attn_v(attn @ v)  # (B, h, T, d_head)
        y = self.merged(y.transpose(1, 2).contiguous().view(B, T, d))  # (B, T, d)
        return self.proj(y)  # (B, T, d)


class MLP(nn.Module):
    """d -> 4d -> d with GELU (tanh approximation, as GPT-2)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.fc = nn.Linear(cfg.d, 4 * cfg.d)  # (d, 4d) + bias
        self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(4 * cfg.d, cfg.d)  # (4d, d) + bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.gelu(self.fc(x)))


class Block(nn.Module):
    """Pre-norm block: x = x + Attn(LN(x)); x = x + MLP(LN(x)). Maps (B, T, d) to (B, T, d)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.d)
        self.attn = CausalSelfAttention(cfg)
        self.resid_1 = Tap()
        self.ln_2 = nn.LayerNorm(cfg.d)
        self.mlp = MLP(cfg)
        self.resid_2 = Tap()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.resid_1(x + self.attn(self.ln_1(x)))
        return self.resid_2(x + self.mlp(self.ln_2(x)))


def _init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: weights N(0, 0.02), biases 0, so an untrained model's loss starts near ln V."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)


class GPT(nn.Module):
    """Token table W_te (V, d) + position table W_pe (T_max, d), L blocks, final LayerNorm, head.

    The head is tied to W_te when `cfg.tie` (it adds no parameters, but its matmul still costs 2dV FLOPs per
    token); `tie=False` gives a separate bias-free `Linear(d, V)`.

    `depth` builds only the first `depth` blocks (default all L). Tracing builds one: every block is the same
    shape-preserving map (B, T, d) -> (B, T, d), so blocks 1 ... L-1 repeat block 0's shapes exactly.
    """

    def __init__(self, cfg: Config, *, depth: int | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.V, cfg.d)  # W_te
        self.wpe = nn.Embedding(cfg.T_max, cfg.d)  # W_pe
        self.embed = Tap()
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.L if depth is None else depth))
        self.ln_f = nn.LayerNorm(cfg.d)
        self.head = nn.Linear(cfg.d, cfg.V, bias=False)
        if cfg.tie:
            self.head.weight = self.wte.weight
        self.loss = Tap()
        if self.wte.weight.device.type != "meta":  # meta modules (tracing) need no values
            self.apply(_init_weights)

    def embed_tokens(self, idx: torch.Tensor) -> torch.Tensor:
        """(B, T) token ids -> (B, T, d) residual stream: tok + pos."""
        T = idx.shape[1]
        if T > self.cfg.T_max:
            raise ValueError(f"T={T} exceeds T_max={self.cfg.T_max}: the learned position table cannot extrapolate")
        tok = self.wte(idx)  # (B, T, d)
        pos = self.wpe(torch.arange(T, device=idx.device))  # (T, d), broadcast over B
        return self.embed(tok + pos)  # (B, T, d)

    def logits_and_loss(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d) -> logits (B, T, V) and the next-token loss.

        Loss: mean cross-entropy of logits[:, :-1] against idx[:, 1:] (position t predicts token t+1);
        None when T = 1, where there is no next token to predict.
        """
        logits = self.head(self.ln_f(x))  # (B, T, V)
        if idx.shape[1] < 2:
            return logits, None
        V = logits.shape[-1]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), idx[:, 1:].reshape(-1))
        return logits, self.loss(loss)  # ()

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T) token ids -> (logits (B, T, V), loss () or None)."""
        x = self.embed_tokens(idx)
        for block in self.blocks:
            x = block(x)
        return self.logits_and_loss(x, idx)

    def num_params(self) -> int:
        """Unique parameters of the built module; the tied head's weight is W_te and counts once."""
        return sum(p.numel() for p in self.parameters())
