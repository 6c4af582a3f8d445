"""What each change of the modern recipe buys: a configuration beside its GPT-2 twin, change by change, as data.

`changes(cfg, dtype)` -> `Changes`: the GPT-2 twin of `cfg` (same B, T, d, h, L, V, T_max and tie; GPT-2's
recipe: LayerNorm with biases, the learned table W_pe, GELU at d_ff = 4d, h_kv = h, d_head = d / h, biases on
every linear, no QK-norm, eager attention), then one group of `Line`s per change that `cfg` makes, then `cfg`
itself.

Changes interact (SwiGLU's count uses d_ff, q, k and v biases scale with h_kv, ...), so they are applied one at a
time from the twin in one fixed order, `ORDER`:

    d_head set apart → RMSNorm → biases → RoPE → MLP (SwiGLU, d_ff) → K/V heads h_kv → QK-norm → output gate →
    fused attention → mixture of experts → Gemma's extras → gpt-oss's extras → sliding window → latent attention

and each figure of a change is the real count after it minus the real count before it: parameters of the real
module and forward FLOPs per token from its pass (`model.budgeting.budget`), the KV cache per token
(`model.memory.kv_cache_lines`), and the activations and the bytes saved for backward of the real pass at this
B and T (`model.tracing.trace`). So the lines of every figure add up exactly to this configuration's count minus
the twin's. Another order would split the same totals differently: d_head goes first so that every later state
has this configuration's d_head, and biases go before the MLP and the K/V heads so that SwiGLU's and GQA's lines
hold their matrices only.

Each line's formula is the difference of the two states' formulas, written in this configuration's symbols (a
state before the MLP change has d_ff = 4d, before the K/V change h_kv = h, before d_head's h·d_head = d), and
it is checked against its value like every other line. Parameters and FLOPs are listed for every change (a 0 is
the lesson's "at essentially zero cost"); a memory figure only where the change's formula is not 0 (so the
lines listed depend on the recipe, not on the sizes).

Fused attention, last, changes no parameter and no measured FLOP (torch's formulas count its kernel as eager's two
matmuls); its group adds what a causal kernel skips (`model.budgeting.causal_lines`) and the T at which eager
attention's (B, h, T, T) wall fills a GPU (`wall_line`), the wall that fused attention removes.

A mixture of experts, last, replaces the MoE blocks' dense MLP. Where every block is MoE, the dense MLP the chain
passes through is the one of the same FLOPs per token, d_ff = k·d_expert (+ E_shared·d_shared): the change then
holds E/k times that MLP's parameters (`moe_lines`) for the router's FLOPs only, and the KV cache is unchanged.
Where some blocks stay dense, their d_ff is this configuration's, and the MoE blocks replace an MLP of that width.

Multi-head latent attention, last, replaces multi-head attention whose heads are d_head = d_v wide (the DeepSeek-V2
paper's MHA: its d_h is DeepSeek's v_head_dim): the d_head change before it sets d_v apart from d / h, and the
latent change swaps q, k and v of h heads of d_v for the low-rank pairs, the latent and the shared rotary key; its
KV cache line is the latent's d_c + d_R per token per block against K and V's 2h·d_v (`latent_lines`).

A part with a fixed state in some blocks' attention's place (`model.stack.STATEFUL`: Gated DeltaNet, Mamba 2, Kimi delta
attention) comes last of all: ORDER reaches this model with attention in every block (`model.config.all_attention`), and
one change (`STATE_CHANGES`, the part's LAST_CHANGE) puts the state in place. Its FLOPs per token are no polynomial of
T (T_pad/T, (T + d_conv − 1)/T): the chain's polynomials divide by symbols there (`model.formula.to_poly`'s `divide`),
values exact as Fractions, and the line is written from the budget's own formulas where they are the same difference
term by term (`state_figures`). Its KV cache per token falls; the states it keeps instead, per sequence, have a line of
their own at this B (`state_lines`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

from .budgeting import budget, formulas
from .expr import E, total
from .config import FIELDS, Config, all_attention
from .families import borrowed, sandwich_only
from .figures import Line, check_lines, number
from .fields import blocks_text
from .formula import MONOMIAL_ORDER, Poly, poly_add, poly_mul, poly_symbol, polynomial, to_poly
from .memory import kv_cache_lines
from .notation import SYMBOLS
from .parts import PARTS, delta, kda, latent, mamba, mamba1, moe, sparse, window
from .passes import DTYPES
from .stack import STATEFUL, beside, stateful
from .tracing import eager_lines, trace
from .training import GPUS, TrainSetup

DEFAULT_GPU = TrainSetup().gpu  # the GPU whose memory the eager wall is measured against, unless given

ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (  # change -> the Config fields it sets, in the order applied
    ("d_head", ("head_dim",)),
    ("norm", ("norm", "embed_norm")),
    ("bias", ("bias", "norm_biased", "norm_plain", "head_bias")),
    ("positions", ("positions", "rotary_dim", "nope_layers", "attn_temperature")),
    ("mlp", ("mlp", "ff_dim")),
    ("h_kv", ("kv_heads",)),
    ("qk_norm", ("qk_norm", "qk_norm_wide", "qk_l2")),
    ("attn_gate", ("attn_gate",)),
    ("attention", ("attention",)),
    *((part.CHANGE[0], tuple(f.name for f in part.FIELDS)) for part in PARTS if hasattr(part, "CHANGE")),  # a part's
    ("moe", tuple(f.name for f in moe.FIELDS if f.group == "moe")),
    ("gemma", ("post_norms", "embed_scale", "query_scale", "attn_softcap", "final_softcap")),  # a family's extras, one
    ("oss", ("sinks", "expert_bias", "swiglu_limit", "swiglu_alpha")),  # change each: values and small parts
    ("window", tuple(f.name for f in window.FIELDS)),
    ("latent", tuple(f.name for f in latent.FIELDS)),
    ("sparse", sparse.NAMES),
)
STATE_CHANGES = {part.LAST_CHANGE[0]: part for part in STATEFUL}  # a part with a fixed state: the chain's last change,
# from the model with attention in every block (`model.config.all_attention`) to this one
OWNERS = {"moe": moe, "window": window, "latent": latent}  # the part of a change that adds lines of its own
ORDER_NOTE = ("Changes interact, so they are applied one at a time from the GPT-2 twin in this order: d_head set "
              "apart, RMSNorm, biases, RoPE, the MLP (SwiGLU or GeGLU, d_ff), K/V heads h_kv, QK-norm, fused "
              "attention, then Gemma's extras or gpt-oss's extras where the family has them; each line is the real "
              "count after a change minus the count before it, so the lines add up to this configuration's count "
              "minus the twin's.")
GATE_ORDER_NOTE = "The output gate (gated attention) comes after QK-norm, before fused attention."
ALWAYS = ("params", "flops")  # listed for every change, 0 included; a memory figure where its formula is not 0


FIGURES: dict[str, tuple[str, str]] = {  # figure -> (label, unit), in display order; bytes at the table's dtype
    "params": ("parameters", "params"),
    "flops": ("forward FLOPs per token, as the code runs (matmuls)", "FLOP"),
    "kv_cache": ("KV cache per token", "bytes"),
    "activations": ("activations at this B and T (new memory)", "bytes"),
    "saved": ("saved for backward at this B and T", "bytes"),
}


Figure = tuple[Poly, Fraction, str]  # a figure of one state in this configuration's symbols: polynomial (a Laurent
# one where it divides by T: `to_poly`'s `divide`), exact value and text


@dataclass(frozen=True)
class Change:
    """One change from the twin: its key (an `ORDER` name, or "twin" / "total" / "this"), a title saying what it
    does in the lesson's words, and its lines (keys "changes/<key>/<figure>")."""

    key: str
    title: str
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Changes:
    """`cfg` beside its GPT-2 twin: the twin's figures, one `Change` per change in `ORDER`, the sum of the changes
    and `cfg`'s figures. Empty `steps` when `cfg` is GPT-2's recipe."""

    cfg: Config
    twin: Config
    dtype: str
    base: Change  # the twin's figures
    steps: tuple[Change, ...]
    total: Change  # every change together: this configuration minus the twin
    this: Change  # this configuration's figures

    @property
    def groups(self) -> tuple[Change, ...]:
        """Twin, each change, the total and this configuration, in display order (the twin alone for GPT-2's
        recipe, which is its own twin)."""
        return (self.base, *self.steps, self.total, self.this) if self.steps else (self.base,)

    @property
    def lines(self) -> tuple[Line, ...]:
        return tuple(x for g in self.groups for x in g.lines)

    @property
    def note(self) -> str:
        """How the changes were applied (`order_note`)."""
        return order_note(self.cfg)


def twin(cfg: Config) -> Config:
    """`cfg` with GPT-2's recipe (same B, T, d, h, L, V, T_max, tie). ValueError when GPT-2 cannot have this shape."""
    why = no_twin(cfg)
    if why is not None:
        raise ValueError(why)
    return gpt2_of(cfg)


def order_note(cfg: Config) -> str:
    """How the changes were applied (`ORDER_NOTE`; the output gate's, a mixture of experts', a window's and latent
    attention's place in it)."""
    return " ".join([ORDER_NOTE, *([GATE_ORDER_NOTE] if cfg.attn_gate else []), *moe.order_note(cfg),
                     *window.order_note(cfg), *latent.order_note(cfg), *delta.order_note(cfg), *mamba.order_note(cfg),
                     *kda.order_note(cfg), *mamba1.order_note(cfg)])


def no_twin(cfg: Config) -> str | None:
    """Why `cfg` has no GPT-2 twin (NO_TWIN, filled), or None."""
    if cfg.d % cfg.h:
        return NO_TWIN["heads"].format(**title_values(cfg))
    if cfg.T > cfg.T_max:
        return NO_TWIN["context"].format(**title_values(cfg))
    return latent.no_twin(cfg)


def gpt2_of(cfg: Config) -> Config:
    """`cfg`'s B, T, d, h, L, V, T_max and tie with GPT-2's recipe, unchecked (`twin` says when it is no model)."""
    return Config(**{f: getattr(cfg, f) for f in FIELDS})


TITLES: dict[str, str] = {  # what each change does; {…} filled with this configuration's numbers (`title_values`)
    "twin": "the GPT-2 twin: same B, T, d, h, L, V, T_max and head, GPT-2's recipe",
    "d_head": "d_head = {d_head} set apart from d / h = {d_over_h}: the heads' width h·d_head is {width}, not d = {d}",
    "d_head/latent": ("d_head = d_v = {d_head} set apart from d / h = {d_over_h}: the multi-head attention that latent "
                      "attention replaces, h·d_head = {width} wide, not d = {d}"),
    "norm": "RMSNorm instead of LayerNorm: a gain only, no mean subtracted and no bias",
    "norm/embed": ("RMSNorm instead of LayerNorm: a gain only, no mean subtracted and no bias; and one more on the "
                   "token embeddings, before the first block (nanochat's)"),
    "norm/embed_only": "one more LayerNorm, on the token embeddings before the first block",
    "bias/none": "no biases on the linears",
    "bias/qkv": "biases on q, k and v only (Qwen2's choice)",
    "bias/attn": "biases on q, k, v and W_o only (attention_bias in Llama and Qwen3)",
    "bias/mlp": "biases on the MLP's matrices only (mlp_bias in Llama)",
    **{f"bias/{b}{ln}{head}": words + {"/ln": "; the LayerNorms keep their biases",
                                        "/plain": "; the norms lose their gains too (no parameters: OLMo 1's "
                                                  "LayerNorms, nanochat's RMSNorms)",
                                        "": ""}[ln]
       + ("; a bias (V) on the head's logits (Phi's)" if head else "")
       for b, words in (("all", "biases on every linear and LayerNorm"), ("none", "no biases on the linears"),
                        ("qkv", "biases on q, k and v only"), ("attn", "biases on q, k, v and W_o only"),
                        ("mlp", "biases on the MLP's matrices only"))
       for ln in ("", "/ln", "/plain") for head in ("", "/head") if (ln or head) and not (ln and b == "all")},
    "positions": "RoPE instead of the learned table W_pe: q and k rotated by position, no parameters",
    "positions/partial": ("partial RoPE instead of the learned table W_pe: d_rot = {d_rot} of each head's d_head "
                          "features rotated by position, no parameters"),
    "positions/nope": ("RoPE instead of the learned table W_pe, but not in the L_nope = {L_nope} NoPE blocks "
                       "({nope_blocks}), whose q and k see no position{temperature}: no parameters"),
    "positions/none": ("no positions instead of the learned table W_pe: no attention block rotates q and k (NoPE in "
                       "every one), so q and k see no position: no parameters"),
    "positions/partial_nope": ("partial RoPE instead of the learned table W_pe (d_rot = {d_rot} of each head's d_head "
                               "features), but not in the L_nope = {L_nope} NoPE blocks ({nope_blocks}){temperature}: "
                               "no parameters"),
    "mlp/swiglu": "SwiGLU at d_ff = {d_ff}: three matrices, 3·d·d_ff, where GELU at 4d held 8d²",
    "mlp/geglu": "GeGLU at d_ff = {d_ff}: three matrices, 3·d·d_ff, where GELU at 4d held 8d² (Gemma's GELU(x W_gate) · x W_up)",
    "mlp/gelu": "GELU at d_ff = {d_ff} instead of 4d = {four_d}",
    "mlp/relu2": "ReLU² at d_ff = {d_ff}: GELU's two matrices, 2·d·d_ff, with max(0, x)² in GELU's place",
    "mlp/xielu": ("xIELU at d_ff = {d_ff}: GELU's two matrices, 2·d·d_ff, with xIELU in GELU's place and its two "
                  "learned gains α_p, α_n"),
    "h_kv/mqa": ("multi-query attention: h_kv = 1 K/V head for h = {h} query heads: K, V, W_k and W_v shrink by "
                 "h/h_kv = {group}"),
    "h_kv/gqa": ("grouped-query attention: h_kv = {h_kv} K/V heads for h = {h} query heads (each serves h/h_kv = "
                 "{group}): K, V, W_k and W_v shrink"),
    "qk_norm": "QK-norm: an RMSNorm over d_head on q and k of every head",
    "qk_norm/wide": "QK-norm over all heads at once: an RMSNorm over h·d_head on q and over h_kv·d_head on k",
    "qk_norm/l2": ("QK-norm without a gain: q and k of every head scaled to unit RMS over d_head after RoPE, in the "
                   "blocks with RoPE (Llama 4's): no parameters"),
    "attn_gate": ("an output gate (gated attention, Qwen3-Next's): each head's output times sigmoid(x W_g) before W_o: "
                  "W_g (d, h·d_head) = ({d}, {width}) more per block (and a bias beside q's where q has one), "
                  "2d·h·d_head more FLOPs per token, and the gate's tensors in the pass"),
    "attention": ("fused attention (F.scaled_dot_product_attention) instead of eager: one kernel, no (B, h, T, T) "
                  "scores, masked scores or softmax; a (B, h, T) fp32 log-sum-exp kept for backward"),
    "attention/gqa": ("fused attention (F.scaled_dot_product_attention) instead of eager: one kernel, no (B, h, T, T) "
                      "scores, masked scores or softmax, K and V read at their h_kv = {h_kv} heads (no copies at h "
                      "heads); a (B, h, T) fp32 log-sum-exp kept for backward"),
    "moe": ("mixture of experts: E = {E} experts of d_expert = {d_expert}, k = {k} per token, in place of a dense MLP of "
            "width k·d_expert{shared} = {d_ff}, the same FLOPs per token (the router's aside): E/k = {ratio} times its "
            "experts' parameters; the KV cache is unchanged"),
    "moe/mixed": ("mixture of experts in L_moe = {L_moe} of the L = {L} blocks: E = {E} experts of d_expert = {d_expert}, "
                  "k = {k} per token, in place of their dense MLP of width d_ff = {d_ff}; the KV cache is unchanged"),
    "gemma": "Gemma's extras: {gemma_extras}",
    "gemma/borrowed": "{gemma_extras} (as Gemma's, on a model without Gemma's GeGLU and scaled token rows)",
    "gemma/sandwich": ("sandwich norms: an RMSNorm on attention's and the MLP's output before each residual add, 2d "
                       "more per block (GLM-4's, HyperCLOVA X's; Gemma's extras without Gemma's scales): tensors of the "
                       "pass"),
    "oss": ("gpt-oss's extras: attention sinks (a learned logit per head, h more per block, a column more in each "
            "softmax), the router's and the experts' biases (E·(2d_expert + d) + E more per MoE block) and the clamped "
            "SwiGLU (a value); biases and sinks are no matmul FLOPs, and the KV cache is unchanged"),
    "window": ("a sliding window of W = {W} keys on L_W = {L_W} of the L = {L} blocks: the same parameters and "
               "measured FLOPs (the (T, T) scores are still computed, then masked to a band), and each windowed block's "
               "KV cache stops growing at W − 1 = {W_kept} tokens"),
    "window/chunked": ("chunked attention: chunks of W = {W} keys on L_W = {L_W} of the L = {L} blocks, each query "
                       "seeing its own chunk: the same parameters and measured FLOPs (the (T, T) scores are still "
                       "computed, then masked to the chunks), and each chunked block's KV cache, as transformers keeps "
                       "it, stops growing at W − 1 = {W_kept} tokens"),
    "latent": ("multi-head latent attention: {q_path}, K and V made per head from one latent of d_c = {d_c} and one "
               "rotary key of d_R = {d_R} that every head shares; scores d_nope + d_R = {qk} wide, values d_v = {d_v}: "
               "each block caches d_c + d_R = {kv} numbers per token, where K and V of h heads held 2h·d_v = {mha}"),
    "total": "every change together: this model minus its GPT-2 twin",
    "this": "this model",
}
TITLES.update({key: title for part in PARTS for key, title in getattr(part, "CHANGE_TITLES", {}).items()})
NO_TWIN = {  # why a configuration has no GPT-2 twin; {…} filled as TITLES
    "heads": ("no GPT-2 twin: d={d} is not divisible by h={h}, and GPT-2's heads have d / h features each (this "
              "model sets d_head={d_head} apart)"),
    "context": ("no GPT-2 twin at T={T}: GPT-2's learned position table has T_max={T_max} rows; lower T to at most "
                "{T_max} to compare the two"),
}


def title_key(key: str, cfg: Config) -> str:
    """The `TITLES` key of change `key` at `cfg` ("mlp/swiglu", "h_kv/gqa", ...)."""
    if key == "bias":
        return (f"bias/{cfg.bias}" + ("/ln" if cfg.norm_biased else "/plain" if cfg.norm_plain else "")
                + ("/head" if cfg.head_bias else ""))
    if key == "mlp":
        return f"mlp/{cfg.mlp}"
    if key == "norm" and cfg.embed_norm:
        return "norm/embed" if cfg.norm == "rmsnorm" else "norm/embed_only"
    if key == "d_head":
        return latent.title_key(cfg)
    if key == "h_kv":
        return "h_kv/mqa" if cfg.h_kv == 1 else "h_kv/gqa"
    if key == "attention" and 1 < cfg.h_kv < cfg.h:  # eager copies K and V to h heads; fused reads them as they are
        return "attention/gqa"
    if key == "moe":
        return moe.title_key(cfg)
    if key == "positions" and cfg.nope_layers and len(cfg.nope_layers) + len(_state_blocks(cfg)) == cfg.L:
        return "positions/none"  # every attention block NoPE (Granite 4.0-H's, Kimi Linear's)
    if key == "positions" and (cfg.rotary_dim is not None or cfg.nope_layers):
        return "positions/" + "_".join(w for w, on in (("partial", cfg.rotary_dim is not None),
                                                      ("nope", bool(cfg.nope_layers))) if on)
    if key == "qk_norm" and cfg.qk_norm_wide:
        return "qk_norm/wide"
    if key == "qk_norm" and cfg.qk_l2:
        return "qk_norm/l2"
    if key == "window" and cfg.chunked:
        return "window/chunked"
    if key == "gemma" and sandwich_only(cfg):
        return "gemma/sandwich"
    if key == "gemma" and borrowed(cfg):
        return "gemma/borrowed"
    if key in STATE_CHANGES and hasattr(STATE_CHANGES[key], "title_key"):  # Mamba 2 beside attention
        return STATE_CHANGES[key].title_key(cfg)
    return key


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers the titles name, with thousands separators (the exported page computes the same)."""
    head = latent.mha_head(cfg)
    values = dict(d=cfg.d, h=cfg.h, h_kv=cfg.h_kv, d_head=head, d_ff=moe.dense_width(cfg), T=cfg.T, T_max=cfg.T_max,
                  d_over_h=cfg.d // cfg.h, width=cfg.h * head, four_d=4 * cfg.d, group=cfg.h // cfg.h_kv, L=cfg.L)
    out = {k: f"{v:,}" for k, v in values.items()}
    out.update(moe.title_values(cfg))  # each part's numbers where the model has it: E, k, ...; W, L_W, ...; d_c, ...
    if cfg.rotary_dim is not None:
        out["d_rot"] = f"{cfg.rotary_dim:,}"
    if cfg.nope_layers:
        out.update(L_nope=f"{cfg.L_nope:,}", nope_blocks=("block " if cfg.L_nope == 1 else "blocks ")
                   + blocks_text(cfg.nope_layers),
                   temperature=" (their queries scaled by position: attention temperature)" if cfg.attn_temperature
                   else "")
    if cfg.has_extras("gemma"):
        out["gemma_extras"] = gemma_extras(cfg)
    out.update(window.title_values(cfg))
    out.update(latent.title_values(cfg))
    out.update(sparse.title_values(cfg))
    if delta.present(cfg) or mamba.present(cfg) or kda.present(cfg) or mamba1.present(cfg):  # what the fixed state
        # replaces, per token
        mla = latent.present(cfg)
        out.update(kv_what="the latent and its rotary key" if mla else "K and V",
                   kv_grew=f"d_c + d_R = {cfg.d_c + cfg.d_R:,}" if mla else f"2h_kv·d_head = {2 * cfg.h_kv * cfg.d_head:,}")
    out.update(delta.title_values(cfg))
    out.update(mamba.title_values(cfg))
    out.update(kda.title_values(cfg))
    out.update(mamba1.title_values(cfg))
    return out


def _state_blocks(cfg: Config) -> tuple[int, ...]:
    """The blocks a part with a fixed state mixes (none without one)."""
    return cfg.linear_layers + cfg.mamba_layers + cfg.kda_layers + cfg.mamba1_layers


GEMMA_EXTRAS = {  # each of Gemma's extras in the change's title, in `WRITTEN` order
    "post_norms": "sandwich norms (an RMSNorm on attention's and the MLP's output, 2d more per block)",
    "embed_scale": "the token rows times √d", "query_scale": "1/√query_pre_attn_scalar",
    "attn_softcap": "the scores soft-capped", "final_softcap": "the logits soft-capped",
}


BORROWED_SHORT = {"gemma/sandwich": "sandwich norms", "gemma/borrowed": "extras"}  # their lines' names


def gemma_extras(cfg: Config) -> str:
    """The Gemma extras `cfg` has, in the change's words, and which of them are tensors of the pass."""
    said = [words for name, words in GEMMA_EXTRAS.items() if getattr(cfg, name) not in (None, False)]
    capped = cfg.attn_softcap is not None or cfg.final_softcap is not None
    tensors = [w for w, on in (("the norms", cfg.post_norms), ("the soft-caps", capped)) if on]
    tail = f": values, but {' and '.join(tensors)} are tensors of the pass" if tensors else ": values only"
    return ", ".join(said) + tail


def _title(key: str, cfg: Config) -> str:
    return TITLES[title_key(key, cfg)].format(**title_values(cfg))


SHORT = {"twin": "GPT-2 twin", "d_head": "d_head apart", "norm": "RMSNorm", "bias": "biases", "positions": "RoPE",
         "mlp": "MLP", "h_kv": "K/V heads", "qk_norm": "QK-norm", "attn_gate": "output gate",
         "attention": "fused attention",
         "moe": "mixture of experts", "gemma": "Gemma's extras", "oss": "gpt-oss's extras",
         "window": "sliding window", "latent": "latent attention", "sparse": "sparse attention", "total": "all changes",
         "this": "this model",
         **{part.CHANGE[0]: part.CHANGE[1] for part in PARTS if hasattr(part, "CHANGE")},  # a part's: (key, name)
         **{key: part.NAME for key, part in STATE_CHANGES.items()}}


def _states(cfg: Config, base: Config) -> list[tuple[str, Config]]:
    """(change, the configuration after it) for each change in ORDER that `cfg` makes; where a part with a fixed state
    mixes some blocks, ORDER reaches `cfg` with attention in every block (`model.config.all_attention`), and the part's
    change (`STATE_CHANGES`) is the last."""
    part, goal = stateful(cfg), all_attention(cfg)
    out, state = [], base
    for key, names in ORDER:
        target = {n: getattr(goal, n) for n in names}
        for owner in (moe, latent):  # what a part sets on the way: the dense MLP before the experts, the MHA before MLA
            owner.change_target(key, goal, target)
        after = replace(state, **target)
        if after == state:
            continue
        state = after
        out.append((key, state))
    if state != goal:
        raise RuntimeError(f"applying every change in ORDER did not reach {goal}")
    if part is not None:
        out.append((part.LAST_CHANGE[0], cfg))
    return out


def change_keys(cfg: Config) -> tuple[str, ...]:
    """The changes `cfg` makes from its GPT-2 twin, in `ORDER` (cheap: no pass is traced); () where it has no twin."""
    try:
        base = twin(cfg)
    except ValueError:
        return ()
    return tuple(key for key, _ in _states(cfg, base))


def _figures(s: Config, dtype: str) -> dict[str, Line]:
    """The five figures of one state, each a Line in that state's own symbols."""
    b = budget(s)
    memory = {x.key: x for x in (*trace(s, dtype).lines, *kv_cache_lines(s, dtype))}
    return {"params": b.line("params/exact"), "flops": b.line("flops/forward_measured"),
            "kv_cache": memory["memory/kv_cache_per_token"], "activations": memory["memory/activations"],
            "saved": memory["memory/saved"]}


def _substitute(poly: Poly, name: str, by: Poly) -> Poly:
    out: Poly = {}
    for mono, c in poly.items():
        powers = dict(mono)
        k = powers.pop(name, 0)
        term: Poly = {tuple(sorted(powers.items())): c}
        for _ in range(k):
            term = poly_mul(term, by)
        out = poly_add(out, term)
    return out


def in_symbols_of(poly: Poly, s: Config, cfg: Config) -> Poly:
    """A formula of state `s` (in its own symbols) in `cfg`'s symbols, using what holds at `s` where it keeps
    GPT-2's values: h_kv = h, d_ff = 4d, and h·d_head = d where d_head = d / h; where every block of `cfg` is a
    mixture of experts, a dense state's d_ff = k·d_expert (+ E_shared·d_shared) (`dense_width`); where `cfg` has
    latent attention, a state before it has d_head = d_v (`mha_head`). RuntimeError if a
    d_head is left that `cfg` sets apart (d_head = d / h without an h beside it)."""
    if s.kv_heads is None:
        poly = _substitute(poly, "h_kv", poly_symbol("h"))
    width = moe.dense_ff(s, cfg)  # the dense MLP of the experts' FLOPs
    if width is not None:
        poly = _substitute(poly, "d_ff", width.poly())
    elif not s.glu and s.ff_dim is None:  # GELU's and ReLU²'s default width, 4d
        poly = _substitute(poly, "d_ff", poly_symbol("d", 4))
    if s.nope_layers and s.L_nope == s.L and cfg.L_nope != s.L:  # before a fixed state, NoPE in every block
        poly = _substitute(poly, "L_nope", poly_symbol("L"))
    before_latent = latent.replaces(s, cfg)  # the MHA latent attention replaces: d_head = d_v
    if s.head_dim is None:
        poly = _heads_as_d(poly, strict=s.d_head != cfg.d_head and not before_latent)
    if before_latent:
        poly = _substitute(poly, "d_head", poly_symbol("d_v"))
    return poly


def _heads_as_d(poly: Poly, strict: bool) -> Poly:
    """h·d_head -> d in every term (d_head = d / h); `strict`: RuntimeError if a d_head is left without an h."""
    out: Poly = {}
    for mono, c in poly.items():
        powers = dict(mono)
        n = min(powers.get("h", 0), powers.get("d_head", 0))
        if strict and powers.get("d_head", 0) > n:
            raise RuntimeError(f"a state's formula has d_head = d / h without h beside it: {mono}")
        powers.update(h=powers.get("h", 0) - n, d_head=powers.get("d_head", 0) - n, d=powers.get("d", 0) + n)
        out = poly_add(out, {tuple(sorted((k, v) for k, v in powers.items() if v)): c})
    return out


def _state_figures(s: Config, cfg: Config, symbols: dict[str, int], dtype: str, own_text: bool) -> dict[str, Figure]:
    """The figures of state `s` in `cfg`'s symbols; the text is the state's own formula where nothing had to be
    rewritten or `own_text` (this configuration itself), else the rewritten polynomial."""
    out = {}
    for f, line in _figures(s, dtype).items():
        own = to_poly(line.formula, SYMBOLS, divide=True)
        poly = in_symbols_of(own, s, cfg)
        value = _value(poly, symbols)
        if not _same(value, line.value):
            raise RuntimeError(f"{f} of {s}: {line.formula} rewritten in this configuration's symbols is wrong")
        out[f] = (poly, value, line.formula if own_text or poly == own else formula_text(poly))
    return out


def _value(poly: Poly, symbols: dict[str, int]) -> Fraction:
    """`poly` at `symbols`, exactly (a negative power divides)."""
    return sum((c * math.prod(Fraction(symbols[k]) ** p for k, p in mono) for mono, c in poly.items()), Fraction(0))


def _same(exact: Fraction, value: int | float) -> bool:
    """Whether a line's value is `exact`: equal where whole, to 1e-12 relative where a float (FLOPs per token over T)."""
    if isinstance(value, int):
        return exact == value
    return abs(float(exact) - value) <= 1e-12 * max(1.0, abs(value))


COUNTS_FIRST = ("L", "L_lin", "L_ssm", "L_kda", "L_mb")  # the blocks a figure counts: all L, or a fixed state's
L_FIRST = (*COUNTS_FIRST, *(s for s in MONOMIAL_ORDER if s not in COUNTS_FIRST))  # "2Ld", "8L·h_kv·d_head",
# "−8L_lin·h_kv·d_head": per block, then the rest


def _terms(poly: Poly) -> str:
    """The terms of `poly`, positive ones first, each group largest degree first: "d_ff − 2d"."""
    ordered = sorted(poly.items(), key=lambda mc: (mc[1] < 0, -sum(k for _, k in mc[0])))
    text = ""
    for mono, c in ordered:
        term = polynomial({mono: abs(c)}, L_FIRST)
        text += (term if c > 0 else f"−{term}") if not text else (f" + {term}" if c > 0 else f" − {term}")
    return text


# Where a difference has terms of both signs, its common factor takes the sign the difference has at these sizes
# (Llama 3 8B's at B = 8, T = 8,192, Mixtral 8x7B's experts, with a shared one, and DeepSeek-V3's latent attention):
# fixed, so a formula's text depends on the recipe alone, never on the sizes (the exported page computes values from
# the same text at any size).
SIGN_AT = dict(B=8, T=8192, d=4096, h=32, h_kv=8, d_head=128, d_ff=14336, L=32, V=128256, T_max=8192, E=8, k=2,
               d_expert=14336, E_shared=1, d_shared=14336, L_moe=32, W=4096, L_W=32, T_W=4095, d_c=512, d_cq=1536,
               d_R=64, d_nope=128, d_v=128, d_rot=64, L_nope=8, h_I=64, d_I=128, T_k=2048, L_lin=24, h_lk=16, h_lv=32,
               d_lk=128, d_lv=128, d_conv=4, T_pad=8192, n_c=128, T_r=8192, L_ssm=24, h_ssm=128, d_ssm=64, d_state=256,
               g_ssm=1, Q=256, L_kda=24, h_kda=32, d_kda=128, L_mb=28, d_inner=8192, d_s=16, r_dt=256)  # and a fixed
# state's (Qwen3-Next's, Granite 4.0-H's, Kimi Linear's, Jamba's sizes)


def formula_text(poly: Poly) -> str:
    """A polynomial as lesson notation with its common factor taken out, the factor's sign the polynomial's at
    `SIGN_AT`: −2Ld − d -> "−d·(2L + 1)", 2L·h_kv·d_head·d − 2Ld² -> "−2Ld·(d − h_kv·d_head)",
    8BTL + 4BT -> "4BT·(2L + 1)"."""
    if len(poly) <= 1:
        return polynomial(poly, L_FIRST)
    g = math.gcd(*poly.values()) * (-1 if _value(poly, SIGN_AT) < 0 else 1)
    common = {s: max(0, min(dict(m).get(s, 0) for m in poly)) for s in {s for m in poly for s, _ in m}}  # a division
    # (a negative power) stays in its terms
    rest: Poly = {}
    for mono, c in poly.items():
        rest[tuple((s, k - common[s]) for s, k in mono if k != common[s])] = c // g
    factor = polynomial({tuple((s, k) for s, k in sorted(common.items()) if k): g}, L_FIRST)
    prefix = {"1": "", "−1": "−"}.get(factor, factor + "·")
    return f"{prefix}({_terms(rest)})"


def _difference(after: dict[str, Figure], before: dict[str, Figure]) -> dict[str, Figure]:
    out = {}
    for f in after:
        value = after[f][1] - before[f][1]
        poly = poly_add(after[f][0], before[f][0], -1)
        out[f] = (poly, value, formula_text(poly))
    return out


PAST_WINDOW = "KV cache per token of context past the window"  # a windowed state's kv_cache figure: below W, one
# more token still grows every block's cache; the figure is its growth from T = W on (`model.parts.window.window_labels`)


def _group(key: str, title: str, figures: dict[str, Figure], always: tuple[str, ...], more: tuple[Line, ...] = (),
           past_window: bool = False, short: str | None = None) -> Change:
    """One change's lines; `past_window`: its figures include a sliding window's state (kv_cache says PAST_WINDOW);
    `short`: its lines' name where not `SHORT[key]`."""
    def label(f: str) -> str:
        return PAST_WINDOW if past_window and f == "kv_cache" else FIGURES[f][0]

    lines = tuple(Line(f"changes/{key}/{f}", f"{short or SHORT[key]}: {label(f)}", text, number(value), FIGURES[f][1])
                  for f, (poly, value, text) in figures.items() if poly or f in always)
    return Change(key, title, lines + more)


def attention_lines(cfg: Config, dtype: str, gpu: str) -> tuple[Line, Line]:
    """The fused attention change's lines beside its figures, at `cfg` (fused): the forward FLOPs per token that a
    causal kernel skips against the measured count (`model.budgeting.causal_lines`), and `wall_line`."""
    b = budget(cfg)
    skipped = b.line("flops/attention_causal").value - b.flops_attn_per_token
    return (Line("changes/attention/flops_causal", f"{SHORT['attention']}: forward FLOPs per token a causal kernel "
                 "skips (the scores above the diagonal; the measured count keeps them, as eager runs them)",
                 "−2L(T − 1)·h·d_head", skipped, "FLOP"),
            wall_line(cfg, dtype, gpu))


def wall_line(cfg: Config, dtype: str, gpu: str) -> Line:
    """The T at which eager attention's (B, h, T, T) wall fills one GPU: its softmax, kept for the backward pass by
    every block (L·B·h·T² elements at `dtype`, `model.tracing.eager_lines`, whose measured value is checked against
    it), alone reaches the GPU's memory at this B, h and L. A real T (the square root), not rounded."""
    device = GPUS[gpu]
    size, capacity = DTYPES[dtype], round(device.memory_gib * 2**30)
    kept = next(x for x in eager_lines(cfg, dtype) if x.key == "memory/eager_scores_saved").value
    if kept != size * cfg.L * cfg.B * cfg.h * cfg.T**2:
        raise RuntimeError(f"eager attention keeps {kept:,} bytes of (B, h, T, T), not {size}·L·B·h·T²")
    gib = f"{device.memory_gib:g}"
    return Line("changes/attention/T_wall", f"{SHORT['attention']}: T at which eager's (B, h, T, T) softmax, kept "
                f"for backward by all L blocks at this B, alone fills one {device.label} ({gib} GiB)",
                f"({gib}·2³⁰/({size}LBh))^0.5", math.sqrt(capacity / (size * cfg.L * cfg.B * cfg.h)), "tokens")


def state_figures(cfg: Config, diff: dict[str, Figure]) -> dict[str, Figure]:
    """The last change's parameters and FLOPs per token where a part with a fixed state mixes some blocks, written
    from the budget's own formulas where they are the difference the chain measured, term by term: its blocks' count
    times their own (`part.flops`: T_pad/T, (T + d_conv − 1)/T) minus one attention block's (its matmuls and scores),
    "L_lin·(… − (2(3h + 2h_kv)·d_head·d + 4T·h·d_head))"; elsewhere the difference as it is."""
    part, f = stateful(cfg), formulas(cfg)
    own = {"params": (f.lin, f.attn), "flops": (part.flops(cfg), total(f.attn_flops, f.attention(None)))}
    out = {}
    for name, (mine, theirs) in own.items():
        text = (E("L·({a})", a=mine) if f.beside else  # beside attention: its own, attention stays
                E("{n}·({a} − ({b}))", n=E(part.COUNT), a=mine, b=theirs)).text
        if in_symbols_of(to_poly(text, SYMBOLS, divide=True), cfg, cfg) == diff[name][0]:  # as the chain writes it
            out[name] = (diff[name][0], diff[name][1], text)
    return out


def state_lines(cfg: Config, dtype: str, cache: dict[str, Line], kv: Figure) -> tuple[Line, ...]:
    """The last change's lines beside its figures, where a part with a fixed state mixes some blocks (`STATE_CHANGES`):
    the states its blocks keep for B sequences at `dtype`, whatever T (`part.states`, checked against the cache's
    lines), and the T at which the K and V per token that `kv` (the change's KV cache per token, a fall) removes
    would equal them: past it, the state is the smaller."""
    part = stateful(cfg)
    key, size, s = part.LAST_CHANGE[0], DTYPES[dtype], cfg.symbols()
    states = part.states(cfg, size)
    value = number(states.value(s))
    kept = sum(x.value for k, x in cache.items() if k.startswith("memory/state_"))
    if value != kept:
        raise RuntimeError(f"{part.NAME}'s states are {value:,} bytes, the cache's lines {kept:,}")
    fall = poly_add({}, kv[0], -1)
    if beside(cfg):  # K and V stay in every block: the states come on top, there is no T at which they even out
        return (Line(f"changes/{key}/states", f"{part.NAME}: the states every block keeps beside its K and V, for B "
                     f"sequences at {dtype}{'' if size == 4 else ' (the recurrent state at fp32)'}, whatever T: per "
                     "sequence, not per token, so they stay as T grows", states.text, value, "bytes"),)
    count = f"{part.COUNT} = {getattr(cfg, part.COUNT):,}"
    return (Line(f"changes/{key}/states", f"{part.NAME}: the states its {count} blocks keep instead, for B sequences at "
                 f"{dtype}{'' if size == 4 else ' (the recurrent state at fp32)'}, whatever T: per sequence, not per token, so they stay as T "
                 "grows while the KV cache per token above falls", states.text, value, "bytes"),
            Line(f"changes/{key}/T_even", f"{part.NAME}: T at which the K and V those blocks no longer keep (the fall "
                 "of the KV cache per token above, times B) would equal their states: past it, the states are the "
                 f"smaller", f"({states.text}) / (B·{formula_text(fall)})", number(value / (cfg.B * -kv[1])), "tokens"))


@functools.lru_cache(maxsize=64)
def changes(cfg: Config, dtype: str = "fp32", gpu: str = DEFAULT_GPU) -> Changes:
    """`cfg` beside its GPT-2 twin, change by change (see the module docstring); the eager wall of fused attention
    against `gpu`'s memory (`model.training.GPUS`). ValueError when there is no twin (`twin`), `dtype` or `gpu` is
    unknown; RuntimeError if a formula is not true or the lines do not add up."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    if gpu not in GPUS:
        raise ValueError(f"gpu {gpu!r} is not one of {', '.join(GPUS)}")
    base = twin(cfg)
    symbols = cfg.symbols()
    states = [("twin", base), *_states(cfg, base)]
    figures = [_state_figures(s, cfg, symbols, dtype, own_text=i > 0) for i, (_, s) in enumerate(states)]
    cache = {x.key: x for x in kv_cache_lines(cfg, dtype)}
    goal = all_attention(cfg)  # the changes before a fixed state's: their own lines at attention in every block
    goal_cache = {x.key: x for x in kv_cache_lines(goal, dtype)}
    diffs = [_difference(after, before) for before, after in zip(figures, figures[1:])]
    if stateful(cfg) is not None:
        diffs[-1].update(state_figures(cfg, diffs[-1]))
    more = {"attention": lambda: attention_lines(goal, dtype, gpu),
            **{key: (lambda part=part: part.change_lines(goal, goal_cache)) for key, part in OWNERS.items()},
            **{key: (lambda: state_lines(cfg, dtype, cache, diffs[-1]["kv_cache"])) for key in STATE_CHANGES}}
    windowed = window.present(cfg)  # the window comes last: its step, the total and this model are windowed
    steps = tuple(_group(key, _title(key, cfg), diff, ALWAYS,
                         more[key]() if key in more else (), past_window=windowed and key == "window",
                         short=BORROWED_SHORT.get(title_key(key, cfg)))
                  for (key, _), diff in zip(states[1:], diffs))
    total = _difference(figures[-1], figures[0])
    out = Changes(
        cfg=cfg, twin=base, dtype=dtype, steps=steps,
        base=_group("twin", TITLES["twin"], figures[0], tuple(FIGURES)),
        total=_group("total", TITLES["total"], total, tuple(FIGURES), past_window=windowed),
        this=_group("this", TITLES["this"], figures[-1], tuple(FIGURES), past_window=windowed),
    )
    check_lines(out.lines, symbols)
    for f in FIGURES:  # exactly: a FLOPs line over T is a fraction, its Line value the nearest float
        got = sum((d[f][1] for d in diffs), Fraction(0))
        if got != total[f][1]:
            raise RuntimeError(f"the changes' {f} lines add up to {got}, not {total[f][1]}")
        shown = sum(x.value for g in out.steps for x in g.lines if x.key.endswith("/" + f))
        if not _same(got, shown):
            raise RuntimeError(f"the changes' {f} lines as shown add up to {shown:,}, not {float(got):,}")
    return out
