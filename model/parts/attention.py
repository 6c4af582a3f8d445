"""Causal self-attention: a fused q, k, v projection, h query heads of d_head features and h_kv heads of K and V
(multi-head where h_kv = h, grouped-query between, multi-query at 1), an optional QK-norm, the (B, h, T, T) scores
written out (eager) or one fused kernel (FlashAttention's way), the heads merged and projected back to d.

Its fields: h_kv (`kv_heads`), d_head set apart from d / h (`head_dim`), the biases (`bias`, which names the MLP's and
the LayerNorms' too), QK-norm, an output gate on the heads (`attn_gate`: Qwen3-Next's gated attention, y·sigmoid(x W_g)
before W_o), the kernel (`attention`), and Gemma's values on the scores: their scale 1/√query_scale and their soft-cap
c·tanh(scores / c)."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from fractions import Fraction
from typing import TYPE_CHECKING

from ..expr import E, Expr, lesson
from ..fields import Field
from ..figures import Line, line, number
from ..taps import Tap
from .norms import RMSNorm
from .positions import rotate, rotates

if TYPE_CHECKING:
    from ..budgeting import Budget, Formulas
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
    Field("qk_norm_wide", "flag", "QK-norm over all heads at once: an RMSNorm over h·d_head on q and one over "
          "h_kv·d_head on k, before the heads are split (OLMo 2)", default=False, control=False, tensors=True,
          says="QK-norm over all heads' width (an RMSNorm over h·d_head on q, h_kv·d_head on k)"),
    Field("qk_l2", "flag", "Llama 4's QK-norm: each head's q and k scaled to a root-mean-square of 1 over d_head after "
          "RoPE, with no gain, in the blocks with RoPE only", default=False, control=False, tensors=True,
          says="q and k scaled to unit RMS after RoPE (Llama 4's QK-norm, no gain) in the blocks with RoPE"),
    Field("attn_temperature", "flag", "Llama 4's attention temperature: each query of a NoPE block times "
          "1 + 0.1·log(1 + ⌊(t + 1)/8,192⌋) at its position t (a value, made a tensor of the pass)", default=False,
          control=False, tensors=True, says="the NoPE blocks' queries scaled by their position (attention temperature)"),
    Field("attn_gate", "flag", "an output gate: sigmoid(x W_g) on each head's output before W_o, W_g (d, h·d_head) "
          "(Qwen3-Next's gated attention)", default=False, control=False, tensors=True,
          says="an output gate sigmoid(x W_g) on each head's output before W_o (gated attention)"),
    Field("attention", "choice", "attention: eager (written out: (B, h, T, T) scores, masked scores and softmax) or "
          "fused (F.scaled_dot_product_attention, as FlashAttention: no (B, h, T, T) tensor, a (B, h, T) fp32 "
          "log-sum-exp kept for backward)", default="eager", choices=("eager", "fused")),
    Field("query_scale", "whole", "query_pre_attn_scalar: scores scaled by 1/√query_scale instead of 1/√d_head (a "
          "value only)", bounds=(1, QUERY_SCALE_MAX), optional=True, group="extras", family="gemma", unset="none",
          says="scores scaled by 1/√{cfg.query_scale:,}"),
    Field("attn_softcap", "real", "soft-cap c of the scores, c·tanh(scores / c) (eager attention only)", optional=True,
          group="extras", family="gemma", says="scores soft-capped at {cfg.attn_softcap:g}"),
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
    if sum((cfg.qk_norm, cfg.qk_norm_wide, cfg.qk_l2)) > 1:
        raise ValueError("qk_norm (per head, over d_head), qk_norm_wide (over all heads at once) and qk_l2 (Llama 4's, "
                         "no gain, after RoPE) are three QK-norms: set one of them")
    if cfg.qk_l2 and (cfg.positions != "rope" or cfg.latent_dim is not None):
        raise ValueError("qk_l2 scales q and k after RoPE in the blocks with RoPE, but the positions are learned or the "
                         "attention latent: set positions to rope, or drop qk_l2")
    if cfg.attn_gate and cfg.latent_dim is not None:
        raise ValueError("attn_gate gates the h·d_head outputs of multi-head attention's heads, but the attention is "
                         "latent (DeepSeek's has no gate): drop attn_gate, or drop latent_dim")
    if cfg.attn_temperature and not cfg.nope_layers:
        raise ValueError("attn_temperature scales the queries of the NoPE blocks, but nope_layers lists none: list them, "
                         "or drop attn_temperature")
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


def present(cfg: Config) -> bool:
    """Attention of h query heads over d_head features (every mixer but latent attention)."""
    return cfg.latent_dim is None


def weights(cfg: Config) -> Expr:
    """One block's matrices: W_qkv (d, (h + 2h_kv)·d_head) + W_o (h·d_head, d), and the output gate's W_g
    (d, h·d_head) where `attn_gate`."""
    return E("(3h + 2h_kv)·d_head·d") if cfg.attn_gate else E("2(h + h_kv)·d_head·d")


def extras(cfg: Config) -> list[Expr]:
    """One block's parameters that are no matmul weights: the q, k, v biases ((h + 2h_kv)·d_head; with them the output
    gate's, h·d_head, as Qwen3-Next's q_proj holds both), W_o's (d), and QK-norm's gains (one RMSNorm over d_head for q
    and one for k; OLMo 2's over h·d_head and h_kv·d_head)."""
    gate_bias = cfg.qkv_bias and cfg.attn_gate
    return [*([E("(h + 2h_kv)·d_head")] if cfg.qkv_bias else []), *([E("h·d_head")] if gate_bias else []),
            *([E("d")] if cfg.proj_bias else []),
            *([E("2d_head")] if cfg.qk_norm else []), *([E("(h + h_kv)·d_head")] if cfg.qk_norm_wide else [])]


def flops(cfg: Config) -> Expr:
    """The matmul FLOPs per token of one block's projections (2 per weight, FLOPs not MACs): `weights` twice."""
    return E("2(3h + 2h_kv)·d_head·d") if cfg.attn_gate else E("4(h + h_kv)·d_head·d")


def scores(cfg: Config) -> tuple[int, Expr]:
    """q kᵀ and attn @ v per token, block and key, as (coefficient, width): 4 FLOPs per query head and feature,
    (4, h·d_head): h query heads of d_head, whatever h_kv."""
    return 4, E("h·d_head")


def label(cfg: Config, lesson: bool) -> str:
    """One block's attention line, in words."""
    if lesson:
        return "attention, one block: W_qkv (d, 3d), W_o (d, d) and their biases"
    return ("attention, one block: W_qkv (d, (h + 2h_kv)·d_head), W_o (h·d_head, d)"
            + (", the output gate's W_g (d, h·d_head)" if cfg.attn_gate else "")
            + (" and their biases" if cfg.proj_bias else
               f" and q, k, v{' and gate' if cfg.attn_gate else ''} biases" if cfg.qkv_bias else "")
            + (", QK-norm gains" if cfg.qk_norm or cfg.qk_norm_wide else ""))


def budget_lines(f: Formulas, b: Budget) -> dict[str, list[Line]]:
    """With fused attention, the FLOPs a causal kernel runs beside the measured count ("end"): q kᵀ and attn @ v over
    the pairs (query t, key s ≤ t) only, T(T + 1)/2 of the T² that eager attention and torch's flop formulas count
    (about half; a kernel that computes whole tiles runs a little more on the diagonal's tiles). Per token and
    block 2(T + 1)·h·d_head, against the measured 4T·h·d_head (in the L − L_lin attention blocks where Gated DeltaNet
    mixes the others, L − L_ssm where Mamba 2 does)."""
    cfg, s = f.cfg, f.symbols
    if cfg.attention != "fused":
        return {}
    blocks = f.attention_blocks
    scored = f.attention(blocks).value(s)  # of the measured count (all of it without Gated DeltaNet blocks)
    if f.lin is None and scored != b.flops_attn_per_token:
        raise RuntimeError("the measured attention FLOPs are not 4LT·h·d_head per token")
    causal = int(Fraction(scored * (cfg.T + 1), 2 * cfg.T))
    where = "" if f.lin is None or f.beside else f", in the L − {f.stateful.COUNT} attention blocks"
    return {"end": [
        line("flops/attention_causal", "q kᵀ and attn @ v as a causal kernel runs them: T(T + 1)/2 of the T² scores"
             + where, E("2{n}(T + 1)·h·d_head", n=blocks), s, "FLOP", causal),
        line("flops/forward_causal", "forward FLOPs per token with a causal kernel (attention's triangle only)",
             f.measured(E("2(T + 1)·h·d_head")), s, "FLOP",
             number(b.flops_fwd_measured_per_token - scored + causal)),
    ]}


# --- the KV cache: K and V of the h_kv heads, d_head features each, per block and token kept ----------------------
def cache(cfg: Config, x: Expr | None = None) -> Expr:
    """The cache's elements over `x` block-tokens ("LBT": L blocks of B sequences of T tokens; None: one block's
    token): 2h_kv·d_head each, "2LBT·h_kv·d_head"; GPT-2's recipe in the lesson's notation, "2LBTd"."""
    e = E("2h_kv·d_head") if x is None else E("2{x}·h_kv·d_head", x=x)
    return lesson(e) if cfg.gpt2_recipe else e


def cache_scales(cfg: Config, x: Expr | None = None) -> Expr:
    """The bytes of a per-head cache format's scales over `x` block-tokens: one 2-byte scale per token and K/V head in
    each of K and V, "2·2L·h_kv" (GPT-2's recipe: all h heads, "2·2L·h")."""
    e = E("2·2h_kv") if x is None else E("2·2{x}·h_kv", x=x)
    return e.subs(**lesson_heads(cfg))


def lesson_heads(cfg: Config) -> dict[str, Expr]:
    """How the lesson writes the K/V heads: GPT-2's recipe has all h heads (h_kv → h), others h_kv."""
    return {"h_kv": E("h")} if cfg.gpt2_recipe else {}


WRITTEN = "K and V"  # what a decode step writes to the cache per token and block


def cache_shapes(cfg: Config, T: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's cache of T tokens for B sequences as transformers' cache holds it: K and V, (B, h_kv, T, d_head)."""
    return (cfg.B, cfg.h_kv, T, cfg.d_head), (cfg.B, cfg.h_kv, T, cfg.d_head)


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """The KV cache at `dtype` (`size` bytes an element): the whole cache of B sequences of T tokens, and the bytes one
    more token of context adds; GPT-2's recipe in the lesson's words (all h heads, h·d_head = d)."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    heads = "all h heads" if cfg.gpt2_recipe else "h_kv heads of d_head"
    unchanged = (" (a mixture of experts changes the MLP only: the cache is attention's, as a dense model's)"
                 if cfg.experts is not None else "")
    return [
        line("memory/kv_cache", f"KV cache at {dtype}: keys and values of {heads}, every block, B sequences of T "
             f"tokens{unchanged}", E("{e}·{b}", e=cache(cfg, E("LBT")), b=size), s, "bytes"),
        line("memory/kv_cache_per_token", f"KV cache per token of context at {dtype} (one sequence, one more token)",
             E("{e}·{b}", e=cache(cfg, E("L")), b=size), s, "bytes"),
    ]


def decode_scores(cfg: Config) -> Expr:
    """A decode step's q kᵀ and attn @ v: B new tokens over the T cached keys and their own, every block."""
    c, w = scores(cfg)
    return E("{c}LB·(T + 1)·{w}", c=c, w=w)


# A decode step's tensors of block 0's attention, in the lesson's notation: T tokens cached ({T}: T_W in a windowed
# block), one new (`model.inference.decode_rows`).
DECODE_ROWS: dict[str, tuple[str, str]] = {
    "blocks.0.attn.q": ("(B, h, 1, d_head)", "q of the new token"),
    "blocks.0.attn.k_cache": ("(B, h_kv, T + 1, d_head)", "K of the {T} cached tokens and the new one"),
    "blocks.0.attn.v_cache": ("(B, h_kv, T + 1, d_head)", "V of the {T} cached tokens and the new one"),
    "blocks.0.attn.scores": ("(B, h, 1, T + 1)", "the new token's scores against every key"),
    "blocks.0.attn.attn": ("(B, h, 1, T + 1)", "their softmax"),
    "blocks.0.attn.attn_v": ("(B, h, 1, d_head)", "attention's output for the new token"),
    "blocks.0.attn.lse": ("(B, h, 1)", "the fused kernel's log-sum-exp (fp32)"),
}


# --- the module in the real forward pass ------------------------------------------------------------------------------
def fused_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = True,
                    mask: torch.Tensor | None = None, scale: float | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Causal attention in one kernel, softmax(q kᵀ / √d_head + causal mask) @ v, without the (B, h, T, T) scores.

    q (B, h, T, d_head); k and v (B, h_kv, T, d_head), each K/V head serving h/h_kv query heads without a copy.
    Returns the output (B, h, T, d_head) and the log-sum-exp of each query's scores, (B, h, T) in fp32 whatever the
    dtype, which the kernel keeps for the backward pass (None where the kernel does not hand it out).

    - CUDA and any other device: `F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=h_kv < h)`,
      which picks its kernel (FlashAttention, memory-efficient, ...) and returns the output only.
    - CPU: the op that very call runs on the CPU, `aten._scaled_dot_product_flash_attention_for_cpu` (torch's flash
      kernel; torch chooses it for every dtype and K/V head count this module makes), called directly so that its
      log-sum-exp is a tensor a `Tap` can name. Tests check the choice, and that output, gradients and saved tensors
      equal F.scaled_dot_product_attention's.
    - meta (shapes without memory, `model.passes`, `model.peak`, `model.symbolic`'s fake tensors): the same op, run by
      torch's own meta function of it under the same autograd formula, so a meta pass makes and saves what the CPU
      kernel does (tests compare shapes, strides, dtypes and saved storages with real CPU passes). F.sdpa itself
      takes its math path on the meta device (torch picks a fused kernel for CPU and CUDA tensors only) and would
      make the (B, h, T, T) scores the kernel never makes.

    `causal=False`: every query sees every key (a decode step: one new token over the cache and itself).
    `mask`: a sliding window's band (`band_mask`, additive: 0 for the keys a query sees, −inf for the rest, at q's
    dtype as the CPU kernel requires), given instead of `causal`; the kernel keeps it for the backward pass.
    """
    if q.device.type in ("cpu", "meta"):
        if mask is not None:
            return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False, attn_mask=mask)
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal)
    gqa = k.shape[1] != q.shape[1]
    if mask is not None:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa), None
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa), None


def hidden_keys(T: int, S: int, window: int | None, device: torch.device, chunked: bool = False) -> torch.Tensor:
    """(T, S) bool, True where a query may not see a key: the T queries are the last T of the S keys' positions;
    a query sees the keys up to itself (causal) and, with a window W, only the last W of them (itself and the W − 1
    before it: transformers' sliding_window_overlay, kv_idx > q_idx − W). A windowed mask is a band; a chunked one
    (`chunked`: transformers' chunked_overlay, kv_idx // W == q_idx // W) hides the keys before each query's chunk."""
    ones = torch.ones(T, S, dtype=torch.bool, device=device)
    hidden = ones.triu(1 + S - T)  # keys after each query
    if window is not None and chunked:
        queries = torch.arange(S - T, S, device=device)[:, None] // window
        hidden = hidden | (torch.arange(S, device=device)[None, :] // window != queries)  # keys of other chunks
    elif window is not None:
        hidden = hidden | ones.tril(S - T - window)  # keys W or more before each query
    return hidden


L2_EPS = 1e-5  # Llama 4's rms_norm_eps, its QK-norm's ε (a value only)
FLOOR_SCALE, ATTN_SCALE = 8_192, 0.1  # Llama 4's temperature: 1 + attn_scale·log(1 + ⌊(t + 1)/floor_scale⌋) (values)


def unit_rms(x: torch.Tensor) -> torch.Tensor:
    """x scaled to a root-mean-square of 1 over its last dimension, computed in fp32 and cast back, with no gain:
    Llama 4's QK-norm (transformers' Llama4TextL2Norm)."""
    f = x.float()
    return (f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + L2_EPS)).type_as(x)


def temperatures(T: int, start: int, device: torch.device) -> torch.Tensor:
    """(T, 1) fp32: each of T positions' query scale 1 + 0.1·log(1 + ⌊(t + 1)/8,192⌋), positions start … start + T − 1
    (Llama 4's attention temperature in its NoPE blocks; 1 below position 8,191)."""
    t = torch.arange(start, start + T, device=device).float()
    return (torch.log1p(torch.floor((t + 1.0) / FLOOR_SCALE)) * ATTN_SCALE + 1.0).view(T, 1)


class CausalSelfAttention(nn.Module):
    """Fused q, k, v projection; h heads of d_head features for q, h_kv for k and v (each K/V head shared by
    h/h_kv query heads); optional QK-norm and RoPE; then eager attention (scores / sqrt(d_head), causal mask,
    softmax, attn @ v, with k and v expanded to h heads) or fused attention (`fused_attention`: one kernel, k and v
    at h_kv heads, its log-sum-exp tapped as `lse`); heads merged, an optional output gate (`attn_gate`: the merged
    heads times sigmoid(x W_g), Qwen3-Next's gated attention, W_g apart from W_qkv where Qwen3-Next's q_proj
    interleaves each head's query and gate rows: a layout, the same parameters and FLOPs), projection.

    `window` W (a windowed block, `Config.attn_kinds`): each query sees the last W keys only. Eager attention still
    computes the whole (B, h, T, T) scores and masks them to a band (`hidden_keys`); fused attention takes the band
    (`band_mask`, made once per pass by `GPT.embed_tokens`) in place of its causal flag. A decode step's cache of a
    windowed block holds at most W − 1 tokens, so the new token's query sees them all. `rope` False: a NoPE block
    (`nope_layers`), whose q and k are not rotated although the model's other blocks use RoPE."""

    def __init__(self, cfg: Config, window: int | None = None, rope: bool = True) -> None:
        super().__init__()
        self.h, self.h_kv, self.d_head = cfg.h, cfg.h_kv, cfg.d_head
        self.window = window
        self.chunked = cfg.chunked  # the window's chunks (Llama 4): each query sees its own chunk of W
        self.root = math.sqrt(cfg.d_head if cfg.query_scale is None else cfg.query_scale)  # scores / √d_head; Gemma √256
        self.scale = None if cfg.query_scale is None else 1 / self.root  # the fused kernel's, where set apart
        self.softcap = cfg.attn_softcap
        if cfg.sinks:  # gpt-oss: one learned logit per head, a column of the softmax that no value follows
            self.sinks = nn.Parameter(torch.zeros(cfg.h))  # s: (h,)
        width = (cfg.h + 2 * cfg.h_kv) * cfg.d_head
        self.qkv = nn.Linear(cfg.d, width, bias=cfg.qkv_bias)  # W_qkv: (d, (h + 2h_kv)·d_head); GPT-2: (d, 3d)
        self.proj = nn.Linear(cfg.h * cfg.d_head, cfg.d, bias=cfg.proj_bias)  # W_o: (h·d_head, d)
        if cfg.attn_gate:  # Qwen3-Next: each head's output times sigmoid(x W_g) before W_o (its bias beside q's)
            self.gate = nn.Linear(cfg.d, cfg.h * cfg.d_head, bias=cfg.qkv_bias)  # W_g: (d, h·d_head)
        if cfg.qk_norm:
            self.q_norm, self.k_norm = RMSNorm(cfg.d_head), RMSNorm(cfg.d_head)  # one gain (d_head,), every head
        self.wide = cfg.qk_norm_wide  # OLMo 2: gains (h·d_head,) and (h_kv·d_head,), over all heads at once
        if self.wide:
            self.q_norm, self.k_norm = RMSNorm(cfg.h * cfg.d_head), RMSNorm(cfg.h_kv * cfg.d_head)
        self.rope = cfg.positions == "rope" and rope
        self.rotary = cfg.rotary_dim  # partial rotary's d_rot; None: every feature
        self.l2 = cfg.qk_l2 and self.rope  # Llama 4: q and k to unit RMS after RoPE, in its RoPE blocks
        self.temperature = cfg.attn_temperature and not self.rope  # Llama 4: its NoPE blocks' queries by position
        self.fused = cfg.attention == "fused"
        attention = ["attn_v", "lse"] if self.fused else ["scores", "masked", "attn", "attn_v"]
        attention += ["capped"] if self.softcap is not None else []
        attention += ["sink", "with_sink", "attn_sink"] if cfg.sinks else []
        names = ["q", "k", "v", *attention, "merged"]
        names += ["q_rot", "k_rot"] if self.rope else []
        names += ["q_l2", "k_l2"] if self.l2 else []
        names += ["temperature", "q_tempered"] if self.temperature else []
        names += ["k_heads", "v_heads"] if self.h_kv != self.h and not self.fused else []
        names += ["gate_scale", "gated"] if cfg.attn_gate else []
        names += ["k_cache", "v_cache"]  # a decode step's K and V of the cached tokens and the new one
        for name in names:
            setattr(self, name, Tap())

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None,
                past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, K and V of the T_c tokens before x's one
        token, (B, h_kv, T_c, d_head) each (a windowed block's T_c at most W − 1); the new token's k and v join them
        (`k_cache`, `v_cache`, (B, h_kv, T_c + 1, d_head)) and its query attends to all T_c + 1 keys, no mask
        needed. `band`: a windowed block's fused band mask (`band_mask`), (T, T)."""
        B, T, _ = x.shape
        h, h_kv, d_head = self.h, self.h_kv, self.d_head
        q, k, v = self.qkv(x).split([h * d_head, h_kv * d_head, h_kv * d_head], dim=2)
        if self.wide:  # RMSNorm over all of q's heads together, and over k's
            q, k = self.q_norm(q), self.k_norm(k)  # (B, T, h·d_head), (B, T, h_kv·d_head)
        q = self.q(q.view(B, T, h, d_head).transpose(1, 2))  # (B, h, T, d_head)
        k = self.k(k.view(B, T, h_kv, d_head).transpose(1, 2))  # (B, h_kv, T, d_head)
        v = self.v(v.view(B, T, h_kv, d_head).transpose(1, 2))  # (B, h_kv, T, d_head)
        if hasattr(self, "q_norm") and not self.wide:
            q, k = self.q_norm(q), self.k_norm(k)  # RMSNorm over d_head, per head
        if self.rope and self.rotary is None:
            q, k = self.q_rot(rotate(q, *rope)), self.k_rot(rotate(k, *rope))  # (B, h, T, d_head), (B, h_kv, T, d_head)
        elif self.rope:  # partial rotary: the first d_rot features rotated, the others passed through
            r = self.rotary
            q = self.q_rot(torch.cat((rotate(q[..., :r], *rope), q[..., r:]), dim=-1))  # (B, h, T, d_head)
            k = self.k_rot(torch.cat((rotate(k[..., :r], *rope), k[..., r:]), dim=-1))  # (B, h_kv, T, d_head)
        if self.l2:  # Llama 4's QK-norm: unit RMS over d_head, no gain
            q, k = self.q_l2(unit_rms(q)), self.k_l2(unit_rms(k))
        if self.temperature:  # Llama 4's NoPE blocks: each query times its position's temperature
            start = 0 if past is None else past[0].shape[2]
            scales = self.temperature(temperatures(T, start, x.device))  # (T, 1) fp32
            q = self.q_tempered((q * scales).to(q.dtype))  # (B, h, T, d_head)
        if past is not None:  # decode: one new token after the cached ones
            if T != 1:
                raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
            if self.window is not None and past[0].shape[2] >= self.window:
                raise ValueError(f"a windowed block's cache keeps at most W − 1 = {self.window - 1} tokens, got "
                                 f"{past[0].shape[2]}")
            k = self.k_cache(torch.cat((past[0], k), dim=2))  # (B, h_kv, T_c + 1, d_head)
            v = self.v_cache(torch.cat((past[1], v), dim=2))
        S = k.shape[2]  # keys: T, or T_c + 1 in a decode step
        if self.fused:  # one kernel: k and v at h_kv heads, no (B, h, T, T) tensor
            windowed = self.window is not None and past is None
            y, lse = fused_attention(q, k, v, causal=past is None, mask=band if windowed else None,
                                     scale=self.scale)  # (B, h, T, d_head), (B, h, T) fp32
            y = self.attn_v(y)
            if lse is not None:
                self.lse(lse)
        else:  # written out; the scores stay local variables until the heads are merged, as the lesson writes them
            if h_kv != h:  # each K/V head serves h/h_kv query heads: a view when h_kv = 1, else a copy
                k = self.k_heads(k[:, :, None].expand(B, h_kv, h // h_kv, S, d_head).reshape(B, h, S, d_head))
                v = self.v_heads(v[:, :, None].expand(B, h_kv, h // h_kv, S, d_head).reshape(B, h, S, d_head))
            scores = self.scores(q @ k.transpose(-2, -1) / self.root)  # (B, h, T, T); decode (B, h, 1, S)
            if self.softcap is not None:  # Gemma 2: c·tanh(scores / c)
                scores = self.capped(torch.tanh(scores / self.softcap) * self.softcap)
            hidden = hidden_keys(T, S, self.window if past is None else None, x.device, self.chunked)  # causal, or
            # a band of W (or its chunks); a decode step's query sees every cached key here (a chunk's mask would hide
            # those before its chunk: values, not counts)
            masked = self.masked(scores.masked_fill(hidden, float("-inf")))  # (B, h, T, T)
            if hasattr(self, "sinks"):  # gpt-oss: each row's sink logit s joins the softmax, then is dropped
                sink = self.sink(self.sinks.to(masked.dtype).view(1, h, 1, 1).expand(B, h, T, 1))  # (B, h, T, 1)
                joined = self.attn_sink(F.softmax(self.with_sink(torch.cat((masked, sink), dim=-1)), dim=-1))
                attn = self.attn(joined[..., :-1])  # (B, h, T, T), rows sum to less than 1
            else:
                attn = self.attn(F.softmax(masked, dim=-1))  # (B, h, T, T), rows sum to 1
            y = self.attn_v(attn @ v)  # (B, h, T, d_head)
        y = self.merged(y.transpose(1, 2).contiguous().view(B, T, h * d_head))  # (B, T, h·d_head); GPT-2: (B, T, d)
        if hasattr(self, "gate"):  # gated attention: each head's output scaled by its own gate, feature by feature
            y = self.gated(y * self.gate_scale(torch.sigmoid(self.gate(x))))  # (B, T, h·d_head)
        return self.proj(y)  # (B, T, d)


def module(cfg: Config, window: int | None = None, rope: bool = True) -> nn.Module:
    """One block's attention, through a window of `window` keys or full, its q and k rotated by RoPE unless `rope` is
    False (a NoPE block)."""
    return CausalSelfAttention(cfg, window, rope)


def rotary_width(cfg: Config) -> int | None:
    """The features RoPE rotates in each head's q and k: all d_head, or d_rot (partial rotary); None where no block
    rotates them (`rotates`: every attention block NoPE)."""
    if not rotates(cfg):
        return None
    return cfg.d_head if cfg.rotary_dim is None else cfg.rotary_dim


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2)
    "attn.qkv": ("(B, T, 3d)", "fused q, k, v projection"),
    "attn.q": ("(B, h, T, d_head)", "q split into h heads"),
    "attn.k": ("(B, h, T, d_head)", "k split into h heads"),
    "attn.v": ("(B, h, T, d_head)", "v split into h heads"),
    "attn.scores": ("(B, h, T, T)", "scores = q kᵀ / √d_head"),
    "attn.masked": ("(B, h, T, T)", "causal mask: −inf above the diagonal"),
    "attn.attn": ("(B, h, T, T)", "softmax over keys"),
    "attn.attn_v": ("(B, h, T, d_head)", "attn @ v"),
    "attn.merged": ("(B, T, d)", "heads merged back"),
    "attn.proj": ("(B, T, d)", "output projection"),
}
RECIPE_NOTATION: dict[str, tuple[str, str]] = {  # the modern recipe's forms: h_kv heads of K and V, QK-norm, RoPE, fused
    "attn.qkv": ("(B, T, d + 2h_kv·d_head)", "fused q, k, v projection (h heads for q, h_kv for k and v)"),
    "attn.k": ("(B, h_kv, T, d_head)", "k split into h_kv heads"),
    "attn.v": ("(B, h_kv, T, d_head)", "v split into h_kv heads"),
    "attn.q_norm.rstd": ("(B, h, T, 1)", "QK-norm: RMS statistic of q, per head"),
    "attn.q_norm": ("(B, h, T, d_head)", "q after QK-norm (RMSNorm over d_head)"),
    "attn.k_norm.rstd": ("(B, h_kv, T, 1)", "QK-norm: RMS statistic of k, per head"),
    "attn.k_norm": ("(B, h_kv, T, d_head)", "k after QK-norm (RMSNorm over d_head)"),
    "attn.q_rot": ("(B, h, T, d_head)", "q rotated by position (RoPE)"),
    "attn.k_rot": ("(B, h_kv, T, d_head)", "k rotated by position (RoPE)"),
    "attn.k_heads": ("(B, h, T, d_head)", "k expanded from h_kv to h heads (each serves h/h_kv query heads)"),
    "attn.v_heads": ("(B, h, T, d_head)", "v expanded from h_kv to h heads (each serves h/h_kv query heads)"),
    "attn.lse": ("(B, h, T)", "log-sum-exp of each query's scores, fp32 whatever the dtype: kept for backward"),
}
LSE_SHAPE = RECIPE_NOTATION["attn.lse"][0]
PARTIAL_NOTATION: dict[str, tuple[str, str]] = {  # partial rotary (`model.parts.positions`: d_rot of d_head)
    "attn.q_rot": ("(B, h, T, d_head)", "q with its first d_rot features rotated by position (partial RoPE; the "
                                        "other d_head − d_rot pass through)"),
    "attn.k_rot": ("(B, h_kv, T, d_head)", "k with its first d_rot features rotated by position (partial RoPE)"),
}
LLAMA4_NOTATION: dict[str, tuple[str, str]] = {  # Llama 4's QK-norm (RoPE blocks) and temperature (NoPE blocks)
    "attn.q_l2": ("(B, h, T, d_head)", "q scaled to unit RMS over d_head after RoPE (Llama 4's QK-norm, no gain)"),
    "attn.k_l2": ("(B, h_kv, T, d_head)", "k scaled to unit RMS over d_head after RoPE (no gain)"),
    "attn.temperature": ("(T, 1)", "each position's query scale 1 + 0.1·log(1 + ⌊(t + 1)/8,192⌋), fp32 (1 below "
                                   "8,191)"),
    "attn.q_tempered": ("(B, h, T, d_head)", "q times its position's scale (a NoPE block's attention temperature)"),
}
WIDE_QK_NOTATION: dict[str, tuple[str, str]] = {  # OLMo 2's QK-norm, before the heads are split
    "attn.q_norm.rstd": ("(B, T, 1)", "QK-norm: RMS statistic of q, all heads together"),
    "attn.q_norm": ("(B, T, h·d_head)", "q after QK-norm (RMSNorm over h·d_head), before the heads are split"),
    "attn.k_norm.rstd": ("(B, T, 1)", "QK-norm: RMS statistic of k, all heads together"),
    "attn.k_norm": ("(B, T, h_kv·d_head)", "k after QK-norm (RMSNorm over h_kv·d_head), before the heads are split"),
}

GATE_LABELS = {  # the output gate's rows (`attn_gate`), each as wide as the merged heads (h·d_head, d in GPT-2's shape)
    "attn.gate": "output gate's logits x W_g, one per head and feature (gated attention)",
    "attn.gate_scale": "sigmoid of the gate's logits, each in (0, 1)",
    "attn.gated": "merged heads times their gate, into W_o",
}


def scale(cfg: Config) -> str:
    """What the scores are divided by the square root of: d_head, or Gemma's query_pre_attn_scalar."""
    return "d_head" if cfg.query_scale is None else "query_scale"


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The modern recipe's forms of attention's rows: K and V at h_kv heads, QK-norm's, RoPE's and the expansion's rows,
    the fused kernel's output and log-sum-exp, the scores' scale and soft-cap, h·d_head where d_head is set apart, and
    the output gate's rows."""
    rows.update(RECIPE_NOTATION)
    rows["attn.scores"] = ("(B, h, T, T)", f"scores = q kᵀ / √{scale(cfg)}")
    if cfg.attention == "fused":
        rows["attn.attn_v"] = ("(B, h, T, d_head)", f"fused attention: softmax(q kᵀ / √{scale(cfg)}, causal) @ v in one "
                               "kernel, no (T, T) scores")
    if cfg.attn_softcap is not None:
        rows["attn.capped"] = ("(B, h, T, T)", "soft-capped scores c·tanh(scores / c)")
    if cfg.qk_norm_wide:
        rows.update(WIDE_QK_NOTATION)
    if cfg.qk_l2 or cfg.attn_temperature:
        rows.update(LLAMA4_NOTATION)
    if cfg.rotary_dim is not None:
        rows.update(PARTIAL_NOTATION)
    if cfg.head_dim is not None:  # d_head set apart: the heads' width h·d_head need not be d
        rows["attn.qkv"] = ("(B, T, (h + 2h_kv)·d_head)", rows["attn.qkv"][1])
        rows["attn.merged"] = ("(B, T, h·d_head)", "heads merged back")
        rows["attn.proj"] = ("(B, T, d)", "output projection, h·d_head → d")
    if cfg.attn_gate:  # gated attention's rows, as wide as the merged heads
        width = rows["attn.merged"][0]
        rows.update({row: (width, label) for row, label in GATE_LABELS.items()})


BIAS_WORDS = {"all": "biases", "none": "no biases", "qkv": "q, k, v biases", "attn": "attention biases",
              "mlp": "MLP biases"}


def words(cfg: Config) -> list[str]:
    """Attention in the recipe's words: its heads of K and V, the biases, QK-norm, the output gate, the kernel, the
    scores' values."""
    if not present(cfg):
        return []
    kv = ("multi-head attention" if cfg.h_kv == cfg.h else "multi-query attention" if cfg.h_kv == 1 else
          f"grouped-query attention (h/h_kv = {cfg.h // cfg.h_kv})")
    biases = "no biases on the matrices" if cfg.norm_biased and cfg.bias == "none" else BIAS_WORDS[cfg.bias]
    return [kv, biases, *(["QK-norm"] if cfg.qk_norm else []),
            *(["QK-norm over all heads"] if cfg.qk_norm_wide else []),
            *(["QK-norm without a gain after RoPE (Llama 4's)"] if cfg.qk_l2 else []),
            *(["attention temperature in the NoPE blocks"] if cfg.attn_temperature else []),
            *(["an output gate on the heads (gated attention)"] if cfg.attn_gate else []),
            *(["fused attention"] if cfg.attention == "fused" else []),
            *([f"scores / √{cfg.query_scale}"] if cfg.query_scale is not None else []),
            *([f"scores soft-capped at {cfg.attn_softcap:g}"] if cfg.attn_softcap is not None else [])]


def describe(cfg: Config) -> str:
    """Its sizes in a configuration's one line: h_kv and d_head."""
    return f"h_kv={cfg.h_kv:,} d_head={cfg.d_head:,}" if present(cfg) else ""


KEPT = "K and V"  # what its cache keeps, in words (`model.report.kv_title`)
