"""Multi-head latent attention (DeepSeek-V2/V3): every head's K and V come from one latent c_kv of d_c features per
token, and one rotary key k_rope of d_R features is shared by the heads; the KV cache keeps c_kv and k_rope only.
Queries come from their own latent of d_cq features (or straight from x). Each head's q and k are d_nope + d_R wide
(so d_head = d_nope + d_R, and h need not divide d), its v d_v wide."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field
from ..figures import Line, line
from ..taps import Tap
from .attention import hidden_keys
from .norms import RMSNorm
from . import sparse
from .positions import rotate, rotates  # rotates: not where every block is NoPE (Kimi Linear's)
from ..notation import SYMBOL_DOCS

if TYPE_CHECKING:
    from ..budgeting import Budget
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
    if cfg.rope_dim % 2 and rotates(cfg):
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


def structure(cfg: Config) -> tuple[bool, ...]:
    """What of latent attention decides which tensors a pass makes (`model.memory.Structure.mla`): whether the queries
    have a latent, and whether an indexer picks their keys (`model.parts.sparse`); () without latent attention."""
    return (cfg.d_cq is not None, sparse.present(cfg)) if present(cfg) else ()


SAYS = {"values/d_head": "d_head = d_nope + d_R"}  # the words latent attention adds elsewhere (`model.parts.says`)


def rule_values(cfg: Config) -> dict[str, int]:
    """The widths latent attention's rule names (`model.rules.rules_line`): d_v and d_c; none without it."""
    return {"d_v": cfg.d_v, "d_c": cfg.d_c} if present(cfg) else {}


def hides(cfg: Config) -> tuple[str, ...]:
    """The fields latent attention has no use for (`WITHOUT`: h_kv, d_head, W), whose boxes the page hides; none
    without it."""
    return tuple(WITHOUT) if present(cfg) else ()


def sizes(cfg: Config) -> dict[str, object]:
    """Latent attention's fields in a configuration's JSON (`model.config.config_dict`), none without it."""
    return {f.name: getattr(cfg, f.name) for f in FIELDS} if present(cfg) else {}

def _queries(cfg: Config) -> Expr:
    return E("d·h·(d_nope + d_R)") if cfg.q_latent_dim is None else E("d·d_cq + d_cq·h·(d_nope + d_R)")


def weights(cfg: Config) -> Expr:
    """One block's matrices: W_DQ (d, d_cq) and W_UQ (d_cq, h·(d_nope + d_R)), or W_Q (d, h·(d_nope + d_R)); W_DKV
    (d, d_c + d_R), W_UKV (d_c, h·(d_nope + d_v)) and W_o (h·d_v, d)."""
    own = E("{q} + d·(d_c + d_R) + d_c·h·(d_nope + d_v) + h·d_v·d", q=_queries(cfg))
    return E("{a} + {i}", a=own, i=sparse.weights(cfg)) if sparse.present(cfg) else own


def extras(cfg: Config) -> list[Expr]:
    """The latents' RMSNorm gains: the latent's (d_c) and the queries' latent's (d_cq); and the indexer's (its key's
    LayerNorm, `model.parts.sparse`)."""
    return [E("d_c") if cfg.q_latent_dim is None else E("d_cq + d_c"), *(sparse.extras(cfg) if sparse.present(cfg)
                                                                        else [])]


def flops(cfg: Config) -> Expr:
    """The matmul FLOPs per token of one block's projections (2 per weight)."""
    return E("2({w})", w=weights(cfg))


def scores(cfg: Config) -> tuple[int, Expr]:
    """q kᵀ and attn @ v per token, block and key, as (coefficient, width): q and k are d_nope + d_R wide, v d_v; with
    an indexer, its products with every key too (`model.parts.sparse.SCORES`)."""
    own = E("h·(d_nope + d_R + d_v)")
    return 2, (E("{a} + {i}", a=own, i=sparse.SCORES) if sparse.present(cfg) else own)


def label(cfg: Config, lesson: bool) -> str:
    """One block's latent attention line, in words."""
    q = "W_Q (d, h·(d_nope + d_R))" if cfg.q_latent_dim is None else "W_DQ (d, d_cq), W_UQ (d_cq, h·(d_nope + d_R))"
    return (f"latent attention, one block: {q}, W_DKV (d, d_c + d_R), W_UKV (d_c, h·(d_nope + d_v)), W_o (h·d_v, d) and "
            "the latents' RMSNorm gains" + (sparse.label(cfg) if sparse.present(cfg) else ""))


# --- the cache: the latent c_kv (d_c) and the rotary key k_rope (d_R) of each block and token -----------------------
def _kept(cfg: Config) -> Expr:
    """One block's token in the cache: the latent and the rotary key, and an indexer's key (`model.parts.sparse`)."""
    return E("d_c + d_R + d_I") if sparse.present(cfg) else E("d_c + d_R")


def cache(cfg: Config, x: Expr | None = None) -> Expr:
    """The cache's elements over `x` block-tokens (None: one block's token): d_c + d_R each, "LBT·(d_c + d_R)" (with
    an indexer, its key's d_I too)."""
    return _kept(cfg) if x is None else E("{x}·({k})", x=x, k=_kept(cfg))


def cache_scales(cfg: Config, x: Expr | None = None) -> Expr:
    """The bytes of a per-head cache format's scales: the latent and the rotary key are one head each, "2·2L" (and
    an indexer's key a third)."""
    heads = 3 if sparse.present(cfg) else 2
    return E("2·{n}", n=heads) if x is None else E("2·{n}{x}", n=heads, x=x)


WRITTEN = "latent and rotary key"  # what a decode step writes to the cache per token and block


def cache_shapes(cfg: Config, T: int) -> tuple[tuple[int, ...], ...]:
    """One block's cache of T tokens for B sequences as transformers' cache holds it: the latent and the rotary key,
    (B, 1, T, d_c) and (B, 1, T, d_R), and with an indexer its keys (B, T, d_I) (DynamicIndexedLayer's)."""
    own = ((cfg.B, 1, T, cfg.d_c), (cfg.B, 1, T, cfg.d_R))
    return (*own, sparse.cache_shape(cfg, T)) if sparse.present(cfg) else own


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """The cache per block and token: the latent c_kv (d_c) and the rotary key (d_R), as transformers' cache keeps them
    (every head's K and V are made again from them at each step); beside them what K and V of the h heads would keep,
    h·(d_nope + d_R) and h·d_v, the ratio, and the DeepSeek-V2 paper's comparison (its section 2.1.4: MLA's cache "is
    equal to GQA with only 2.25 groups", n_g = (d_c + d_R) / (2d_h) with the paper's per-head width d_h = d_nope)."""
    s = cfg.symbols()
    key = "the rotary key k_rope (d_R)" if rotates(cfg) else "the key's d_R features k_rope (not rotated)"
    kept = f"the latent c_kv (d_c), {key} and the indexer's key k_I (d_I)" if sparse.present(cfg) \
        else f"the latent c_kv (d_c) and {key}"
    return [
        line("memory/kv_cache", f"KV cache at {dtype}: {kept} of every block, B sequences of T tokens (latent "
             f"attention: K and V of the h heads are made from them)",
             E("{e}·{b}", e=cache(cfg, E("LBT")), b=size), s, "bytes"),
        line("memory/kv_cache_per_token", f"KV cache per token of context at {dtype} (one sequence, one more token)",
             E("{e}·{b}", e=cache(cfg, E("L")), b=size), s, "bytes"),
        line("memory/kv_cache_heads", f"K and V at h heads would be, per token at {dtype} (K of d_nope + d_R, V of "
             f"d_v per head)", E("L·h·(d_nope + d_R + d_v)·{b}", b=size), s, "bytes"),
        line("memory/kv_cache_ratio", "the latent cache is this many times smaller",
             E("h·(d_nope + d_R + d_v) / ({k})", k=_kept(cfg)), s, "ratio"),
        line("memory/kv_cache_groups", "the DeepSeek-V2 paper's comparison: the latent cache is as large as GQA's "
             "with n_g groups (K and V of n_g heads of d_h = d_nope), n_g =", E("({k}) / (2d_nope)", k=_kept(cfg)), s,
             "count"),
    ]


def decode_scores(cfg: Config) -> Expr:
    """A decode step's q kᵀ and attn @ v: B new tokens over the T cached keys and their own, every block."""
    c, w = scores(cfg)
    return E("{c}LB·(T + 1)·{w}", c=c, w=w)


def decode_flops(cfg: Config, f: Expr) -> Expr:
    """A decode step's FLOPs per new token `f`, and the K and V of every head that latent attention makes again from
    the T cached latents (W_UKV, as transformers runs it): 2T·d_c·h·(d_nope + d_v) per block."""
    if not present(cfg):
        return f
    blocks = E("(L − L_kda)") if cfg.kda_layers else E("L")  # beside Kimi delta attention: its attention blocks
    return E("{f} + 2{n}T·d_c·h·(d_nope + d_v)", f=f, n=blocks)


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


# --- the module in the real forward pass ------------------------------------------------------------------------------
class LatentAttention(nn.Module):
    """Multi-head latent attention (DeepSeek-V2/V3, as transformers' DeepseekV3Attention builds it), eager.

    Queries: x W_DQ (d, d_cq) -> RMSNorm -> W_UQ (d_cq, h·(d_nope + d_R)) (`q_a`, `q_a_norm`, `q_b`), or one
    (d, h·(d_nope + d_R)) projection (`q_proj`) without a query latent. Keys and values: x W_DKV (d, d_c + d_R)
    (`kv_a`, transformers' kv_a_proj_with_mqa) splits into the latent c_kv (d_c, RMSNorm'd: `kv_a_norm`) and one rotary
    key k_rope (d_R) that every head shares; W_UKV (d_c, h·(d_nope + d_v)) (`kv_b`) makes each head's k_nope (d_nope)
    and v (d_v) from the latent. Each head's q and k are [nope, rotated rope], d_nope + d_R = d_head wide, so the
    scores are (B, h, T, T) scaled by 1/√(d_nope + d_R) (transformers multiplies by yarn's mscale² where rope_scaling
    sets mscale_all_dim: a value); attn @ v is (B, h, T, d_v), merged to h·d_v and projected by W_o (h·d_v, d).

    What a decode step caches is the latent and the rotary key, (B, 1, T_c, d_c) and (B, 1, T_c, d_R), as transformers'
    cache holds them; K and V of every head are made again from them each step. No biases (DeepSeek's
    attention_bias false)."""

    def __init__(self, cfg: Config, rope: bool = True) -> None:
        super().__init__()
        self.h, self.d_c, self.d_R, self.d_nope, self.d_v = cfg.h, cfg.d_c, cfg.d_R, cfg.d_nope, cfg.d_v
        self.rotates = rope  # False: a NoPE block (Kimi Linear's), its d_R features of q and k not rotated
        self.root = math.sqrt(cfg.d_head)  # √(d_nope + d_R)
        width = cfg.h * cfg.d_head  # h·(d_nope + d_R)
        if cfg.d_cq is not None:
            self.q_a = nn.Linear(cfg.d, cfg.d_cq, bias=False)  # W_DQ: (d, d_cq)
            self.q_a_norm = RMSNorm(cfg.d_cq)
            self.q_b = nn.Linear(cfg.d_cq, width, bias=False)  # W_UQ: (d_cq, h·(d_nope + d_R))
        else:
            self.q_proj = nn.Linear(cfg.d, width, bias=False)  # W_Q: (d, h·(d_nope + d_R))
        self.kv_a = nn.Linear(cfg.d, cfg.d_c + cfg.d_R, bias=False)  # W_DKV: (d, d_c + d_R)
        self.kv_a_norm = RMSNorm(cfg.d_c)
        self.kv_b = nn.Linear(cfg.d_c, cfg.h * (cfg.d_nope + cfg.d_v), bias=False)  # W_UKV: (d_c, h·(d_nope + d_v))
        self.proj = nn.Linear(cfg.h * cfg.d_v, cfg.d, bias=False)  # W_o: (h·d_v, d)
        self.indexer = sparse.module(cfg)  # DeepSeek sparse attention's lightning indexer, or None
        for name in ("q", "q_nope", "q_rope", "c_kv", "k_rope", "k_nope", "v", "q_heads", "k", "scores", "masked",
                     "attn", "attn_v", "merged", "latent_cache", "rope_cache", *(("q_rot", "k_rot") if rope else ())):
            setattr(self, name, Tap())

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None,
                past: tuple[torch.Tensor, ...] | None = None,
                band: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the latent (B, 1, T_c, d_c) and the rotary key
        (B, 1, T_c, d_R) of the T_c tokens before x's one token (and an indexer's keys (B, T_c, d_I)); the new token's
        join them (`latent_cache`, `rope_cache`) and every head's K and V are made from all T_c + 1. With an indexer,
        each query sees the keys it picks (`model.parts.sparse.Indexer`). `band` is unused (no window)."""
        B, T, _ = x.shape
        h, d_c, d_R, d_nope, d_v = self.h, self.d_c, self.d_R, self.d_nope, self.d_v
        q_latent = self.q_a_norm(self.q_a(x)) if hasattr(self, "q_a") else None  # (B, T, d_cq)
        q = self.q_b(q_latent) if q_latent is not None else self.q_proj(x)  # (B, T, h·(d_nope + d_R))
        q = self.q(q.view(B, T, h, d_nope + d_R).transpose(1, 2))  # (B, h, T, d_nope + d_R)
        q_nope, q_rope = (self.q_nope(q[..., :d_nope]), self.q_rope(q[..., d_nope:]))  # (B, h, T, d_nope), (…, d_R)
        c_kv, k_rope = self.kv_a(x).split([d_c, d_R], dim=2)  # (B, T, d_c), (B, T, d_R)
        c_kv = self.kv_a_norm(self.c_kv(c_kv)).view(B, 1, T, d_c)  # the latent: (B, 1, T, d_c)
        k_rope = self.k_rope(k_rope.view(B, 1, T, d_R))  # one rotary key for every head: (B, 1, T, d_R)
        q_rot, k_rot = ((self.q_rot(rotate(q_rope, *rope)), self.k_rot(rotate(k_rope, *rope))) if self.rotates
                        else (q_rope, k_rope))
        if past is not None:  # decode: the new token's latent and rotary key join the cached ones
            if T != 1:
                raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
            c_kv = self.latent_cache(torch.cat((past[0], c_kv), dim=2))  # (B, 1, T_c + 1, d_c)
            k_rot = self.rope_cache(torch.cat((past[1], k_rot), dim=2))  # (B, 1, T_c + 1, d_R)
        S = c_kv.shape[2]  # keys: T, or T_c + 1 in a decode step
        kv = self.kv_b(c_kv.view(B, S, d_c)).view(B, S, h, d_nope + d_v).transpose(1, 2)  # (B, h, S, d_nope + d_v)
        k_nope, v = self.k_nope(kv[..., :d_nope]), self.v(kv[..., d_nope:])  # (B, h, S, d_nope), (B, h, S, d_v)
        q = self.q_heads(torch.cat((q_nope, q_rot), dim=-1))  # (B, h, T, d_nope + d_R)
        k = self.k(torch.cat((k_nope, k_rot.expand(B, h, S, d_R)), dim=-1))  # (B, h, S, d_nope + d_R)
        scores = self.scores(q @ k.transpose(-2, -1) / self.root)  # (B, h, T, S)
        hidden = hidden_keys(T, S, None, x.device)
        if self.indexer is not None:  # the keys outside each query's top T_k too: (B, 1, T, S)
            hidden = self.indexer(x, q_latent, rope, hidden, None if past is None else past[2])
        masked = self.masked(scores.masked_fill(hidden, float("-inf")))
        attn = self.attn(F.softmax(masked, dim=-1))  # (B, h, T, S), rows sum to 1
        y = self.attn_v(attn @ v)  # (B, h, T, d_v)
        y = self.merged(y.transpose(1, 2).contiguous().view(B, T, h * d_v))  # (B, T, h·d_v)
        return self.proj(y)  # (B, T, d)


def module(cfg: Config, window: int | None = None, rope: bool = True) -> nn.Module:
    """One block's latent attention (no window: `WITHOUT`), its d_R features of q and k rotated unless `rope` is False
    (a NoPE block: Kimi Linear's, `positions.check`)."""
    return LatentAttention(cfg, rope)


def rotary_width(cfg: Config) -> int | None:
    """The features RoPE rotates: the d_R of the shared key and of each head's query; None where no block rotates
    (`rotates`)."""
    return cfg.d_R if rotates(cfg) else None


# --- its tensors in the lesson's notation (`model.tensor_notation`), in attention's place ----------------------------
NOTATION: dict[str, tuple[str, str]] = {
    "rope.angles": ("(T, d_R)", "RoPE angles t·θ_i over the d_R rotary features, each frequency twice"),
    "rope.cos": ("(T, d_R)", "cos of the angles"),
    "rope.sin": ("(T, d_R)", "sin of the angles"),
    "attn.q_a": ("(B, T, d_cq)", "the queries' latent x W_DQ (d, d_cq)"),
    "attn.q_a_norm.rstd": ("(B, T, 1)", "RMS statistic of the queries' latent"),
    "attn.q_a_norm": ("(B, T, d_cq)", "the queries' latent after RMSNorm"),
    "attn.q_b": ("(B, T, h·(d_nope + d_R))", "q of every head from the latent, W_UQ (d_cq, h·(d_nope + d_R))"),
    "attn.q_proj": ("(B, T, h·(d_nope + d_R))", "q of every head, x W_Q (d, h·(d_nope + d_R))"),
    "attn.q": ("(B, h, T, d_nope + d_R)", "q split into h heads"),
    "attn.q_nope": ("(B, h, T, d_nope)", "q's features without positions"),
    "attn.q_rope": ("(B, h, T, d_R)", "q's rotary features"),
    "attn.q_rot": ("(B, h, T, d_R)", "q's rotary features rotated by position (RoPE)"),
    "attn.kv_a": ("(B, T, d_c + d_R)", "x W_DKV (d, d_c + d_R): the latent and the rotary key"),
    "attn.c_kv": ("(B, T, d_c)", "the latent c_kv, split off"),
    "attn.kv_a_norm.rstd": ("(B, T, 1)", "RMS statistic of the latent"),
    "attn.kv_a_norm": ("(B, T, d_c)", "the latent c_kv after RMSNorm: what the KV cache keeps, d_c per token"),
    "attn.k_rope": ("(B, 1, T, d_R)", "the rotary key, one for every head"),
    "attn.k_rot": ("(B, 1, T, d_R)", "the rotary key rotated by position: the KV cache keeps it, d_R per token"),
    "attn.kv_b": ("(B, T, h·(d_nope + d_v))", "every head's k_nope and v from the latent, c_kv W_UKV (d_c, h·(d_nope "
                  "+ d_v))"),
    "attn.k_nope": ("(B, h, T, d_nope)", "k's features without positions, h heads"),
    "attn.v": ("(B, h, T, d_v)", "v, h heads of d_v"),
    "attn.q_heads": ("(B, h, T, d_nope + d_R)", "q = [q_nope, q_rot]"),
    "attn.k": ("(B, h, T, d_nope + d_R)", "k = [k_nope, k_rot], the rotary key broadcast to the h heads"),
    "attn.scores": ("(B, h, T, T)", "scores = q kᵀ / √(d_nope + d_R)"),
    "attn.attn_v": ("(B, h, T, d_v)", "attn @ v"),
    "attn.merged": ("(B, T, h·d_v)", "heads merged back"),
    "attn.proj": ("(B, T, d)", "output projection W_o, h·d_v → d"),
}


# Its rows where no block rotates its d_R features (Kimi Linear's latent attention, NoPE beside Kimi delta attention)
UNROTATED = {
    "attn.q_rope": ("(B, h, T, d_R)", "q's d_R features, not rotated (no RoPE in these blocks)"),
    "attn.kv_a": ("(B, T, d_c + d_R)", "x W_DKV (d, d_c + d_R): the latent and the key's d_R features"),
    "attn.k_rope": ("(B, 1, T, d_R)", "the key's d_R features, not rotated, one for every head: the KV cache keeps "
                    "them, d_R per token"),
    "attn.q_heads": ("(B, h, T, d_nope + d_R)", "q = [q_nope, q_rope]"),
    "attn.k": ("(B, h, T, d_nope + d_R)", "k = [k_nope, k_rope], k_rope broadcast to the h heads"),
}
UNROTATED_DECODE = {"blocks.0.attn.rope_cache": ("(B, 1, T + 1, d_R)", "the key's d_R features of the {T} cached "
                                                 "tokens and the new one (not rotated)")}  # `DECODE_ROWS`' where none


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """Latent attention's rows, RoPE's over its d_R rotary features included (`UNROTATED` where no block rotates
    them)."""
    if present(cfg):
        rows.update(NOTATION)
        if not rotates(cfg):
            rows.update(UNROTATED)


def words(cfg: Config) -> list[str]:
    """Latent attention in the recipe's words (it has no biases)."""
    if not present(cfg):
        return []
    return ["multi-head latent attention" + ("" if cfg.d_cq is not None else " (q projected from x directly)"),
            "no biases"]


def describe(cfg: Config) -> str:
    """Its widths in a configuration's one line: K and V come from the latent, no h_kv, each head's widths its own."""
    if not present(cfg):
        return ""
    return (f"d_c={cfg.d_c:,} " + (f"d_cq={cfg.d_cq:,} " if cfg.d_cq is not None else "")
            + f"d_R={cfg.d_R:,} d_nope={cfg.d_nope:,} d_v={cfg.d_v:,}")


MTP_NOTE = ("the module as transformers builds it, without the multi-token-prediction (MTP) module that some checkpoints "
            "ship beside it (DeepSeek-V3's published 671B leaves its MTP module out too)")


def footer(cfg: Config, b: Budget) -> str:
    """What a report's last line adds: N is transformers' DeepseekV3 module's, which never builds the MTP layer."""
    return f"; {MTP_NOTE}" if present(cfg) else ""


KEPT = "the latent c_kv and the rotary key k_rope"  # what its cache keeps, in words (`model.report.kv_title`)


def counted(cfg: Config) -> str:
    """What the budget's N says it counts: transformers' module, which never builds DeepSeek's MTP layer."""
    return f"; {MTP_NOTE}" if present(cfg) else ""


# --- its change from the GPT-2 twin (`model.changes`) ----------------------------------------------------------------
ORDER_NOTE = ("Latent attention comes last: the multi-head attention it replaces has h heads of d_head = d_v (the "
              "DeepSeek-V2 paper's MHA), so the d_head change sets d_v apart from d / h.")
NO_TWIN = ("no chain of changes at d_v={d_v}: the multi-head attention that latent attention replaces has heads of d_v "
           "features, which RoPE rotates in pairs; an even d_v has one")


def order_note(cfg: Config) -> list[str]:
    """Where latent attention's change comes in the chain, in words."""
    return [ORDER_NOTE] if present(cfg) else []


def no_twin(cfg: Config) -> str | None:
    """Why the chain has no multi-head attention to start from (an odd d_v), or None."""
    if present(cfg) and cfg.d_v % 2:
        return NO_TWIN.format(d_v=f"{cfg.d_v:,}")
    return None


def mha_head(cfg: Config) -> int:
    """The heads' width of the chain's multi-head attention: d_head, or with latent attention d_v (the MHA it
    replaces)."""
    return cfg.d_v if present(cfg) else cfg.d_head


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers the change's title names (`model.changes.title_values`)."""
    if not present(cfg):
        return {}
    values = dict(d_c=cfg.d_c, d_R=cfg.d_R, qk=cfg.d_nope + cfg.d_R, d_v=cfg.d_v, kv=cfg.d_c + cfg.d_R,
                  mha=2 * cfg.h * cfg.d_v)
    q_path = (f"q through a latent of d_cq = {cfg.d_cq:,} (with its RMSNorm)" if cfg.d_cq is not None
              else "q projected from x directly")
    return {**{k: f"{v:,}" for k, v in values.items()}, "q_path": q_path}


def title_key(cfg: Config) -> str:
    """The d_head change's title (`model.changes.TITLES`): with latent attention, d_head = d_v of the MHA it
    replaces."""
    return "d_head/latent" if present(cfg) else "d_head"


def change_target(key: str, cfg: Config, target: dict[str, object]) -> None:
    """The fields a change sets on the way: the multi-head attention that latent attention replaces has d_v-wide heads
    (d / h when d_v is), and latent attention's own d_head is d_nope + d_R."""
    if present(cfg) and key in ("d_head", "latent"):
        target["head_dim"] = cfg.d_v if key == "d_head" and cfg.d_v != cfg.d // cfg.h else None


def replaces(s: Config, cfg: Config) -> bool:
    """Whether state `s` is the multi-head attention of d_head = d_v that cfg's latent attention replaces."""
    return present(cfg) and not present(s) and s.d_head == cfg.d_v


def change_lines(cfg: Config, cache: dict[str, Line]) -> tuple[Line, ...]:
    """The change's line beside its figures: the K and V of h heads of d_v that the multi-head attention before it
    cached, over the latent and rotary key it caches, per token per block (the cache's lines, checked)."""
    s = cfg.symbols()
    heads = cache["memory/kv_cache_heads"].value  # K and V at h heads, per token
    kept = int(_kept(cfg).value(s))  # d_c + d_R (and an indexer's d_I, which the next change adds)
    if cache["memory/kv_cache_per_token"].value * cfg.h * (cfg.d_head + cfg.d_v) != heads * kept:
        raise RuntimeError("latent attention's cache is not (d_c + d_R) per block and token beside K and V's")
    return (line("changes/latent/cache_ratio", "latent attention: the KV cache of multi-head attention (K and V of h "
                 "heads of d_v) over the latent's (d_c + d_R), per token", E("2h·d_v / (d_c + d_R)"), s, "ratio"),)
