"""Multi-head latent attention (DeepSeek-V2/V3): every head's K and V come from one latent c_kv of d_c features per
token, and one rotary key k_rope of d_R features is shared by the heads; the KV cache keeps c_kv and k_rope only.
Queries come from their own latent of d_cq features (or straight from x). Each head's q and k are d_nope + d_R wide
(so d_head = d_nope + d_R, and h need not divide d), its v d_v wide."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field
from ..notation import SYMBOL_DOCS

if TYPE_CHECKING:
    from ..config import Config


def _width(name: str, symbol: str, hi: int, example: str, **more: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="latent", needs="latent_dim", **more)


ABSENT = ("{key} is a width of multi-head latent attention, which this model does not have: choose DeepSeek-V3's "
          "preset first (or a link with d_c, d_R, d_nope and d_v); kept its attention")  # the page's (`Field.absent`)
FIELDS = (  # DeepSeek-V3: d_c 512, d_cq 1,536, d_R 64, d_nope 128, d_v 128
    _width("latent_dim", "d_c", 65_536, "512", unset="none", absent=ABSENT),  # none: no latent attention
    _width("q_latent_dim", "d_cq", 65_536, "1,536", unset="none"),  # none: q projected from x directly
    _width("rope_dim", "d_R", 32_768, "64"),  # and even (RoPE rotates pairs)
    _width("nope_dim", "d_nope", 32_768, "128"),
    _width("value_dim", "d_v", 32_768, "128"),
)
# What latent attention is not modelled with, each as the field's value that leaves it out.
WITHOUT: dict[str, object] = {"kv_heads": None, "head_dim": None, "qk_norm": False, "bias": "none", "window": None,
                              "sinks": False, "post_norms": False, "query_scale": None, "attn_softcap": None}


def check(cfg: Config) -> None:
    """Latent attention's fields together (ValueError naming the problem and the fix)."""
    if cfg.latent_dim is None:
        for f in FIELDS:
            if getattr(cfg, f.name) is not None:
                raise ValueError(f"{f.name}={getattr(cfg, f.name)!r} is set but latent_dim is not: {f.name} is a width "
                                 f"of multi-head latent attention; set latent_dim (d_c) or drop {f.name}")
        return
    for f in FIELDS:
        if getattr(cfg, f.name) is None and f.name != "q_latent_dim":
            raise ValueError(f"latent attention (d_c={cfg.latent_dim!r}) needs {f.symbol}: set {f.name} ({f.doc}"
                             f"; DeepSeek-V3: {f.example})")
    if cfg.rope_dim % 2:
        raise ValueError(f"d_R={cfg.rope_dim} is odd: RoPE rotates pairs of features, so rope_dim must be even")
    if cfg.positions != "rope":
        raise ValueError("latent attention rotates its d_R features by position (RoPE): set positions to rope")
    if cfg.attention != "eager":
        raise ValueError(f"attention={cfg.attention} with latent attention: the fused kernel here takes q, k and v of "
                         f"one head width, but q and k have d_nope + d_R = {cfg.d_head:,} and v d_v = "
                         f"{cfg.value_dim:,}; set attention to eager")
    for name, default in WITHOUT.items():
        if getattr(cfg, name) != default:
            raise ValueError(f"{name}={getattr(cfg, name)!r} with latent attention is not modelled (DeepSeek's "
                             f"attention has none): drop {name}, or drop latent_dim")
