"""Parameter and FLOP budget of a `Config`, as plain data: `budget(cfg)` -> `Budget`.

Conventions (as in the lesson, Kaplan et al. 2020 and nanoGPT's transformer_sizing):
- FLOPs, not MACs: a (m, k) @ (k, n) matmul costs 2mkn FLOPs.
- Parameters include biases and LayerNorm gains/biases. With a tied head (GPT-2) the head's weight is W_te:
  it adds no parameters, but its matmul still costs 2dV FLOPs per token.
- The token and position lookups are indexing, not matmuls: 0 FLOPs. LayerNorm, GELU, softmax, bias adds
  and the loss are not counted by the 2N rule nor by torch's FlopCounterMode (matmuls only).
- The measured forward FLOPs count the full (T, T) score matrix, as the code computes it; a causal kernel
  could skip the masked half (torch's flop_counter makes the same note).
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass

from .config import Config
from .tracing import run_pass


def params_emb(cfg: Config) -> int:
    """Token table W_te (V, d) + position table W_pe (T_max, d)."""
    return (cfg.V + cfg.T_max) * cfg.d


def params_attn_block(cfg: Config) -> int:
    """One block's attention: W_qkv (d, 3d) + W_o (d, d) = 4d², plus biases 3d + d."""
    return 4 * cfg.d**2 + 4 * cfg.d


def params_mlp_block(cfg: Config) -> int:
    """One block's MLP: (d, 4d) + (4d, d) = 8d², plus biases 4d + d."""
    return 8 * cfg.d**2 + 5 * cfg.d


def params_norms(cfg: Config) -> int:
    """Gain and bias of 2 LayerNorms per block plus the final one: (2L + 1) * 2d."""
    return (2 * cfg.L + 1) * 2 * cfg.d


def params_head(cfg: Config) -> int:
    """0 when tied to W_te; a separate bias-free head is (d, V)."""
    return 0 if cfg.tie else cfg.V * cfg.d


def params_approx(cfg: Config) -> int:
    """The lesson's approximation 12Ld² + (V + T_max)d (+ Vd for an untied head): no biases or norms."""
    return 12 * cfg.L * cfg.d**2 + params_emb(cfg) + params_head(cfg)


@dataclass(frozen=True)
class Budget:
    """Parameters and FLOPs of one `Config`. Per-token FLOPs are forward FLOPs / (B * T)."""

    params_emb: int
    params_attn_block: int
    params_mlp_block: int
    params_blocks: int  # L * (attention + MLP of one block); the blocks' LayerNorms are in params_norms
    params_norms: int
    params_head: int
    params_approx: int
    params_exact: int  # N: unique parameters of the real module
    flops_fwd_per_token: int  # 2N
    flops_train_per_token: int  # 6N: forward 2N + backward 4N
    flops_fwd_measured_per_token: float  # FlopCounterMode on the real forward pass (includes attention)
    flops_attn_per_token: float  # the measured part in q kᵀ and attn @ v: 4LTd
    attn_share: float  # flops_attn_per_token / flops_fwd_measured_per_token
    T_attn_equals_dense: int  # T where attention's 4LTd equals the blocks' dense 24Ld² (= 6d)

    def as_dict(self) -> dict[str, int | float]:
        return asdict(self)


@functools.lru_cache(maxsize=512)
def budget(cfg: Config) -> Budget:
    """Parameters (analytic parts, exact total from the real module) and FLOPs (2N, 6N and measured).

    Raises RuntimeError if the analytic parts do not add up to the real module's parameter count.
    """
    p = run_pass(cfg)
    exact = p.params_embed + cfg.L * p.params_block + p.params_ln_f + p.params_head
    parts = (params_emb(cfg), cfg.L * (params_attn_block(cfg) + params_mlp_block(cfg)), params_norms(cfg), params_head(cfg))
    if sum(parts) != exact:
        raise RuntimeError(f"analytic parameter parts {parts} sum to {sum(parts):,}, the module has {exact:,}")
    tokens = cfg.B * cfg.T
    measured = (cfg.L * p.flops_block + p.flops_head) / tokens
    attn = cfg.L * p.flops_attn_block / tokens
    dense_block = (p.flops_block - p.flops_attn_block) / tokens  # 24d² per token per block
    attn_per_T = p.flops_attn_block / tokens / cfg.T  # 4d per token per block per position
    return Budget(
        params_emb=parts[0],
        params_attn_block=params_attn_block(cfg),
        params_mlp_block=params_mlp_block(cfg),
        params_blocks=parts[1],
        params_norms=parts[2],
        params_head=parts[3],
        params_approx=params_approx(cfg),
        params_exact=exact,
        flops_fwd_per_token=2 * exact,
        flops_train_per_token=6 * exact,
        flops_fwd_measured_per_token=measured,
        flops_attn_per_token=attn,
        attn_share=attn / measured,
        T_attn_equals_dense=round(dense_block / attn_per_T),
    )
