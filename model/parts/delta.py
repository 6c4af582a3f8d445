"""Gated DeltaNet (Qwen3-Next's and Qwen3.5's linear attention), in place of attention in the blocks `linear_layers`
lists: a block with no (B, h, T, T) scores and no growing cache. Each of its h_lv value heads keeps a fixed state S,
a (d_lk, d_lv) matrix: a token decays it (by exp(g), a learned rate per head) and writes to it by the delta rule (S
moves towards v along k by β, a learned gate), and its query reads it (o = q S). Cached, the state stays
(B, h_lv, d_lk, d_lv) whatever T, beside a causal convolution's last d_conv tokens of q, k and v.

Per block (transformers' Qwen3NextGatedDeltaNet, its torch path):
- x (B, T, d) -> q, k (h_lk heads of d_lk), v and the output gate z (h_lv heads of d_lv) by one matrix
  (d, 2h_lk·d_lk + 2h_lv·d_lv), and β and the decay's a (h_lv each) by another (d, 2h_lv);
- q, k, v through a depthwise causal convolution of d_conv taps (no bias) and SiLU: transformers pads both ends by
  d_conv − 1, runs it over T + d_conv − 1 positions and keeps the first T;
- g = −exp(A_log)·softplus(a + dt_bias) (A_log, dt_bias: h_lv each), β = sigmoid(b); q and k to unit L2 norm, q by
  1/√d_lk; each q/k head serves h_lv/h_lk value heads;
- the chunked delta rule (`chunked_rule`): T padded to T_pad, whole chunks of 64 tokens, and within each chunk two
  (64, 64) products and two triangular solves, then a scan over the chunks that reads and writes the state;
- the output RMS-normed per head (a gain of d_lv), times SiLU(z), and projected back by (h_lv·d_lv, d).

FLOPs are torch's flop counter's (`model.passes`): its matmuls and the convolution. The chunked rule's two
triangular solves (torch.linalg.solve_triangular) are in no flop formula of torch's, so neither count has them.
"""
from __future__ import annotations

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

CHUNK = 64  # tokens per chunk of transformers' chunked rule (torch_chunk_gated_delta_rule's chunk_size)
KEY = "lin"  # a Gated DeltaNet block's kind ends "_lin" ("moe_lin"), its mixer is `Block.lin`, its lines "params/lin…"
BLOCKS = "linear_layers"  # the field that lists its blocks
LIN = "_" + KEY  # a Gated DeltaNet block's kind: its MLP's and this suffix ("moe_lin": `Config.block_kinds`)
COUNT = "L_lin"  # the symbol that numbers its blocks
NAME = "Gated DeltaNet"


def _width(name: str, symbol: str, hi: int, example: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="linear", needs="linear_layers", control=False)


FIELDS = (  # Qwen3-Next-80B-A3B: h_lk 16, h_lv 32, d_lk = d_lv = 128, d_conv 4
    Field("linear_layers", "blocks", "blocks whose mixer is Gated DeltaNet (linear attention with a fixed state) in "
          "attention's place, by index (default none)", default=(), group="linear", control=False),
    _width("linear_k_heads", "h_lk", 4_096, "16"),
    _width("linear_v_heads", "h_lv", 4_096, "32"),
    _width("linear_k_dim", "d_lk", 4_096, "128"),
    _width("linear_v_dim", "d_lv", 4_096, "128"),
    Field("conv_width", "whole", SYMBOL_DOCS["d_conv"], symbol="d_conv", bounds=(1, 64), optional=True, example="4",
          group="linear", needs="linear_layers", control=False),  # Mamba 2's and KDA's too (`model.parts.mamba`, `kda`)
)
SIZES = tuple(f.name for f in FIELDS[1:])
STAND_IN = {"linear_k_heads": 2, "linear_v_heads": 4, "linear_k_dim": 4, "linear_v_dim": 4, "conv_width": 4}  # small
# sizes of a stand-in model of the same tensors (`model.recipe_rows`)


def check(cfg: Config) -> None:
    """Gated DeltaNet's fields together (ValueError naming the problem and the fix)."""
    if not cfg.linear_layers:
        for name in SIZES:
            if name == "conv_width" and getattr(cfg, name) is not None and not (cfg.mamba_layers or cfg.kda_layers
                                                                                      or cfg.mamba1_layers):
                raise ValueError(f"conv_width={cfg.conv_width!r} is set but none of linear_layers, mamba_layers, "
                                 "kda_layers and mamba1_layers is: conv_width is a size of Gated DeltaNet, Mamba 2, Kimi delta "
                                 "attention and Mamba blocks; list them or drop conv_width")
            if getattr(cfg, name) is not None and name != "conv_width":
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but linear_layers is not: {name} is a size of "
                                 "Gated DeltaNet blocks; list them in linear_layers or drop " + name)
        return
    below("linear_layers", cfg.linear_layers, cfg.L)
    if cfg.L_lin == cfg.L:
        raise ValueError(f"linear_layers lists every block (L={cfg.L:,}): a model of Gated DeltaNet blocks alone is not "
                         "modelled yet (its figures compare them with the attention blocks); keep one attention block")
    for f in FIELDS[1:]:
        if getattr(cfg, f.name) is None:
            raise ValueError(f"Gated DeltaNet blocks (linear_layers) need {f.symbol}: set {f.name} ({f.doc}; "
                             f"Qwen3-Next: {f.example})")
    if cfg.linear_v_heads % cfg.linear_k_heads:
        raise ValueError(f"h_lv={cfg.linear_v_heads:,} is not a multiple of h_lk={cfg.linear_k_heads:,}: each q/k head "
                         "of a Gated DeltaNet block serves h_lv/h_lk value heads; choose h_lk dividing h_lv")
    if cfg.mla or cfg.window is not None or cfg.sinks or cfg.nope_layers:
        raise ValueError("Gated DeltaNet blocks beside latent attention, a window, sinks or NoPE blocks are not "
                         "modelled: drop linear_layers or those")
    if len({cfg.mlp_kinds[i] for i in cfg.linear_layers}) > 1:
        raise ValueError("Gated DeltaNet blocks with dense MLPs and with a mixture of experts in one model are not "
                         "modelled: make the linear_layers blocks' MLPs of one kind (moe_step, dense_layers)")


def present(cfg: Config) -> bool:
    """Some blocks mix with Gated DeltaNet."""
    return bool(cfg.linear_layers)


def blocks(cfg: Config) -> tuple[int, ...]:
    """The blocks it mixes (`linear_layers`)."""
    return cfg.linear_layers


def chunk(cfg: Config) -> int:
    """Tokens per chunk of the chunked rule (`CHUNK`)."""
    return CHUNK


def symbols(cfg: Config) -> dict[str, int]:
    """Its symbols' values (`Config.symbols`)."""
    return {"L_lin": cfg.L_lin, "h_lk": cfg.h_lk, "h_lv": cfg.h_lv, "d_lk": cfg.d_lk, "d_lv": cfg.d_lv,
            "d_conv": cfg.d_conv, "T_pad": cfg.T_pad, "n_c": cfg.n_c, "T_r": cfg.T_r}


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", Gated DeltaNet on 36"."""
    return f", Gated DeltaNet on {cfg.L_lin}" if present(cfg) else ""


def sizes(cfg: Config) -> dict[str, object]:
    """Its fields and L_lin in a configuration's JSON, none without it."""
    if not present(cfg):
        return {}
    return {"linear_layers": list(cfg.linear_layers), **{n: getattr(cfg, n) for n in SIZES}, "L_lin": cfg.L_lin}


# --- its parameters and FLOPs, as expressions of the symbols ----------------------------------------------------------
CONV = E("(2h_lk·d_lk + h_lv·d_lv)")  # the convolution's channels: q, k and v


def weights(cfg: Config) -> Expr:
    """One block's matrices: q, k, v, z (d, 2h_lk·d_lk + 2h_lv·d_lv), β and a (d, 2h_lv), out (h_lv·d_lv, d), and the
    convolution's d_conv taps per channel."""
    return E("d·(2h_lk·d_lk + 2h_lv·d_lv + 2h_lv) + h_lv·d_lv·d + d_conv·{c}", c=CONV)


def extras(cfg: Config) -> list[Expr]:
    """Its parameters that no matmul or convolution uses: A_log and dt_bias (h_lv each), the output norm's gain
    (d_lv)."""
    return [E("2h_lv + d_lv")]


def projections(cfg: Config) -> Expr:
    """The projections' FLOPs per token: 2 per weight of the three matrices."""
    return E("2d·(2h_lk·d_lk + 2h_lv·d_lv + 2h_lv) + 2h_lv·d_lv·d")


def conv_flops(cfg: Config) -> Expr:
    """The convolution's FLOPs per token as transformers runs it: 2·d_conv per channel and position, over T + d_conv
    − 1 positions (padded at both ends) for T tokens."""
    return E("2d_conv·{c}·(T + d_conv − 1)/T", c=CONV)


def rule_flops(cfg: Config) -> Expr:
    """The chunked rule's matmul FLOPs per token: per value head and chunk of 64 tokens, k_β kᵀ and q kᵀ (2·64²·d_lk
    each), then in the scan the state read twice and written once (2·64·d_lk·d_lv each) and the chunk's attention over
    its new values (2·64²·d_lv); T_pad/64 chunks for T tokens."""
    return E("h_lv·T_pad·(256d_lk + 128d_lv + 6d_lk·d_lv)/T")


def flops(cfg: Config) -> Expr:
    """One block's FLOPs per token as the code runs (`model.passes`): projections, convolution and the chunked rule."""
    return E("{p} + {c} + {r}", p=projections(cfg), c=conv_flops(cfg), r=rule_flops(cfg))


# --- what its pass keeps for backward ---------------------------------------------------------------------------------
MASK_BYTES = CHUNK * CHUNK  # the chunked rule's (64, 64) bool mask above the diagonal, one byte an element


def z_view(cfg: Config) -> bool:
    """The output gate z is a view of the q, k, v, z projection's output (no copy) where each q/k head serves one value
    head or there is one q/k head (h_lk = h_lv or h_lk = 1): its split reshapes without copying, so an fp32 pass keeps
    the whole projection (B, T, 2h_lk·d_lk + 2h_lv·d_lv) for SiLU(z)'s backward where otherwise it keeps z alone."""
    return present(cfg) and (cfg.linear_k_heads == 1 or cfg.linear_k_heads == cfg.linear_v_heads)


def saved_parts(cfg: Config, size: int) -> dict[int, Expr]:
    """The elements one Gated DeltaNet mixer keeps for backward, by element size, for a pass at `size` bytes an element
    (2: bf16, fp16; 4: fp32): measured storages of the real module, those first saved while it runs (the block's
    normed input x included), checked against every pass (`model.memory.saved_formula`, tests at T across chunk
    boundaries).

    At the model's dtype: x (B, T, d), the convolution's input and its output over T + d_conv − 1 positions (B, C, T)
    and (B, C, T + d_conv − 1), C = 2h_lk·d_lk + h_lv·d_lv, b for β (B, T, h_lv), and three (B, T, h_lv, d_lv) of the
    output's norm and gate. At fp32, whatever the dtype: A_log's exp and its negation (h_lv each), softplus's input and
    output and both l2 norms' statistics ((B, T, h_lv) each, and the output norm's), q and k (B, h_lv, T, d_lk); the
    padded β, v and k (T_pad), the chunks' decays and (64, 64) products (five of (B, h_lv, T_pad, 64)), k_β, q, k and the
    solve's w (B, h_lv, T_pad, d_lk; w kept once a later chunk reads the state: T_r), u and v_new per chunk (B, h_lv,
    T_pad, d_lv), the cumulative decays (B, h_lv, T_pad), the last decay of each chunk (B, h_lv, n_c) and the state
    each chunk reads, n_c of (B, h_lv, d_lk, d_lv); one (64, 64) bool mask. A 16-bit pass adds fp32 copies of the
    output (B, T, h_lv, d_lv) four times; an fp32 pass keeps the rule's padded output (B, h_lv, T_pad, d_lv) and two
    more at its dtype, and the whole projection where z is a view of it (`z_view`)."""
    states = E("2h_lv + B·(5T·h_lv + 2T·h_lv·d_lk + 324h_lv·T_pad + 5h_lv·T_pad·d_lk + h_lv·T_r·d_lk + "
               "3h_lv·T_pad·d_lv + h_lv·n_c + n_c·h_lv·d_lk·d_lv)")
    mask = {1: E(str(MASK_BYTES))}
    if size != STATE_BYTES:
        return {size: E("B·(T·d + 2T·{c} + (d_conv − 1)·{c} + T·h_lv + 3T·h_lv·d_lv)", c=CONV),
                STATE_BYTES: E("{s} + 4B·T·h_lv·d_lv", s=states), **mask}
    gate = " + T·{c}" if z_view(cfg) else ""  # the projection's output in z's place: d more per (q, k, v) channel
    own = E("B·(T·d + 2T·{c} + (d_conv − 1)·{c} + T·h_lv + 5T·h_lv·d_lv + h_lv·T_pad·d_lv" + gate + ")", c=CONV)
    return {STATE_BYTES: E("{o} + {s}", o=own, s=states), **mask}


PROBES = ((2, 2, 3, 5, 3), (3, 2, 2, 4, 4), (2, 3, 4, 3, 2), (3, 3, 5, 2, 3))  # (h_lk, h_lv/h_lk, d_lk, d_lv, d_conv)
# at `model.memory`'s four recipe probes


def probe(i: int, structure: object) -> dict[str, object]:
    """Its fields at `model.memory`'s recipe probe i: h_lv = r·h_lk, or h_lv = h_lk where z is a view of the
    projection (the structure's `z_view`)."""
    h_lk, r, d_lk, d_lv, d_conv = PROBES[i]
    return {"linear_k_heads": h_lk, "linear_v_heads": h_lk * (1 if structure.z_view else r), "linear_k_dim": d_lk,
            "linear_v_dim": d_lv, "conv_width": d_conv}


def saved(cfg: Config, size: int) -> Expr:
    """One Gated DeltaNet mixer's saved bytes for backward (`saved_parts`, each size times its elements)."""
    parts = saved_parts(cfg, size)
    return E(" + ".join(f"{k}·({{p{k}}})" if k > 1 else f"{{p{k}}}" for k in parts),
             **{f"p{k}": v for k, v in parts.items()})


SAYS = {  # the words Gated DeltaNet adds to the budget's lines (`model.parts.says`)
    "budget/scored": ", in the L − L_lin attention blocks; and the chunked delta rule's products in the L_lin Gated "
                     "DeltaNet blocks (k_β kᵀ, q kᵀ within each chunk of 64, the state read and written)",
    "budget/share": "the share of the measured forward FLOPs in products of activations: attention's scores and the "
                    "delta rule's",
    "memory/saved": "; in the L_lin Gated DeltaNet blocks, the chunked rule's tensors of T_pad tokens, its (64, 64) "
                    "products per chunk and the n_c states the chunks read",
    "budget/blocks": "attention or Gated DeltaNet",
    "infer/kv_cache": " in the attention blocks, and each Gated DeltaNet block's states whatever T (convolution at "
                      "16 bits, recurrent at fp32)",
    "infer/decode_attn": " in the attention blocks, and the Gated DeltaNet blocks' products with their state (read twice, "
                         "written once)",
    "budget/T_equal": "T at which the attention blocks' q kᵀ and attn @ v equal every other FLOP of the blocks (the "
                      "Gated DeltaNet blocks' taken at this T)",
}


def flop_steps(f: Formulas) -> list[Line]:
    """The step from 2N to the measured FLOPs that the convolution adds (`model.budgeting.budget_lines`): 2N counts
    its d_conv taps once per token, transformers' convolution runs over T + d_conv − 1 positions for T tokens."""
    cfg = f.cfg
    if not present(cfg):
        return []
    return [line("flops/steps/conv", "+ the Gated DeltaNet convolution's d_conv − 1 padded positions: transformers "
                 "convolves T + d_conv − 1 positions and keeps T", E("2L_lin·d_conv·{c}·(d_conv − 1)/T", c=CONV),
                 f.symbols, "FLOP")]


def label(cfg: Config) -> str:
    return ("Gated DeltaNet, one block: q, k, v, z (d, 2h_lk·d_lk + 2h_lv·d_lv), β and a (d, 2h_lv), the causal "
            "convolution (d_conv taps of q, k and v), A_log and dt_bias, the output norm and out (h_lv·d_lv, d)")


# --- its state: what inference keeps, whatever T ----------------------------------------------------------------------
def state(cfg: Config) -> Expr:
    """One block's recurrent state per sequence, in elements: h_lv heads of (d_lk, d_lv)."""
    return E("h_lv·d_lk·d_lv")


def conv_state(cfg: Config) -> Expr:
    """One block's convolution state per sequence, in elements: the last d_conv positions of q, k and v (transformers'
    LinearAttentionLayer keeps d_conv of them, not d_conv − 1)."""
    return E("d_conv·{c}", c=CONV)


STATE_BYTES = 4  # transformers' torch path computes and keeps the recurrent state in fp32, whatever the model's dtype


def states(cfg: Config, size: int) -> Expr:
    """The L_lin blocks' states for B sequences in bytes: the convolution's at `size` bytes an element, the recurrent
    one's at fp32 (`STATE_BYTES`)."""
    return E("L_lin·B·({c}·{b} + {r}·{f})", c=conv_state(cfg), b=size, r=state(cfg), f=STATE_BYTES)


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """What inference keeps at `dtype` (`size` bytes an element) beside Gated DeltaNet blocks, as transformers' cache
    holds it after a prefill of B sequences of T tokens: K and V of the L − L_lin attention blocks (DynamicLayer,
    (B, h_kv, T, d_head) each), and each Gated DeltaNet block's LinearAttentionLayer: the convolution state (B,
    2h_lk·d_lk + h_lv·d_lv, d_conv) at `dtype` and the recurrent state (B, h_lv, d_lk, d_lv) at fp32 (transformers'
    torch path computes and keeps it so). Then one more token's bytes (the attention blocks' only: the states stay), the
    parts, and what attention in every block would keep (the all-attention twin's cache) and the ratio."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    kv = E("{e}·{b}", e=attention.cache(cfg, E("(L − L_lin)·BT")), b=size)
    whole = E("{kv} + {st}", kv=kv, st=states(cfg, size))
    twin = E("{e}·{b}", e=attention.cache(cfg, E("LBT")), b=size)
    return [
        line("memory/kv_cache", f"cache at {dtype}: keys and values of h_kv heads of d_head in the L − L_lin = "
             f"{cfg.L - cfg.L_lin:,} attention blocks, B sequences of T tokens, and the L_lin = {cfg.L_lin:,} Gated "
             f"DeltaNet blocks' states, whatever T", whole, s, "bytes"),
        line("memory/kv_cache_per_token", f"cache per token of context at {dtype} (one sequence, one more token): the "
             "attention blocks' K and V only, a Gated DeltaNet block's state stays as it is",
             E("{e}·{b}", e=attention.cache(cfg, E("(L − L_lin)")), b=size), s, "bytes"),
        line("memory/kv_cache_attention", "of it, the attention blocks' K and V: all T tokens each", kv, s, "bytes"),
        line("memory/state_conv", f"of it, the Gated DeltaNet blocks' convolution states at {dtype}: the last d_conv "
             "positions of q, k and v, (B, 2h_lk·d_lk + h_lv·d_lv, d_conv) each",
             E("L_lin·B·{c}·{b}", c=conv_state(cfg), b=size), s, "bytes"),
        line("memory/state_recurrent", "of it, their recurrent states at fp32 (transformers keeps them so at any "
             "dtype): (B, h_lv, d_lk, d_lv) each", E("L_lin·B·{c}·{f}", c=state(cfg), f=STATE_BYTES), s, "bytes"),
        line("memory/kv_cache_all_attention", f"the all-attention twin's cache at {dtype}: attention in every block, "
             "keys and values of all T tokens", twin, s, "bytes"),
        line("memory/kv_cache_lin_ratio", "Gated DeltaNet divides the cache by (the twin's over this one)",
             E("({t}) / ({w})", t=twin, w=whole), s, "ratio"),
    ]


# --- the module in the real forward pass ------------------------------------------------------------------------------
def l2_unit(x: torch.Tensor) -> torch.Tensor:
    """x over its last dim to unit L2 norm (transformers' l2norm: x · rsqrt(Σx² + 1e-6))."""
    return x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + 1e-6)


def chunked_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
                 state: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The gated delta rule by chunks of `CHUNK` tokens, transformers' torch_chunk_gated_delta_rule: q, k (B, h_lv, T,
    d_lk), unit-normed, q scaled; v (B, h_lv, T, d_lv); g, β (B, h_lv, T); all fp32. -> the output (B, h_lv, T, d_lv)
    and the final state (B, h_lv, d_lk, d_lv), from `state` (zeros where None)."""
    B, H, T, _ = k.shape
    d_v = v.shape[-1]
    pad = (CHUNK - T % CHUNK) % CHUNK
    q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
    beta, g = (F.pad(x, (0, pad)) for x in (beta, g))
    n = (T + pad) // CHUNK
    v_beta, k_beta = v * beta.unsqueeze(-1), k * beta.unsqueeze(-1)
    q, k, k_beta, v_beta = (x.reshape(B, H, n, CHUNK, x.shape[-1]) for x in (q, k, k_beta, v_beta))
    g = g.reshape(B, H, n, CHUNK).cumsum(dim=-1)  # each position's decay since its chunk began, in log space
    upper = torch.ones(CHUNK, CHUNK, dtype=torch.bool, device=q.device).triu(1)
    decay = (g.unsqueeze(-1) - g.unsqueeze(-2)).masked_fill(upper, float("-inf")).exp()  # (B, h_lv, n, 64, 64)
    system = (k_beta @ k.transpose(-1, -2)) * decay
    inner = (q @ k.transpose(-1, -2)) * decay
    u = torch.linalg.solve_triangular(system, v_beta, upper=False, unitriangular=True)
    w = torch.linalg.solve_triangular(system, k_beta * g.exp().unsqueeze(-1), upper=False, unitriangular=True)
    q = q * g.exp().unsqueeze(-1)
    k = k * (g[..., -1:] - g).exp().unsqueeze(-1)
    out, S = scan(q, k, u, w, inner, g[..., -1].exp()[..., None, None], state)
    return out.reshape(B, H, -1, d_v)[:, :, :T], S


def scan(q: torch.Tensor, k: torch.Tensor, u: torch.Tensor, w: torch.Tensor, inner: torch.Tensor, last: torch.Tensor,
         state: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """The chunked delta rule's scan over n chunks of C tokens, from `state` S (B, H, d_k, d_v) (zeros where None):
    per chunk i, the new values v_new = u_i − w_i S, the output q_i S + inner_i v_new, and S decayed by last_i and
    written kᵀ_i v_new. q, k (B, H, n, C, d_k) already decayed (q from its chunk's start, k to its chunk's end), u
    (B, H, n, C, d_v), w (B, H, n, C, d_k), inner (B, H, n, C, C) the chunk's masked q kᵀ, last (B, H, n, …) the
    chunk's whole decay, broadcast over S (Gated DeltaNet's one rate per head, Kimi delta attention's one per row).
    -> the output (B, H, n, C, d_v) and the final S."""
    B, H, n, _, d_k = k.shape
    S = torch.zeros(B * H, d_k, u.shape[-1], dtype=u.dtype, device=u.device) if state is None else \
        state.to(u).flatten(0, 1)
    out = torch.zeros_like(u)
    # B and H as one batch of 3-d views (no copies): each product one batched matmul, not matmul's broadcast and views
    q, k, u, w, inner, last, flat = (x.flatten(0, 1) for x in (q, k, u, w, inner, last, out))
    states = [S]

    def chunk(i: int) -> None:
        S = states[-1]
        v_new = u[:, i] - torch.bmm(w[:, i], S)
        flat[:, i] = torch.bmm(q[:, i], S) + torch.bmm(inner[:, i], v_new)
        states[-1] = S * last[:, i] + torch.bmm(k[:, i].transpose(-1, -2), v_new)
    loops.repeat(n, chunk, u)  # in a recorded meta pass: chunk 2 counted n − 3 times (`model.loops`)
    return out, states[-1].view(B, H, d_k, -1)


def step(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, decay: torch.Tensor, beta: torch.Tensor,
         state: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One token's gated delta rule (transformers' torch_recurrent_gated_delta_rule), as matmuls: q, k (B, H, 1, d_k),
    v (B, H, 1, d_v), β (B, H, 1), fp32, after `state` S (B, H, d_k, d_v). S decays by `decay` (exp(g), broadcast
    over S: (B, H, 1, 1) for Gated DeltaNet's one rate per head, (B, H, d_k, 1) for Kimi delta attention's one per
    row), then moves towards v along k by β: S + kᵀ·β(v − k S); the output is q S. -> ((B, H, 1, d_v), the new S).
    transformers writes the three products as elementwise sums, which torch's flop counter does not count; as
    matmuls they are counted: 2·d_k·d_v FLOPs each per head."""
    S = state.to(v) * decay
    delta = (v - k @ S) * beta.unsqueeze(-1)  # (B, H, 1, d_v)
    S = S + k.transpose(-1, -2) @ delta
    return q @ S, S


class GatedDeltaNet(nn.Module):
    """One block's Gated DeltaNet (see the module docstring), transformers' Qwen3NextGatedDeltaNet on its torch path,
    its matrices laid out as transformers lays them (q, k, v, z grouped by q/k head) so that weights copy one to one.
    Maps (B, T, d) to (B, T, d); tapped: qkvz, ba, conv (after SiLU), q, k, v, beta, g, out (the rule's), normed,
    gated, and the final state."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h_k, self.h_v = cfg.linear_k_heads, cfg.linear_v_heads
        self.d_k, self.d_v, self.d_conv = cfg.linear_k_dim, cfg.linear_v_dim, cfg.conv_width
        key, value = self.h_k * self.d_k, self.h_v * self.d_v
        self.qkvz = nn.Linear(cfg.d, 2 * key + 2 * value, bias=False)  # (d, 2h_lk·d_lk + 2h_lv·d_lv)
        self.ba = nn.Linear(cfg.d, 2 * self.h_v, bias=False)  # (d, 2h_lv)
        self.conv_weight = nn.Parameter(torch.randn(2 * key + value, self.d_conv) * 0.02)  # depthwise, no bias
        self.dt_bias = nn.Parameter(torch.ones(self.h_v))
        self.A_log = nn.Parameter(torch.zeros(self.h_v))
        self.norm_weight = nn.Parameter(torch.ones(self.d_v))  # the output norm's gain (d_lv,)
        self.out_proj = nn.Linear(value, cfg.d, bias=False)  # (h_lv·d_lv, d)
        for name in ("mixed", "conv", "q", "k", "v", "z", "beta", "g", "rule", "state", "normed", "gated", "conv_cache"):
            setattr(self, name, Tap())

    def split(self, qkvz: torch.Tensor, ba: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """transformers' fix_query_key_value_ordering: per q/k head [q d_lk, k d_lk, v r·d_lv, z r·d_lv] and [b r,
        a r], r = h_lv/h_lk -> q, k (B, T, h_lk·d_lk), v, z (B, T, h_lv, d_lv), b, a (B, T, h_lv)."""
        B, T, _ = qkvz.shape
        r = self.h_v // self.h_k
        q, k, v, z = qkvz.view(B, T, self.h_k, -1).split([self.d_k, self.d_k, r * self.d_v, r * self.d_v], dim=3)
        b, a = ba.view(B, T, self.h_k, 2 * r).split([r, r], dim=3)
        return (q.reshape(B, T, -1), k.reshape(B, T, -1), v.reshape(B, T, -1), z.reshape(B, T, self.h_v, self.d_v),
                b.reshape(B, T, self.h_v), a.reshape(B, T, self.h_v))

    def forward(self, x: torch.Tensor, rope: object = None, past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: object = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the convolution state (B, 2h_lk·d_lk + h_lv·d_lv,
        d_conv) and the recurrent state (B, h_lv, d_lk, d_lv) fp32, before x's one token (`step`)."""
        B, T, _ = x.shape
        q, k, v, z, b, a = self.split(self.qkvz(x), self.ba(x))
        mixed = self.mixed(torch.cat((q, k, v), dim=-1).transpose(1, 2))  # (B, 2h_lk·d_lk + h_lv·d_lv, T)
        channels = mixed.shape[1]
        if past is not None:  # transformers' causal_conv1d_update: the d_conv kept positions and the new one
            if T != 1:
                raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
            mixed = self.conv_cache(torch.cat((past[0], mixed), dim=-1))  # (B, C, d_conv + 1)
            conv = F.conv1d(mixed, self.conv_weight.unsqueeze(1), groups=channels)[:, :, -1:]
        else:
            conv = F.conv1d(mixed, self.conv_weight.unsqueeze(1), padding=self.d_conv - 1, groups=channels)[:, :, :T]
        conv = self.conv(F.silu(conv).transpose(1, 2))  # (B, T, 2h_lk·d_lk + h_lv·d_lv)
        key = self.h_k * self.d_k
        q, k, v = conv.split([key, key, self.h_v * self.d_v], dim=-1)
        r = self.h_v // self.h_k
        q, k = (t.view(B, T, self.h_k, self.d_k).repeat_interleave(r, dim=2) for t in (q, k))  # h_lv heads
        beta = self.beta(b.sigmoid())  # (B, T, h_lv)
        g = self.g(-self.A_log.float().exp() * F.softplus(a.float() + self.dt_bias))  # (B, T, h_lv), ≤ 0
        q, k, v, beta, g = (t.transpose(1, 2).float().contiguous() for t in (q, k, v.view(B, T, self.h_v, self.d_v),
                                                                            beta, g))
        q = self.q(l2_unit(q) * self.d_k ** -0.5)  # (B, h_lv, T, d_lk)
        k = self.k(l2_unit(k))
        if past is None:
            out, S = chunked_rule(q, k, self.v(v), g, beta)
        else:
            out, S = step(q, k, self.v(v), g.exp()[..., None], beta, past[1])  # g: (B, h_lv, 1) -> (…, 1, 1)
        self.state(S)  # (B, h_lv, d_lk, d_lv), fp32
        out = self.rule(out.transpose(1, 2).to(x.dtype))  # (B, T, h_lv, d_lv)
        normed = out.float() * torch.rsqrt(out.float().pow(2).mean(-1, keepdim=True) + 1e-6)
        normed = self.normed(self.norm_weight * normed.to(x.dtype))
        gated = self.gated((normed * F.silu(self.z(z).float())).to(x.dtype))  # (B, T, h_lv, d_lv)
        return self.out_proj(gated.reshape(B, T, self.h_v * self.d_v))  # (B, T, d)


def module(cfg: Config) -> nn.Module:
    """One Gated DeltaNet block's mixer."""
    return GatedDeltaNet(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`) --------------------------------------------------
ROWS: dict[str, tuple[str, str]] = {
    "qkvz": ("(B, T, 2h_lk·d_lk + 2h_lv·d_lv)", "x W_qkvz: q, k (h_lk heads of d_lk), v and the output gate z (h_lv "
             "heads of d_lv)"),
    "ba": ("(B, T, 2h_lv)", "x W_ba: β's and the decay's inputs, one per value head"),
    "mixed": ("(B, 2h_lk·d_lk + h_lv·d_lv, T)", "q, k and v side by side, channels first for the convolution"),
    "conv": ("(B, T, 2h_lk·d_lk + h_lv·d_lv)", "SiLU of the causal convolution: d_conv taps per channel, each position and the d_conv − 1 "
             "before it"),
    "z": ("(B, T, h_lv, d_lv)", "the output gate z, per value head"),
    "beta": ("(B, T, h_lv)", "β = sigmoid(b): how far each token writes its value into the state"),
    "g": ("(B, T, h_lv)", "g = −exp(A_log)·softplus(a + dt_bias): each token's decay of the state, in log space "
          "(fp32)"),
    "q": ("(B, h_lv, T, d_lk)", "q to unit norm, by 1/√d_lk, each q/k head serving h_lv/h_lk value heads (fp32)"),
    "k": ("(B, h_lv, T, d_lk)", "k to unit norm (fp32)"),
    "v": ("(B, h_lv, T, d_lv)", "v (fp32)"),
    "state": ("(B, h_lv, d_lk, d_lv)", "the state S after the last token: fixed whatever T, what the cache keeps "
              "(fp32); attention's (B, h, T, T) scores have no counterpart"),
    "rule": ("(B, T, h_lv, d_lv)", "the delta rule's output o = q S, chunk by chunk of 64 tokens"),
    "normed": ("(B, T, h_lv, d_lv)", "o RMS-normed per head, times its gain"),
    "gated": ("(B, T, h_lv, d_lv)", "times SiLU(z)"),
    "out_proj": ("(B, T, d)", "output projection, h_lv·d_lv → d"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """A Gated DeltaNet block's rows, under "lin." (`model.tensor_notation` places them under the block's mixer)."""
    if present(cfg):
        rows.update({"lin." + name: row for name, row in ROWS.items()})


# --- a decode step (`model.inference`) -------------------------------------------------------------------------------
WRITTEN = "the new token's K and V written in the attention blocks, and each Gated DeltaNet block's states rewritten"


def cache_shapes(cfg: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's states for B sequences as transformers' LinearAttentionLayer holds them: the convolution state (B,
    2h_lk·d_lk + h_lv·d_lv, d_conv) at the model's dtype and the recurrent state (B, h_lv, d_lk, d_lv) at fp32."""
    channels = 2 * cfg.linear_k_heads * cfg.linear_k_dim + cfg.linear_v_heads * cfg.linear_v_dim
    return (cfg.B, channels, cfg.conv_width), (cfg.B, cfg.linear_v_heads, cfg.linear_k_dim, cfg.linear_v_dim)


def decode_flops(cfg: Config) -> Expr:
    """One Gated DeltaNet block's FLOPs per new token in a decode step: the projections, the convolution over its d_conv
    kept positions and the new one (transformers' causal_conv1d_update computes 2 outputs and keeps the last), and the
    state read twice and written once (`step`)."""
    return E("{p} + 4d_conv·{c} + 6h_lv·d_lk·d_lv", p=projections(cfg), c=CONV)


def decode_state_flops(cfg: Config) -> Expr:
    """A decode step's products with the state, all L_lin blocks, B new tokens: 6B·L_lin·h_lv·d_lk·d_lv."""
    return E("6B·L_lin·h_lv·d_lk·d_lv")


DECODE_ROWS: dict[str, tuple[str, str]] = {  # a decode step's tensors of a Gated DeltaNet block (its first one's)
    "lin.conv_cache": ("(B, 2h_lk·d_lk + h_lv·d_lv, d_conv + 1)", "the convolution state's d_conv positions and the new "
                       "token's q, k and v"),
    "lin.q": ("(B, h_lv, 1, d_lk)", "q of the new token"),
    "lin.state": ("(B, h_lv, d_lk, d_lv)", "the state after the new token: decayed, moved towards v along k (fp32), "
                  "the same size after {T} cached tokens as after one"),
    "lin.rule": ("(B, 1, h_lv, d_lv)", "o = q S, the new token's output"),
}


LAST_CHANGE = ("delta", NAME)  # its step from the GPT-2 twin, the chain's last (`model.changes`): key, short name
CHANGE_TITLES = {"delta": (
    "Gated DeltaNet in L_lin = {L_lin} of the L = {L} blocks: a fixed state (B, h_lv, d_lk, d_lv) in place of "
    "{kv_what} — h_lv = {h_lv} heads of d_lk × d_lv = {d_lk} × {d_lv} per sequence whatever T, where {kv_what} grew "
    "by {kv_grew} numbers a token — and no q kᵀ over all T keys there: those blocks' FLOPs per token no longer grow "
    "with T (the delta rule runs over chunks of 64 tokens, T padded to T_pad)")}
ORDER_NOTE = ("Gated DeltaNet comes last: the changes before it reach this model with attention in every block (as its "
              "attention blocks have it), and its change puts a fixed state in the L_lin blocks' attention's place; "
              "its FLOPs per token are the real count at this T, so their formula divides by T (T_pad/T for the "
              "chunks of 64, (T + d_conv − 1)/T for the convolution's padded positions).")
NO_PEAK = ("Gated DeltaNet's chunked rule makes a different number of tensors for each chunk of 64 tokens, so the "
           "training step's peak has no formula of B and T yet, and this page's training card follows them by formulas: "
           "print this model's with: {command}")


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers its change's title names (`model.changes.title_values`), none without it."""
    if not present(cfg):
        return {}
    values = dict(L_lin=cfg.L_lin, h_lv=cfg.linear_v_heads, d_lk=cfg.linear_k_dim, d_lv=cfg.linear_v_dim)
    return {k: f"{v:,}" for k, v in values.items()}


def order_note(cfg: Config) -> list[str]:
    """Where its change comes in the chain, in words."""
    return [ORDER_NOTE] if present(cfg) else []


def words(cfg: Config) -> list[str]:
    """The model's Gated DeltaNet blocks in the recipe's words (`model.report`)."""
    if not present(cfg):
        return []
    return [f"Gated DeltaNet in {cfg.L_lin:,} of {cfg.L:,} blocks (a fixed state of h_lv = {cfg.linear_v_heads:,} "
            f"heads of {cfg.linear_k_dim:,} × {cfg.linear_v_dim:,} in place of a growing KV cache)"]
