"""Every tensor's shape in the lesson's notation and its label, per recipe: `notation(cfg)`.

`NOTATION` is GPT-2's recipe as the lesson draws it; `RECIPE_NOTATION` the modern recipe's tensors and its forms
of GPT-2's rows (RoPE's angles, RMSNorm's statistics, k and v at h_kv heads, SwiGLU's gate and up, fused
attention's log-sum-exp); `MOE_NOTATION` a mixture of experts' (`model.parts.moe.MoE`); then Gemma's, gpt-oss's sinks
and the sliding window's. The shapes are written in `model.notation`'s grammar; `model.tracing` evaluates each one
against the concrete shape of a real pass, so notation and code cannot drift apart. Keys are tensor names without
their block prefix (`local_name`).
"""
from __future__ import annotations

import re

from .config import Config

NOTATION: dict[str, tuple[str, str]] = {
    "idx": ("(B, T)", "token ids (int64 input)"),
    "wte": ("(B, T, d)", "tok = W_te[idx]"),
    "wpe": ("(T, d)", "pos = W_pe[0:T], broadcast over B"),
    "embed": ("(B, T, d)", "x = tok + pos"),
    "ln_1": ("(B, T, d)", "LayerNorm before attention"),
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
    "resid_1": ("(B, T, d)", "x + attention"),
    "ln_2": ("(B, T, d)", "LayerNorm before the MLP"),
    "mlp.fc": ("(B, T, 4d)", "MLP hidden, d → 4d"),
    "mlp.gelu": ("(B, T, 4d)", "GELU"),
    "mlp.proj": ("(B, T, d)", "MLP out, 4d → d"),
    "resid_2": ("(B, T, d)", "x + MLP"),
    "ln_f": ("(B, T, d)", "final LayerNorm"),
    "head": ("(B, T, V)", "logits (head tied to W_te)"),
    "loss": ("()", "cross-entropy of logits[:, :-1] vs idx[:, 1:]"),
}

# The modern recipe's tensors (and its forms of GPT-2's rows), in the same notation; `notation(cfg)` picks.
RECIPE_NOTATION: dict[str, tuple[str, str]] = {
    "rope.angles": ("(T, d_head)", "RoPE angles t·θ_i, θ_i = b^(−2i/d_head), each frequency twice (b: rope_theta, "
                                   "a value only; this pass uses 10,000)"),
    "rope.cos": ("(T, d_head)", "cos of the angles"),
    "rope.sin": ("(T, d_head)", "sin of the angles"),
    "ln_1.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_1": ("(B, T, d)", "RMSNorm before attention"),
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
    "ln_2.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_2": ("(B, T, d)", "RMSNorm before the MLP"),
    "mlp.fc": ("(B, T, d_ff)", "MLP hidden, d → d_ff"),
    "mlp.gelu": ("(B, T, d_ff)", "GELU"),
    "mlp.gate": ("(B, T, d_ff)", "SwiGLU gate: x W_gate"),
    "mlp.up": ("(B, T, d_ff)", "SwiGLU up: x W_up"),
    "mlp.silu": ("(B, T, d_ff)", "SiLU(gate)"),
    "mlp.gated": ("(B, T, d_ff)", "SiLU(gate) · up"),
    "mlp.proj": ("(B, T, d)", "MLP out, d_ff → d"),
    "ln_f.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_f": ("(B, T, d)", "final RMSNorm"),
    "attn.lse": ("(B, h, T)", "log-sum-exp of each query's scores, fp32 whatever the dtype: kept for backward"),
}
# A mixture of experts' tensors (`model.parts.moe.MoE`), in place of the MLP's in its blocks.
MOE_NOTATION: dict[str, tuple[str, str]] = {
    "moe.router": ("(B, T, E)", "router logits x W_router, a score per expert"),
    "moe.probs": ("(B, T, E)", "softmax over the E experts, fp32 whatever the dtype"),
    "moe.top_weights": ("(B, T, k)", "the k largest probabilities of each token (top-k)"),
    "moe.top_experts": ("(B, T, k)", "which k experts each token goes to (int64)"),
    "moe.weights": ("(B, T, k)", "the k weights renormalised to sum to 1"),
    "moe.order": ("(B·T·k)", "the B·T·k (token, expert) pairs sorted by expert (int64)"),
    "moe.counts": ("(E)", "tokens each expert got, its share of the B·T·k rows (int64; B·T·k/E if balanced)"),
    "moe.token": ("(B·T·k)", "the token of each sorted pair (int64)"),
    "moe.dispatched": ("(B·T·k, d)", "tokens dispatched to their experts, sorted by expert: k rows per token"),
    "moe.experts.gate": ("(B·T·k, d_expert)", "each expert's gate x W_gate[e] over its share of the rows"),
    "moe.experts.up": ("(B·T·k, d_expert)", "each expert's up x W_up[e] over its share"),
    "moe.experts.silu": ("(B·T·k, d_expert)", "SiLU(gate)"),
    "moe.experts.gated": ("(B·T·k, d_expert)", "SiLU(gate) · up"),
    "moe.experts.fc": ("(B·T·k, d_expert)", "each expert's hidden x W_fc[e] over its share of the rows"),
    "moe.experts.gelu": ("(B·T·k, d_expert)", "GELU"),
    "moe.experts.down": ("(B·T·k, d)", "each expert's output, d_expert → d (W_down[e])"),
    "moe.sorted_weights": ("(B·T·k, 1)", "each row's routing weight"),
    "moe.weighted": ("(B·T·k, d)", "expert outputs times their weights"),
    "moe.combined": ("(B, T, d)", "the weighted combine: each token's k rows added back"),
    "moe.shared.gate": ("(B, T, E_shared·d_shared)", "shared experts' gate x W_gate (every token)"),
    "moe.shared.up": ("(B, T, E_shared·d_shared)", "shared experts' up x W_up"),
    "moe.shared.silu": ("(B, T, E_shared·d_shared)", "SiLU(gate)"),
    "moe.shared.gated": ("(B, T, E_shared·d_shared)", "SiLU(gate) · up"),
    "moe.shared.fc": ("(B, T, E_shared·d_shared)", "shared experts' hidden (every token)"),
    "moe.shared.gelu": ("(B, T, E_shared·d_shared)", "GELU"),
    "moe.shared.proj": ("(B, T, d)", "shared experts' output"),
    "moe.shared_gate": ("(B, T, 1)", "shared experts' gate logit x W_shared_gate (d, 1)"),
    "moe.shared_scale": ("(B, T, 1)", "sigmoid of the gate logit"),
    "moe.shared_out": ("(B, T, d)", "shared experts' output times their gate"),
    "moe.out": ("(B, T, d)", "routed experts + shared experts"),
}
ROUTING_NOTE = ("routing: the B·T·k (token, expert) rows are exact whatever the routing (no token dropped or padded); "
                "an expert's share of them is a slice, B·T·k/E rows when routing is balanced (a real pass's shares: "
                "python -m model --values)")
LSE_SHAPE = RECIPE_NOTATION["attn.lse"][0]
FUSED_ATTN_V = ("(B, h, T, d_head)",
                "fused attention: softmax(q kᵀ / √d_head, causal) @ v in one kernel, no (T, T) scores")
_RMS_ROWS = {"ln_1", "ln_2", "ln_f"}  # their RECIPE_NOTATION label names RMSNorm
# Gemma's extras (`model.config.GEMMA_FIELDS`).
GEMMA_NOTATION: dict[str, tuple[str, str]] = {
    "scaled": ("(B, T, d)", "tok · √d (Gemma's embedding scale)"),
    "attn.capped": ("(B, h, T, T)", "soft-capped scores c·tanh(scores / c)"),
    "post_ln_1.rstd": RECIPE_NOTATION["ln_1.rstd"],
    "post_ln_1": ("(B, T, d)", "RMSNorm on attention's output (sandwich norm)"),
    "post_ln_2.rstd": RECIPE_NOTATION["ln_2.rstd"],
    "post_ln_2": ("(B, T, d)", "RMSNorm on the MLP's output (sandwich norm)"),
    "capped": ("(B, T, V)", "soft-capped logits c·tanh(logits / c)"),
}
GEGLU_GATED = ("(B, T, d_ff)", "GELU(gate) · up")
# gpt-oss's extras (`model.config.OSS_FIELDS`): the sinks' columns of the softmax, the clamped SwiGLU, the biases.
SINK_NOTATION: dict[str, tuple[str, str]] = {
    "attn.sink": ("(B, h, T, 1)", "each head's sink logit s, one learned per head, a column for every query (a view)"),
    "attn.with_sink": ("(B, h, T, T + 1)", "masked scores and each head's sink logit s (one learned per head), one "
                       "more column"),
    "attn.attn_sink": ("(B, h, T, T + 1)", "softmax over the T keys and the sink: the sink's column takes its share"),
    "attn.attn": ("(B, h, T, T)", "attention weights, the sink's column dropped (a view): rows sum to less than 1"),
}
CLAMPED_GATED = "clamped SwiGLU: gate·σ(α·gate)·(up + 1), gate ≤ limit, −limit ≤ up ≤ limit"
# A sliding window's forms (`Config.window`): the traced block is a windowed one (`model.config.one_of_each`).
WINDOW_MASKED = ("(B, h, T, T)", "window mask: −inf above the diagonal and W or more keys back, a band of W "
                 "(the full (T, T) scores are still computed)")
WINDOW_NOTATION: dict[str, tuple[str, str]] = {
    "window_mask": ("(T, T)", "the band of W keys: 0 where a query sees a key, −inf elsewhere (made once per pass, "
                    "every windowed block's fused kernel takes it and keeps it for backward)"),
}

# Multi-head latent attention's tensors (`model.parts.latent.LatentAttention`, `Config.mla`), in place of attention's.
MLA_NOTATION: dict[str, tuple[str, str]] = {
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


def notation(cfg: Config) -> dict[str, tuple[str, str]]:
    """Shape and label of every tensor at this configuration's recipe: `NOTATION` for GPT-2's, else with the
    recipe's rows and forms (k and v at h_kv heads, d_ff, h·d_head where d_head is set apart)."""
    if cfg.gpt2_recipe:
        return NOTATION
    out = {**NOTATION, **{k: v for k, v in RECIPE_NOTATION.items() if k not in _RMS_ROWS or cfg.norm == "rmsnorm"}}
    if cfg.moe:
        out.update(MOE_NOTATION)
    if cfg.attention == "fused":
        out["attn.attn_v"] = FUSED_ATTN_V
    if cfg.gemma:
        out.update(GEMMA_NOTATION)
        if cfg.mlp == "geglu":
            out["mlp.gated"] = GEGLU_GATED
            out.update({row: (out[row][0], out[row][1].replace("SwiGLU", "GeGLU")) for row in ("mlp.gate", "mlp.up")})
    if cfg.sinks:
        out.update(SINK_NOTATION)
    if cfg.swiglu_limit is not None:
        for row in ("mlp.gated", "moe.experts.gated", "moe.shared.gated"):
            out[row] = (out[row][0], CLAMPED_GATED)
    if cfg.expert_bias:
        out["moe.router"] = ("(B, T, E)", "router logits x W_router + b, a score per expert")
    if cfg.window is not None:
        out.update(WINDOW_NOTATION, **{"attn.masked": WINDOW_MASKED})
        if cfg.attention == "fused":
            out["attn.attn_v"] = (FUSED_ATTN_V[0], "fused attention: softmax(q kᵀ / √d_head + the band of W) @ v in "
                                  "one kernel, no (T, T) scores")
    if cfg.mla:
        out.update(MLA_NOTATION)
    if cfg.query_scale is not None:  # Gemma's query_pre_attn_scalar: the scores' scale is not 1/√d_head
        for row in ("attn.scores", "attn.attn_v"):
            out[row] = (out[row][0], out[row][1].replace("√d_head", "√query_scale"))
    if cfg.head_dim is not None:  # d_head set apart: the heads' width h·d_head need not be d
        out["attn.qkv"] = ("(B, T, (h + 2h_kv)·d_head)", out["attn.qkv"][1])
        out["attn.merged"] = ("(B, T, h·d_head)", "heads merged back")
        out["attn.proj"] = ("(B, T, d)", "output projection, h·d_head → d")
    return out


BLOCK_PREFIX = "blocks.0."  # a dense model's block rows (the exported page's)
_IN_BLOCK = re.compile(r"^blocks\.\d+\.")


def local_name(name: str) -> str:
    """A tensor's name without its block prefix: "blocks.3.moe.router" -> "moe.router"; "ln_f" stays."""
    return _IN_BLOCK.sub("", name)
