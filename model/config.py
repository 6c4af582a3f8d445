"""The one configuration of the lesson's GPT: a frozen, validated `Config`, its presets and head helpers.

Notation (the lesson's): B batch size, T sequence length, d model width, h heads, d_head = d / h,
L blocks, V vocabulary size, T_max rows of the learned position table. `tie` ties the output head to
the token table W_te (GPT-2's choice).

The modern recipe (lesson 03) is a set of switches on the same `Config`; every default is GPT-2's, so a
`Config` made without them is the 2019 block. New symbols (named once in `model.notation.SYMBOL_DOCS`):
h_kv heads of K and V (grouped-query attention), d_ff the MLP's hidden width. Their fields hold None for
"the recipe's default" and the values in use are the properties `h_kv`, `d_ff` and `d_head`:

- `norm`: "layernorm" (a gain and a bias; no bias when `bias` is not "all") or "rmsnorm" (a gain only).
- `positions`: "learned" (a table W_pe of T_max rows) or "rope" (rotary positions: no parameters). With RoPE
  T_max is the context the model was trained for, not a table size: T > T_max is allowed (the module runs and
  every shape is well defined), and `beyond_context` says so, so that tools can show a notice instead of
  refusing (quality past the trained context needs RoPE scaling, which changes no shape).
- `mlp`: "gelu" (d -> d_ff -> d) or "swiglu" (W_gate and W_up (d, d_ff), SiLU(gate) · up, W_down (d_ff, d)).
- `ff_dim` -> d_ff: None gives 4d for GELU and `swiglu_width(d)` for SwiGLU (8d/3 rounded up to a
  multiple of 256, Llama's rule); any width is accepted.
- `kv_heads` -> h_kv: None gives h (multi-head attention); 1 is multi-query; a divisor of h between is GQA.
- `head_dim` -> d_head: None gives d / h (then h must divide d); a value sets it apart (Qwen3), and the
  attention's width h·d_head need not be d.
- `bias`: "all" (every linear and LayerNorm), "none", "qkv" (q, k and v only: Qwen2), "attn" (q, k, v and W_o:
  Llama's and Qwen3's `attention_bias`) or "mlp" (the MLP's matrices only: Llama's `mlp_bias`). The properties
  `qkv_bias`, `proj_bias`, `mlp_bias` and `norm_bias` say which parts have biases.
- `qk_norm`: an RMSNorm over d_head applied to q and k of every head (Qwen3).
- `attention`: "eager" (the lesson's, written out: the (B, h, T, T) scores, masked scores and softmax are
  tensors) or "fused" (`F.scaled_dot_product_attention`, as FlashAttention runs it: no (B, h, T, T) tensor, a
  (B, h, T) fp32 log-sum-exp kept for the backward pass; `model.parts.attention.fused_attention`). It changes no parameter
  and no count of FLOPs, only what the pass holds. The modern recipe's presets and `from_hf` start fused (how
  those models are trained and served); GPT-2's and GPT-3's presets keep the lesson's eager attention.

Mixture of experts (the MLP's other choice; `model.parts.moe`, symbols named in `model.notation.SYMBOL_DOCS`): `experts`
-> E routed experts, `top_k` -> k of them per token, `expert_dim` -> d_expert each expert's width, `shared_experts`
-> E_shared experts every token uses (Qwen2-MoE, DeepSeek), of width `shared_dim` -> d_shared (default d_expert),
with `shared_gate` Qwen2-MoE's sigmoid gate (d, 1) on their output. A router (d, E) picks each token's k experts
(with `score_bias`, ERNIE 4.5's correction bias (E) added to its probabilities to pick them, not to weigh them). The
experts take the recipe's MLP (SwiGLU: W_gate, W_up (d, d_expert), W_down (d_expert, d); GELU: two matrices) with no
biases, as Mixtral's and Qwen's grouped weights (E, d, d_expert) have none. Which blocks are MoE (`block_kinds`):
block i is when i >= `dense_first` (DeepSeek's first_k_dense_replace), (i + 1) is a multiple of `moe_step` (Qwen's
decoder_sparse_step) and i is not in `dense_layers` (Qwen's mlp_only_layers); the others keep the dense MLP of width
d_ff. L_moe counts the MoE blocks. Where no block is dense, d_ff is no part of the model: `ff_dim` is dropped.

Multi-head latent attention (DeepSeek-V2/V3, `model.parts.latent`, symbols in `model.notation.SYMBOL_DOCS`): `latent_dim`
-> d_c the latent every head's K and V come from, `q_latent_dim` -> d_cq the queries' latent (None: q projected from x
directly), `rope_dim` -> d_R the rotary key shared by the heads, `nope_dim` -> d_nope and `value_dim` -> d_v each head's
widths; d_head is then d_nope + d_R (q's and k's width), h need not divide d, and the attention is eager with RoPE, no
biases, h_kv = h and no window (`model.parts.latent.WITHOUT`). `model.parts.latent.LatentAttention` builds it.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from . import fields as fields_
from . import hf
from .fields import FAMILIES, Field, by_name, linked, written
from . import stack
from .parts import attention, delta, hybrid, kda, latent, mamba, mamba1, mlp, moe, norms, positions, postnorm, sinks, sparse, window
from .parts import ordered
from .parts.attention import divisors, snap_heads
from .parts.mlp import SWIGLU_ALPHA, swiglu_width
from .parts.positions import ODD_D_HEAD
from .parts.sinks import SINKS_FUSED

# The lesson's global dims, declared here; every other field is declared once by the part it shapes (`model.parts`).
# Bounds are large enough for GPT-3 175B (d = 12,288, L = 96, T = 2,048) and Llama 4 Scout's context (T = 10,485,760),
# small enough that no accident (d = 10**9) slips through. The meta device makes even the largest allowed config free
# to trace, within `check_sizes`' two products.
def _dim(symbol: str, doc: str, hi: int, default: int | None = None, cli: str | None = None) -> Field:
    return Field(symbol, "whole", doc, default=default, symbol=symbol, bounds=(1, hi), required=default is None,
                 cli=cli, group="lesson")


DIMS: tuple[Field, ...] = (
    _dim("B", "batch size (sequences per forward pass)", 4_096),
    _dim("T", "sequence length (tokens per sequence)", 16_777_216),
    _dim("d", "model width (residual stream size)", 32_768),
    _dim("h", "attention heads (they divide d, unless d_head is set apart)", 32_768),
    _dim("L", "number of Transformer blocks", 1_024),
    _dim("V", "vocabulary size (rows of W_te)", 524_288),  # Gemma 3 27B: 262,208
    # 2²⁴: with RoPE a context, not a table (Llama 4 Scout's config sets 10,485,760)
    _dim("T_max", "rows of the learned position table W_pe (with RoPE: the context the model was trained for)",
         16_777_216, default=1024, cli="--T-max"),
)
CONFIG_FIELDS: tuple[Field, ...] = ordered(DIMS)  # every field of Config, in order
FIELD = by_name(CONFIG_FIELDS)  # name -> Field
LINKED: tuple[Field, ...] = linked(CONFIG_FIELDS)  # every field as a link's keys and the page's controls list them
WRITTEN: tuple[Field, ...] = written(CONFIG_FIELDS)  # every field as a link and the command line write their values
SIZES = {f.key: f for f in CONFIG_FIELDS if f.kind == "whole"}  # a whole-number field by its key: "d_ff", "E", "moe_step"
NUMBER_BOUNDS: dict[str, tuple[int, int]] = {key: f.bounds for key, f in SIZES.items()}  # what a box, a link or a file
# reads each whole number within; BOUNDS and FIELD_DOCS: those of the lesson's symbols (B, T, ..., h_kv, E, W, d_c, ...)
BOUNDS: dict[str, tuple[int, int]] = {f.symbol: f.bounds for f in SIZES.values() if f.symbol}
FIELD_DOCS: dict[str, str] = {f.symbol: f.doc for f in SIZES.values() if f.symbol}
ATTN_LABELS: dict[str, str] = {"full": "full attention", "sliding": "sliding window"}  # `Config.attn_kinds`
NOPE = "_nope"  # a kind of block without RoPE (`nope_layers`): its MLP's kind and this suffix, "dense_nope"
LIN = delta.LIN  # a Gated DeltaNet block (`linear_layers`): its MLP's kind and this suffix, "moe_lin"
SUFFIXES = tuple("_" + part.KEY for part in stack.STATEFUL)  # a block mixed by a part with a fixed state: "_lin", "_ssm"
# each such part's field of blocks and its kind's suffix, as data (the exported page compiles `Config`, not the parts)
STATEFUL_BLOCKS = tuple((part.BLOCKS, "_" + part.KEY) for part in stack.STATEFUL)
# a block's kind (`Config.block_kinds`), as tables name it
KIND_LABELS: dict[str, str] = {"dense": "dense", "moe": "MoE", "dense_nope": "dense, NoPE", "moe_nope": "MoE, NoPE",
                               **{f"{mlp}_{part.KEY}": f"{label}, {part.NAME}" for part in stack.STATEFUL
                                  for mlp, label in (("dense", "dense"), ("moe", "MoE"))}}

BESIDE = (stack.mamba.NAME, "attention and " + stack.mamba.NAME)  # a kind's label where Mamba 2 is beside attention


MAX_TOKENS = 2**27  # B·T, the tokens of one pass: 4,096 sequences of 32,768, or 8 of 16,777,216
MAX_HEAD_T = 2**30  # h·T, each sequence's rows of (T, T) scores over the heads that make them (`score_heads`)
# Together they keep (B·T)·(h·T), eager attention's (B, h, T, T) scores, within 2⁵⁷ elements, and every tensor of a
# pass within torch's 64-bit sizes (a storage of 2⁶³ bytes or more overflows them)


def score_heads(h: int, index_heads: int | None) -> int:
    """The most heads with a (T, T) matrix per sequence: attention's h, or DeepSeek sparse attention's indexer's h_I."""
    return max(h, index_heads or 0)


def largest_B(T: int) -> int:
    """The most sequences a pass of T tokens takes: B·T ≤ MAX_TOKENS, within B's bounds."""
    return min(BOUNDS["B"][1], MAX_TOKENS // T)


def sizes_fix(B: int, T: int, q: int) -> str | None:
    """What `check_sizes` asks of B sequences of T tokens with q heads of scores: None where they fit."""
    if q * T > MAX_HEAD_T:
        return (f"h·T = {q:,} × {T:,} = {q * T:,} is more than {MAX_HEAD_T:,} (2³⁰), beyond which eager attention's "
                f"(B, h, T, T) scores may not fit torch's 64-bit sizes; lower T to at most {MAX_HEAD_T // q:,}")
    if B * T > MAX_TOKENS:
        return (f"B·T = {B:,} × {T:,} = {B * T:,} tokens per pass is more than {MAX_TOKENS:,} (2²⁷), beyond which a "
                f"tensor of the pass may not fit torch's 64-bit sizes; lower B to at most {largest_B(T):,} at this T, "
                f"or T")
    return None


def check_sizes(cfg: Config) -> None:
    """B·T within MAX_TOKENS and h·T within MAX_HEAD_T (ValueError naming the problem and the fix)."""
    fix = sizes_fix(cfg.B, cfg.T, score_heads(cfg.h, cfg.index_heads))
    if fix is not None:
        raise ValueError(fix)


def kind_label(cfg: Config, kind: str) -> str:
    """A block kind's label as tables name it (`KIND_LABELS`): "dense, Mamba 2"; "dense, attention and Mamba 2" where
    Mamba 2 is beside attention in every block (`ssm_parallel`)."""
    label = KIND_LABELS[kind]
    return label.replace(BESIDE[0], BESIDE[1]) if cfg.ssm_parallel else label


CHOICES: dict[str, tuple[str, ...]] = {f.name: f.options for f in CONFIG_FIELDS if f.kind == "choice"}  # the menus'
MODEL_CHOICES: dict[str, tuple[str, ...]] = {f.name: f.choices for f in CONFIG_FIELDS if f.kind == "choice"}


def check_field(name: str, value: object) -> int:
    """`value` as an int if it is a whole number within the bounds of the field with key `name`, else ValueError
    naming the bounds."""
    return fields_.whole(name, value, SIZES[name].bounds, SIZES[name].doc)


def _checked(f: Field, value: object) -> object:
    """A field's value checked for its kind (ValueError naming what it takes), normalised: an int, a sorted tuple."""
    if value is None and f.optional:
        return None
    if f.kind == "whole":
        return fields_.whole(f.key, value, f.bounds, f.doc)
    if f.kind == "flag":
        fields_.flag(f.name, value)
    elif f.kind == "choice":
        fields_.choice(f, value)
    elif f.kind == "real":
        fields_.real(f.name, value, f.doc)
    elif f.kind == "blocks":
        return fields_.blocks(f.name, value)
    return value


def _declared(cls: type) -> type:
    """`cls` as a frozen dataclass of `CONFIG_FIELDS`, each with its declared type and default."""
    cls.__annotations__ = {f.name: f.annotation for f in CONFIG_FIELDS}
    for f in CONFIG_FIELDS:
        if not f.required:
            setattr(cls, f.name, f.default)
    return dataclass(frozen=True)(cls)


@_declared
class Config:
    """A decoder at one batch shape, in the lesson's notation; validated at construction. GPT-2's recipe by default.

    Its fields are `CONFIG_FIELDS`: the lesson's global dims (`DIMS`) and each part's (`model.parts`), each declared
    once with its kind, default, bounds and doc. Raises `ValueError` with a message that names the problem and the
    fix: a field that is not a whole number in its bounds, a switch that is not one of its choices, then the first
    part's rule a combination breaks (`RULES`: h that does not divide d when d_head is d / h, h_kv that does not
    divide h, an odd d_head with RoPE, T beyond a learned table's T_max, ...). See the module docstring for the
    recipe's fields.
    """

    def __post_init__(self) -> None:
        for f in CONFIG_FIELDS:  # each field for its kind, then each part's rules between fields
            object.__setattr__(self, f.name, _checked(f, getattr(self, f.name)))
        for rule in RULES:
            rule(self)
        for name in self.defaults_written():  # one model, one Config: the default written out is the default
            object.__setattr__(self, name, None)

    def __repr__(self) -> str:
        """The global dims and every field that holds other than its default, as `Config(...)` takes them (GPT-2
        small: "Config(B=8, T=1024, d=768, h=12, L=12, V=50257, T_max=1024)"): eval(repr(cfg)) == cfg."""
        shown = [f for f in CONFIG_FIELDS if f.required or getattr(self, f.name) != f.default]
        return "Config(" + ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in shown) + ")"

    def defaults_written(self) -> tuple[str, ...]:
        """The optional fields that hold their default written out (`__post_init__` sets them to None, their default),
        and d_ff where no block has a dense MLP (it is no part of the model)."""
        written = (("kv_heads", self.h), ("head_dim", self.d // self.h if self.d % self.h == 0 else None),
                   ("ff_dim", self._default_ff()), ("shared_dim", self.expert_dim), ("query_scale", self.d_head),
                   ("rotary_dim", self.d_head if self.latent_dim is None else None))
        out = tuple(name for name, default in written if getattr(self, name) == default)
        return out + (("ff_dim",) if self.moe and "dense" not in self.mlp_kinds else ())

    def _default_ff(self) -> int:
        return swiglu_width(self.d) if self.glu else 4 * self.d  # GELU's and ReLU²'s 4d

    @property
    def glu(self) -> bool:
        """The MLP is gated, three matrices (SwiGLU or GeGLU): act(x W_gate) · (x W_up), then W_down."""
        return self.mlp in ("swiglu", "geglu")

    @property
    def gemma(self) -> bool:
        """Some field of Gemma's extras (`Field.family` "gemma", GeGLU included) is set."""
        return "gemma" in self.extras_of

    @property
    def oss(self) -> bool:
        """Some field of gpt-oss's extras (`Field.family` "oss": sinks, the experts' biases, the clamped SwiGLU) is
        set."""
        return "oss" in self.extras_of

    @functools.cached_property
    def extras_of(self) -> tuple[str, ...]:
        """The families (`model.fields.FAMILIES`, in its order) some field of whose extras holds other than its default
        (GeGLU, an MLP choice, is Gemma's). Kept on the instance, as `plain` and `gpt2_recipe` are: a `Config` is
        frozen."""
        return tuple(family for family in FAMILIES
                     if self.has_extras(family) or mlp.FAMILY_OF.get(self.mlp) == family)

    @property
    def ffn_kind(self) -> str:
        """The stack's MLP part, as tables and notes key it: "moe" where some block's is a mixture of experts, else
        "dense"."""
        return "moe" if "moe" in self.mlp_kinds else "dense"

    @property
    def head_apart(self) -> bool:
        """d_head is a size of its own, not d / h: `head_dim` set, or latent attention's d_nope + d_R."""
        return self.head_dim is not None or self.mla

    @functools.cached_property
    def plain(self) -> bool:
        """No part beyond the recipe's is in the model: no field of a mixture of experts, a window, latent attention,
        Gated DeltaNet or a family's extras holds other than its default (and no GeGLU)."""
        return not self.extras_of and all(getattr(self, f.name) == f.default for f in WRITTEN
                                          if f.group in ("moe", "window", "latent", "linear"))

    def has_extras(self, family: str) -> bool:
        """Some field of the family's extras (`model.fields.FAMILIES`) holds other than its default."""
        return any(getattr(self, f.name) != f.default for f in WRITTEN if f.family == family)

    @property
    def alpha(self) -> float | None:
        """The clamped SwiGLU's sigmoid gain α (`swiglu_alpha`, default `SWIGLU_ALPHA` = 1.702, gpt-oss's); None
        without a clamp."""
        if self.swiglu_limit is None:
            return None
        return SWIGLU_ALPHA if self.swiglu_alpha is None else self.swiglu_alpha

    @property
    def d_head(self) -> int:
        """Features per head: d / h, unless `head_dim` sets it apart; with latent attention each head's query and
        key width d_nope + d_R (its scores are scaled by 1/√(d_nope + d_R))."""
        if self.mla:
            return self.nope_dim + self.rope_dim
        return self.d // self.h if self.head_dim is None else self.head_dim

    @property
    def mla(self) -> bool:
        """Multi-head latent attention (DeepSeek-V2/V3): `latent_dim` set."""
        return self.latent_dim is not None

    @property
    def d_c(self) -> int | None:
        """The latent width of K and V (None without latent attention)."""
        return self.latent_dim

    @property
    def d_cq(self) -> int | None:
        """The queries' latent width (None: q projected from x directly, or no latent attention)."""
        return self.q_latent_dim

    @property
    def d_R(self) -> int | None:
        """The rotary width of the shared key and of each head's query (None without latent attention)."""
        return self.rope_dim

    @property
    def d_rot(self) -> int | None:
        """The features of each head's q and k RoPE rotates where it rotates part of them (None: all d_head)."""
        return self.rotary_dim

    @property
    def d_nope(self) -> int | None:
        """Each head's query and key features without positions (None without latent attention)."""
        return self.nope_dim

    @property
    def d_v(self) -> int | None:
        """Each head's value features (None without latent attention)."""
        return self.value_dim

    @property
    def h_kv(self) -> int:
        """Heads of K and V: h (multi-head attention) unless `kv_heads` sets fewer."""
        return self.h if self.kv_heads is None else self.kv_heads

    @property
    def d_ff(self) -> int:
        """The MLP's hidden width: `ff_dim`, or 4d (GELU) / `swiglu_width(d)` (SwiGLU, GeGLU)."""
        return self._default_ff() if self.ff_dim is None else self.ff_dim

    @property
    def moe(self) -> bool:
        """Some blocks' MLP is a mixture of experts (`experts` set)."""
        return self.experts is not None

    @property
    def E(self) -> int | None:
        """Routed experts of an MoE block (None: a dense model)."""
        return self.experts

    @property
    def k(self) -> int | None:
        """Experts per token (None: a dense model)."""
        return self.top_k

    @property
    def d_expert(self) -> int | None:
        """Each routed expert's hidden width (None: a dense model)."""
        return self.expert_dim

    @property
    def E_shared(self) -> int:
        """Shared experts of an MoE block: every token uses them (0: none)."""
        return self.shared_experts

    @property
    def d_shared(self) -> int | None:
        """Each shared expert's width: `shared_dim`, or d_expert (None without shared experts)."""
        if not self.shared_experts:
            return None
        return self.expert_dim if self.shared_dim is None else self.shared_dim

    @property
    def mlp_kinds(self) -> tuple[str, ...]:
        """Each block's MLP, "dense" or "moe", blocks 0 … L − 1 (see the module docstring)."""
        if not self.moe:
            return ("dense",) * self.L
        dense = set(self.dense_layers)
        return tuple("moe" if i >= self.dense_first and (i + 1) % self.moe_step == 0 and i not in dense else "dense"
                     for i in range(self.L))

    @property
    def block_kinds(self) -> tuple[str, ...]:
        """Each block's kind (`KIND_LABELS`), blocks 0 … L − 1: its MLP's (`mlp_kinds`), and "_nope" after it where the
        block has no RoPE (`nope_layers`), "_lin" where Gated DeltaNet mixes it (`linear_layers`): the blocks of a kind
        make the same tensors."""
        nope = set(self.nope_layers)
        mixed = {i: suffix for name, suffix in STATEFUL_BLOCKS for i in getattr(self, name)}
        return tuple(kind + NOPE if i in nope else kind + mixed.get(i, "") for i, kind in enumerate(self.mlp_kinds))

    @property
    def attn_kinds(self) -> tuple[str, ...]:
        """Each block's attention, "full" or "sliding" (`ATTN_LABELS`), blocks 0 … L − 1: every block "full" without
        a window; with one, every block "sliding" but those of `full_layers`."""
        full = set(self.full_layers)
        return tuple("full" if self.window is None or i in full else "sliding" for i in range(self.L))

    @property
    def W(self) -> int | None:
        """The sliding window (None: full attention everywhere)."""
        return self.window

    @property
    def L_W(self) -> int:
        """Blocks that attend through the window (0 without one)."""
        return self.attn_kinds.count("sliding")

    @property
    def T_W(self) -> int | None:
        """Tokens of K and V a windowed block keeps after a prefill of T: min(T, W − 1) (transformers'
        DynamicSlidingWindowLayer keeps W − 1, as the next token makes the W its query sees); None without a window."""
        return None if self.window is None else min(self.T, self.window - 1)

    @property
    def L_moe(self) -> int:
        """Blocks whose MLP is a mixture of experts (0 for a dense model)."""
        return self.mlp_kinds.count("moe")

    @property
    def L_nope(self) -> int:
        """Blocks without RoPE (`nope_layers`; 0 where every block rotates q and k, or positions are learned)."""
        return len(self.nope_layers)

    @property
    def L_lin(self) -> int:
        """Blocks whose mixer is Gated DeltaNet (`linear_layers`; 0 where every block has attention)."""
        return len(self.linear_layers)

    @property
    def L_ssm(self) -> int:
        """Blocks whose mixer is Mamba 2 (`mamba_layers`; 0 where every block has attention)."""
        return len(self.mamba_layers)

    @property
    def L_mb(self) -> int:
        """Blocks whose mixer is Mamba, the first one (`mamba1_layers`; 0 where every block has attention)."""
        return len(self.mamba1_layers)

    @property
    def L_kda(self) -> int:
        """Blocks whose mixer is Kimi delta attention (`kda_layers`; 0 where every block has attention)."""
        return len(self.kda_layers)

    @property
    def h_kda(self) -> int | None:
        """A Kimi delta attention block's heads (`kda_heads`; None without it)."""
        return self.kda_heads

    @property
    def d_kda(self) -> int | None:
        """Each Kimi delta attention head's width, its q's, k's and v's (`kda_head_dim`)."""
        return self.kda_head_dim

    @property
    def h_lk(self) -> int | None:
        """A Gated DeltaNet block's q and k heads (`linear_k_heads`; None without Gated DeltaNet)."""
        return self.linear_k_heads

    @property
    def h_lv(self) -> int | None:
        """A Gated DeltaNet block's value heads (`linear_v_heads`)."""
        return self.linear_v_heads

    @property
    def d_lk(self) -> int | None:
        """Each Gated DeltaNet q and k head's width (`linear_k_dim`)."""
        return self.linear_k_dim

    @property
    def d_lv(self) -> int | None:
        """Each Gated DeltaNet value head's width (`linear_v_dim`)."""
        return self.linear_v_dim

    @property
    def d_conv(self) -> int | None:
        """The causal convolution's taps of Gated DeltaNet, Mamba 2 or Kimi delta attention (`conv_width`)."""
        return self.conv_width

    @property
    def h_ssm(self) -> int | None:
        """A Mamba 2 block's heads (`ssm_heads`; None without Mamba 2)."""
        return self.ssm_heads

    @property
    def d_ssm(self) -> int | None:
        """Each Mamba 2 head's width (`ssm_head_dim`)."""
        return self.ssm_head_dim

    @property
    def d_state(self) -> int | None:
        """A Mamba 2 state's columns per head feature (`ssm_state`)."""
        return self.ssm_state

    @property
    def g_ssm(self) -> int | None:
        """Mamba 2's groups of B and C (`ssm_groups`)."""
        return self.ssm_groups

    @property
    def Q(self) -> int | None:
        """The tokens of a chunk of Mamba 2's scan (`ssm_chunk`)."""
        return self.ssm_chunk

    @property
    def d_inner(self) -> int | None:
        """A Mamba block's inner width, mamba_expand·d (`mamba1_inner`; None without Mamba)."""
        return self.mamba1_inner

    @property
    def d_s(self) -> int | None:
        """A Mamba block's state width per inner feature (`mamba1_state`)."""
        return self.mamba1_state

    @property
    def r_dt(self) -> int | None:
        """The rank of a Mamba block's step-size projection (`mamba1_dt_rank`)."""
        return self.mamba1_dt_rank

    @property
    def T_pad(self) -> int:
        """T rounded up to whole chunks of the part with a fixed state (`model.stack.stateful`): the chunked delta
        rule's 64 tokens (`model.parts.delta.CHUNK`, Kimi delta attention's too), Mamba 2's Q, Mamba's ⌈√T⌉
        (`model.parts.mamba1.chunk`); T where there is none."""
        return self.T if self._chunk is None else -(-self.T // self._chunk) * self._chunk

    @property
    def _chunk(self) -> int | None:
        """The tokens a chunk of the part with a fixed state holds (`T_pad`), None where it has no chunks."""
        return delta.CHUNK if self.linear_layers or self.kda_layers else self.ssm_chunk if self.mamba_layers else \
            mamba1.chunk(self) if self.mamba1_layers else None

    @property
    def stateful(self) -> bool:
        """Some blocks mix with a part that keeps a fixed state (`STATEFUL_BLOCKS`: Gated DeltaNet, Mamba 2, Kimi delta
        attention)."""
        return any(getattr(self, name) for name, _ in STATEFUL_BLOCKS)

    @property
    def L_stateful(self) -> int:
        """The number of blocks a part with a fixed state mixes (`STATEFUL_BLOCKS`), 0 where every block has
        attention."""
        return sum(len(getattr(self, name)) for name, _ in STATEFUL_BLOCKS)

    @property
    def h_I(self) -> int | None:
        """The lightning indexer's heads (`index_heads`; None without DeepSeek sparse attention)."""
        return self.index_heads

    @property
    def d_I(self) -> int | None:
        """Each indexer head's width, and its key's (`index_dim`)."""
        return self.index_dim

    @property
    def T_k(self) -> int | None:
        """The keys each query attends to: the indexer's top T_k (`index_topk`)."""
        return self.index_topk

    @property
    def T_s(self) -> int | None:
        """The keys a query attends to in a prefill of T, min(T, T_k); None without sparse attention."""
        return None if self.index_topk is None else min(self.T, self.index_topk)

    @property
    def n_c(self) -> int:
        """The chunks of the part with a fixed state: T_pad / 64 for the chunked delta rule (`model.parts.delta.CHUNK`),
        T_pad / Q for Mamba 2's scan, T_pad / ⌈√T⌉ for Mamba's (`T_pad`)."""
        return self.T_pad // (self._chunk or self.T)

    @property
    def T_r(self) -> int:
        """T_pad where T spans two chunks or more, else 0: the tokens of w that backward keeps once a chunk after the
        first reads the state (`model.parts.delta.saved_parts`)."""
        return self.T_pad if self.T > delta.CHUNK else 0

    @property
    def qkv_bias(self) -> bool:
        """The fused q, k, v projection has a bias (bias "all", "qkv" or "attn")."""
        return self.bias in ("all", "qkv", "attn")

    @property
    def proj_bias(self) -> bool:
        """W_o, attention's output projection, has a bias (bias "all" or "attn")."""
        return self.bias in ("all", "attn")

    @property
    def mlp_bias(self) -> bool:
        """The MLP's matrices have biases (bias "all" or "mlp")."""
        return self.bias in ("all", "mlp")

    @property
    def norm_bias(self) -> bool:
        """A LayerNorm has a bias (bias "all", or `norm_biased` beside matrices without; an RMSNorm never has one)."""
        return self.norm == "layernorm" and (self.bias == "all" or self.norm_biased)

    @functools.cached_property
    def gpt2_recipe(self) -> bool:
        """True when every recipe field is GPT-2's (the lesson's 2019 block; its tables print as the lesson does)."""
        return all(getattr(self, f.name) == f.default for f in WRITTEN if f.group == "recipe") and self.plain

    @property
    def beyond_context(self) -> bool:
        """T > T_max with RoPE: allowed (no table to run out of), but past the context the model was trained for."""
        return self.T > self.T_max

    @classmethod
    def from_hf(cls, doc: Mapping, B: int = 8, T: int | None = None) -> Config:
        """The `Config` of a parsed Hugging Face config.json: see `model.config.from_hf`."""
        return from_hf(doc, B, T)

    def recipe(self) -> dict[str, object]:
        """Every field but the lesson's (the recipe's, the mixture of experts', the window's, latent attention's and
        the families' extras), in `WRITTEN` order, and their values (None: the default, see the properties)."""
        return {f.name: getattr(self, f.name) for f in WRITTEN if f.group != "lesson"}

    def symbols(self) -> dict[str, int]:
        """The lesson's symbols and their values, for evaluating symbolic shapes and formulas.

        GPT-2's recipe gives the lesson's eight; any other recipe adds h_kv and d_ff (d_ff only where a block is
        dense), a mixture of experts E, k, d_expert and L_moe, and E_shared and d_shared where it has shared
        experts; a window W, L_W and T_W; latent attention d_c, d_R, d_nope, d_v (and d_cq where the queries have a
        latent)."""
        out = {"B": self.B, "T": self.T, "d": self.d, "h": self.h, "d_head": self.d_head,
               "L": self.L, "V": self.V, "T_max": self.T_max}
        if self.gpt2_recipe:
            return out
        out["h_kv"] = self.h_kv
        if "dense" in self.mlp_kinds:
            out["d_ff"] = self.d_ff
        if self.moe:
            out.update(E=self.E, k=self.k, d_expert=self.d_expert, L_moe=self.L_moe)
            if self.shared_experts:
                out.update(E_shared=self.E_shared, d_shared=self.d_shared)
        if self.window is not None:
            out.update(W=self.W, L_W=self.L_W, T_W=self.T_W)
        if self.rotary_dim is not None:
            out["d_rot"] = self.rotary_dim
        if self.nope_layers:
            out["L_nope"] = self.L_nope
        if self.linear_layers:
            out.update(delta.symbols(self))
        if self.mamba_layers:
            out.update(mamba.symbols(self))
        if self.kda_layers:
            out.update(kda.symbols(self))
        if self.mamba1_layers:
            out.update(mamba1.symbols(self))
        if self.mla:
            out.update(d_c=self.d_c, d_R=self.d_R, d_nope=self.d_nope, d_v=self.d_v,
                       **({"d_cq": self.d_cq} if self.d_cq is not None else {}))
        if self.index_heads is not None:
            out.update(h_I=self.h_I, d_I=self.d_I, T_k=self.T_k, T_s=self.T_s)
        return out


# Each part's rules between fields, in the order Config checks them (the first broken one is the error).
RULES = (check_sizes, norms.check, attention.check, latent.check, positions.check, moe.check, attention.check_scores, window.check, sinks.check,
         mlp.check, postnorm.check, delta.check, mamba.check, hybrid.check, stack.check_wiring, kda.check, mamba1.check,
         sparse.check)


def names(group: str, family: str = "") -> tuple[str, ...]:
    """The names of a group's fields (`model.fields.GROUPS`), of one family's extras where `family` is given, in
    `LINKED` order: names("moe"), names("extras", "oss") == ("sinks", "expert_bias", "swiglu_limit", "swiglu_alpha")."""
    return tuple(f.name for f in LINKED if f.group == group and (not family or f.family == family))


def defaults(group: str) -> dict[str, object]:
    """A group's fields and their declared defaults, in `WRITTEN` order: what choosing GPT-2's recipe or a dense MLP
    sets (`model.families`). Compiled for the exported page, as `Config`'s members, over `WRITTEN` alone (the page
    carries one list of the fields)."""
    return {f.name: f.default for f in WRITTEN if f.group == group}


def all_attention(cfg: Config) -> Config:
    """`cfg` with attention in every block, as its attention blocks have it (the all-attention twin), or `cfg` itself
    where every block has attention: the fields of the parts with a fixed state at their defaults (the "linear"
    group), and the former stateful blocks without RoPE where no attention block has it (Kimi Linear's, Jamba's)."""
    part = stack.stateful(cfg)
    if part is None:
        return cfg
    nope = bool(cfg.nope_layers) and set(cfg.nope_layers) == set(range(cfg.L)) - set(getattr(cfg, part.BLOCKS))
    return replace(cfg, **defaults("linear"), nope_layers=tuple(range(cfg.L)) if nope else cfg.nope_layers)


FIELDS: tuple[str, ...] = names("lesson")  # the lesson's fields: B, T, d, h, L, V, T_max, tie
# The groups `model.changes` applies one at a time, by name.
MOE_FIELDS: tuple[str, ...] = names("moe")
WINDOW_FIELDS: tuple[str, ...] = names("window")
MLA_FIELDS: tuple[str, ...] = names("latent")
GEMMA_FIELDS: tuple[str, ...] = names("extras", "gemma")
OSS_FIELDS: tuple[str, ...] = names("extras", "oss")


def distinct_kinds(cfg: Config) -> tuple[str, ...]:
    """The kinds of cfg's blocks, each once, in the order of their first block: ("dense", "moe") for DeepSeek's
    layout, ("moe",) for Mixtral's."""
    return tuple(dict.fromkeys(cfg.block_kinds))


def typed_blocks(cfg: Config) -> bool:
    """Whether the shapes tables name each block's kind: some block is not a dense block with RoPE where the model
    has it (a mixture of experts, NoPE blocks)."""
    return distinct_kinds(cfg) != ("dense",)


def kind_counts(cfg: Config) -> dict[str, int]:
    """Blocks of each kind: {"dense": 3, "moe": 58}."""
    kinds = cfg.block_kinds
    return {kind: kinds.count(kind) for kind in distinct_kinds(cfg)}


def kind_blocks(cfg: Config) -> dict[str, tuple[int, ...]]:
    """The blocks of each kind, by index, kinds in the order of their first block."""
    kinds = cfg.block_kinds
    return {kind: tuple(i for i, k in enumerate(kinds) if k == kind) for kind in distinct_kinds(cfg)}


def one_of_each(cfg: Config) -> Config:
    """The architecture of `cfg` with one block of each kind, in the order of their first blocks, at B = T = 1: what
    a recorded pass builds and runs (every block of a kind has that block's shapes). For a dense model,
    `replace(cfg, B=1, T=1, L=1)`. A windowed model's blocks are all windowed: a window changes no shape of a block
    (its eager mask is a (T, T) band where a full block's is causal, and the fused kernel's band mask is made once
    per pass), so one windowed block of a kind stands for that kind's full and windowed blocks alike."""
    return one_of_each_arch(architecture(cfg))


@functools.lru_cache(maxsize=512)
def one_of_each_arch(arch: tuple) -> Config:
    """`one_of_each` of the architecture `arch` (`architecture(cfg)`), built once per architecture."""
    cfg = Config(B=1, T=1, **dict(zip(ARCHITECTURE, arch)))
    # one replace: d_ff stays where a dense block keeps it (a dense model's layout fields are their defaults)
    return replace(cfg, full_layers=(), **one_block_each(distinct_kinds(cfg)))


ARCHITECTURE = tuple(f.name for f in CONFIG_FIELDS if f.name not in ("B", "T"))  # every field but the batch shape


def architecture(cfg: Config) -> tuple:
    """The values of `ARCHITECTURE`: what the module, a recorded pass and a budget's expressions depend on."""
    return tuple(getattr(cfg, name) for name in ARCHITECTURE)


def one_block_each(kinds: tuple[str, ...]) -> dict[str, object]:
    """The fields L, moe_step, dense_first, dense_layers and nope_layers of one block of each kind, in this order:
    ("dense", "moe") -> L = 2, block 0 dense (dense_first = 1); ("moe", "dense") -> block 1 dense; ("dense",
    "dense_nope") -> block 1 without RoPE."""
    mlps = tuple(mlp_kind(kind) for kind in kinds)
    dense = tuple(i for i, kind in enumerate(mlps) if kind == "dense")
    layout = {} if "moe" not in mlps or not dense else {"dense_first": 1} if dense == (0,) and len(mlps) == 2 else \
        {"dense_layers": dense}
    return {"L": len(kinds), "moe_step": 1, "dense_first": 0, "dense_layers": (), **layout,
            "nope_layers": tuple(i for i, kind in enumerate(kinds) if kind.endswith(NOPE)),
            **{part.BLOCKS: tuple(i for i, kind in enumerate(kinds) if kind.endswith("_" + part.KEY))
               for part in stack.STATEFUL}}


def mlp_kind(kind: str) -> str:
    """A block kind's MLP ("dense" or "moe"): "moe_lin" -> "moe"."""
    for suffix in (NOPE, *SUFFIXES):
        kind = kind.removesuffix(suffix)
    return kind

GPT2_V = 50_257  # GPT-2's BPE vocabulary: 50,256 merges' tokens + <|endoftext|>


def _preset(L: int, d: int, h: int, T_max: int) -> Config:
    return Config(B=8, T=T_max, d=d, h=h, L=L, V=GPT2_V, T_max=T_max)


DEFAULT_PRESET = "gpt2-small"  # what the CLI, the export and the app start from

# Presets at B = 8, T = T_max; change the batch shape with dataclasses.replace(cfg, B=..., T=...).
PRESETS: dict[str, Config] = {
    "gpt2-small": _preset(12, 768, 12, 1024),
    "gpt2-medium": _preset(24, 1024, 16, 1024),
    "gpt2-large": _preset(36, 1280, 20, 1024),
    "gpt2-xl": _preset(48, 1600, 25, 1024),
    # GPT-3 paper (Brown et al. 2020), table 2.1, where two rows do not multiply out (h * d_head != d):
    # 1.3B prints h = 24 with d = 2,048 and d_head = 128, so we keep d and d_head and use h = 2,048 / 128 = 16;
    # 13B prints d = 5,140 with h = 40 and d_head = 128, so we use d = 40 * 128 = 5,120.
    "gpt3-125m": _preset(12, 768, 12, 2048),
    "gpt3-350m": _preset(24, 1024, 16, 2048),
    "gpt3-760m": _preset(24, 1536, 16, 2048),
    "gpt3-1.3b": _preset(24, 2048, 16, 2048),
    "gpt3-2.7b": _preset(32, 2560, 32, 2048),
    "gpt3-6.7b": _preset(32, 4096, 32, 2048),
    "gpt3-13b": _preset(40, 5120, 40, 2048),
    "gpt3-175b": _preset(96, 12288, 96, 2048),
}
GPT2_RECIPE_PRESETS: tuple[str, ...] = tuple(PRESETS)  # the presets of the 2019 block (the page's menu, issue 15)

# The modern recipe: RMSNorm, RoPE, SwiGLU, GQA, no biases (or q, k, v biases: Qwen2), QK-norm (Qwen3), and fused
# attention, as these models are trained and served.
MODERN = dict(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", attention="fused")


def _modern(L: int, d: int, h: int, h_kv: int, d_ff: int | None, V: int, T_max: int, tie: bool = False,
            **recipe) -> Config:
    """A published model at B = 8 and T = min(T_max, 8,192): its config.json's shape, as a Config."""
    return Config(B=8, T=min(T_max, 8_192), d=d, h=h, L=L, V=V, T_max=T_max, tie=tie,
                  **{**MODERN, "kv_heads": h_kv, "ff_dim": d_ff, **recipe})


# Each from the model's published config.json (hidden_size, intermediate_size, num_hidden_layers,
# num_attention_heads, num_key_value_heads, head_dim, vocab_size, max_position_embeddings, tie_word_embeddings);
# tests assert the published parameter counts. Mistral-7B is v0.2 (v0.1, `mistral-7b-v0.1`, the same shape with a
# 4,096-token sliding window on every block; v0.3 a vocabulary of 32,768).
PRESETS.update({
    "llama3-8b": _modern(32, 4096, 32, 8, 14_336, 128_256, 8_192),
    "llama3-70b": _modern(80, 8192, 64, 8, 28_672, 128_256, 8_192),
    "llama3.2-1b": _modern(16, 2048, 32, 8, 8_192, 128_256, 131_072, tie=True),
    "mistral-7b": _modern(32, 4096, 32, 8, 14_336, 32_000, 32_768),
    "qwen2.5-0.5b": _modern(24, 896, 14, 2, 4_864, 151_936, 32_768, tie=True, bias="qkv"),
    "qwen2.5-7b": _modern(28, 3584, 28, 4, 18_944, 152_064, 131_072, bias="qkv"),
    "qwen3-0.6b": _modern(28, 1024, 16, 8, 3_072, 151_936, 40_960, tie=True, head_dim=128, qk_norm=True),
    # today's context lengths: RoPE's T_max is a number, not a table (tests read the published config.json files)
    "mistral-nemo-12b": _modern(40, 5120, 32, 8, 14_336, 131_072, 1_024_000, head_dim=128),
    "qwen3-4b-instruct-2507": _modern(36, 2560, 32, 8, 9_728, 151_936, 262_144, tie=True, head_dim=128, qk_norm=True),
    # mixtures of experts (num_local_experts, num_experts_per_tok, and the experts' width: Mixtral's intermediate_size,
    # Qwen3-MoE's moe_intermediate_size; every block is MoE); tests read tests/hf/published and its counts
    "mixtral-8x7b": _modern(32, 4096, 32, 8, None, 32_000, 32_768, experts=8, top_k=2, expert_dim=14_336),
    "qwen3-30b-a3b": _modern(48, 2048, 32, 4, None, 151_936, 40_960, head_dim=128, qk_norm=True, experts=128, top_k=8,
                             expert_dim=768),
})


# Published models with a sliding window and Gemma's or gpt-oss's extras, each from its config.json in
# shared/data/configs (tests read it and assert its parameters). Those of `WINDOW_PRESETS` are PRESETS too (the live
# page's menu and the exported page's, each figure on the page written for it).
TABLE_PRESETS: dict[str, Config] = {
    # Mistral 7B v0.1: v0.2's shape with sliding_window = 4,096 on all 32 blocks (7,241,732,096 parameters, as published)
    "mistral-7b-v0.1": _modern(32, 4096, 32, 8, 14_336, 32_000, 32_768, window=4_096),
    "gemma-3-1b": _modern(26, 1152, 4, 1, 6_912, 262_144, 32_768, tie=True, head_dim=256, qk_norm=True, mlp="geglu",
                          post_norms=True, embed_scale=True, window=512, full_layers=tuple(range(5, 26, 6))),
    "gemma-3-27b": _modern(62, 5376, 32, 16, 21_504, 262_208, 131_072, tie=True, head_dim=128, qk_norm=True, mlp="geglu",
                           post_norms=True, embed_scale=True, query_scale=168, window=1_024,
                           full_layers=tuple(range(5, 62, 6))),  # the text model (the published 27B adds vision)
    # every other block windowed (W = 128), sinks, attention biases, 32 experts with biases, 4 per token, clamped SwiGLU;
    # eager attention, as transformers runs it (the sinks join the softmax)
    "gpt-oss-20b": _modern(24, 2880, 64, 8, None, 201_088, 131_072, head_dim=64, bias="attn", attention="eager",
                           experts=32, top_k=4, expert_dim=2_880, window=128, full_layers=tuple(range(1, 24, 2)),
                           sinks=True, expert_bias=True, swiglu_limit=7.0),
    # multi-head latent attention (d_c = 512, d_cq = 1,536, d_R = 64, d_nope = d_v = 128), 3 dense blocks, then one
    # shared and 256 routed experts, 8 per token; eager attention (q and k are d_nope + d_R wide, v d_v). 671,026,404,352
    # parameters: transformers' module, which does not build the multi-token-prediction layer (num_nextn_predict_layers)
    "deepseek-v3": _modern(61, 7168, 128, None, 18_432, 129_280, 163_840, attention="eager", experts=256, top_k=8,
                           expert_dim=2_048, shared_experts=1, dense_first=3, latent_dim=512, q_latent_dim=1_536,
                           rope_dim=64, nope_dim=128, value_dim=128),
    # DeepSeek-V3.2 (DeepseekV32Config's defaults, deepseek-ai/DeepSeek-V3.2-Exp's shape): DeepSeek-V3's, and in every
    # block DeepSeek sparse attention's lightning indexer (h_I = 64 heads of d_I = 128, each query's top T_k = 2,048
    # keys); 671,877,929,216 parameters: transformers' module, which does not build the multi-token-prediction layer
    # (the hub's "685B" counts it)
    "deepseek-v3.2": _modern(61, 7168, 128, None, 18_432, 129_280, 163_840, attention="eager", experts=256, top_k=8,
                             expert_dim=2_048, shared_experts=1, dense_layers=(0, 1, 2), latent_dim=512,
                             q_latent_dim=1_536, rope_dim=64, nope_dim=128, value_dim=128, index_heads=64, index_dim=128,
                             index_topk=2_048),
    # GLM-4.5-Air (zai-org/GLM-4.5-Air's config.json): 96 query heads of 128 and 8 K/V heads, q, k, v biases, RoPE on
    # 64 of each head's 128 features, one dense block, then one shared and 128 routed experts of 1,408, 8 per token;
    # 106,852,245,504 parameters ("106B total" on its card): transformers' module, which does not build the
    # multi-token-prediction layer (num_nextn_predict_layers)
    "glm-4.5-air": _modern(46, 4096, 96, 8, 10_944, 151_552, 131_072, head_dim=128, bias="qkv", rotary_dim=64,
                           experts=128, top_k=8, expert_dim=1_408, shared_experts=1, dense_first=1),
    # MiniMax-M2 (MiniMaxAI/MiniMax-M2's config.json): 62 blocks, each 256 experts of 1,536, 8 per token, QK-norm over
    # all heads' width, RoPE on 64 of each head's 128 features (rotary_dim); 228,689,748,992 parameters: transformers'
    # module, which builds none of its multi-token-prediction modules ("230B total" on its card)
    "minimax-m2": _modern(62, 3072, 48, 8, None, 200_064, 196_608, head_dim=128, rotary_dim=64, qk_norm_wide=True,
                          experts=256, top_k=8, expert_dim=1_536),
    # Gemma 1 7B (GemmaConfig's defaults): GeGLU, tok · √d, 16 heads of 256 (8,537,680,896 parameters, "8.54B")
    "gemma-7b": _modern(28, 3072, 16, 16, 24_576, 256_000, 8_192, tie=True, head_dim=256, mlp="geglu",
                        embed_scale=True),
    # Phi-3-mini-4k (Phi3Config's defaults): Llama's block, fused qkv and gate_up (3,821,079,552 parameters, "3.8B")
    "phi-3-mini": _modern(32, 3072, 32, 32, 8_192, 32_064, 4_096),
    # Phi-4-mini (microsoft/Phi-4-mini-instruct's config.json): Phi-3's block, partial RoPE on 96 of each head's 128
    # features (partial_rotary_factor 0.75), 24 heads and 8 K/V heads, a tied head, and the window of 262,144 its file
    # sets on every block (beyond its 131,072-token context: it never binds); 3,836,021,760 parameters, as published
    "phi-4-mini": _modern(32, 3072, 24, 8, 8_192, 200_064, 131_072, tie=True, rotary_dim=96, window=262_144),
    # Llama 4 Scout's text model (Llama4TextConfig's defaults, which describe it, with its card's 10M-token context):
    # 48 blocks of d 5,120, 40 heads and 8 K/V heads of 128; chunked attention (chunks of 8,192) with RoPE and a QK-norm
    # without a gain in three blocks of four, full attention without RoPE (and with its temperature) in blocks 3, 7,
    # …, 47; every block 16 experts of 8,192, 1 per token, beside one shared expert; 107,769,861,120 parameters
    # (transformers' module; "109B total" on its card counts the vision encoder too, which no figure here does)
    "llama4-scout": _modern(48, 5120, 40, 8, None, 202_048, 10_485_760, head_dim=128, experts=16, top_k=1,
                            expert_dim=8_192, shared_experts=1, window=8_192, full_layers=tuple(range(3, 48, 4)),
                            chunked=True, nope_layers=tuple(range(3, 48, 4)), qk_l2=True, attn_temperature=True),
    # SmolLM3-3B (HuggingFaceTB/SmolLM3-3B's config.json): Llama's block, 16 heads and 4 K/V heads, a tied head, RoPE in
    # every block but every fourth (no_rope_layers: blocks 3, 7, …, 35 NoPE), a 65,536-token context; 3,075,098,624
    # parameters ("3B"): transformers' module
    "smollm3-3b": _modern(36, 2048, 16, 4, 11_008, 128_256, 65_536, tie=True, nope_layers=tuple(range(3, 36, 4))),
    # Qwen3-Next-80B-A3B (Qwen/Qwen3-Next-80B-A3B-Instruct's config.json; Qwen3NextConfig's defaults but its 262,144-token
    # context): 48 blocks of d 2,048, Gated DeltaNet in three of every four (h_lk 16 q/k heads and h_lv 32 value heads of
    # 128, a 4-tap convolution), attention in blocks 3, 7, …, 47 (16 heads and 2 K/V heads of 256, QK-norm, an output
    # gate, RoPE on 64 of each head's features); every block 512 experts of 512, 10 per token, and a gated shared expert
    # of 512; 79,674,391,296 parameters ("80B total" on its card): transformers' module
    "qwen3-next-80b-a3b": _modern(48, 2048, 16, 2, None, 151_936, 262_144, head_dim=256, qk_norm=True, rotary_dim=64,
                                  attn_gate=True, experts=512, top_k=10, expert_dim=512, shared_experts=1,
                                  shared_dim=512, shared_gate=True, linear_layers=tuple(i for i in range(48) if (i + 1) % 4),
                                  linear_k_heads=16, linear_v_heads=32, linear_k_dim=128, linear_v_dim=128,
                                  conv_width=4),
    # Jamba v0.1 (JambaConfig's defaults, whose docstring names ai21labs/Jamba-v0.1): 32 blocks of d 4,096, attention
    # without RoPE in blocks 4, 12, 20, 28 (32 heads and 8 K/V heads of 128), Mamba in the other 28 (d_inner 8,192
    # channels of d_s 16, a step of rank r_dt 256, a 4-tap convolution); 16 SwiGLU experts of 14,336, 2 per token, in
    # the odd blocks, a SwiGLU of 14,336 in the even ones; 51,570,323,328 parameters, transformers' module on the meta
    # device ("52B" on its card, 51.6B)
    "jamba-v0.1": _modern(32, 4096, 32, 8, 14_336, 65_536, 262_144, experts=16, top_k=2, expert_dim=14_336,
                          dense_layers=tuple(range(0, 32, 2)), nope_layers=(4, 12, 20, 28),
                          mamba1_layers=tuple(i for i in range(32) if i % 8 != 4), mamba1_inner=8_192,
                          mamba1_state=16, mamba1_dt_rank=256, conv_width=4),
    # Kimi Linear 48B-A3B (moonshotai/Kimi-Linear-48B-A3B-Instruct's config.json): 27 blocks of d 2,304, Kimi delta
    # attention in 20 (h_kda 32 heads of 128, a 4-tap convolution), latent attention without RoPE in blocks 3, 7, …,
    # 23 and 26 (32 heads, d_c 512, q from x directly, d_nope = d_v = 128, d_R 64); one dense block of 9,216, then 256
    # experts of 1,024, 8 per token, and one shared; a 1,048,576-token context; 49,122,675,072 parameters:
    # transformers' module ("48B total" on its card, 49.1B on the hub)
    "kimi-linear-48b-a3b": _modern(27, 2304, 32, None, 9_216, 163_840, 1_048_576, attention="eager", experts=256,
                                   top_k=8, expert_dim=1_024, shared_experts=1, dense_layers=(0,), latent_dim=512,
                                   rope_dim=64, nope_dim=128, value_dim=128,
                                   nope_layers=(3, 7, 11, 15, 19, 23, 26),
                                   kda_layers=tuple(i for i in range(27) if i not in (3, 7, 11, 15, 19, 23, 26)),
                                   kda_heads=32, kda_head_dim=128, conv_width=4),
    # a parallel block (Cohere's c4ai-command-r-v01): one LayerNorm without bias per block read by attention and the MLP
    "command-r": _modern(40, 8192, 64, 64, 22_528, 256_000, 8_192, tie=True, norm="layernorm", parallel=True),
}
WINDOW_PRESETS = ("mistral-7b-v0.1", "gemma-3-1b", "gemma-3-27b", "gpt-oss-20b")  # on both pages (issue 27)
MLA_PRESETS = ("deepseek-v3", "deepseek-v3.2")  # latent attention (issue 27), sparse (issue 41): on both pages
LINEAR_PRESETS = ("qwen3-next-80b-a3b", "kimi-linear-48b-a3b", "jamba-v0.1")  # hybrids with a fixed state (issue 41): the live page's menu, and the page written for one where it shows them
FAMILY_PRESETS = ("llama4-scout", "glm-4.5-air", "minimax-m2", "phi-4-mini", "smollm3-3b")  # issue 40's, both pages
PRESETS.update({name: TABLE_PRESETS[name] for name in (*WINDOW_PRESETS, *MLA_PRESETS, *FAMILY_PRESETS,
                                                          *LINEAR_PRESETS)})
ALL_PRESETS: dict[str, Config] = {**PRESETS, **TABLE_PRESETS}  # what --preset takes


def config_dict(cfg: Config) -> dict[str, object]:
    """The fields and derived symbols, for JSON: GPT-2's recipe as the lesson's eight fields and d_head (as the
    lesson's files have always had them); any other recipe adds its fields and the values in use of h_kv, d_ff; a
    mixture of experts its fields, symbols and block kinds; Gemma's and gpt-oss's extras and latent attention their
    fields; a window its fields, W, L_W, T_W and each block's attention (`attn_kinds`); Gated DeltaNet its fields and
    L_lin."""
    def values(*groups: tuple[str, ...]) -> dict[str, object]:
        return {f: getattr(cfg, f) for group in groups for f in group}

    if cfg.gpt2_recipe:
        return {**values(FIELDS), "d_head": cfg.d_head}
    extras = values(*(names("extras", family) for family in cfg.extras_of))
    # the recipe's fields; one with no control of its own (a part's flag a link or a preset sets) where it is set
    recipe = [f.name for f in LINKED if f.group == "recipe" and (f.control or getattr(cfg, f.name) != f.default)]
    return {**values(FIELDS, recipe), **moe.sizes(cfg), **extras, **latent.sizes(cfg), **window.sizes(cfg),
            **delta.sizes(cfg), **mamba.sizes(cfg), **kda.sizes(cfg), **mamba1.sizes(cfg)}


# --- a Hugging Face config.json, read in (model.hf reads it as transformers does; the bounds are checked here) ------
HF_MODEL_TYPES = hf.MODEL_TYPES
HFConfigError = hf.HFConfigError
HF_T = 8_192  # T of a model read from a config.json, unless given: min(T_max, 8,192), the presets' batch shape
HF_ATTENTION = "fused"  # a config.json's model runs F.scaled_dot_product_attention (transformers' default, "sdpa")


@dataclass(frozen=True)
class HFModel:
    """A config.json read in: the `Config` at a batch shape, and what the reading did, in words (`notes`)."""

    config: Config
    notes: tuple[str, ...]


def read_hf(doc: Mapping, B: int = 8, T: int | None = None) -> HFModel:
    """The `Config` of a parsed config.json (`model.hf.read`: transformers' defaults per model type, keys the type
    lacks ignored) at batch size B and T = min(T_max, 8,192) unless given, with fused attention (`HF_ATTENTION`:
    transformers runs every type it reads with F.scaled_dot_product_attention by default), and notes: the defaults
    taken, the keys ignored, and T when it is below the context.

    Raises `HFConfigError` (a ValueError) in one line naming the key: a mistyped or missing value, a size out of
    `BOUNDS`, a rule `Config` refuses (h must divide d, ...), or a key that would change what is built but is not
    modelled (cross-attention, partial rotary, a window transformers' mask and cache disagree on). Never TypeError,
    KeyError or RecursionError."""
    reading = hf.read(doc)
    fields, keys = dict(reading.fields), reading.keys
    for f in SIZES.values():  # the extras' values (Gemma's query_scale): Config's own message
        value = fields.get(f.name)
        if value is None or f.name not in keys or f.group == "extras":
            continue
        lo, hi = f.bounds
        if not lo <= value <= hi:
            raise HFConfigError(f"config.json: {keys[f.name]}={hf.show(value)} is out of range: {f.key} ({f.doc}) "
                                f"must be from {lo:,} to {hi:,}")
    T_max, T_given = fields["T_max"], T
    T = min(T_max, HF_T) if T is None else T
    notes = list(reading.notes)
    attention = HF_ATTENTION
    if fields.get("sinks"):  # transformers runs gpt-oss eager (on the CPU: it has no sdpa)
        attention = "eager"
        notes.append("eager attention: the sinks join each softmax row, which a fused kernel here cannot take "
                     "(transformers runs this model eager; it has no sdpa)")
    if fields.get("latent_dim") is not None:  # latent attention: q and k are d_nope + d_R wide, v d_v (notes: hf)
        attention = "eager"
    if fields.get("attn_softcap") is not None:  # transformers runs Gemma 2 eager: sdpa cannot soft-cap its scores
        attention = "eager"
        notes.append(f"eager attention: the scores are soft-capped ({keys['attn_softcap']} = "
                     f"{fields['attn_softcap']:g}), which a fused kernel cannot do (transformers runs this model eager)")
    try:
        cfg = Config(B=B, T=T, attention=attention, **fields)
    except ValueError as e:  # a rule between fields (h must divide d, ...): name their keys too
        named = [f"{symbol} = {key}" for symbol, key in _symbol_keys(keys).items() if re.search(rf"\b{symbol}=", str(e))]
        where = f" (config.json: {', '.join(named)})" if named else ""
        raise HFConfigError(f"config.json: {e}{where}") from None
    if cfg.T < T_max:
        chosen = "T set to" if T_given is None else "T ="
        notes.append(f"{chosen} {cfg.T:,} of the {T_max:,}-token context (T_max, from {keys['T_max']})")
    return HFModel(cfg, tuple(notes))


def _symbol_keys(keys: Mapping[str, str]) -> dict[str, str]:
    """Symbol -> the config.json key that set it ("d_ff" -> "intermediate_size", "k" -> "num_experts_per_tok")."""
    return {FIELD[field].key if field in FIELD else field: key for field, key in keys.items()}


def from_hf(doc: Mapping, B: int = 8, T: int | None = None) -> Config:
    """The `Config` of a parsed Hugging Face config.json of a model type in `model.hf.MODEL_TYPES`, or of a
    multimodal wrapper's text model (`model.hf.WRAPPERS`) (`read_hf`, without its notes). Nothing is fetched."""
    return read_hf(doc, B, T).config
