"""Mamba (the first one, a selective scan: AI21's Jamba, transformers' JambaMambaMixer) in place of attention in the
blocks `mamba1_layers` lists: a block with no (B, h, T, T) scores and no growing cache. Each of its d_inner channels
keeps a state of d_s numbers: a token decays it by exp(Δ·A) (A < 0, one per channel and state feature; Δ the token's
own step per channel), writes Δ·x·B to it (B: d_s features read from the token) and reads it with C (y = S C + D·x).
Cached, the state stays (B, d_inner, d_s) whatever T, beside a causal convolution's last d_conv positions.

Per block (transformers' torch path, JambaMambaMixer.forward with its torch fallbacks):
- x (B, T, d) -> the convolution's input x and the gate z (d_inner each) by in_proj (d, 2d_inner), a bias where
  `mamba1_bias` says;
- x through a depthwise causal convolution of d_conv taps (a bias per channel where `mamba1_bias` says) and SiLU:
  transformers pads both ends by d_conv − 1, runs it over T + d_conv − 1 positions and keeps the first T;
- x_proj (d_inner, r_dt + 2d_s), no bias: dt (r_dt), B and C (d_s each), each RMS-normed with a gain (Jamba's three
  norms, which the first Mamba lacks); Δ = softplus(W_dt dt + b_dt) by dt_proj (r_dt, d_inner) and its bias;
- the selective scan (`scan`): S_t = exp(Δ_t·A) ⊙ S_{t−1} + (Δ_t·x_t) ⊗ B_t, y_t = S_t C_t + D·x_t, times SiLU(z);
- out_proj (d_inner, d).

FLOPs are torch's flop counter's (`model.passes`): the four projections (dt_proj as transformers runs it, its weight
times dt, the bias added apart and not counted), the convolution (its bias uncounted) and the scan's reads of the
state by C: 2d_inner·d_s per token, as transformers' loop runs one (B, d_inner, d_s) @ (B, d_s, 1) matmul per token.
The state's recurrence is elementwise (no FLOP counted, in transformers' loop as here).

What is batched: transformers loops over the T tokens one at a time, a matmul each. Here the T reads by C are one
batched matmul (B·T matrices (d_inner, d_s) @ (d_s, 1)): the same matmuls, the same FLOPs. The recurrence runs by
chunks of c = ⌈√T⌉ positions (`scan`: c steps within all chunks at once, T/c steps over the chunks; about 2√T steps in
place of T on the meta device, 270 at T = 8,192), the same sums in another order in floating point. It keeps for
backward about what transformers' loop keeps (the decays, each position's state, and the running products of decays
that its loop does not need: a tensor of (B, d_inner, T_pad, d_s) more); the saved bytes are a formula of T_pad and
the chunks n_c (`saved_parts`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from .. import loops
from ..expr import E, Expr
from ..fields import Field, below
from ..figures import Line, line
from ..notation import SYMBOL_DOCS
from ..taps import Tap
from . import attention

if TYPE_CHECKING:
    from ..budgeting import Formulas
    from ..config import Config

KEY = "mb"  # a Mamba block's kind ends "_mb" ("moe_mb"), its mixer is `Block.mb`, its lines "params/mb…"
BLOCKS = "mamba1_layers"  # the field that lists its blocks
COUNT = "L_mb"  # the symbol that numbers its blocks
NAME = "Mamba"


def _width(name: str, symbol: str, hi: int, example: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="linear", needs="mamba1_layers", control=False)


BIASES = ("conv", "none", "proj", "all")  # transformers' mamba_conv_bias and mamba_proj_bias: (conv, proj)
FIELDS = (  # JambaConfig's defaults at d = 4,096: d_inner 8,192 (mamba_expand 2), d_s 16, r_dt 256 (⌈d/16⌉), d_conv 4
    Field("mamba1_layers", "blocks", "blocks whose mixer is Mamba (the first one: a selective scan with a fixed state) "
          "in attention's place, by index (default none)", default=(), group="linear", control=False),
    _width("mamba1_inner", "d_inner", 1_048_576, "8192"),
    _width("mamba1_state", "d_s", 65_536, "16"),
    _width("mamba1_dt_rank", "r_dt", 65_536, "256"),
    Field("mamba1_bias", "choice", "Mamba's biases: conv (the convolution's, Jamba's default), none, proj (in_proj and "
          "out_proj) or all", default="conv", choices=BIASES, group="linear", needs="mamba1_layers", control=False),
)
SIZES = tuple(f.name for f in FIELDS[1:4])
STAND_IN = {"mamba1_inner": 4, "mamba1_state": 4, "mamba1_dt_rank": 2, "conv_width": 4}  # small sizes of a stand-in
# model of the same tensors (`model.recipe_rows`)


def check(cfg: Config) -> None:
    """Mamba's fields together (ValueError naming the problem and the fix)."""
    if not cfg.mamba1_layers:
        for name in SIZES:
            if getattr(cfg, name) is not None:
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but mamba1_layers is not: {name} is a size of "
                                 "Mamba blocks; list them in mamba1_layers or drop " + name)
        return
    below("mamba1_layers", cfg.mamba1_layers, cfg.L)
    if cfg.linear_layers or cfg.mamba_layers or cfg.kda_layers:
        raise ValueError("mamba1_layers and another fixed-state mixer (linear_layers, mamba_layers, kda_layers) are both "
                         "set: a model of two kinds of fixed state is not modelled; keep one of them")
    if cfg.L_mb == cfg.L:
        raise ValueError(f"mamba1_layers lists every block (L={cfg.L:,}): a model of Mamba blocks alone is not "
                         "modelled yet (its figures compare them with the attention blocks); keep one attention block")
    for f in FIELDS[1:4]:
        if getattr(cfg, f.name) is None:
            raise ValueError(f"Mamba blocks (mamba1_layers) need {f.symbol}: set {f.name} ({f.doc}; Jamba: "
                             f"{f.example})")
    if cfg.conv_width is None:
        raise ValueError("Mamba blocks (mamba1_layers) need d_conv: set conv_width (the causal convolution's taps; "
                         "Jamba: 4)")
    if cfg.mla or cfg.window is not None or cfg.sinks:
        raise ValueError("Mamba blocks beside latent attention, a window or sinks are not modelled: drop mamba1_layers "
                         "or those")
    if set(cfg.nope_layers) & set(cfg.mamba1_layers):
        raise ValueError("nope_layers lists Mamba blocks: NoPE blocks are attention blocks without RoPE; list only "
                         "blocks that mamba1_layers does not")


def present(cfg: Config) -> bool:
    """Some blocks mix with Mamba."""
    return bool(cfg.mamba1_layers)


def blocks(cfg: Config) -> tuple[int, ...]:
    """The blocks it mixes (`mamba1_layers`)."""
    return cfg.mamba1_layers


def chunk(cfg: Config) -> int:
    """Tokens per chunk of the scan (`scan`): ⌈√T⌉, so that T_pad = ⌈√T⌉·⌈T/⌈√T⌉⌉ and n_c = ⌈T/⌈√T⌉⌉."""
    return math.isqrt(cfg.T - 1) + 1


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", Mamba on 28"."""
    return f", Mamba on {cfg.L_mb}" if present(cfg) else ""


def sizes(cfg: Config) -> dict[str, object]:
    """Its fields and L_mb in a configuration's JSON, none without it."""
    if not present(cfg):
        return {}
    return {"mamba1_layers": list(cfg.mamba1_layers), **{n: getattr(cfg, n) for n in SIZES},
            "conv_width": cfg.conv_width, "mamba1_bias": cfg.mamba1_bias, "L_mb": cfg.L_mb}


def symbols(cfg: Config) -> dict[str, int]:
    """Its symbols' values (`Config.symbols`)."""
    return {"L_mb": cfg.L_mb, "d_inner": cfg.mamba1_inner, "d_s": cfg.mamba1_state, "r_dt": cfg.mamba1_dt_rank,
            "d_conv": cfg.conv_width, "T_pad": cfg.T_pad, "n_c": cfg.n_c}


def conv_bias(cfg: Config) -> bool:
    """The convolution has a bias per channel (transformers' mamba_conv_bias)."""
    return cfg.mamba1_bias in ("conv", "all")


def proj_bias(cfg: Config) -> bool:
    """in_proj and out_proj have biases (transformers' mamba_proj_bias)."""
    return cfg.mamba1_bias in ("proj", "all")


# --- its parameters and FLOPs, as expressions of the symbols ----------------------------------------------------------
def weights(cfg: Config) -> Expr:
    """One block's matrices: in_proj (d, 2d_inner), out_proj (d_inner, d), x_proj (d_inner, r_dt + 2d_s), dt_proj
    (r_dt, d_inner) and the convolution's d_conv taps per channel."""
    return E("3d·d_inner + d_inner·(r_dt + 2d_s) + r_dt·d_inner + d_conv·d_inner")


def extras(cfg: Config) -> list[Expr]:
    """Its parameters that no matmul or convolution uses: A_log (d_inner, d_s), D and dt_proj's bias (d_inner each),
    the dt, B and C norms' gains (r_dt + 2d_s), and the biases `mamba1_bias` names (the convolution's d_inner, in_proj's
    2d_inner and out_proj's d)."""
    terms = ["d_inner·d_s + 2d_inner + r_dt + 2d_s", *(["d_inner"] if conv_bias(cfg) else []),
             *(["2d_inner + d"] if proj_bias(cfg) else [])]
    return [E(" + ".join(terms))]


def projections(cfg: Config) -> Expr:
    """The projections' FLOPs per token: 2 per weight of in_proj, x_proj, dt_proj and out_proj."""
    return E("6d·d_inner + 2d_inner·(r_dt + 2d_s) + 2r_dt·d_inner")


def conv_flops(cfg: Config) -> Expr:
    """The convolution's FLOPs per token as transformers runs it: 2·d_conv per channel and position, over T + d_conv
    − 1 positions (padded at both ends) for T tokens."""
    return E("2d_conv·d_inner·(T + d_conv − 1)/T")


def rule_flops(cfg: Config) -> Expr:
    """The scan's matmul FLOPs per token: the state read by C, 2d_inner·d_s (its write and decay are elementwise)."""
    return E("2d_inner·d_s")


def flops(cfg: Config) -> Expr:
    """One block's FLOPs per token as the code runs (`model.passes`): projections, convolution and the scan's reads."""
    return E("{p} + {c} + {r}", p=projections(cfg), c=conv_flops(cfg), r=rule_flops(cfg))


SAYS = {  # the words Mamba adds to the budget's lines (`model.parts.says`)
    "budget/scored": ", in the L − L_mb attention blocks; and the scan's reads of the state by C in the L_mb Mamba "
                     "blocks",
    "budget/share": "the share of the measured forward FLOPs in products of activations: attention's scores and the "
                    "Mamba scan's reads",
    "memory/saved": "; in the L_mb Mamba blocks, the scan's tensors of (B, d_inner, T_pad, d_s): its inputs padded "
                    "to whole chunks of ⌈√T⌉ (n_c of them) and the states and decays within and across the chunks",
    "budget/blocks": "attention or Mamba",
    "infer/kv_cache": " in the attention blocks, and each Mamba block's states whatever T (convolution at 16 bits, "
                      "SSM state at fp32)",
    "infer/decode_attn": " in the attention blocks, and the Mamba blocks' reads of their state",
    "budget/T_equal": "T at which the attention blocks' q kᵀ and attn @ v equal every other FLOP of the blocks (the "
                      "Mamba blocks' taken at this T)",
}


def label(cfg: Config) -> str:
    return ("Mamba, one block: in_proj (d, 2d_inner), the causal convolution (d_conv taps of x" +
            (", and its bias" if conv_bias(cfg) else "") + "), x_proj (d_inner, r_dt + 2d_s), dt_proj (r_dt, d_inner) "
            "and its bias, the dt, B and C norms, A_log (d_inner, d_s), D and out_proj (d_inner, d)" +
            (", with biases" if proj_bias(cfg) else ""))


def flop_steps(f: Formulas) -> list[Line]:
    """The step from 2N to the measured FLOPs that the convolution adds (`model.budgeting.budget_lines`)."""
    if not present(f.cfg):
        return []
    return [line("flops/steps/mb_conv", "+ the Mamba convolution's d_conv − 1 padded positions: transformers "
                 "convolves T + d_conv − 1 positions and keeps T", E("2L_mb·d_conv·d_inner·(d_conv − 1)/T"),
                 f.symbols, "FLOP")]


# --- its state: what inference keeps, whatever T ----------------------------------------------------------------------
def state(cfg: Config) -> Expr:
    """One block's SSM state per sequence, in elements: d_inner channels of d_s."""
    return E("d_inner·d_s")


def conv_state(cfg: Config) -> Expr:
    """One block's convolution state per sequence, in elements: the last d_conv positions of x."""
    return E("d_conv·d_inner")


STATE_BYTES = 4  # transformers' torch path computes the SSM state in fp32 (exp(Δ·A) is fp32) and its cache keeps it so


def states(cfg: Config, size: int) -> Expr:
    """The L_mb blocks' states for B sequences in bytes: the convolution's at `size` bytes an element, the SSM state's
    at fp32 (`STATE_BYTES`)."""
    return E("L_mb·B·({c}·{b} + {r}·{f})", c=conv_state(cfg), b=size, r=state(cfg), f=STATE_BYTES)


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """What inference keeps at `dtype` (`size` bytes an element) beside Mamba blocks, as transformers' cache holds it
    after a prefill of B sequences of T tokens: K and V of the L − L_mb attention blocks, and each Mamba block's
    LinearAttentionLayer: the convolution state (B, d_inner, d_conv) at `dtype` and the SSM state (B, d_inner, d_s) at
    fp32. Then one more token's bytes, the parts, and the all-attention twin's cache and the ratio."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    kv = E("{e}·{b}", e=attention.cache(cfg, E("(L − L_mb)·BT")), b=size)
    whole = E("{kv} + {st}", kv=kv, st=states(cfg, size))
    twin = E("{e}·{b}", e=attention.cache(cfg, E("LBT")), b=size)
    return [
        line("memory/kv_cache", f"cache at {dtype}: keys and values of h_kv heads of d_head in the L − L_mb = "
             f"{cfg.L - cfg.L_mb:,} attention blocks, B sequences of T tokens, and the L_mb = {cfg.L_mb:,} Mamba "
             "blocks' states, whatever T", whole, s, "bytes"),
        line("memory/kv_cache_per_token", f"cache per token of context at {dtype} (one sequence, one more token): the "
             "attention blocks' K and V only, a Mamba block's state stays as it is",
             E("{e}·{b}", e=attention.cache(cfg, E("(L − L_mb)")), b=size), s, "bytes"),
        line("memory/kv_cache_attention", "of it, the attention blocks' K and V: all T tokens each", kv, s, "bytes"),
        line("memory/state_conv", f"of it, the Mamba blocks' convolution states at {dtype}: the last d_conv positions "
             "of x, (B, d_inner, d_conv) each", E("L_mb·B·{c}·{b}", c=conv_state(cfg), b=size), s, "bytes"),
        line("memory/state_ssm", "of it, their SSM states at fp32 (transformers keeps them so): (B, d_inner, d_s) each",
             E("L_mb·B·{c}·{f}", c=state(cfg), f=STATE_BYTES), s, "bytes"),
        line("memory/kv_cache_all_attention", f"the all-attention twin's cache at {dtype}: attention in every block, "
             "keys and values of all T tokens", twin, s, "bytes"),
        line("memory/kv_cache_lin_ratio", "Mamba divides the cache by (the twin's over this one)",
             E("({t}) / ({w})", t=twin, w=whole), s, "ratio"),
    ]


def saved_parts(cfg: Config, size: int) -> dict[int, Expr]:
    """The elements one Mamba mixer keeps for backward, by element size, for a pass at `size` bytes an element (2:
    bf16, fp16; 4: fp32): the storages first saved while it runs (the block's normed input x included), measured on
    its module and checked at every probe of `model.memory.saved_formula` (tests at T across the scan's chunks, both
    dtypes, every bias, against autograd on real CPU tensors).

    At the model's dtype: x (B, T, d); in_proj's output (B, T, 2d_inner); the convolution's input padded by d_conv − 1
    at both ends and its output over T + d_conv − 1 positions (of which the first T are kept) and the kept ones; x_proj's
    output (B, T, r_dt + 2d_s); dt, B and C normed (r_dt, d_s, d_s), dt through dt_proj, Δ, x·D's x, S C's product and
    the gate's two (d_inner each; x_proj's input no copy where B = 1 or T = 1); the scan's states cast for the read by C
    (B, T, d_inner, d_s). At fp32, whatever the dtype: A_log's exp and its negation (d_inner·d_s each); the three norms'
    fp32 inputs and statistics; Δ·A, its exp and (Δ·x) ⊗ B (B, d_inner, T, d_s); and the scan by chunks of ⌈√T⌉
    (`scan`): exp(Δ·A) and (Δ·x) ⊗ B padded to T_pad, the running states and decays within the chunks (2(⌈√T⌉ − 2) of
    (B, d_inner, n_c, d_s): T_pad − 2n_c positions each), the chunks' start states (n_c − 1 of (B, d_inner, d_s)) and
    the decays and starts of the last product (T_pad and n_c positions). At T = 1 and 2 (one chunk) the scan keeps its
    padded inputs and one start; at fp32 with B = 1 the read by C keeps the scan's padded states (T_pad positions)."""
    k = 9 if cfg.B == 1 or cfg.T == 1 else 10  # the d_inner-wide tensors at the model's dtype
    scan_kept = ("d_inner·d_s" if cfg.T == 1 else "(2T + 1)·d_inner·d_s" if cfg.T == 2
                 else "(5T_pad − 2n_c − 1)·d_inner·d_s")  # at fp32 (`scan`)
    own = "T·d + {k}T·d_inner + (d_conv − 1)·d_inner + {r}T·r_dt + {n}T·d_s"
    if size != STATE_BYTES:
        return {size: E("B·(" + own + " + T·d_inner·d_s)", k=k, r=2, n=3),
                STATE_BYTES: E("2d_inner·d_s + B·(T·d_inner + 2T·r_dt + 5T·d_s + 3T + 2T·d_inner·d_s + " + scan_kept
                               + ")")}
    read = "2T·d_inner·d_s + T_pad·d_inner·d_s" if cfg.B == 1 and cfg.T > 2 else "3T·d_inner·d_s"
    return {STATE_BYTES: E("2d_inner·d_s + B·(" + own + " + 3T + " + read + " + " + scan_kept + ")", k=k, r=3, n=6)}


PROBES = ((7, 3, 2, 4), (11, 5, 3, 2), (6, 2, 4, 3), (13, 4, 1, 5))  # (d_inner, d_s, r_dt, d_conv) at `model.memory`'s
# four recipe probes


def probe(i: int, structure: object) -> dict[str, object]:
    """Its fields at `model.memory`'s recipe probe i (the blocks' kinds are set beside them)."""
    return dict(zip(("mamba1_inner", "mamba1_state", "mamba1_dt_rank", "conv_width"), PROBES[i]))


# --- the module in the real forward pass ------------------------------------------------------------------------------
def scan(dA: torch.Tensor, dBx: torch.Tensor) -> torch.Tensor:
    """All states of the recurrence S_t = dA_t ⊙ S_{t−1} + dBx_t from S_{−1} = 0, by chunks of c = ⌈√T⌉ positions:
    dA, dBx (B, d_inner, T, d_s) -> S (B, d_inner, T, d_s). T is padded to T/c whole chunks (a decay of 1 and an
    input of 0: no change); within every chunk at once, c steps give each position's state from a zero start (`local`)
    and its decay since the chunk's start (`P`, the running product); T/c steps carry the chunks' end states over the
    chunks (`start`); then S = local + P ⊙ start. Elementwise only (no FLOP counted); 2c + T/c steps in place of T."""
    B, D, T, N = dA.shape
    c = math.isqrt(T - 1) + 1  # ⌈√T⌉
    pad = -T % c
    a = F.pad(dA, (0, 0, 0, pad), value=1.0).view(B, D, -1, c, N)  # (B, d_inner, T_pad/c, c, d_s)
    b = F.pad(dBx, (0, 0, 0, pad)).view(B, D, -1, c, N)
    local, P = [b[:, :, :, 0]], [a[:, :, :, 0]]

    def within(i: int) -> None:  # position j = i + 1 of every chunk
        local.append(a[:, :, :, i + 1] * local[-1] + b[:, :, :, i + 1])
        P.append(a[:, :, :, i + 1] * P[-1])

    def again(_i: int) -> None:  # a step counted, not run (`model.loops`): its states' shapes
        local.append(local[-1])
        P.append(P[-1])
    loops.repeat(c - 1, within, a, again)
    decays = torch.stack(P, dim=3)  # (B, d_inner, T_pad/c, c, d_s): each position's decay since its chunk's start
    starts = [torch.zeros_like(local[0][:, :, 0])]  # (B, d_inner, d_s): each chunk's start state

    def across(m: int) -> None:  # from chunk m's start to chunk m + 1's (the chunk's decay read off `decays`)
        starts.append(decays[:, :, m, -1] * starts[-1] + local[-1][:, :, m])
    loops.repeat(a.shape[2] - 1, across, a, lambda _m: starts.append(starts[-1]))
    S = torch.stack(local, dim=3) + decays * torch.stack(starts, dim=2)[:, :, :, None]
    return S.view(B, D, -1, N)[:, :, :T]


EPS = 1e-6  # JambaConfig's rms_norm_eps, the dt, B and C norms' (the model's own norms keep `norms.NORM_EPS`)


def rms(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """JambaRMSNorm: x normed in fp32 over its last dim, back at x's dtype, times its gain."""
    normed = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    return weight * normed.to(x.dtype)


class Mamba1(nn.Module):
    """One block's Mamba (see the module docstring), transformers' JambaMambaMixer on its torch path, its weights laid
    out as transformers lays them so that they copy one to one. Maps (B, T, d) to (B, T, d); tapped: xz (in_proj's
    output, channels first), conv (after SiLU), dt, B, C (normed), delta (Δ), states (all T), scan (y), state (the last
    one), gated."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.inner, self.n, self.r, self.d_conv = cfg.mamba1_inner, cfg.mamba1_state, cfg.mamba1_dt_rank, cfg.conv_width
        self.eps = EPS
        self.in_proj = nn.Linear(cfg.d, 2 * self.inner, bias=proj_bias(cfg))
        self.conv_weight = nn.Parameter(torch.randn(self.inner, self.d_conv) * 0.02)  # depthwise
        self.conv_bias = nn.Parameter(torch.zeros(self.inner)) if conv_bias(cfg) else None
        self.x_proj = nn.Linear(self.inner, self.r + 2 * self.n, bias=False)
        self.dt_proj = nn.Linear(self.r, self.inner)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, self.n + 1, dtype=torch.float32)).expand(self.inner, -1)
                                  .contiguous())
        self.D = nn.Parameter(torch.ones(self.inner))
        self.dt_norm, self.b_norm, self.c_norm = (nn.Parameter(torch.ones(w)) for w in (self.r, self.n, self.n))
        self.out_proj = nn.Linear(self.inner, cfg.d, bias=proj_bias(cfg))
        for name in ("xz", "conv", "dt", "B", "C", "delta", "states", "scan", "state", "gated", "conv_cache"):
            setattr(self, name, Tap())

    def convolve(self, x: torch.Tensor, past: torch.Tensor | None) -> torch.Tensor:
        """(B, d_inner, T) through the causal convolution and SiLU, transformers' causal_conv1d_fn (both ends padded,
        the first T kept) or, after `past` (its d_conv kept positions), causal_conv1d_update."""
        weight, T = self.conv_weight.unsqueeze(1), x.shape[-1]
        if past is None:
            out = F.conv1d(x.to(weight.dtype), weight, self.conv_bias, padding=self.d_conv - 1, groups=self.inner)[..., :T]
        else:
            full = self.conv_cache(torch.cat((past, x), dim=-1).to(weight.dtype))  # (B, d_inner, d_conv + 1)
            out = F.conv1d(full, weight, self.conv_bias, groups=self.inner)[:, :, -T:]
        return F.silu(out).to(x.dtype)

    def forward(self, x: torch.Tensor, rope: object = None, past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: object = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the convolution state (B, d_inner, d_conv) and the
        SSM state (B, d_inner, d_s) fp32, before x's one token (transformers' mamba_selective_state_update)."""
        Bsz, T, _ = x.shape
        if past is not None and T != 1:
            raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
        xs, z = self.xz(self.in_proj(x).transpose(1, 2)).chunk(2, dim=1)  # (B, d_inner, T) each
        xs = self.conv(self.convolve(xs, None if past is None else past[0]))  # (B, d_inner, T)
        dt, B, C = self.x_proj(xs.transpose(1, 2)).split([self.r, self.n, self.n], dim=-1)
        dt, B, C = (self.dt(rms(dt, self.dt_norm, self.eps)), self.B(rms(B, self.b_norm, self.eps)),
                    self.C(rms(C, self.c_norm, self.eps)))  # (B, T, r_dt), (B, T, d_s), (B, T, d_s)
        dt = (dt @ self.dt_proj.weight.T).transpose(1, 2)  # (B, d_inner, T): its bias added apart, as transformers
        # does; one matmul over the B·T rows (transformers' W_dt @ dtᵀ, batched, counts the same FLOPs)
        delta = self.delta(F.softplus(dt + self.dt_proj.bias.float().to(dt.dtype)[..., None]))  # Δ (B, d_inner, T)
        A = -torch.exp(self.A_log.float())  # (d_inner, d_s)
        dA = torch.exp(A[None, :, None, :] * delta[..., None])  # (B, d_inner, T, d_s), fp32
        dBx = delta[..., None] * B[:, None].float() * xs[..., None].float()  # (Δ·x) ⊗ B, (B, d_inner, T, d_s)
        if past is None:
            S = self.states(scan(dA, dBx))  # (B, d_inner, T, d_s)
        else:
            S = past[1].float()[:, :, None] * dA + dBx  # one step from the cached state
        self.state(S[:, :, -1])  # (B, d_inner, d_s), fp32
        y = (S.transpose(1, 2).to(x.dtype) @ C.unsqueeze(-1)).squeeze(-1).transpose(1, 2)  # S C, (B, d_inner, T)
        y = self.scan(y + xs * self.D[None, :, None])  # + D·x
        gated = self.gated(y * F.silu(z))  # (B, d_inner, T)
        return self.out_proj(gated.transpose(1, 2).to(x.dtype))  # (B, T, d)


def module(cfg: Config) -> nn.Module:
    """One Mamba block's mixer."""
    return Mamba1(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`) --------------------------------------------------
ROWS: dict[str, tuple[str, str]] = {
    "in_proj": ("(B, T, 2d_inner)", "x W_in: the convolution's x and the gate z"),
    "xz": ("(B, 2d_inner, T)", "x and z, channels first for the convolution"),
    "conv": ("(B, d_inner, T)", "SiLU of the causal convolution: d_conv taps per channel, each position and the "
             "d_conv − 1 before it"),
    "x_proj": ("(B, T, r_dt + 2d_s)", "x W_x: the step's low-rank dt, B and C"),
    "dt": ("(B, T, r_dt)", "dt, RMS-normed (Jamba's norm)"),
    "B": ("(B, T, d_s)", "B, RMS-normed: what a token writes to each channel's state"),
    "C": ("(B, T, d_s)", "C, RMS-normed: how a token reads it"),
    "delta": ("(B, d_inner, T)", "Δ = softplus(W_dt dt + b_dt): each channel's step, its decay exp(Δ·A) and its "
              "write's weight"),
    "states": ("(B, d_inner, T, d_s)", "the state after each token, all T of them (the scan by chunks of ⌈√T⌉), fp32"),
    "state": ("(B, d_inner, d_s)", "the state S after the last token: fixed whatever T, what the cache keeps (fp32); "
              "attention's (B, h, T, T) scores have no counterpart"),
    "scan": ("(B, d_inner, T)", "y = S C + D·x per token"),
    "gated": ("(B, d_inner, T)", "y times SiLU(z)"),
    "out_proj": ("(B, T, d)", "output projection, d_inner → d"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """A Mamba block's rows, under "mb." (`model.tensor_notation` places them under the block's mixer)."""
    if present(cfg):
        rows.update({"mb." + name: row for name, row in ROWS.items()})


# --- a decode step (`model.inference`) -------------------------------------------------------------------------------
WRITTEN = "the new token's K and V written in the attention blocks, and each Mamba block's states rewritten"


def cache_shapes(cfg: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's states for B sequences as transformers' LinearAttentionLayer holds them: the convolution state (B,
    d_inner, d_conv) at the model's dtype and the SSM state (B, d_inner, d_s) at fp32."""
    return (cfg.B, cfg.mamba1_inner, cfg.conv_width), (cfg.B, cfg.mamba1_inner, cfg.mamba1_state)


def decode_flops(cfg: Config) -> Expr:
    """One Mamba block's FLOPs per new token in a decode step: the projections, the convolution over its d_conv kept
    positions and the new one (2 outputs computed, the last kept), and the state read by C (its write is elementwise,
    transformers' mamba_selective_state_update)."""
    return E("{p} + 4d_conv·d_inner + 2d_inner·d_s", p=projections(cfg))


def decode_state_flops(cfg: Config) -> Expr:
    """A decode step's products with the state, all L_mb blocks, B new tokens: 2B·L_mb·d_inner·d_s (the read)."""
    return E("2B·L_mb·d_inner·d_s")


DECODE_ROWS: dict[str, tuple[str, str]] = {  # a decode step's tensors of a Mamba block (its first one's)
    "mb.conv_cache": ("(B, d_inner, d_conv + 1)", "the convolution state's d_conv positions and the new token's x"),
    "mb.states": ("(B, d_inner, 1, d_s)", "the state after the new token: decayed, (Δ·x) ⊗ B added (fp32), the same "
                  "size after {T} cached tokens as after one"),
    "mb.scan": ("(B, d_inner, 1)", "y = S C + D·x, the new token's output"),
}


LAST_CHANGE = ("mamba1", NAME)  # its step from the GPT-2 twin, the chain's last (`model.changes`): key, short name
CHANGE_TITLES = {"mamba1": (
    "Mamba in L_mb = {L_mb} of the L = {L} blocks: a fixed state (B, d_inner, d_s) in place of {kv_what} — d_inner = "
    "{d_inner} channels of d_s = {d_s} per sequence whatever T, where {kv_what} grew by {kv_grew} numbers a token — "
    "and no q kᵀ over all T keys there: those blocks' FLOPs per token no longer grow with T")}
ORDER_NOTE = ("Mamba comes last: the changes before it reach this model with attention in every block (as its "
              "attention blocks have it), and its change puts a fixed state in the L_mb blocks' attention's place; "
              "its FLOPs per token are the real count at this T, so their formula divides by T ((T + d_conv − 1)/T "
              "for the convolution's padded positions).")
NO_PEAK = ("Mamba's training step's peak is measured at one B and T (its scan by chunks of ⌈√T⌉ makes a different "
           "number of tensors as T grows), so it has no formula of them yet, and this page's training card follows "
           "them by formulas: print this model's with: {command}")


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers its change's title names (`model.changes.title_values`), none without it."""
    if not present(cfg):
        return {}
    values = dict(L_mb=cfg.L_mb, d_inner=cfg.mamba1_inner, d_s=cfg.mamba1_state)
    return {k: f"{v:,}" for k, v in values.items()}


def order_note(cfg: Config) -> list[str]:
    """Where its change comes in the chain, in words."""
    return [ORDER_NOTE] if present(cfg) else []


def words(cfg: Config) -> list[str]:
    """The model's Mamba blocks in the recipe's words (`model.report`)."""
    if not present(cfg):
        return []
    return [f"Mamba in {cfg.L_mb:,} of {cfg.L:,} blocks (a fixed state of d_inner = {cfg.mamba1_inner:,} channels of "
            f"{cfg.mamba1_state:,} in place of a growing KV cache)"]
