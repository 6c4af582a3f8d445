"""Symbolic shapes in the lesson's notation, such as "(B, h, T, d_head)" or "(B, T, 3d)", as data.

The symbols, each named once here (`SYMBOL_DOCS`): the lesson's B, T, d, h, d_head, L, V, T_max, the modern
recipe's h_kv (heads of K and V) and d_ff (the MLP's hidden width), the mixture of experts' E, k, d_expert,
E_shared, d_shared and L_moe, the sliding window's W, L_W and T_W, and multi-head latent attention's d_c, d_cq, d_R,
d_nope and d_v (DeepSeek-V2/V3), partial rotary's d_rot, the NoPE blocks' L_nope, and Gated DeltaNet's L_lin, h_lk,
h_lv, d_lk, d_lv, d_conv, T_pad, n_c and T_r (Qwen3-Next), Mamba 2's L_ssm, h_ssm, d_ssm, d_state, g_ssm and Q
(Granite 4.0-H; T_pad and n_c its chunks'), and DeepSeek sparse attention's h_I, d_I, T_k and T_s (DeepSeek-V3.2). gpt-oss's attention sinks need
no symbol of
their own: a learned logit s per head, h per block, which makes each softmax row T + 1 wide ("(B, h, T, T + 1)").

Grammar: a parenthesised, comma-separated list of dimensions. GPT-2's shapes use the small form that the
exported page's JavaScript evaluates (`parse`): a whole number, a symbol, or a whole-number coefficient written
before a symbol ("4d"). The modern recipe's shapes may also multiply and add symbols in a dimension
("h_kv·d_head", "(h + 2h_kv)·d_head"): any `model.formula` expression without commas (`evaluate`).
"""
from __future__ import annotations

import re

SYMBOL_DOCS: dict[str, str] = {
    "B": "batch size (sequences per forward pass)",
    "T": "sequence length (tokens per sequence)",
    "d": "model width (residual stream size)",
    "h": "attention heads (query heads)",
    "d_head": "features per head (d / h unless set apart)",
    "L": "number of Transformer blocks",
    "V": "vocabulary size",
    "T_max": "rows of the learned position table W_pe, or with RoPE the context the model was trained for",
    "h_kv": "heads of K and V (grouped-query attention; h_kv = h is multi-head, 1 is multi-query)",
    "d_ff": "the MLP's hidden width (4d in GPT-2)",
    "E": "routed experts of an MoE block (Mixtral 8x7B: 8)",
    "k": "experts per token, the top k of the router's E scores (Mixtral 8x7B: 2)",
    "d_expert": "each routed expert's hidden width",
    "E_shared": "shared experts of an MoE block, which every token uses",
    "d_shared": "each shared expert's hidden width",
    "L_moe": "blocks whose MLP is a mixture of experts (of the L; the other L − L_moe keep the dense MLP)",
    "L_nope": "blocks without RoPE (NoPE, nope_layers: of the L, their q and k not rotated by position)",
    "W": "the sliding window: the keys a windowed block's query sees, itself and the W − 1 before it",
    "L_W": "blocks that attend through the window (of the L; the other L − L_W keep full attention)",
    "T_W": "tokens of K and V a windowed block keeps after a prefill of T, min(T, W − 1): transformers' "
           "DynamicSlidingWindowLayer keeps W − 1, as the next token makes the W its query sees",
    "d_c": "multi-head latent attention's latent width: K and V of every head come from one cached c_kv of d_c "
           "features per token (DeepSeek's kv_lora_rank)",
    "d_cq": "the queries' latent width (q_lora_rank; none: q projected from x directly)",
    "d_R": "the rotary width: one k_rope of d_R features per token, shared by every head and cached beside c_kv, and "
           "each head's rotary part of q (qk_rope_head_dim)",
    "d_nope": "each head's query and key features without positions (qk_nope_head_dim); q and k are d_nope + d_R wide",
    "d_v": "each head's value features (v_head_dim)",
    "L_lin": "blocks whose mixer is Gated DeltaNet (of the L; the other L − L_lin keep attention)",
    "h_lk": "a Gated DeltaNet block's q and k heads (linear_num_key_heads)",
    "h_lv": "a Gated DeltaNet block's value heads, each with a state of its own (linear_num_value_heads)",
    "d_lk": "each Gated DeltaNet q and k head's features: the state's rows (linear_key_head_dim)",
    "d_lv": "each Gated DeltaNet value head's features: the state's columns (linear_value_head_dim)",
    "d_conv": "the causal convolution's taps in a Gated DeltaNet or Kimi delta attention block (over q, k and v: "
              "linear_conv_kernel_dim) or a Mamba 2 block (over x, B and C: mamba_d_conv) or a Mamba block (over x: mamba_d_conv)",
    "T_pad": "T rounded up to whole chunks: of 64 tokens for the chunked delta rule (Gated DeltaNet's, Kimi delta "
             "attention's), of Q for Mamba 2's chunked scan, of ⌈√T⌉ for Mamba's",
    "L_ssm": "blocks whose mixer is Mamba 2 (of the L; the other L − L_ssm keep attention)",
    "h_ssm": "a Mamba 2 block's heads, each with a state of its own (mamba_n_heads)",
    "d_ssm": "each Mamba 2 head's features: the state's rows (mamba_d_head); h_ssm·d_ssm = mamba_expand·d",
    "d_state": "the features of a Mamba 2 state per head feature: the state's columns, B's and C's width (mamba_d_state)",
    "g_ssm": "Mamba 2's groups: each group's B and C serve h_ssm/g_ssm heads (mamba_n_groups)",
    "Q": "the tokens of a chunk of Mamba 2's chunked scan (mamba_chunk_size)",
    "L_mb": "blocks whose mixer is Mamba, the first one's selective scan (of the L; the other L − L_mb keep attention)",
    "d_inner": "a Mamba block's channels, each with a state of its own: x's, z's and the scan's width (mamba_expand·d)",
    "d_s": "the features of a Mamba state per channel: the state's columns, B's and C's width (mamba_d_state)",
    "r_dt": "the rank of a Mamba block's step Δ: dt's width before dt_proj widens it to d_inner (mamba_dt_rank)",
    "L_kda": "blocks whose mixer is Kimi delta attention (of the L; the other L − L_kda keep attention)",
    "h_kda": "a Kimi delta attention block's heads, each with a state of its own (linear_num_heads)",
    "d_kda": "each Kimi delta attention head's features, its q's, k's and v's alike: the state is d_kda × d_kda, "
             "and each of its d_kda rows decays at a rate of its own (linear_head_dim)",
    "h_I": "the lightning indexer's heads in a DeepSeek sparse attention block (index_n_heads)",
    "d_I": "each indexer head's features, and its one key's per token, which the cache keeps (index_head_dim)",
    "T_k": "the keys each query of a DeepSeek sparse attention block attends to: the top T_k of the indexer's scores "
           "(index_topk)",
    "T_s": "the keys a query attends to in a prefill of T with sparse attention, min(T, T_k)",
    "n_c": "the chunks T is cut into, each reading the state the chunk before it left: T_pad/64 for the chunked delta "
           "rule, T_pad/Q for Mamba 2's scan, T_pad/⌈√T⌉ for Mamba's",
    "T_r": "T_pad where T spans two chunks or more, else 0: backward keeps the solve's w (B, h_lv, T_pad, d_lk) once a "
           "chunk after the first reads the state (the first reads zeros)",
    "d_rot": "the features of each head's q and k that RoPE rotates, where it rotates part of them (partial rotary: "
             "d_head · partial_rotary_factor; the other d_head − d_rot pass through)",
}
SYMBOLS = tuple(SYMBOL_DOCS)
_DIM = re.compile(r"^(\d*)(B|T_max|T|d_head|d|h|L|V)?$")


def dims(symbolic: str) -> list[str]:
    """The dimensions of a shape as text: "(B, T, (h + 2h_kv)·d_head)" -> ["B", "T", "(h + 2h_kv)·d_head"]."""
    text = symbolic.strip()
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"symbolic shape {symbolic!r} must be written in parentheses, like '(B, T, d)'")
    return [p.strip() for p in text[1:-1].split(",") if p.strip()]


def parse(symbolic: str) -> tuple[tuple[int, str | None], ...]:
    """"(B, T, 3d)" -> ((1, "B"), (1, "T"), (3, "d")); a plain number n -> (n, None). GPT-2's small form only."""
    out = []
    for part in dims(symbolic):
        m = _DIM.match(part)
        if not m or not (m.group(1) or m.group(2)):
            raise ValueError(f"dimension {part!r} of {symbolic!r} is not a number, a symbol {SYMBOLS} or a multiple like '4d'")
        out.append((int(m.group(1)) if m.group(1) else 1, m.group(2)))
    return tuple(out)
