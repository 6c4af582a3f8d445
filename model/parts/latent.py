"""Multi-head latent attention (DeepSeek-V2/V3): every head's K and V come from one latent c_kv of d_c features per
token, and one rotary key k_rope of d_R features is shared by the heads; the KV cache keeps c_kv and k_rope only.
Queries come from their own latent of d_cq features (or straight from x). Each head's q and k are d_nope + d_R wide
(so d_head = d_nope + d_R, and h need not divide d), its v d_v wide."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field
from ..figures import Line, line
from ..notation import SYMBOL_DOCS

if TYPE_CHECKING:
    from ..config import Config


def _width(name: str, symbol: str, hi: int, example: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="latent")


FIELDS = (  # DeepSeek-V3: d_c 512, d_cq 1,536, d_R 64, d_nope 128, d_v 128
    _width("latent_dim", "d_c", 65_536, "512"),
    _width("q_latent_dim", "d_cq", 65_536, "1,536"),
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


def present(cfg: Config) -> bool:
    """Latent attention in every block's attention's place."""
    return cfg.latent_dim is not None


def _queries(cfg: Config) -> Expr:
    return E("d·h·(d_nope + d_R)") if cfg.q_latent_dim is None else E("d·d_cq + d_cq·h·(d_nope + d_R)")


def weights(cfg: Config) -> Expr:
    """One block's matrices: W_DQ (d, d_cq) and W_UQ (d_cq, h·(d_nope + d_R)), or W_Q (d, h·(d_nope + d_R)); W_DKV
    (d, d_c + d_R), W_UKV (d_c, h·(d_nope + d_v)) and W_o (h·d_v, d)."""
    return E("{q} + d·(d_c + d_R) + d_c·h·(d_nope + d_v) + h·d_v·d", q=_queries(cfg))


def extras(cfg: Config) -> list[Expr]:
    """The latents' RMSNorm gains: the latent's (d_c) and the queries' latent's (d_cq)."""
    return [E("d_c") if cfg.q_latent_dim is None else E("d_cq + d_c")]


def flops(cfg: Config) -> Expr:
    """The matmul FLOPs per token of one block's projections (2 per weight)."""
    return E("2({w})", w=weights(cfg))


def scores(cfg: Config) -> tuple[int, Expr]:
    """q kᵀ and attn @ v per token, block and key, as (coefficient, width): q and k are d_nope + d_R wide, v d_v."""
    return 2, E("h·(d_nope + d_R + d_v)")


def label(cfg: Config, lesson: bool) -> str:
    """One block's latent attention line, in words."""
    q = "W_Q (d, h·(d_nope + d_R))" if cfg.q_latent_dim is None else "W_DQ (d, d_cq), W_UQ (d_cq, h·(d_nope + d_R))"
    return (f"latent attention, one block: {q}, W_DKV (d, d_c + d_R), W_UKV (d_c, h·(d_nope + d_v)), W_o (h·d_v, d) and "
            "the latents' RMSNorm gains")


# --- the cache: the latent c_kv (d_c) and the rotary key k_rope (d_R) of each block and token -----------------------
def cache(cfg: Config, x: Expr | None = None) -> Expr:
    """The cache's elements over `x` block-tokens (None: one block's token): d_c + d_R each, "LBT·(d_c + d_R)"."""
    return E("d_c + d_R") if x is None else E("{x}·(d_c + d_R)", x=x)


def cache_scales(cfg: Config, x: Expr | None = None) -> Expr:
    """The bytes of a per-head cache format's scales: the latent and the rotary key are one head each, "2·2L"."""
    return E("2·2") if x is None else E("2·2{x}", x=x)


def cache_shapes(cfg: Config, T: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's cache of T tokens for B sequences as transformers' cache holds it: the latent and the rotary key,
    (B, 1, T, d_c) and (B, 1, T, d_R)."""
    return (cfg.B, 1, T, cfg.d_c), (cfg.B, 1, T, cfg.d_R)


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """The cache per block and token: the latent c_kv (d_c) and the rotary key (d_R), as transformers' cache keeps them
    (every head's K and V are made again from them at each step); beside them what K and V of the h heads would keep,
    h·(d_nope + d_R) and h·d_v, the ratio, and the DeepSeek-V2 paper's comparison (its section 2.1.4: MLA's cache "is
    equal to GQA with only 2.25 groups", n_g = (d_c + d_R) / (2d_h) with the paper's per-head width d_h = d_nope)."""
    s = cfg.symbols()
    return [
        line("memory/kv_cache", f"KV cache at {dtype}: the latent c_kv (d_c) and the rotary key k_rope (d_R) of every "
             f"block, B sequences of T tokens (latent attention: K and V of the h heads are made from them)",
             E("{e}·{b}", e=cache(cfg, E("LBT")), b=size), s, "bytes"),
        line("memory/kv_cache_per_token", f"KV cache per token of context at {dtype} (one sequence, one more token)",
             E("{e}·{b}", e=cache(cfg, E("L")), b=size), s, "bytes"),
        line("memory/kv_cache_heads", f"K and V at h heads would be, per token at {dtype} (K of d_nope + d_R, V of "
             f"d_v per head)", E("L·h·(d_nope + d_R + d_v)·{b}", b=size), s, "bytes"),
        line("memory/kv_cache_ratio", "the latent cache is this many times smaller",
             E("h·(d_nope + d_R + d_v) / (d_c + d_R)"), s, "ratio"),
        line("memory/kv_cache_groups", "the DeepSeek-V2 paper's comparison: the latent cache is as large as GQA's "
             "with n_g groups (K and V of n_g heads of d_h = d_nope), n_g =", E("(d_c + d_R) / (2d_nope)"), s, "count"),
    ]


def decode_scores(cfg: Config) -> Expr:
    """A decode step's q kᵀ and attn @ v: B new tokens over the T cached keys and their own, every block."""
    c, w = scores(cfg)
    return E("{c}LB·(T + 1)·{w}", c=c, w=w)


def decode_flops(cfg: Config, f: Expr) -> Expr:
    """A decode step's FLOPs per new token `f`, and the K and V of every head that latent attention makes again from
    the T cached latents (W_UKV, as transformers runs it): 2T·d_c·h·(d_nope + d_v) per block."""
    return E("{f} + 2LT·d_c·h·(d_nope + d_v)", f=f) if present(cfg) else f


# A decode step's tensors of block 0's latent attention (`model.inference.decode_rows`): the cache is the latent and
# the rotary key, and K and V of every head are made again from all T + 1 latents at each step.
DECODE_ROWS: dict[str, tuple[str, str]] = {
    "blocks.0.attn.q": ("(B, h, 1, d_nope + d_R)", "q of the new token"),
    "blocks.0.attn.latent_cache": ("(B, 1, T + 1, d_c)", "the latent c_kv of the {T} cached tokens and the new one"),
    "blocks.0.attn.rope_cache": ("(B, 1, T + 1, d_R)", "the rotary key of the {T} cached tokens and the new one"),
    "blocks.0.attn.k": ("(B, h, T + 1, d_nope + d_R)", "K of every head, made from the T + 1 latents"),
    "blocks.0.attn.v": ("(B, h, T + 1, d_v)", "V of every head, made from the T + 1 latents"),
    "blocks.0.attn.scores": ("(B, h, 1, T + 1)", "the new token's scores against every key"),
    "blocks.0.attn.attn": ("(B, h, 1, T + 1)", "their softmax"),
    "blocks.0.attn.attn_v": ("(B, h, 1, d_v)", "attention's output for the new token"),
}
