"""The lesson's decoder as one `nn.Module`, in nanoGPT's spirit but with every intermediate tensor exposed.

One module, many recipes: `Config`'s switches pick LayerNorm or RMSNorm, a learned position table or RoPE,
GELU or SwiGLU, h_kv heads for K and V (grouped-query attention), biases on every linear, on none or on
q, k and v only, QK-norm, eager or fused attention, a dense MLP or a mixture of experts (`MoE`) in the blocks
`Config.block_kinds` names, full or sliding-window attention in the blocks `Config.attn_kinds` names, and
multi-head latent attention (`LatentAttention`, DeepSeek's) where `Config.mla`. With the defaults it is GPT-2, tensor
for tensor.

Each tensor the lesson draws passes through a named `Tap` (an identity module), so forward hooks see the
tensors inside attention that are no module's output (q, k, v, scores, the masked scores, ...). Eager attention
(the default) is written out, so the (B, h, T, T) score tensor really exists; fused attention is one kernel
(`fused_attention`) that never makes it and keeps a (B, h, T) log-sum-exp instead.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import Config
from .grouped import grouped_mm

ROPE_BASE = 10_000.0  # θ_i = base^(−2i/d_head); the base changes values, never a shape or a count
NORM_EPS = 1e-5


class Tap(nn.Identity):
    """Identity module that names a tensor for tracing; costs nothing in a plain forward pass."""


class RMSNorm(nn.Module):
    """x / rms(x) · g over the last dimension: a gain only, no mean subtracted (Zhang & Sennrich 2019).

    Written out so that its statistic is a tensor: `rstd` (…, 1) = 1 / sqrt(mean(x²) + eps). Traced modules
    record this module's output as well as its `rstd`."""

    traced = True  # model.passes records the output of this non-leaf module

    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))  # g: (width,)
        self.rstd = Tap()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rstd = self.rstd(torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS))  # (…, 1)
        return x * rstd * self.weight


def norm(cfg: Config, width: int) -> nn.Module:
    """The recipe's normalisation over `width` features: LayerNorm (with a bias where `cfg.norm_bias`) or RMSNorm."""
    if cfg.norm == "rmsnorm":
        return RMSNorm(width)
    return nn.LayerNorm(width, bias=cfg.norm_bias)


class Rotary(nn.Module):
    """RoPE's angles for T positions: angle[t, i] = t · θ_i, θ_i = base^(−2i/d_head), each frequency twice
    (the "rotate half" layout of Llama's Hugging Face port), and their cosines and sines: (T, d_head) each."""

    def __init__(self, d_head: int) -> None:
        super().__init__()
        self.d_head = d_head
        self.angles, self.cos, self.sin = Tap(), Tap(), Tap()

    def forward(self, T: int, device: torch.device, dtype: torch.dtype,
                start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The angles of positions start … start + T − 1 (a decode step: the new token's, after `start` cached)."""
        theta = ROPE_BASE ** (-torch.arange(0, self.d_head, 2, device=device, dtype=torch.float32) / self.d_head)
        positions = torch.arange(start, start + T, device=device, dtype=torch.float32)
        freqs = torch.outer(positions, theta)  # (T, d_head/2)
        angles = self.angles(torch.cat((freqs, freqs), dim=-1).to(dtype))  # (T, d_head)
        return self.cos(angles.cos()), self.sin(angles.sin())  # (T, d_head) each


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


def hidden_keys(T: int, S: int, window: int | None, device: torch.device) -> torch.Tensor:
    """(T, S) bool, True where a query may not see a key: the T queries are the last T of the S keys' positions;
    a query sees the keys up to itself (causal) and, with a window W, only the last W of them (itself and the W − 1
    before it: transformers' sliding_window_overlay, kv_idx > q_idx − W). A windowed mask is a band."""
    ones = torch.ones(T, S, dtype=torch.bool, device=device)
    hidden = ones.triu(1 + S - T)  # keys after each query
    if window is not None:
        hidden = hidden | ones.tril(S - T - window)  # keys W or more before each query
    return hidden


def band_mask(T: int, window: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """The fused kernel's additive (T, T) band of a window W: 0 where a query sees a key, −inf elsewhere."""
    return torch.zeros(T, T, device=device, dtype=dtype).masked_fill(hidden_keys(T, T, window, device), float("-inf"))


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x rotated by position: x·cos + rotate_half(x)·sin, rotate_half([a, b]) = [−b, a]. Shape kept."""
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


class CausalSelfAttention(nn.Module):
    """Fused q, k, v projection; h heads of d_head features for q, h_kv for k and v (each K/V head shared by
    h/h_kv query heads); optional QK-norm and RoPE; then eager attention (scores / sqrt(d_head), causal mask,
    softmax, attn @ v, with k and v expanded to h heads) or fused attention (`fused_attention`: one kernel, k and v
    at h_kv heads, its log-sum-exp tapped as `lse`); heads merged, projection.

    `window` W (a windowed block, `Config.attn_kinds`): each query sees the last W keys only. Eager attention still
    computes the whole (B, h, T, T) scores and masks them to a band (`hidden_keys`); fused attention takes the band
    (`band_mask`, made once per pass by `GPT.embed_tokens`) in place of its causal flag. A decode step's cache of a
    windowed block holds at most W − 1 tokens, so the new token's query sees them all."""

    def __init__(self, cfg: Config, window: int | None = None) -> None:
        super().__init__()
        self.h, self.h_kv, self.d_head = cfg.h, cfg.h_kv, cfg.d_head
        self.window = window
        self.root = math.sqrt(cfg.d_head if cfg.query_scale is None else cfg.query_scale)  # scores / √d_head; Gemma √256
        self.scale = None if cfg.query_scale is None else 1 / self.root  # the fused kernel's, where set apart
        self.softcap = cfg.attn_softcap
        if cfg.sinks:  # gpt-oss: one learned logit per head, a column of the softmax that no value follows
            self.sinks = nn.Parameter(torch.zeros(cfg.h))  # s: (h,)
        width = (cfg.h + 2 * cfg.h_kv) * cfg.d_head
        self.qkv = nn.Linear(cfg.d, width, bias=cfg.qkv_bias)  # W_qkv: (d, (h + 2h_kv)·d_head); GPT-2: (d, 3d)
        self.proj = nn.Linear(cfg.h * cfg.d_head, cfg.d, bias=cfg.proj_bias)  # W_o: (h·d_head, d)
        if cfg.qk_norm:
            self.q_norm, self.k_norm = RMSNorm(cfg.d_head), RMSNorm(cfg.d_head)  # one gain (d_head,), every head
        self.rope = cfg.positions == "rope"
        self.fused = cfg.attention == "fused"
        attention = ["attn_v", "lse"] if self.fused else ["scores", "masked", "attn", "attn_v"]
        attention += ["capped"] if self.softcap is not None else []
        attention += ["sink", "with_sink", "attn_sink"] if cfg.sinks else []
        names = ["q", "k", "v", *attention, "merged"]
        names += ["q_rot", "k_rot"] if self.rope else []
        names += ["k_heads", "v_heads"] if self.h_kv != self.h and not self.fused else []
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
        q = self.q(q.view(B, T, h, d_head).transpose(1, 2))  # (B, h, T, d_head)
        k = self.k(k.view(B, T, h_kv, d_head).transpose(1, 2))  # (B, h_kv, T, d_head)
        v = self.v(v.view(B, T, h_kv, d_head).transpose(1, 2))  # (B, h_kv, T, d_head)
        if hasattr(self, "q_norm"):
            q, k = self.q_norm(q), self.k_norm(k)  # RMSNorm over d_head, per head
        if self.rope:
            q, k = self.q_rot(rotate(q, *rope)), self.k_rot(rotate(k, *rope))  # (B, h, T, d_head), (B, h_kv, T, d_head)
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
            hidden = hidden_keys(T, S, self.window if past is None else None, x.device)  # causal, or a band of W
            masked = self.masked(scores.masked_fill(hidden, float("-inf")))  # (B, h, T, T)
            if hasattr(self, "sinks"):  # gpt-oss: each row's sink logit s joins the softmax, then is dropped
                sink = self.sink(self.sinks.to(masked.dtype).view(1, h, 1, 1).expand(B, h, T, 1))  # (B, h, T, 1)
                joined = self.attn_sink(F.softmax(self.with_sink(torch.cat((masked, sink), dim=-1)), dim=-1))
                attn = self.attn(joined[..., :-1])  # (B, h, T, T), rows sum to less than 1
            else:
                attn = self.attn(F.softmax(masked, dim=-1))  # (B, h, T, T), rows sum to 1
            y = self.attn_v(attn @ v)  # (B, h, T, d_head)
        y = self.merged(y.transpose(1, 2).contiguous().view(B, T, h * d_head))  # (B, T, h·d_head); GPT-2: (B, T, d)
        return self.proj(y)  # (B, T, d)


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

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h, self.d_c, self.d_R, self.d_nope, self.d_v = cfg.h, cfg.d_c, cfg.d_R, cfg.d_nope, cfg.d_v
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
        for name in ("q", "q_nope", "q_rope", "q_rot", "c_kv", "k_rope", "k_rot", "k_nope", "v", "q_heads", "k",
                     "scores", "masked", "attn", "attn_v", "merged", "latent_cache", "rope_cache"):
            setattr(self, name, Tap())

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None,
                past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the latent (B, 1, T_c, d_c) and the rotary key
        (B, 1, T_c, d_R) of the T_c tokens before x's one token; the new token's join them (`latent_cache`,
        `rope_cache`) and every head's K and V are made from all T_c + 1. `band` is unused (no window)."""
        B, T, _ = x.shape
        h, d_c, d_R, d_nope, d_v = self.h, self.d_c, self.d_R, self.d_nope, self.d_v
        q = self.q_b(self.q_a_norm(self.q_a(x))) if hasattr(self, "q_a") else self.q_proj(x)  # (B, T, h·(d_nope + d_R))
        q = self.q(q.view(B, T, h, d_nope + d_R).transpose(1, 2))  # (B, h, T, d_nope + d_R)
        q_nope, q_rope = (self.q_nope(q[..., :d_nope]), self.q_rope(q[..., d_nope:]))  # (B, h, T, d_nope), (…, d_R)
        c_kv, k_rope = self.kv_a(x).split([d_c, d_R], dim=2)  # (B, T, d_c), (B, T, d_R)
        c_kv = self.kv_a_norm(self.c_kv(c_kv)).view(B, 1, T, d_c)  # the latent: (B, 1, T, d_c)
        k_rope = self.k_rope(k_rope.view(B, 1, T, d_R))  # one rotary key for every head: (B, 1, T, d_R)
        q_rot, k_rot = self.q_rot(rotate(q_rope, *rope)), self.k_rot(rotate(k_rope, *rope))
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
        masked = self.masked(scores.masked_fill(hidden_keys(T, S, None, x.device), float("-inf")))
        attn = self.attn(F.softmax(masked, dim=-1))  # (B, h, T, S), rows sum to 1
        y = self.attn_v(attn @ v)  # (B, h, T, d_v)
        y = self.merged(y.transpose(1, 2).contiguous().view(B, T, h * d_v))  # (B, T, h·d_v)
        return self.proj(y)  # (B, T, d)


def swiglu(module: nn.Module, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """SiLU(gate) · up (through `module.silu`, a traced tensor); with `module.limit` set, gpt-oss's clamped SwiGLU:
    gate ≤ limit, −limit ≤ up ≤ limit, then gate·σ(α·gate)·(up + 1). Elementwise: gate's shape, no matmul FLOPs."""
    limit, alpha = module.limit, module.alpha
    if limit is None:
        return module.silu(gate) * up
    gate, up = gate.clamp(max=limit), up.clamp(-limit, limit)
    return gate * torch.sigmoid(gate * alpha) * (up + 1)


class MLP(nn.Module):
    """GELU: d -> d_ff -> d (tanh approximation, as GPT-2; d_ff = 4d). SwiGLU: SiLU(x W_gate) · (x W_up), then W_down;
    GeGLU (Gemma) the same with GELU's tanh approximation in SiLU's place.

    `width` (default d_ff) and `bias` (default the recipe's MLP biases) serve the shared experts of a mixture of
    experts, one MLP of width E_shared·d_shared without biases."""

    def __init__(self, cfg: Config, width: int | None = None, bias: bool | None = None) -> None:
        super().__init__()
        width = cfg.d_ff if width is None else width
        bias = cfg.mlp_bias if bias is None else bias
        self.glu = cfg.glu
        self.limit, self.alpha = cfg.swiglu_limit, cfg.alpha
        if self.glu:
            self.gate = nn.Linear(cfg.d, width, bias=bias)  # W_gate: (d, d_ff)
            self.up = nn.Linear(cfg.d, width, bias=bias)  # W_up: (d, d_ff)
            if cfg.mlp == "geglu":  # Gemma's GeGLU: GELU (tanh approximation) in SiLU's place
                self.gelu = nn.GELU(approximate="tanh")
            elif self.limit is None:
                self.silu = nn.SiLU()
            self.gated = Tap()
        else:
            self.fc = nn.Linear(cfg.d, width, bias=bias)  # (d, d_ff) + bias
            self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(width, cfg.d, bias=bias)  # (d_ff, d) + bias; W_down in SwiGLU

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.glu:
            gate, up = self.gate(x), self.up(x)  # (B, T, d_ff) each
            if hasattr(self, "gelu"):
                return self.proj(self.gated(self.gelu(gate) * up))  # (B, T, d_ff) -> (B, T, d)
            return self.proj(self.gated(swiglu(self, gate, up)))
        return self.proj(self.gelu(self.fc(x)))


class Experts(nn.Module):
    """E routed experts of the recipe's MLP, their matrices stacked (Mixtral's and Qwen's layout): SwiGLU's W_gate,
    W_up (E, d, d_expert) and W_down (E, d_expert, d); GELU's W_fc (E, d, d_expert) and W_down. No biases, unless
    `expert_bias` (gpt-oss): b_gate, b_up (E, d_expert) and b_down (E, d), each row taking its expert's (gpt-oss's
    interleaved gate_up (E, d, 2d_expert) is W_gate and W_up apart here: a layout, the same count and FLOPs).

    Runs over the M = B·T·k dispatched rows sorted by expert, `counts` (E,) rows each: every tensor is (M, ·), each
    expert's share a slice of it (`model.grouped.grouped_mm`, one matmul per expert on the CPU)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        E, d, width = cfg.E, cfg.d, cfg.d_expert
        self.swiglu = cfg.mlp == "swiglu"
        first = ("w_gate", "w_up") if self.swiglu else ("w_fc",)
        for name in first:
            setattr(self, name, nn.Parameter(torch.empty(E, d, width)))  # (E, d, d_expert)
        self.w_down = nn.Parameter(torch.empty(E, width, d))  # (E, d_expert, d)
        self.biased = cfg.expert_bias
        if self.biased:
            for name in first:
                setattr(self, "b" + name[1:], nn.Parameter(torch.zeros(E, width)))  # (E, d_expert)
            self.b_down = nn.Parameter(torch.zeros(E, d))  # (E, d)
        self.limit, self.alpha = cfg.swiglu_limit, cfg.alpha
        taps = ("gate", "up", "gated", "down") if self.swiglu else ("fc", "down")
        for name in taps:
            setattr(self, name, Tap())
        if self.swiglu and self.limit is None:
            self.silu = nn.SiLU()
        elif not self.swiglu:
            self.gelu = nn.GELU(approximate="tanh")

    def forward(self, x: torch.Tensor, counts: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """x (B·T·k, d) sorted by expert -> (B·T·k, d). `rows` (B·T·k,): each row's expert, for the biases."""
        if self.swiglu:
            gate = self.gate(self._mm(x, "gate", counts, rows))  # (B·T·k, d_expert)
            up = self.up(self._mm(x, "up", counts, rows))  # (B·T·k, d_expert)
            hidden = self.gated(swiglu(self, gate, up))
        else:
            hidden = self.gelu(self.fc(self._mm(x, "fc", counts, rows)))
        return self.down(self._mm(hidden, "down", counts, rows))  # (B·T·k, d)

    def _mm(self, x: torch.Tensor, name: str, counts: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        """Each row through its expert's matrix `w_<name>`, plus its expert's bias `b_<name>` where the experts have
        biases (gathered per row: an add, no matmul FLOPs)."""
        y = grouped_mm(x, getattr(self, "w_" + name), counts)
        return y + getattr(self, "b_" + name)[rows] if self.biased else y


class MoE(nn.Module):
    """A mixture of experts in the MLP's place. A router (d, E) scores the E experts for each token; the top k get
    it, weighted by their softmax scores renormalised to sum to 1 (Mixtral's rule, and Qwen's with norm_topk_prob);
    the B·T·k (token, expert) pairs are sorted by expert and each token's row is copied to them, (B·T·k, d) in all;
    the experts run over their shares (`Experts`); each row's output is weighted and added back to its token. Shared
    experts (one MLP of width E_shared·d_shared, with Qwen2-MoE's sigmoid gate (d, 1) where set) see every token.

    No token is dropped or padded, so every tensor's shape is fixed by B, T, k and E whatever the routing; only how
    the B·T·k rows split among the experts (`counts`) depends on the values (balanced: B·T·k/E each). Maps (B, T, d)
    to (B, T, d)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.E, self.k = cfg.E, cfg.k
        self.router = nn.Linear(cfg.d, cfg.E, bias=cfg.expert_bias)  # W_router: (d, E), gpt-oss's bias (E,)
        for name in ("probs", "top_weights", "top_experts", "weights", "order", "counts", "token", "dispatched",
                     "sorted_weights", "weighted", "combined"):
            setattr(self, name, Tap())
        self.experts = Experts(cfg)
        if cfg.E_shared:
            self.shared = MLP(cfg, width=cfg.E_shared * cfg.d_shared, bias=False)
            if cfg.shared_gate:
                self.shared_gate = nn.Linear(cfg.d, 1, bias=False)  # (d, 1)
                self.shared_scale, self.shared_out = Tap(), Tap()
            self.out = Tap()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        logits = self.router(x)  # (B, T, E)
        probs = self.probs(F.softmax(logits, dim=-1, dtype=torch.float32))  # (B, T, E), fp32 whatever the dtype
        top, chosen = torch.topk(probs, self.k, dim=-1)  # (B, T, k) each
        top, chosen = self.top_weights(top), self.top_experts(chosen)
        weights = self.weights((top / top.sum(-1, keepdim=True)).to(x.dtype))  # (B, T, k), each row sums to 1
        flat = chosen.reshape(-1)  # (B·T·k,) the expert of each (token, expert) pair
        order = self.order(torch.argsort(flat, stable=True))  # (B·T·k,) the pairs sorted by expert
        counts = self.counts(flat.new_zeros(self.E).scatter_add_(0, flat, flat.new_ones(()).expand_as(flat)))  # (E,)
        token = self.token(order // self.k)  # (B·T·k,) the token of each sorted pair
        dispatched = self.dispatched(x.reshape(B * T, d)[token])  # (B·T·k, d)
        y = self.experts(dispatched, counts, flat[order])  # (B·T·k, d)
        scale = self.sorted_weights(weights.reshape(-1)[order].unsqueeze(1))  # (B·T·k, 1)
        weighted = self.weighted(y * scale)  # (B·T·k, d)
        out = self.combined(weighted.new_zeros(B * T, d).index_add_(0, token, weighted).view(B, T, d))  # (B, T, d)
        if not hasattr(self, "shared"):
            return out
        shared = self.shared(x)  # (B, T, d)
        if hasattr(self, "shared_gate"):
            shared = self.shared_out(self.shared_scale(torch.sigmoid(self.shared_gate(x))) * shared)  # (B, T, 1) ·
        return self.out(out + shared)


class Block(nn.Module):
    """Pre-norm block: x = x + Attn(norm(x)); x = x + MLP(norm(x)) (with `post_norms`, Gemma's sandwich: x = x +
    norm(Attn(norm(x))); x = x + norm(MLP(norm(x)))), the MLP dense (`mlp`) or a mixture of experts
    (`moe`) as `kind` says ("dense" or "moe", `Config.block_kinds`), attention through a window of `window` keys or
    full (`Config.attn_kinds`). Maps (B, T, d) to (B, T, d)."""

    def __init__(self, cfg: Config, kind: str = "dense", window: int | None = None) -> None:
        super().__init__()
        self.kind = kind
        self.ln_1 = norm(cfg, cfg.d)
        self.attn = LatentAttention(cfg) if cfg.mla else CausalSelfAttention(cfg, window)
        if cfg.post_norms:  # Gemma's sandwich: post_attention_layernorm, post_feedforward_layernorm
            self.post_ln_1, self.post_ln_2 = norm(cfg, cfg.d), norm(cfg, cfg.d)
        self.resid_1 = Tap()
        self.ln_2 = norm(cfg, cfg.d)
        if kind == "moe":
            self.moe = MoE(cfg)
        else:
            self.mlp = MLP(cfg)
        self.resid_2 = Tap()

    @property
    def ffn(self) -> nn.Module:
        """The block's MLP: dense or a mixture of experts."""
        return self.moe if self.kind == "moe" else self.mlp

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None,
                past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: torch.Tensor | None = None) -> torch.Tensor:
        x = self.resid_1(x + self._post(self.attn(self.ln_1(x), rope, past, band), "post_ln_1"))
        return self.resid_2(x + self._post(self.ffn(self.ln_2(x)), "post_ln_2"))

    def _post(self, y: torch.Tensor, name: str) -> torch.Tensor:
        """y through the sandwich norm `name` where the block has it (no local holds y: the peak's lifetimes stay
        the lesson block's)."""
        return getattr(self, name)(y) if hasattr(self, name) else y


def init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: weights N(0, 0.02), biases 0 (norm gains 1), so an untrained model's loss starts near ln V."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, RMSNorm):
        nn.init.ones_(module.weight)
    if isinstance(module, Experts):  # stacked expert matrices: N(0, 0.02) as every other weight; their biases 0
        for weight in module.parameters(recurse=False):
            nn.init.normal_(weight, mean=0.0, std=0.02) if weight.dim() == 3 else nn.init.zeros_(weight)


class GPT(nn.Module):
    """Token table W_te (V, d) + position table W_pe (T_max, d) or RoPE, L blocks, final norm, head.

    The head is tied to W_te when `cfg.tie` (it adds no parameters, but its matmul still costs 2dV FLOPs per
    token); `tie=False` gives a separate bias-free `Linear(d, V)`.

    `depth` builds only the first `depth` blocks (default all L), each of its kind (`Config.block_kinds`). Tracing
    builds one block of each kind (`model.config.one_of_each`): every block is a shape-preserving map
    (B, T, d) -> (B, T, d), so every block of a kind repeats that block's shapes exactly.
    With RoPE, the angles are made once per pass (`embed_tokens`) and every block rotates q and k by them; with a
    window and fused attention, so is the band mask (`window_mask`, (T, T) at the pass's dtype) every windowed block's
    kernel takes (one tensor, kept once for the backward pass).
    """

    def __init__(self, cfg: Config, *, depth: int | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.V, cfg.d)  # W_te
        if cfg.positions == "learned":
            self.wpe = nn.Embedding(cfg.T_max, cfg.d)  # W_pe
            self.embed = Tap()
        else:
            self.rope = Rotary(cfg.d_R if cfg.mla else cfg.d_head)  # latent attention rotates d_R features
        self.blocks = nn.ModuleList(Block(cfg, kind, cfg.window if attn == "sliding" else None)
                                    for kind, attn in zip(cfg.block_kinds[:depth], cfg.attn_kinds))
        if cfg.window is not None and cfg.attention == "fused":
            self.window_mask = Tap()
        self._band: torch.Tensor | None = None
        self.ln_f = norm(cfg, cfg.d)
        self.head = nn.Linear(cfg.d, cfg.V, bias=False)
        if cfg.tie:
            self.head.weight = self.wte.weight
        if cfg.embed_scale:
            self.scaled = Tap()
        if cfg.final_softcap is not None:
            self.capped = Tap()
        self.loss = Tap()
        self._rope: tuple[torch.Tensor, torch.Tensor] | None = None
        if self.wte.weight.device.type != "meta":  # meta modules (tracing) need no values
            self.apply(init_weights)

    def embed_tokens(self, idx: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(B, T) token ids -> (B, T, d) residual stream: tok + pos (learned), or tok with RoPE's angles made.
        `start`: the position of idx's first token (a decode step's new token comes after `start` cached ones)."""
        T = idx.shape[1]
        tok = self.wte(idx)  # (B, T, d)
        if self.cfg.embed_scale:  # Gemma: tok · √d, the scale at the table's dtype (as transformers casts it)
            tok = self.scaled(tok * torch.tensor(math.sqrt(self.cfg.d), dtype=tok.dtype))
        if hasattr(self, "window_mask") and start == 0:  # a prefill: the windowed blocks' band, made once
            self._band = self.window_mask(band_mask(T, self.cfg.window, idx.device, tok.dtype))  # (T, T)
        if self.cfg.positions == "rope":
            self._rope = self.rope(T, idx.device, tok.dtype, start)  # cos, sin: (T, d_head) each
            return tok
        if start + T > self.cfg.T_max:
            raise ValueError(f"T={start + T} exceeds T_max={self.cfg.T_max}: the learned position table cannot "
                             "extrapolate")
        pos = self.wpe(torch.arange(start, start + T, device=idx.device))  # (T, d), broadcast over B
        return self.embed(tok + pos)  # (B, T, d)

    def block(self, i: int, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """Block i on x, with the angles of the last `embed_tokens` when the recipe uses RoPE (and a decode
        step's cache of block i, `past`)."""
        if self._rope is None and past is None and self._band is None:  # GPT-2's recipe: the block's lesson call
            return self.blocks[i](x)
        return self.blocks[i](x, self._rope, past, self._band)

    def output(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> logits (B, T, V): final norm and head, soft-capped c·tanh(logits / c) with `final_softcap`."""
        logits = self.head(self.ln_f(x))
        c = self.cfg.final_softcap
        return logits if c is None else self.capped(torch.tanh(logits / c) * c)

    def logits_and_loss(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d) -> logits (B, T, V) and the next-token loss.

        Loss: mean cross-entropy of logits[:, :-1] against idx[:, 1:] (position t predicts token t+1);
        None when T = 1, where there is no next token to predict.
        """
        logits = self.output(x)  # (B, T, V)
        if idx.shape[1] < 2:
            return logits, None
        V = logits.shape[-1]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), idx[:, 1:].reshape(-1))
        return logits, self.loss(loss)  # ()

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T) token ids -> (logits (B, T, V), loss () or None)."""
        x = self.embed_tokens(idx)
        for i in range(len(self.blocks)):
            x = self.block(i, x)
        self.end_blocks()
        return self.logits_and_loss(x, idx)

    def end_blocks(self) -> None:
        """Drop what the blocks shared in a pass (RoPE's angles, the window's band): after the blocks they live on
        only where autograd saved them."""
        self._rope = self._band = None

    def decode(self, idx: torch.Tensor, past: list[tuple[torch.Tensor, torch.Tensor]],
               start: int | None = None) -> torch.Tensor:
        """One decode step: idx (B, 1), each sequence's new token, after the T_c tokens cached in `past` (one
        (K, V) pair per built block, (B, h_kv, T_c, d_head) each; a windowed block's holds min(T_c, W − 1) of them)
        -> logits (B, 1, V) of the next token. `start`: T_c, the new token's position (default: the longest cache)."""
        x = self.embed_tokens(idx, start=max(p[0].shape[2] for p in past) if start is None else start)
        for i in range(len(self.blocks)):
            x = self.block(i, x, past[i])
        self.end_blocks()
        return self.output(x)

    def num_params(self) -> int:
        """Unique parameters of the built module; the tied head's weight is W_te and counts once."""
        return sum(p.numel() for p in self.parameters())
