"""Mamba 2 (IBM Granite 4.0-H's state-space layer, transformers' GraniteMoeHybridMambaLayer), in place of attention in
the blocks `mamba_layers` lists: a block with no (B, h, T, T) scores and no growing cache. Each of its h_ssm heads
keeps a fixed state S, a (d_ssm, d_state) matrix: a token decays it by exp(Δ·A) (A < 0, one per head; Δ the token's
own step, softplus(dt + dt_bias)), writes Δ·x ⊗ B to it (x: the head's d_ssm inputs, B: d_state features read from
the token), and reads it with C (y = S C + D·x). B and C are shared by the h_ssm/g_ssm heads of each of g_ssm groups.
Cached, the state stays (B, h_ssm, d_ssm, d_state) whatever T, beside a causal convolution's last d_conv positions.

Per block (transformers' torch path, `torch_forward`):
- x (B, T, d) -> the gate z (h_ssm·d_ssm), the convolution's channels x, B, C (h_ssm·d_ssm + 2g_ssm·d_state) and the
  step dt (h_ssm) by one matrix in_proj (d, 2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm), a bias where `ssm_bias` says;
- x, B and C through a depthwise causal convolution of d_conv taps (a bias per channel where `ssm_bias` says) and
  SiLU: transformers pads both ends by d_conv − 1, runs it over T + d_conv − 1 positions and keeps the first T;
- the chunked scan (SSD, `chunk_scan`): T padded to T_pad, whole chunks of Q tokens; within each chunk C Bᵀ (a
  (Q, Q) matrix per head, masked by the decays) times x; each chunk's state; the states carried over the chunks by a
  (T_pad/Q + 1)² matrix of decays; each chunk's start state read by C; D·x added;
- y times SiLU(z), RMS-normed per group of h_ssm·d_ssm/g_ssm features, times a gain of h_ssm·d_ssm (the gated norm),
  and projected back by out_proj (h_ssm·d_ssm, d). `ssm_norm` says which: "gated" (Granite's RMSNormGated: gate, then
  norm), "norm_gate" (the norm first, then the gate: Falcon-H1's mamba_rms_norm with mamba_norm_before_gate) or
  "none" (y·SiLU(z) alone, no gain: Falcon-H1's default, mamba_rms_norm false).

FLOPs are torch's flop counter's (`model.passes`): the projections, the convolution (its bias uncounted, as torch's
formula has none) and the scan's five einsums (batched matmuls).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from ..expr import E, Expr
from ..fields import Field, below
from ..figures import Line, line
from ..notation import SYMBOL_DOCS
from ..taps import Tap
from . import attention

if TYPE_CHECKING:
    from ..budgeting import Formulas
    from ..config import Config

KEY = "ssm"  # a Mamba 2 block's kind ends "_ssm" ("moe_ssm"), its mixer is `Block.ssm`, its lines "params/ssm…"
BLOCKS = "mamba_layers"  # the field that lists its blocks
COUNT = "L_ssm"  # the symbol that numbers its blocks
NAME = "Mamba 2"


def _width(name: str, symbol: str, hi: int, example: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="linear", needs="mamba_layers", control=False)


BIASES = ("conv", "none", "proj", "all")  # transformers' mamba_conv_bias and mamba_proj_bias: (conv, proj)
GATES = ("gated", "norm_gate", "none")  # y·SiLU(z) then the norm (Granite), the norm then ·SiLU(z), or no norm
FIELDS = (  # GraniteMoeHybridConfig's defaults: 128 heads, d_state 256, 1 group, d_conv 4, chunks of 256
    Field("mamba_layers", "blocks", "blocks whose mixer is Mamba 2 (a selective state space with a fixed state) in "
          "attention's place, by index (default none)", default=(), group="linear", control=False),
    _width("ssm_heads", "h_ssm", 65_536, "128"),
    _width("ssm_head_dim", "d_ssm", 65_536, "64"),
    _width("ssm_state", "d_state", 65_536, "256"),
    _width("ssm_groups", "g_ssm", 65_536, "1"),
    _width("ssm_chunk", "Q", 65_536, "256"),
    Field("ssm_bias", "choice", "Mamba 2's biases: conv (the convolution's, transformers' default), none, proj (in_proj "
          "and out_proj) or all", default="conv", choices=BIASES, group="linear", needs="mamba_layers",
          control=False),
    Field("ssm_norm", "choice", "Mamba 2's output norm: gated (y·SiLU(z), then RMS-normed per group with a gain, "
          "Granite's), norm_gate (normed with a gain, then ·SiLU(z)) or none (y·SiLU(z) alone, no gain: Falcon-H1's "
          "mamba_rms_norm false)", default="gated", choices=GATES, group="linear", needs="mamba_layers", control=False),
)
SIZES = tuple(f.name for f in FIELDS[1:6])
STAND_IN = {"ssm_heads": 2, "ssm_head_dim": 4, "ssm_state": 4, "ssm_groups": 1, "ssm_chunk": 4, "conv_width": 4}  # small
# sizes of a stand-in model of the same tensors (`model.recipe_rows`)
CONV_WIDTH = "conv_width"  # d_conv: the causal convolution's taps, Gated DeltaNet's field (`model.parts.delta`)


def check(cfg: Config) -> None:
    """Mamba 2's fields together (ValueError naming the problem and the fix)."""
    if not cfg.mamba_layers:
        for name in SIZES:
            if getattr(cfg, name) is not None:
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but mamba_layers is not: {name} is a size of "
                                 "Mamba 2 blocks; list them in mamba_layers or drop " + name)
        return
    below("mamba_layers", cfg.mamba_layers, cfg.L)
    if cfg.linear_layers:
        raise ValueError("mamba_layers and linear_layers are both set: a model of Mamba 2 and Gated DeltaNet blocks "
                         "together is not modelled; keep one of them")
    if cfg.L_ssm == cfg.L and not cfg.ssm_parallel:
        raise ValueError(f"mamba_layers lists every block (L={cfg.L:,}): a model of Mamba 2 blocks alone is not "
                         "modelled yet (its figures compare them with the attention blocks); keep one attention block")
    for f in FIELDS[1:6]:
        if getattr(cfg, f.name) is None:
            raise ValueError(f"Mamba 2 blocks (mamba_layers) need {f.symbol}: set {f.name} ({f.doc}; Granite 4.0-H: "
                             f"{f.example})")
    if cfg.conv_width is None:
        raise ValueError("Mamba 2 blocks (mamba_layers) need d_conv: set conv_width (the causal convolution's taps; "
                         "Granite 4.0-H: 4)")
    if cfg.ssm_heads % cfg.ssm_groups:
        raise ValueError(f"h_ssm={cfg.ssm_heads:,} is not a multiple of g_ssm={cfg.ssm_groups:,}: each group's B and "
                         "C serve h_ssm/g_ssm heads; choose g_ssm dividing h_ssm")
    if cfg.mla or cfg.window is not None or cfg.sinks:
        raise ValueError("Mamba 2 blocks beside latent attention, a window or sinks are not modelled: drop mamba_layers "
                         "or those")
    if set(cfg.nope_layers) & set(cfg.mamba_layers):
        raise ValueError("nope_layers lists Mamba 2 blocks: NoPE blocks are attention blocks without RoPE; list only "
                         "blocks that mamba_layers does not")
    if len({cfg.mlp_kinds[i] for i in cfg.mamba_layers}) > 1:
        raise ValueError("Mamba 2 blocks with dense MLPs and with a mixture of experts in one model are not modelled: "
                         "make the mamba_layers blocks' MLPs of one kind (moe_step, dense_layers)")


def present(cfg: Config) -> bool:
    """Some blocks mix with Mamba 2."""
    return bool(cfg.mamba_layers)


def blocks(cfg: Config) -> tuple[int, ...]:
    """The blocks it mixes (`mamba_layers`)."""
    return cfg.mamba_layers


def chunk(cfg: Config) -> int:
    """Tokens per chunk of the scan: Q (`ssm_chunk`)."""
    return cfg.ssm_chunk


def beside(cfg: Config) -> bool:
    """Mamba 2 mixes beside attention in every block (`model.parts.hybrid`'s ssm_parallel), not in its place."""
    return cfg.ssm_parallel


def count(cfg: Config) -> str:
    """The symbol of its blocks: L_ssm, or L where it is beside attention in every block."""
    return "L" if beside(cfg) else COUNT


def attention_count(cfg: Config) -> str:
    """The symbol of the attention blocks beside it: L − L_ssm, or L where every block has both."""
    return "L" if beside(cfg) else "L − L_ssm"


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", Mamba 2 on 36", ", Mamba 2 beside attention"."""
    if not present(cfg):
        return ""
    return ", Mamba 2 beside attention" if beside(cfg) else f", Mamba 2 on {cfg.L_ssm}"


def sizes(cfg: Config) -> dict[str, object]:
    """Its fields and L_ssm in a configuration's JSON, none without it."""
    if not present(cfg):
        return {}
    return {"mamba_layers": list(cfg.mamba_layers), **{n: getattr(cfg, n) for n in SIZES},
            "conv_width": cfg.conv_width, "ssm_bias": cfg.ssm_bias, "ssm_norm": cfg.ssm_norm,
            "ssm_parallel": cfg.ssm_parallel, "L_ssm": cfg.L_ssm}


def structure(cfg: Config) -> tuple[object, ...]:
    """What of it decides a pass's tensors beside its blocks' kinds (`model.memory.Structure.ssm`): its output norm
    and whether it is beside attention; () without it."""
    return (cfg.ssm_norm, cfg.ssm_parallel) if present(cfg) else ()


def stand_in(ssm: tuple[object, ...]) -> dict[str, object]:
    """The fields of a `structure` for a stand-in model of the same tensors (`model.recipe_rows`)."""
    return dict(zip(("ssm_norm", "ssm_parallel"), ssm))


def symbols(cfg: Config) -> dict[str, int]:
    """Its symbols' values (`Config.symbols`)."""
    return {"L_ssm": cfg.L_ssm, "h_ssm": cfg.ssm_heads, "d_ssm": cfg.ssm_head_dim, "d_state": cfg.ssm_state,
            "g_ssm": cfg.ssm_groups, "Q": cfg.ssm_chunk, "d_conv": cfg.conv_width, "T_pad": cfg.T_pad, "n_c": cfg.n_c}


def conv_bias(cfg: Config) -> bool:
    """The convolution has a bias per channel (transformers' mamba_conv_bias)."""
    return cfg.ssm_bias in ("conv", "all")


def proj_bias(cfg: Config) -> bool:
    """in_proj and out_proj have biases (transformers' mamba_proj_bias)."""
    return cfg.ssm_bias in ("proj", "all")


# --- its parameters and FLOPs, as expressions of the symbols ----------------------------------------------------------
CONV = E("(h_ssm·d_ssm + 2g_ssm·d_state)")  # the convolution's channels: x, B and C
IN = E("(2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm)")  # in_proj's outputs: z, x, B, C and dt


def weights(cfg: Config) -> Expr:
    """One block's matrices: in_proj (d, 2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm), out_proj (h_ssm·d_ssm, d), and the
    convolution's d_conv taps per channel."""
    return E("d·{i} + h_ssm·d_ssm·d + d_conv·{c}", i=IN, c=CONV)


def normed(cfg: Config) -> bool:
    """Its output is RMS-normed with a gain (`ssm_norm` gated or norm_gate; none: y·SiLU(z) alone)."""
    return cfg.ssm_norm != "none"


def extras(cfg: Config) -> list[Expr]:
    """Its parameters that no matmul or convolution uses: A_log, D and dt_bias (h_ssm each), the norm's gain
    (h_ssm·d_ssm, where `ssm_norm` has one), and the biases `ssm_bias` names (the convolution's, in_proj's and
    out_proj's)."""
    terms = ["3h_ssm" + (" + h_ssm·d_ssm" if normed(cfg) else ""), *(["{c}"] if conv_bias(cfg) else []),
             *(["{i} + d"] if proj_bias(cfg) else [])]
    return [E(" + ".join(terms), c=CONV, i=IN)]


def projections(cfg: Config) -> Expr:
    """The projections' FLOPs per token: 2 per weight of in_proj and out_proj."""
    return E("2d·{i} + 2h_ssm·d_ssm·d", i=IN)


def conv_flops(cfg: Config) -> Expr:
    """The convolution's FLOPs per token as transformers runs it: 2·d_conv per channel and position, over T + d_conv
    − 1 positions (padded at both ends) for T tokens."""
    return E("2d_conv·{c}·(T + d_conv − 1)/T", c=CONV)


def rule_flops(cfg: Config) -> Expr:
    """The chunked scan's matmul FLOPs per token: per head and chunk of Q tokens, C Bᵀ (2Q²·d_state), its product with
    x (2Q²·d_ssm), the chunk's state (2Q·d_ssm·d_state) and its read by C (2Q·d_ssm·d_state); and the states carried
    over the T_pad/Q chunks by a (T_pad/Q + 1)² matrix of decays (2(T_pad/Q + 1)²·d_ssm·d_state); T_pad/Q chunks for
    T tokens. torch's einsum multiplies elementwise where the dim it sums over is 1 wide (no matmul, no FLOP counted):
    with d_state = 1 the two products over d_state drop out, with Q = 1 the two over a chunk's positions."""
    per_chunk = [*(["Q·d_state + d_ssm·d_state"] if cfg.ssm_state > 1 else []),
                 *(["Q·d_ssm + d_ssm·d_state"] if cfg.ssm_chunk > 1 else [])]
    chunks = "2T_pad·({c}) + " if per_chunk else ""
    return E("h_ssm·(" + chunks + "2(T_pad/Q + 1)²·d_ssm·d_state)/T", c=E(" + ".join(per_chunk) or "0"))


def flops(cfg: Config) -> Expr:
    """One block's FLOPs per token as the code runs (`model.passes`): projections, convolution and the chunked scan."""
    return E("{p} + {c} + {r}", p=projections(cfg), c=conv_flops(cfg), r=rule_flops(cfg))


SAYS = {  # the words Mamba 2 adds to the budget's lines (`model.parts.says`)
    "budget/scored": ", in the L − L_ssm attention blocks; and the chunked scan's products in the L_ssm Mamba 2 blocks "
                     "(C Bᵀ and its product with x within each chunk of Q, the chunks' states, their carry and read)",
    "budget/share": "the share of the measured forward FLOPs in products of activations: attention's scores and the "
                    "Mamba 2 scan's",
    "memory/saved": "; in the L_ssm Mamba 2 blocks, the chunked scan's tensors of T_pad tokens, its (Q, Q) products "
                    "per chunk and the n_c + 1 states carried by an (n_c + 1)² matrix of decays",
    "budget/blocks": "attention or Mamba 2",
    "infer/kv_cache": " in the attention blocks, and each Mamba 2 block's states whatever T (convolution at 16 bits, "
                      "SSM state at fp32)",
    "infer/decode_attn": " in the attention blocks, and the Mamba 2 blocks' products with their state (written once, "
                         "read once)",
    "budget/T_equal": "T at which the attention blocks' q kᵀ and attn @ v equal every other FLOP of the blocks (the "
                      "Mamba 2 blocks' taken at this T)",
}


SAYS_BESIDE = {  # its words where it is beside attention in every block (`said`)
    **SAYS,
    "budget/scored": ", in every block; and the chunked scan's products of Mamba 2 beside it in every block (C Bᵀ and "
                     "its product with x within each chunk of Q, the chunks' states, their carry and read)",
    "budget/blocks": "attention and Mamba 2",
    "memory/saved": "; and in every block, Mamba 2's chunked scan's tensors of T_pad tokens, its (Q, Q) products per "
                    "chunk and the n_c + 1 states carried by an (n_c + 1)² matrix of decays",
    "infer/kv_cache": " in every block, and each block's Mamba 2 states beside them, whatever T (convolution at 16 "
                      "bits, SSM state at fp32)",
    "infer/decode_attn": " in every block, and Mamba 2's products with its state in every block (written once, read "
                         "once)",
    "budget/T_equal": "T at which attention's q kᵀ and attn @ v equal every other FLOP of the blocks (Mamba 2's beside "
                      "it taken at this T)",
}


def said(cfg: Config) -> dict[str, str]:
    """The words it adds elsewhere (`model.parts.says`): `SAYS`, or `SAYS_BESIDE` beside attention."""
    return SAYS_BESIDE if beside(cfg) else SAYS


def label(cfg: Config) -> str:
    return ("Mamba 2, one block: in_proj (d, 2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm), the causal convolution (d_conv "
            "taps of x, B and C" + (", and its bias" if conv_bias(cfg) else "") + "), A_log, D and dt_bias, "
            + ("the gated norm and " if cfg.ssm_norm == "gated" else "the norm's gain and " if normed(cfg) else "")
            + "out_proj (h_ssm·d_ssm, d)" + (", with biases" if proj_bias(cfg) else ""))


def flop_steps(f: Formulas) -> list[Line]:
    """The step from 2N to the measured FLOPs that the convolution adds (`model.budgeting.budget_lines`)."""
    if not present(f.cfg):
        return []
    return [line("flops/steps/ssm_conv", "+ the Mamba 2 convolution's d_conv − 1 padded positions: transformers "
                 "convolves T + d_conv − 1 positions and keeps T",
                 E("2{n}·d_conv·{c}·(d_conv − 1)/T", n=E(count(f.cfg)), c=CONV), f.symbols, "FLOP")]


# --- its state: what inference keeps, whatever T ----------------------------------------------------------------------
def state(cfg: Config) -> Expr:
    """One block's SSM state per sequence, in elements: h_ssm heads of (d_ssm, d_state)."""
    return E("h_ssm·d_ssm·d_state")


def conv_state(cfg: Config) -> Expr:
    """One block's convolution state per sequence, in elements: the last d_conv positions of x, B and C
    (transformers' LinearAttentionLayer keeps d_conv of them)."""
    return E("d_conv·{c}", c=CONV)


STATE_BYTES = 4  # transformers' torch path computes and keeps the SSM state in fp32, whatever the model's dtype


def states(cfg: Config, size: int) -> Expr:
    """The L_ssm blocks' (every block's, beside attention) states for B sequences in bytes: the convolution's at
    `size` bytes an element, the SSM state's at fp32 (`STATE_BYTES`)."""
    return E("{n}·B·({c}·{b} + {r}·{f})", n=E(count(cfg)), c=conv_state(cfg), b=size, r=state(cfg), f=STATE_BYTES)


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """What inference keeps at `dtype` (`size` bytes an element) beside Mamba 2 blocks, as transformers' cache holds
    it after a prefill of B sequences of T tokens: K and V of the L − L_ssm attention blocks, and each Mamba 2 block's
    LinearAttentionLayer: the convolution state (B, h_ssm·d_ssm + 2g_ssm·d_state, d_conv) at `dtype` and the SSM state
    (B, h_ssm, d_ssm, d_state) at fp32. Then one more token's bytes, the parts, and the all-attention twin's cache and
    the ratio."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    if beside(cfg):
        return beside_cache_lines(cfg, dtype, size, s)
    kv = E("{e}·{b}", e=attention.cache(cfg, E("(L − L_ssm)·BT")), b=size)
    whole = E("{kv} + {st}", kv=kv, st=states(cfg, size))
    twin = E("{e}·{b}", e=attention.cache(cfg, E("LBT")), b=size)
    return [
        line("memory/kv_cache", f"cache at {dtype}: keys and values of h_kv heads of d_head in the L − L_ssm = "
             f"{cfg.L - cfg.L_ssm:,} attention blocks, B sequences of T tokens, and the L_ssm = {cfg.L_ssm:,} Mamba 2 "
             "blocks' states, whatever T", whole, s, "bytes"),
        line("memory/kv_cache_per_token", f"cache per token of context at {dtype} (one sequence, one more token): the "
             "attention blocks' K and V only, a Mamba 2 block's state stays as it is",
             E("{e}·{b}", e=attention.cache(cfg, E("(L − L_ssm)")), b=size), s, "bytes"),
        line("memory/kv_cache_attention", "of it, the attention blocks' K and V: all T tokens each", kv, s, "bytes"),
        line("memory/state_conv", f"of it, the Mamba 2 blocks' convolution states at {dtype}: the last d_conv positions "
             "of x, B and C, (B, h_ssm·d_ssm + 2g_ssm·d_state, d_conv) each",
             E("L_ssm·B·{c}·{b}", c=conv_state(cfg), b=size), s, "bytes"),
        line("memory/state_ssm", "of it, their SSM states at fp32 (transformers keeps them so at any dtype): (B, h_ssm, "
             "d_ssm, d_state) each", E("L_ssm·B·{c}·{f}", c=state(cfg), f=STATE_BYTES), s, "bytes"),
        line("memory/kv_cache_all_attention", f"the all-attention twin's cache at {dtype}: attention in every block, "
             "keys and values of all T tokens", twin, s, "bytes"),
        line("memory/kv_cache_lin_ratio", "Mamba 2 divides the cache by (the twin's over this one)",
             E("({t}) / ({w})", t=twin, w=whole), s, "ratio"),
    ]


def beside_cache_lines(cfg: Config, dtype: str, size: int, s: dict[str, int]) -> list[Line]:
    """`cache_lines` where Mamba 2 is beside attention in every block: each of the L blocks keeps K and V of all T
    tokens (transformers' LinearAttentionAndFullAttentionLayer) and Mamba 2's two states; then the twin without
    Mamba 2 (attention alone in every block) and the states' share."""
    kv = E("{e}·{b}", e=attention.cache(cfg, E("LBT")), b=size)
    whole = E("{kv} + {st}", kv=kv, st=states(cfg, size))
    return [
        line("memory/kv_cache", f"cache at {dtype}: in each of the L = {cfg.L:,} blocks, keys and values of h_kv heads "
             "of d_head, B sequences of T tokens, and Mamba 2's states beside them, whatever T", whole, s, "bytes"),
        line("memory/kv_cache_per_token", f"cache per token of context at {dtype} (one sequence, one more token): K "
             "and V in every block; Mamba 2's states stay as they are", E("{e}·{b}", e=attention.cache(cfg, E("L")),
                                                                          b=size), s, "bytes"),
        line("memory/kv_cache_attention", "of it, K and V: all T tokens in every block", kv, s, "bytes"),
        line("memory/state_conv", f"of it, Mamba 2's convolution states at {dtype}, one per block: the last d_conv "
             "positions of x, B and C, (B, h_ssm·d_ssm + 2g_ssm·d_state, d_conv) each",
             E("L·B·{c}·{b}", c=conv_state(cfg), b=size), s, "bytes"),
        line("memory/state_ssm", "of it, Mamba 2's SSM states at fp32 (transformers keeps them so at any dtype), one "
             "per block: (B, h_ssm, d_ssm, d_state) each", E("L·B·{c}·{f}", c=state(cfg), f=STATE_BYTES), s, "bytes"),
        line("memory/kv_cache_all_attention", f"the twin without Mamba 2's cache at {dtype}: attention alone in every "
             "block, keys and values of all T tokens", kv, s, "bytes"),
        line("memory/kv_cache_state_share", "Mamba 2's states' share of this cache", E("({st}) / ({w})",
             st=states(cfg, size), w=whole), s, "share"),
    ]


# --- what it keeps for backward (`model.memory.saved_formula`) --------------------------------------------------------
def saved_parts(cfg: Config, size: int) -> dict[int, Expr]:
    """The elements one Mamba 2 mixer keeps for backward, by element size, for a pass at `size` bytes an element (2:
    bf16, fp16; 4: fp32): the storages first saved while it runs (the block's normed input x included), measured on
    its module and checked at every probe of `model.memory.saved_formula` (tests at T across chunk boundaries, both
    dtypes, every `ssm_norm`, against autograd on real CPU tensors).

    At the model's dtype: x (B, T, d), in_proj's output (B, T, 2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm), the
    convolution's output over T + d_conv − 1 positions (B, h_ssm·d_ssm + 2g_ssm·d_state, ·) and dt's two (B, T,
    h_ssm); at 16 bits also y·SiLU(z)'s z (B, T, h_ssm·d_ssm), and without the norm its product. At fp32, whatever the
    dtype: A_log's exp and its negation (h_ssm each); x times Δ and the scan, per position (B, T_pad, h_ssm, ·): four
    of d_ssm (x padded for D·x, Δ·x, its copy laid out for the chunks' states, the states' read by C), five of d_state (B and C, their
    copies laid out per head, B's decay to its chunk's end), three of Q (the chunks' decays, C Bᵀ and their product)
    and two of one (the decays to a chunk's end and from its start); the states, n_c + 1 of (B, h_ssm, d_ssm, d_state)
    carried by a (B, h_ssm, n_c + 1, n_c + 1) matrix of decays and the n_c each chunk reads; the scan's output (B, T,
    h_ssm·d_ssm), and with the norm the gate's SiLU(z), its product and the norm's statistics (B, T, g_ssm). A (Q, Q)
    and an (n_c + 1)² bool mask, two each. An fp32 pass keeps the convolution's SiLU output (B, T, h_ssm·d_ssm +
    2g_ssm·d_state), the casts the 16-bit pass keeps are no copies."""
    scan = E("2h_ssm + B·(4h_ssm·d_ssm·T_pad + 5h_ssm·d_state·T_pad + 3h_ssm·Q·T_pad + 2h_ssm·T_pad + "
             "h_ssm·(n_c² + 2n_c + 1) + h_ssm·d_ssm·d_state·(2n_c + 1))")
    own = "B·(T·d + T·{i} + (T + d_conv − 1)·{c} + {t}T·h_ssm + {z}T·h_ssm·d_ssm)"  # at the model's dtype
    mask = {1: E("2Q² + 2n_c² + 4n_c + 2")}  # the (Q, Q) and (n_c + 1)² causal masks
    normed = cfg.ssm_norm != "none"
    if size != STATE_BYTES:
        kept = "B·(T·g_ssm + 2T·h_ssm + 6T·h_ssm·d_ssm)" if normed else "B·(2T·h_ssm + 2T·h_ssm·d_ssm)"
        return {size: E(own, i=IN, c=CONV, t=2, z=1 if normed else 2), STATE_BYTES: E("{s} + " + kept, s=scan), **mask}
    gate = "T·g_ssm + 5T·h_ssm·d_ssm" if normed else "3T·h_ssm·d_ssm"
    return {STATE_BYTES: E("{s} + B·(T·{c} + T·d + T·{i} + (T + d_conv − 1)·{c} + 3T·h_ssm + " + gate + ")", s=scan,
                           c=CONV, i=IN), **mask}


PROBES = ((3, 2, 5, 1, 4, 3), (4, 3, 2, 2, 2, 4), (6, 2, 3, 3, 8, 2), (2, 5, 4, 2, 4, 5))  # (h_ssm, d_ssm, d_state,
# g_ssm, Q, d_conv) at `model.memory`'s four recipe probes: Q below T so that some probes run two chunks or more


def probe(i: int, structure: object) -> dict[str, object]:
    """Its fields at `model.memory`'s recipe probe i (the blocks' kinds are set beside them), its `structure` kept."""
    return {**dict(zip(("ssm_heads", "ssm_head_dim", "ssm_state", "ssm_groups", "ssm_chunk", "conv_width"), PROBES[i])),
            **stand_in(structure.ssm)}


# --- the module in the real forward pass ------------------------------------------------------------------------------
def segment_sum(a: torch.Tensor) -> torch.Tensor:
    """(…, Q) log-decays -> (…, Q, Q): entry (i, j) the sum of a over positions j + 1 … i for j ≤ i, −inf above the
    diagonal (transformers' segment_sum: cumulative sums of a masked copy, stable for long chunks)."""
    Q = a.shape[-1]
    a = a[..., None].expand(*a.shape, Q)
    strict = torch.ones(Q, Q, dtype=torch.bool, device=a.device).tril(-1)
    out = a.masked_fill(~strict, 0).cumsum(dim=-2)
    return out.masked_fill(~torch.ones(Q, Q, dtype=torch.bool, device=a.device).tril(), -torch.inf)


def _chunks(t: torch.Tensor, pad: int, Q: int) -> torch.Tensor:
    """(B, T, …) padded to T + pad positions and cut into chunks: (B, T_pad/Q, Q, …)."""
    t = F.pad(t, (0, 0) * (t.dim() - 2) + (0, pad))
    return t.reshape(t.shape[0], -1, Q, *t.shape[2:])


def _laid(t: torch.Tensor, *dims: int) -> torch.Tensor:
    """t permuted to `dims`, always copied to a new contiguous storage, laid out as an einsum over the chunks reads it
    (batch dims first, the summed dim next to the free one): the einsum then copies nothing itself, so what backward
    keeps is the same tensors whatever B, T_pad/Q or h_ssm (its own copy of a permuted view is skipped where such a
    view happens to be contiguous, as where one of them is 1; `saved_parts`)."""
    return t.permute(*dims).clone(memory_format=torch.contiguous_format)


def chunk_scan(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, D: torch.Tensor,
               Q: int, state: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The SSD scan by chunks of Q tokens, transformers' mamba2_chunk_scan: x (B, T, h_ssm, d_ssm); dt (B, T, h_ssm),
    already softplus(dt + dt_bias) and clamped; A (h_ssm,) < 0; B, C (B, T, g_ssm, d_state); D (h_ssm,). -> y (B, T,
    h_ssm, d_ssm) fp32 and the final state (B, h_ssm, d_ssm, d_state) fp32, from `state` (zeros where None)."""
    T, h = x.shape[1], x.shape[2]
    x = x.float()
    B, C = (t.float().repeat_interleave(h // t.shape[2], dim=2, output_size=h) for t in (B, C))  # (B, T, h_ssm, d_state)
    pad = (Q - T % Q) % Q
    skip = D[..., None] * F.pad(x, (0, 0, 0, 0, 0, pad))  # D·x, (B, T_pad, h_ssm, d_ssm)
    x = x * dt[..., None].float()  # Δ·x
    a = A.to(x.dtype) * dt.float()  # Δ·A, (B, T, h_ssm)
    x, B, C = (_chunks(t, pad, Q) for t in (x, B, C))  # (B, T_pad/Q, Q, h_ssm, ·)
    a = _chunks(a, pad, Q).permute(0, 3, 1, 2)  # (B, h_ssm, T_pad/Q, Q)
    a_sum = a.cumsum(dim=-1)
    decay = segment_sum(a).exp()  # (B, h_ssm, T_pad/Q, Q, Q): from position j to i within a chunk
    scores = torch.einsum("bclhn,bcshn->bclsh", C, B)  # C Bᵀ per head and chunk, (B, T_pad/Q, Q, Q, h_ssm)
    y_diag = torch.einsum("bclsh,bcshp->bclhp", scores * decay.permute(0, 2, 3, 4, 1), x)
    to_end = (a_sum[..., -1:] - a_sum).exp()  # each position's decay to its chunk's end, (B, h_ssm, T_pad/Q, Q)
    B_end = _laid(B, 0, 3, 1, 2, 4) * to_end[..., None]  # (B, h_ssm, T_pad/Q, Q, d_state)
    states = torch.einsum("bhcpl,bhcln->bhcpn", _laid(x, 0, 3, 1, 4, 2), B_end)  # each chunk's own state
    start = torch.zeros_like(states[:, :, :1]) if state is None else state[:, :, None].to(states)
    states = torch.cat([start, states], dim=2)  # (B, h_ssm, T_pad/Q + 1, d_ssm, d_state)
    carry = segment_sum(F.pad(a_sum[..., -1], (1, 0))).exp()  # (B, h_ssm, T_pad/Q + 1, T_pad/Q + 1)
    states = torch.einsum("bhcz,bhzpn->bhcpn", carry, states)  # the state at each chunk's start, and the last
    states, last = _laid(states[:, :, :-1], 0, 1, 2, 4, 3), states[:, :, -1]  # (B, h_ssm, T_pad/Q, d_state, d_ssm)
    y_off = torch.einsum("bhcln,bhcnp->bhclp", _laid(C, 0, 3, 1, 2, 4), states) * a_sum.exp()[..., None]
    y = (y_diag + y_off.permute(0, 2, 3, 1, 4)).reshape(x.shape[0], -1, h, x.shape[-1]) + skip
    return y[:, :T].clone(memory_format=torch.contiguous_format), last  # its own (B, T, h_ssm, d_ssm), as `_laid`


def step(x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, D: torch.Tensor,
         state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One token's update (transformers' mamba2_selective_state_update), as matmuls: x (B, h_ssm, d_ssm); dt (B,
    h_ssm), already softplus(dt + dt_bias); B, C (B, g_ssm, d_state); after `state` S (B, h_ssm, d_ssm, d_state) fp32.
    S decays by exp(Δ·A) and adds (Δ·x) ⊗ B; the output is S C + D·x. -> ((B, h_ssm, d_ssm), the new S).
    transformers writes the outer product elementwise, which torch's flop counter does not count; as a matmul it is
    counted: 2·d_ssm·d_state FLOPs per head, as is the read S C."""
    h = x.shape[1]
    B, C = (t.repeat_interleave(h // t.shape[1], dim=1, output_size=h) for t in (B, C))  # (B, h_ssm, d_state)
    S = state * torch.exp(dt.float() * A.float())[..., None, None]
    S = S + (dt[..., None] * x).unsqueeze(-1).float() @ B.unsqueeze(-2).float()  # (B, h_ssm, d_ssm, 1) @ (…, 1, d_state)
    y = (S.to(C.dtype) @ C.unsqueeze(-1)).squeeze(-1)  # (B, h_ssm, d_ssm)
    return (y + x * D[:, None]).to(y.dtype), S


class Mamba2(nn.Module):
    """One block's Mamba 2 (see the module docstring), transformers' GraniteMoeHybridMambaLayer on its torch path, its
    weights laid out as transformers lays them so that they copy one to one. Maps (B, T, d) to (B, T, d); tapped:
    xBC (the convolution's input), conv (after SiLU), x, B, C, dt, scan (y), state (the final one), gated, normed."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h, self.p, self.n, self.g = cfg.ssm_heads, cfg.ssm_head_dim, cfg.ssm_state, cfg.ssm_groups
        self.Q, self.d_conv = cfg.ssm_chunk, cfg.conv_width
        self.inner = self.h * self.p  # h_ssm·d_ssm
        self.channels = self.inner + 2 * self.g * self.n  # x, B, C
        self.in_proj = nn.Linear(cfg.d, self.inner + self.channels + self.h, bias=proj_bias(cfg))
        self.conv_weight = nn.Parameter(torch.randn(self.channels, self.d_conv) * 0.02)  # depthwise
        self.conv_bias = nn.Parameter(torch.zeros(self.channels)) if conv_bias(cfg) else None
        self.dt_bias = nn.Parameter(torch.ones(self.h))
        self.A_log = nn.Parameter(torch.log(torch.arange(1, self.h + 1, dtype=torch.float32)))
        self.D = nn.Parameter(torch.ones(self.h))
        self.gate = cfg.ssm_norm  # `GATES`: where the norm goes beside the gate SiLU(z), or none
        if normed(cfg):
            self.norm_weight = nn.Parameter(torch.ones(self.inner))  # the norm's gain (h_ssm·d_ssm,)
        self.out_proj = nn.Linear(self.inner, cfg.d, bias=proj_bias(cfg))
        for name in ("xBC", "conv", "x", "B", "C", "dt", "scan", "state", "gated", "normed", "conv_cache"):
            setattr(self, name, Tap())

    def convolve(self, xBC: torch.Tensor, past: torch.Tensor | None) -> torch.Tensor:
        """(B, h_ssm·d_ssm + 2g_ssm·d_state, T) through the causal convolution and SiLU, transformers' causal_conv1d_fn
        (both ends padded, the first T kept) or, after `past` (its d_conv kept positions), causal_conv1d_update."""
        weight, T = self.conv_weight.unsqueeze(1), xBC.shape[-1]
        if past is None:
            out = F.conv1d(xBC.to(weight.dtype), weight, self.conv_bias, padding=self.d_conv - 1,
                           groups=self.channels)[:, :, :T]
        else:
            full = self.conv_cache(torch.cat((past, xBC), dim=-1).to(weight.dtype))  # (B, C, d_conv + 1)
            out = F.conv1d(full, weight, self.conv_bias, groups=self.channels)[:, :, -T:]
        return F.silu(out).to(xBC.dtype)

    def forward(self, x: torch.Tensor, rope: object = None, past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: object = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the convolution state (B, h_ssm·d_ssm +
        2g_ssm·d_state, d_conv) and the SSM state (B, h_ssm, d_ssm, d_state) fp32, before x's one token (`step`)."""
        Bsz, T, _ = x.shape
        if past is not None and T != 1:
            raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
        z, xBC, dt = self.in_proj(x).split([self.inner, self.channels, self.h], dim=-1)
        xBC = self.xBC(xBC.transpose(1, 2))  # (B, h_ssm·d_ssm + 2g_ssm·d_state, T)
        conv = self.conv(self.convolve(xBC, None if past is None else past[0]).transpose(1, 2))
        xs, B, C = conv.split([self.inner, self.g * self.n, self.g * self.n], dim=-1)
        xs, B, C = self.x(xs.view(Bsz, T, self.h, self.p)), self.B(B.view(Bsz, T, self.g, self.n)), \
            self.C(C.view(Bsz, T, self.g, self.n))
        A = -torch.exp(self.A_log.float())
        dt = self.dt(F.softplus(dt + self.dt_bias.to(dt.dtype)))  # Δ, (B, T, h_ssm)
        if past is None:  # transformers clamps Δ to time_step_limit, (0, inf) by default: no change
            y, S = chunk_scan(xs, dt.clamp(0.0, float("inf")), A, B, C, self.D, self.Q)
        else:
            y, S = step(xs[:, 0], dt[:, 0], A, B[:, 0], C[:, 0], self.D, past[1])
            y = y[:, None]
        self.state(S)  # (B, h_ssm, d_ssm, d_state), fp32
        y = self.scan(y.reshape(Bsz, T, self.inner))  # (B, T, h_ssm·d_ssm), fp32
        if self.gate == "none":  # Falcon-H1's mamba_rms_norm false: y·SiLU(z) at y's dtype, no norm
            return self.out_proj(self.gated(y * F.silu(z)).to(x.dtype))  # (B, T, d)
        if self.gate == "norm_gate":  # RMSNormGated with norm_before_gate: the norm (fp32), then the gate
            return self.out_proj((self.normed(self.norm(y.float(), y.dtype)) * F.silu(z.float())).to(x.dtype))
        gated = self.gated(y.float() * F.silu(z.float()))  # transformers' RMSNormGated: gate, then norm per group
        return self.out_proj(self.normed(self.norm(gated, y.dtype)).to(x.dtype))  # (B, T, d)

    def norm(self, y: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """(B, T, h_ssm·d_ssm) fp32 RMS-normed per group of h_ssm·d_ssm/g_ssm features, at `dtype`, times the gain."""
        Bsz, T, _ = y.shape
        groups = y.view(Bsz, T, self.g, -1)
        normed = groups * torch.rsqrt(groups.pow(2).mean(-1, keepdim=True) + 1e-6)
        return self.norm_weight * normed.view(Bsz, T, self.inner).to(dtype)


def module(cfg: Config) -> nn.Module:
    """One Mamba 2 block's mixer."""
    return Mamba2(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`) --------------------------------------------------
ROWS: dict[str, tuple[str, str]] = {
    "in_proj": ("(B, T, 2h_ssm·d_ssm + 2g_ssm·d_state + h_ssm)", "x W_in: the gate z, the convolution's x, B and C, "
                "and the step dt per head"),
    "xBC": ("(B, h_ssm·d_ssm + 2g_ssm·d_state, T)", "x, B and C side by side, channels first for the convolution"),
    "conv": ("(B, T, h_ssm·d_ssm + 2g_ssm·d_state)", "SiLU of the causal convolution: d_conv taps per channel, each "
             "position and the d_conv − 1 before it"),
    "x": ("(B, T, h_ssm, d_ssm)", "x: each head's inputs"),
    "B": ("(B, T, g_ssm, d_state)", "B: what a token writes to the state, per group of h_ssm/g_ssm heads"),
    "C": ("(B, T, g_ssm, d_state)", "C: how a token reads the state, per group"),
    "dt": ("(B, T, h_ssm)", "Δ = softplus(dt + dt_bias): each token's step, its decay exp(Δ·A) and its write's weight"),
    "state": ("(B, h_ssm, d_ssm, d_state)", "the state S after the last token: fixed whatever T, what the cache keeps "
              "(fp32); attention's (B, h, T, T) scores have no counterpart"),
    "scan": ("(B, T, h_ssm·d_ssm)", "y = S C + D·x, the chunked scan's output by chunks of Q tokens (fp32)"),
    "gated": ("(B, T, h_ssm·d_ssm)", "y times SiLU(z) (fp32)"),
    "normed": ("(B, T, h_ssm·d_ssm)", "RMS-normed per group of h_ssm·d_ssm/g_ssm features, times its gain"),
    "out_proj": ("(B, T, d)", "output projection, h_ssm·d_ssm → d"),
}


NORM_ROWS: dict[str, dict[str, tuple[str, str]]] = {  # the rows that `ssm_norm` changes
    "norm_gate": {"normed": ("(B, T, h_ssm·d_ssm)", "y RMS-normed per group of h_ssm·d_ssm/g_ssm features, times its "
                             "gain (fp32); then times SiLU(z)")},
    "none": {"gated": ("(B, T, h_ssm·d_ssm)", "y times SiLU(z): no norm (mamba_rms_norm false)")},
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """A Mamba 2 block's rows, under "ssm." (`model.tensor_notation` places them under the block's mixer)."""
    if present(cfg):
        rows.update({"ssm." + name: row for name, row in {**ROWS, **NORM_ROWS.get(cfg.ssm_norm, {})}.items()})


# --- a decode step (`model.inference`) -------------------------------------------------------------------------------
WRITTEN = "the new token's K and V written in the attention blocks, and each Mamba 2 block's states rewritten"
WRITTEN_BESIDE = "the new token's K and V written in every block, and Mamba 2's states beside them rewritten"


def cache_shapes(cfg: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's states for B sequences as transformers' LinearAttentionLayer holds them: the convolution state (B,
    h_ssm·d_ssm + 2g_ssm·d_state, d_conv) at the model's dtype and the SSM state (B, h_ssm, d_ssm, d_state) at fp32."""
    channels = cfg.ssm_heads * cfg.ssm_head_dim + 2 * cfg.ssm_groups * cfg.ssm_state
    return (cfg.B, channels, cfg.conv_width), (cfg.B, cfg.ssm_heads, cfg.ssm_head_dim, cfg.ssm_state)


def decode_flops(cfg: Config) -> Expr:
    """One Mamba 2 block's FLOPs per new token in a decode step: the projections, the convolution over its d_conv kept
    positions and the new one (2 outputs computed, the last kept), and the state written and read (`step`)."""
    return E("{p} + 4d_conv·{c} + 4h_ssm·d_ssm·d_state", p=projections(cfg), c=CONV)


def decode_state_flops(cfg: Config) -> Expr:
    """A decode step's products with the state, all L_ssm blocks, B new tokens: 4B·L_ssm·h_ssm·d_ssm·d_state."""
    return E("4B·L_ssm·h_ssm·d_ssm·d_state")


DECODE_ROWS: dict[str, tuple[str, str]] = {  # a decode step's tensors of a Mamba 2 block (its first one's)
    "ssm.conv_cache": ("(B, h_ssm·d_ssm + 2g_ssm·d_state, d_conv + 1)", "the convolution state's d_conv positions and "
                       "the new token's x, B and C"),
    "ssm.x": ("(B, 1, h_ssm, d_ssm)", "x of the new token"),
    "ssm.state": ("(B, h_ssm, d_ssm, d_state)", "the state after the new token: decayed, (Δ·x) ⊗ B added (fp32), "
                  "the same size after {T} cached tokens as after one"),
    "ssm.scan": ("(B, 1, h_ssm·d_ssm)", "y = S C + D·x, the new token's output"),
}


LAST_CHANGE = ("mamba", NAME)  # its step from the GPT-2 twin, the chain's last (`model.changes`): key, short name
CHANGE_TITLES = {"mamba/beside": (
    "Mamba 2 beside attention in all L = {L} blocks: both read ln_1(x) and add to x together; every block keeps a "
    "fixed state (B, h_ssm, d_ssm, d_state) — h_ssm = {h_ssm} heads of d_ssm × d_state = {d_ssm} × {d_state} per "
    "sequence whatever T — beside its K and V, and adds Mamba 2's matmuls and its chunked scan's products (chunks of "
    "Q = {Q} tokens, T padded to T_pad) to attention's"), "mamba": (
    "Mamba 2 in L_ssm = {L_ssm} of the L = {L} blocks: a fixed state (B, h_ssm, d_ssm, d_state) in place of "
    "{kv_what} — h_ssm = {h_ssm} heads of d_ssm × d_state = {d_ssm} × {d_state} per sequence whatever T, where "
    "{kv_what} grew by {kv_grew} numbers a token — and no q kᵀ over all T keys there: those blocks' FLOPs per token "
    "no longer grow with T (the scan runs over chunks of Q = {Q} tokens, T padded to T_pad)")}
ORDER_NOTE = ("Mamba 2 comes last: the changes before it reach this model with attention in every block (as its "
              "attention blocks have it), and its change puts a fixed state in the L_ssm blocks' attention's place; "
              "its FLOPs per token are the real count at this T, so their formula divides by T (T_pad/T for the "
              "chunks of Q, (T + d_conv − 1)/T for the convolution's padded positions).")
NO_PEAK = ("Mamba 2's training step's peak is measured at one B and T (its chunked scan's tensors grow with T_pad/Q "
           "and its square), so it has no formula of them yet, and this page's training card follows them by "
           "formulas: print this model's with: {command}")


def title_key(cfg: Config) -> str:
    """Its change's `CHANGE_TITLES` key: "mamba", or "mamba/beside" beside attention in every block."""
    return "mamba/beside" if beside(cfg) else "mamba"


ORDER_NOTE_BESIDE = ("Mamba 2 comes last: the changes before it reach this model with attention alone in every block, "
                     "and its change adds Mamba 2 beside attention in every block (both reading ln_1(x)); its FLOPs per "
                     "token are the real count at this T, so their formula divides by T (T_pad/T for the chunks of Q, "
                     "(T + d_conv − 1)/T for the convolution's padded positions).")


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers its change's title names (`model.changes.title_values`), none without it."""
    if not present(cfg):
        return {}
    values = dict(L_ssm=cfg.L_ssm, h_ssm=cfg.ssm_heads, d_ssm=cfg.ssm_head_dim, d_state=cfg.ssm_state, Q=cfg.ssm_chunk)
    return {k: f"{v:,}" for k, v in values.items()}


def order_note(cfg: Config) -> list[str]:
    """Where its change comes in the chain, in words."""
    return [] if not present(cfg) else [ORDER_NOTE_BESIDE] if beside(cfg) else [ORDER_NOTE]


def words(cfg: Config) -> list[str]:
    """The model's Mamba 2 blocks in the recipe's words (`model.report`)."""
    if not present(cfg):
        return []
    if beside(cfg):
        return [f"Mamba 2 beside attention in all {cfg.L:,} blocks (a fixed state of h_ssm = {cfg.ssm_heads:,} heads "
                f"of {cfg.ssm_head_dim:,} × {cfg.ssm_state:,} beside each block's KV cache"
                + ("" if normed(cfg) else "; y·SiLU(z), no norm") + ")"]
    return [f"Mamba 2 in {cfg.L_ssm:,} of {cfg.L:,} blocks (a fixed state of h_ssm = {cfg.ssm_heads:,} heads of "
            f"{cfg.ssm_head_dim:,} × {cfg.ssm_state:,} in place of a growing KV cache)"]
