"""Causal self-attention: a fused q, k, v projection, h query heads of d_head features and h_kv heads of K and V
(multi-head where h_kv = h, grouped-query between, multi-query at 1), an optional QK-norm, the (B, h, T, T) scores
written out (eager) or one fused kernel (FlashAttention's way), the heads merged and projected back to d.

Its fields: h_kv (`kv_heads`), d_head set apart from d / h (`head_dim`), the biases (`bias`, which names the MLP's and
the LayerNorms' too), QK-norm, the kernel (`attention`), and Gemma's values on the scores: their scale
1/√query_scale and their soft-cap c·tanh(scores / c)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

QUERY_SCALE_MAX = 1 << 20
FIELDS = (
    Field("kv_heads", "whole", "heads of K and V (a divisor of h; default h: multi-head attention)", symbol="h_kv",
          bounds=(1, 32_768), optional=True, unset="default"),
    Field("head_dim", "whole", "features per head (default d / h)", symbol="d_head", bounds=(1, 32_768),
          optional=True, unset="default"),
    Field("bias", "choice", "biases: all (every linear and LayerNorm), none, qkv (q, k and v only), attn (q, k, v and "
          "W_o) or mlp (the MLP's matrices only)", default="all", choices=("all", "none", "qkv", "attn", "mlp")),
    Field("qk_norm", "flag", "QK-norm: an RMSNorm over d_head on q and k of every head", default=False),
    Field("attention", "choice", "attention: eager (written out: (B, h, T, T) scores, masked scores and softmax) or "
          "fused (F.scaled_dot_product_attention, as FlashAttention: no (B, h, T, T) tensor, a (B, h, T) fp32 "
          "log-sum-exp kept for backward)", default="eager", choices=("eager", "fused")),
    Field("query_scale", "whole", "query_pre_attn_scalar: scores scaled by 1/√query_scale instead of 1/√d_head (a "
          "value only)", bounds=(1, QUERY_SCALE_MAX), optional=True, group="extras", family="gemma", unset="none"),
    Field("attn_softcap", "real", "soft-cap c of the scores, c·tanh(scores / c) (eager attention only)", optional=True,
          group="extras", family="gemma"),
)


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: `divisors(12) == [1, 2, 3, 4, 6, 12]`."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"divisors needs a positive integer, got {n!r}")
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return small + large[::-1]


def neighbours(d: int, h: int) -> list[int]:
    """The divisors of d just below and just above h (one of them when h is beyond the range)."""
    divs = divisors(d)
    below = [k for k in divs if k < h][-1:]
    above = [k for k in divs if k > h][:1]
    return below + above


def snap_heads(d: int, h: int) -> int:
    """The divisor of d nearest h (ties go to the smaller): `snap_heads(770, 12) == 11`."""
    return min(divisors(d), key=lambda k: (abs(k - h), k))


def check(cfg: Config) -> None:
    """h divides d where d_head = d / h, and h_kv divides h (ValueError naming the problem and the nearest divisors)."""
    if cfg.head_dim is None and cfg.d % cfg.h and cfg.latent_dim is None:
        near = ", ".join(str(k) for k in neighbours(cfg.d, cfg.h))
        raise ValueError(
            f"d={cfg.d} is not divisible by h={cfg.h}; each head gets d/h features, so h must divide d "
            f"(nearest divisors of {cfg.d}: {near})"
        )
    if cfg.kv_heads is not None and cfg.h % cfg.kv_heads:
        near = ", ".join(str(k) for k in neighbours(cfg.h, cfg.kv_heads))
        raise ValueError(
            f"h_kv={cfg.kv_heads} does not divide h={cfg.h}: each K/V head serves h/h_kv query heads, so h_kv "
            f"must divide h (nearest divisors of {cfg.h}: {near})"
        )


def check_scores(cfg: Config) -> None:
    """A soft-cap of the scores needs the scores: eager attention (ValueError naming the fix)."""
    if cfg.attn_softcap is not None and cfg.attention == "fused":
        raise ValueError(f"attn_softcap={cfg.attn_softcap:g} soft-caps the scores, which a fused kernel never makes: set "
                         f"attention to eager, or drop attn_softcap")
