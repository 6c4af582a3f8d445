"""Kimi delta attention (KDA, Kimi Linear's linear attention), in place of attention in the blocks `kda_layers` lists:
a block with no (B, h, T, T) scores and no growing cache. It is Gated DeltaNet (`model.parts.delta`) with a finer
gate: each of its h_kda heads keeps a fixed state S, a (d_kda, d_kda) matrix, and a token decays each of S's d_kda
rows at a rate of its own (exp(g), g a vector per head and token, not one number), then writes to it by the delta rule
(S moves towards v along k by β) and its query reads it (o = q S). Cached, the state stays (B, h_kda, d_kda, d_kda)
whatever T, beside a causal convolution's last d_conv positions of q, k and v.

Per block (transformers' KimiLinearDeltaAttention, its torch path):
- x (B, T, d) -> q, k, v (h_kda heads of d_kda each) by three matrices (d, h_kda·d_kda), β by one (d, h_kda);
- q, k, v through a depthwise causal convolution of d_conv taps (no bias) and SiLU: transformers pads both ends by
  d_conv − 1, runs it over T + d_conv − 1 positions and keeps the first T;
- the decay g = −exp(A_log)·softplus(x W_fa W_fb + dt_bias) by a low-rank pair (d, d_kda), (d_kda, h_kda·d_kda),
  A_log one per head, dt_bias one per channel; β = sigmoid(x W_b); q and k to unit L2 norm, q by 1/√d_kda;
- the chunked rule (`chunked_rule`): T padded to T_pad, whole chunks of 64 tokens; within each chunk the products
  k_β kᵀ and q kᵀ under the per-channel decays (elementwise sums over d_kda, as transformers writes them: no matmul),
  the triangular system's inverse applied to v_β and to k_β·exp(g) (two (64, 64) matmuls), then Gated DeltaNet's
  scan over the chunks that reads and writes the state (`model.parts.delta.scan`);
- the output RMS-normed per head (a gain of d_kda), times sigmoid of the output gate x W_ga W_gb (a low-rank pair
  like the decay's), and projected back by (h_kda·d_kda, d).

FLOPs are torch's flop counter's (`model.passes`): its matmuls and the convolution. The products under the per-channel
decays and the triangular system's inverse (a forward substitution in transformers, a triangular solve here) are
elementwise sums or no flop formula of torch's, so neither count has them.
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
from . import attention, delta, latent
from .delta import CHUNK, MASK_BYTES, STATE_BYTES, l2_unit, scan, step

if TYPE_CHECKING:
    from ..budgeting import Formulas
    from ..config import Config

KEY = "kda"  # a KDA block's kind ends "_kda" ("moe_kda"), its mixer is `Block.kda`, its lines "params/kda…"
BLOCKS = "kda_layers"  # the field that lists its blocks
COUNT = "L_kda"  # the symbol that numbers its blocks
NAME = "Kimi delta attention"
EPS = 1e-6  # the output norm's ε (transformers reads rms_norm_eps: a value only)


def _width(name: str, symbol: str, example: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, 4_096), optional=True, example=example,
                 group="linear", needs="kda_layers", control=False)


FIELDS = (  # KimiLinearConfig's defaults (Kimi-Linear-48B-A3B): 32 heads of 128, d_conv 4
    Field("kda_layers", "blocks", "blocks whose mixer is Kimi delta attention (linear attention with a fixed state, "
          "a decay per channel) in attention's place, by index (default none)", default=(), group="linear",
          control=False),
    _width("kda_heads", "h_kda", "32"),
    _width("kda_head_dim", "d_kda", "128"),
)
SIZES = tuple(f.name for f in FIELDS[1:])
STAND_IN = {"kda_heads": 2, "kda_head_dim": 4, "conv_width": 4}  # small sizes of a stand-in model of the same
# tensors (`model.recipe_rows`)


def check(cfg: Config) -> None:
    """KDA's fields together (ValueError naming the problem and the fix)."""
    if not cfg.kda_layers:
        for name in SIZES:
            if getattr(cfg, name) is not None:
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but kda_layers is not: {name} is a size of "
                                 "Kimi delta attention blocks; list them in kda_layers or drop " + name)
        return
    below("kda_layers", cfg.kda_layers, cfg.L)
    if cfg.linear_layers or cfg.mamba_layers:
        raise ValueError("kda_layers with linear_layers or mamba_layers: a model of Kimi delta attention blocks beside "
                         "Gated DeltaNet or Mamba 2 blocks is not modelled; keep one of them")
    if cfg.L_kda == cfg.L:
        raise ValueError(f"kda_layers lists every block (L={cfg.L:,}): a model of Kimi delta attention blocks alone is "
                         "not modelled yet (its figures compare them with the attention blocks); keep one attention "
                         "block")
    for f in FIELDS[1:]:
        if getattr(cfg, f.name) is None:
            raise ValueError(f"Kimi delta attention blocks (kda_layers) need {f.symbol}: set {f.name} ({f.doc}; "
                             f"Kimi Linear: {f.example})")
    if cfg.conv_width is None:
        raise ValueError("Kimi delta attention blocks (kda_layers) need d_conv: set conv_width (the causal "
                         "convolution's taps; Kimi Linear: 4)")
    if cfg.window is not None or cfg.sinks:
        raise ValueError("Kimi delta attention blocks beside a window or sinks are not modelled: drop kda_layers or "
                         "those")
    if set(cfg.nope_layers) & set(cfg.kda_layers):
        raise ValueError("nope_layers lists Kimi delta attention blocks: NoPE blocks are attention blocks without "
                         "RoPE; list only blocks that kda_layers does not")
    attending = set(range(cfg.L)) - set(cfg.kda_layers)
    if len({cfg.mlp_kinds[i] for i in cfg.kda_layers}) > 1 and not attending <= set(cfg.nope_layers):
        raise ValueError("Kimi delta attention blocks with dense MLPs and with a mixture of experts are modelled where "
                         "every attention block is NoPE (Kimi Linear's): list the attention blocks in nope_layers, or "
                         "make the kda_layers blocks' MLPs of one kind (moe_step, dense_layers)")


def present(cfg: Config) -> bool:
    """Some blocks mix with Kimi delta attention."""
    return bool(cfg.kda_layers)


def blocks(cfg: Config) -> tuple[int, ...]:
    """The blocks it mixes (`kda_layers`)."""
    return cfg.kda_layers


def chunk(cfg: Config) -> int:
    """Tokens per chunk of the chunked rule (Gated DeltaNet's `CHUNK`, 64)."""
    return CHUNK


def symbols(cfg: Config) -> dict[str, int]:
    """Its symbols' values (`Config.symbols`)."""
    return {"L_kda": cfg.L_kda, "h_kda": cfg.kda_heads, "d_kda": cfg.kda_head_dim, "d_conv": cfg.conv_width,
            "T_pad": cfg.T_pad, "n_c": cfg.n_c, "T_r": cfg.T_r}


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", Kimi delta attention on 20"."""
    return f", Kimi delta attention on {cfg.L_kda}" if present(cfg) else ""


def sizes(cfg: Config) -> dict[str, object]:
    """Its fields and L_kda in a configuration's JSON, none without it."""
    if not present(cfg):
        return {}
    return {"kda_layers": list(cfg.kda_layers), **{n: getattr(cfg, n) for n in SIZES}, "conv_width": cfg.conv_width,
            "L_kda": cfg.L_kda}


# --- its parameters and FLOPs, as expressions of the symbols ----------------------------------------------------------
CONV = E("3h_kda·d_kda")  # the convolution's channels: q, k and v
MATRICES = E("d·(3h_kda·d_kda + h_kda) + 2(d·d_kda + h_kda·d_kda²) + h_kda·d_kda·d")  # q, k, v, β; the decay's and
# the output gate's low-rank pairs; out


def weights(cfg: Config) -> Expr:
    """One block's matrices: q, k, v (d, h_kda·d_kda) each, β (d, h_kda), the decay's and the output gate's pairs (d,
    d_kda) and (d_kda, h_kda·d_kda), out (h_kda·d_kda, d), and the convolution's d_conv taps per channel."""
    return E("{m} + d_conv·{c}", m=MATRICES, c=CONV)


def extras(cfg: Config) -> list[Expr]:
    """Its parameters that no matmul or convolution uses: dt_bias (h_kda·d_kda), A_log (h_kda), the output norm's gain
    (d_kda)."""
    return [E("h_kda·d_kda + h_kda + d_kda")]


def projections(cfg: Config) -> Expr:
    """The projections' FLOPs per token: 2 per weight of the matrices."""
    return E("2({m})", m=MATRICES)


def conv_flops(cfg: Config) -> Expr:
    """The convolution's FLOPs per token as transformers runs it: 2·d_conv per channel and position, over T + d_conv
    − 1 positions (padded at both ends) for T tokens."""
    return E("2d_conv·{c}·(T + d_conv − 1)/T", c=CONV)


def rule_flops(cfg: Config) -> Expr:
    """The chunked rule's matmul FLOPs per token: per head and chunk of 64 tokens, the system's inverse applied to v_β
    and to k_β·exp(g) (2·64²·d_kda each), the chunk's attention over its new values (2·64²·d_kda), and in the scan
    the state read twice and written once (2·64·d_kda² each); T_pad/64 chunks for T tokens. Its products under the
    per-channel decays are elementwise sums: no matmul, no FLOP counted."""
    return E("h_kda·T_pad·(384d_kda + 6d_kda²)/T")


def flops(cfg: Config) -> Expr:
    """One block's FLOPs per token as the code runs (`model.passes`): projections, convolution and the chunked rule."""
    return E("{p} + {c} + {r}", p=projections(cfg), c=conv_flops(cfg), r=rule_flops(cfg))


SAYS = {  # the words KDA adds to the budget's lines (`model.parts.says`)
    "kv/kept": "the latent c_kv and the key's d_R features k_rope (not rotated)",  # its NoPE latent attention's cache
    "budget/scored": ", in the L − L_kda attention blocks; and the chunked rule's products in the L_kda Kimi delta "
                     "attention blocks (the chunk's system inverted on its values and keys, its attention over the new "
                     "values, the state read and written)",
    "budget/share": "the share of the measured forward FLOPs in products of activations: attention's scores and the "
                    "delta rule's",
    "memory/saved": "; in the L_kda Kimi delta attention blocks, the chunked rule's tensors of T_pad tokens, its (64, "
                    "64) products and per-channel decays per chunk and the n_c states the chunks read",
    "budget/blocks": "attention or Kimi delta attention",
    "infer/kv_cache": " in the attention blocks, and each Kimi delta attention block's states whatever T (convolution "
                      "at 16 bits, recurrent at fp32)",
    "infer/decode_attn": " in the attention blocks, and the Kimi delta attention blocks' products with their state "
                         "(read twice, written once)",
    "budget/T_equal": "T at which the attention blocks' q kᵀ and attn @ v equal every other FLOP of the blocks (the "
                      "Kimi delta attention blocks' taken at this T)",
}


def label(cfg: Config) -> str:
    return ("Kimi delta attention, one block: q, k, v (d, h_kda·d_kda) each, β (d, h_kda), the causal convolution "
            "(d_conv taps of q, k and v), the decay's and the output gate's pairs (d, d_kda) and (d_kda, h_kda·d_kda), "
            "dt_bias and A_log, the output norm and out (h_kda·d_kda, d)")


def flop_steps(f: Formulas) -> list[Line]:
    """The step from 2N to the measured FLOPs that the convolution adds (`model.budgeting.budget_lines`)."""
    if not present(f.cfg):
        return []
    return [line("flops/steps/kda_conv", "+ the Kimi delta attention convolution's d_conv − 1 padded positions: "
                 "transformers convolves T + d_conv − 1 positions and keeps T",
                 E("2L_kda·d_conv·{c}·(d_conv − 1)/T", c=CONV), f.symbols, "FLOP")]


# --- its state: what inference keeps, whatever T ----------------------------------------------------------------------
def state(cfg: Config) -> Expr:
    """One block's recurrent state per sequence, in elements: h_kda heads of (d_kda, d_kda)."""
    return E("h_kda·d_kda²")


def conv_state(cfg: Config) -> Expr:
    """One block's convolution state per sequence, in elements: the last d_conv positions of q, k and v (transformers'
    LinearAttentionLayer keeps d_conv of them)."""
    return E("d_conv·{c}", c=CONV)


def states(cfg: Config, size: int) -> Expr:
    """The L_kda blocks' states for B sequences in bytes: the convolution's at `size` bytes an element, the recurrent
    one's at fp32 (`STATE_BYTES`)."""
    return E("L_kda·B·({c}·{b} + {r}·{f})", c=conv_state(cfg), b=size, r=state(cfg), f=STATE_BYTES)


def _mixer(cfg: Config):
    """The attention blocks' part: latent attention (Kimi Linear's) or attention."""
    return latent if latent.present(cfg) else attention


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """What inference keeps at `dtype` (`size` bytes an element) beside KDA blocks, as transformers' cache holds it
    after a prefill of B sequences of T tokens: the L − L_kda attention blocks' tokens (latent attention's latent and
    key, (B, 1, T, d_c) and (B, 1, T, d_R), Kimi Linear's; or K and V), and each KDA block's LinearAttentionLayer: the
    convolution state (B, 3h_kda·d_kda, d_conv) at `dtype` and the recurrent state (B, h_kda, d_kda, d_kda) at fp32.
    Then one more token's bytes (the attention blocks' only: the states stay), the parts, and what attention in every
    block would keep (the all-attention twin's cache) and the ratio."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    mixer = _mixer(cfg)
    kept = "the latent c_kv (d_c) and the key k_rope (d_R)" if mixer is latent else "keys and values of h_kv heads of " \
        "d_head"
    kv = E("{e}·{b}", e=mixer.cache(cfg, E("(L − L_kda)·BT")), b=size)
    whole = E("{kv} + {st}", kv=kv, st=states(cfg, size))
    twin = E("{e}·{b}", e=mixer.cache(cfg, E("LBT")), b=size)
    return [
        line("memory/kv_cache", f"cache at {dtype}: {kept} in the L − L_kda = {cfg.L - cfg.L_kda:,} attention blocks, "
             f"B sequences of T tokens, and the L_kda = {cfg.L_kda:,} Kimi delta attention blocks' states, whatever T",
             whole, s, "bytes"),
        line("memory/kv_cache_per_token", f"cache per token of context at {dtype} (one sequence, one more token): the "
             "attention blocks' only, a Kimi delta attention block's state stays as it is",
             E("{e}·{b}", e=mixer.cache(cfg, E("(L − L_kda)")), b=size), s, "bytes"),
        line("memory/kv_cache_attention", f"of it, the attention blocks' {kept}: all T tokens each", kv, s, "bytes"),
        line("memory/state_conv", f"of it, the Kimi delta attention blocks' convolution states at {dtype}: the last "
             "d_conv positions of q, k and v, (B, 3h_kda·d_kda, d_conv) each",
             E("L_kda·B·{c}·{b}", c=conv_state(cfg), b=size), s, "bytes"),
        line("memory/state_recurrent", "of it, their recurrent states at fp32 (transformers keeps them so at any "
             "dtype): (B, h_kda, d_kda, d_kda) each", E("L_kda·B·{c}·{f}", c=state(cfg), f=STATE_BYTES), s, "bytes"),
        line("memory/kv_cache_all_attention", f"the all-attention twin's cache at {dtype}: attention in every block, "
             "all T tokens", twin, s, "bytes"),
        line("memory/kv_cache_lin_ratio", "Kimi delta attention divides the cache by (the twin's over this one)",
             E("({t}) / ({w})", t=twin, w=whole), s, "ratio"),
    ]


# --- what it keeps for backward (`model.memory.saved_formula`) --------------------------------------------------------
def saved_parts(cfg: Config, size: int) -> dict[int, Expr]:
    """The elements one KDA mixer keeps for backward, by element size, for a pass at `size` bytes an element (2: bf16,
    fp16; 4: fp32): the storages first saved while it runs (the block's normed input x included), measured on its
    module and checked at every probe of `model.memory.saved_formula` (tests at T across chunk boundaries, both
    dtypes, against autograd on real CPU tensors).

    At the model's dtype: x (B, T, d), the convolution's input (B, 3h_kda·d_kda, T) and its output over T + d_conv − 1
    positions, the decay's and the gate's low-rank inputs (B, T, d_kda) each; at 16 bits also β's input (B, T, h_kda)
    and the rule's output cast back (B, T, h_kda, d_kda). At fp32, whatever the dtype: A_log's exp and its negation
    (h_kda each), the decay's softplus (its input, exp and output: (B, T, h_kda, d_kda) each, and a bool mask of
    them), the l2 norms' and the output norm's statistics ((B, T, h_kda) each), the output norm's and gate's
    (B, T, h_kda, d_kda); the padded β (B, h_kda, T_pad); the per-channel decays and the products under them, three
    of (B, h_kda, T_pad, 64, d_kda), and three (B, h_kda, T_pad, 64) matrices (k_β kᵀ, its inverse, q kᵀ); eleven of
    (B, h_kda, T_pad, d_kda) (the chunks of q, k, v, β and g, the solve's u and w, …; two more once a later chunk
    reads the state: T_r), each chunk's last decay (B, h_kda, n_c, d_kda) and the state each chunk reads, n_c of
    (B, h_kda, d_kda, d_kda); one (64, 64) bool mask. An fp32 pass keeps the convolution's SiLU output (B, T,
    3h_kda·d_kda), the rule's padded output and no cast."""
    states = ("2h_kda + B·({t}T·h_kda + {k}T·h_kda·d_kda + 193h_kda·T_pad + {p}h_kda·T_pad·d_kda + 2h_kda·T_r·d_kda + "
              "h_kda·n_c·d_kda + n_c·h_kda·d_kda²)")
    mask = {1: E("B·T·h_kda·d_kda + " + str(MASK_BYTES))}  # softplus's g > 20, and the chunks' upper triangle
    if size != STATE_BYTES:
        return {size: E("B·(T·d + 6T·h_kda·d_kda + 3(d_conv − 1)·h_kda·d_kda + 2T·d_kda + T·h_kda + "
                        "T·h_kda·d_kda)"),
                STATE_BYTES: E("d_kda + " + states.format(t=3, k=10, p=203)), **mask}
    own = "B·(T·d + 9T·h_kda·d_kda + 3(d_conv − 1)·h_kda·d_kda + 2T·d_kda)"
    return {STATE_BYTES: E(f"{own} + " + states.format(t=4, k=7, p=204)), **mask}


PROBES = ((2, 3, 3), (3, 2, 4), (2, 4, 2), (3, 5, 3))  # (h_kda, d_kda, d_conv) at `model.memory`'s four recipe probes


def probe(i: int, structure: object) -> dict[str, object]:
    """Its fields at `model.memory`'s recipe probe i (the blocks' kinds are set beside them)."""
    h, d_k, d_conv = PROBES[i]
    return {"kda_heads": h, "kda_head_dim": d_k, "conv_width": d_conv}


# --- the module in the real forward pass ------------------------------------------------------------------------------
def _decays(g: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """(B, H, n, C, d_k) log-decays, summed from each chunk's start -> (B, H, n, C, C, d_k): entry (i, j, c) the decay
    exp(g_ic − g_jc) of channel c from position j to i for j ≤ i, 0 above the diagonal."""
    return (g.unsqueeze(-2) - g.unsqueeze(-3)).masked_fill(upper[..., None], float("-inf")).exp()


def chunked_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
                 state: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The delta rule with a decay per channel by chunks of `CHUNK` tokens, transformers' chunk_kimi_delta_attention:
    q, k (B, h_kda, T, d_kda), unit-normed, q scaled; v (B, h_kda, T, d_kda); g (B, h_kda, T, d_kda); β (B, h_kda,
    T); all fp32. -> the output (B, h_kda, T, d_kda) and the final state (B, h_kda, d_kda, d_kda), from `state` (zeros
    where None)."""
    B, H, T, d_v = v.shape
    pad = (CHUNK - T % CHUNK) % CHUNK
    q, k, v, g = (F.pad(x, (0, 0, 0, pad)).reshape(B, H, -1, CHUNK, x.shape[-1]) for x in (q, k, v, g))
    beta = F.pad(beta, (0, pad)).reshape(B, H, -1, CHUNK, 1)
    k_beta = k * beta
    g = g.cumsum(dim=-2)  # each channel's decay since its chunk began, in log space
    upper = torch.ones(CHUNK, CHUNK, dtype=torch.bool, device=q.device).triu(1)
    decay = _decays(g, upper)  # (B, h_kda, n, 64, 64, d_kda)
    system = (k_beta.unsqueeze(-2) * k.unsqueeze(-3) * decay).sum(-1)  # k_β kᵀ under the decays, no matmul
    eye = torch.eye(CHUNK, dtype=q.dtype, device=q.device)
    solved = torch.linalg.solve_triangular(system, eye.expand_as(system), upper=False, unitriangular=True)
    u, w = solved @ (v * beta), solved @ (k_beta * g.exp())  # (B, h_kda, n, 64, d_kda) each
    inner = (q.unsqueeze(-2) * k.unsqueeze(-3) * decay).sum(-1)  # q kᵀ under the decays, 0 above the diagonal
    last = g[..., -1:, :]  # (B, h_kda, n, 1, d_kda): each chunk's whole decay
    out, S = scan(q * g.exp(), k * (last - g).exp(), u, w, inner, last.exp().transpose(-1, -2), state)
    return out.reshape(B, H, -1, d_v)[:, :, :T], S


class KimiDeltaAttention(nn.Module):
    """One block's Kimi delta attention (see the module docstring), transformers' KimiLinearDeltaAttention on its
    torch path, its matrices as transformers lays them so that weights copy one to one. Maps (B, T, d) to (B, T, d);
    tapped: mixed (the convolution's input), conv (after SiLU), q, k, v, g, beta, rule, state, gate, normed."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h, self.d_k, self.d_conv = cfg.kda_heads, cfg.kda_head_dim, cfg.conv_width
        width = self.h * self.d_k  # h_kda·d_kda
        self.q_proj, self.k_proj, self.v_proj = (nn.Linear(cfg.d, width, bias=False) for _ in range(3))
        self.conv_weight = nn.Parameter(torch.randn(3 * width, self.d_conv) * 0.02)  # depthwise, no bias
        self.f_a = nn.Linear(cfg.d, self.d_k, bias=False)  # the decay's pair: (d, d_kda), (d_kda, h_kda·d_kda)
        self.f_b = nn.Linear(self.d_k, width, bias=False)
        self.dt_bias = nn.Parameter(torch.zeros(width))
        self.A_log = nn.Parameter(torch.zeros(self.h))
        self.b_proj = nn.Linear(cfg.d, self.h, bias=False)  # β: (d, h_kda)
        self.g_a = nn.Linear(cfg.d, self.d_k, bias=False)  # the output gate's pair
        self.g_b = nn.Linear(self.d_k, width, bias=False)
        self.norm_weight = nn.Parameter(torch.ones(self.d_k))  # the output norm's gain (d_kda,)
        self.o_proj = nn.Linear(width, cfg.d, bias=False)  # (h_kda·d_kda, d)
        for name in ("mixed", "conv", "q", "k", "v", "g", "beta", "rule", "state", "gate", "normed", "conv_cache"):
            setattr(self, name, Tap())

    def convolve(self, mixed: torch.Tensor, past: torch.Tensor | None) -> torch.Tensor:
        """(B, 3h_kda·d_kda, T) through the causal convolution and SiLU, transformers' causal_conv1d_fn (both ends
        padded, the first T kept) or, after `past` (its d_conv kept positions), causal_conv1d_update."""
        weight, T, channels = self.conv_weight.unsqueeze(1), mixed.shape[-1], mixed.shape[1]
        if past is None:
            out = F.conv1d(mixed, weight, padding=self.d_conv - 1, groups=channels)[:, :, :T]
        else:
            full = self.conv_cache(torch.cat((past, mixed), dim=-1))  # (B, 3h_kda·d_kda, d_conv + 1)
            out = F.conv1d(full, weight, groups=channels)[:, :, -T:]
        return F.silu(out)

    def decay(self, x: torch.Tensor) -> torch.Tensor:
        """g = −exp(A_log)·softplus(x W_fa W_fb + dt_bias), (B, T, h_kda, d_kda) fp32 (transformers' forget gate, its
        softplus written as log(1 + exp(·)) below 20)."""
        B, T, _ = x.shape
        g = (self.f_b(self.f_a(x)).float() + self.dt_bias.float()).view(B, T, self.h, self.d_k)
        softplus = torch.where(g > 20.0, g, torch.log(1.0 + torch.exp(g)))
        return -self.A_log.float().exp()[:, None] * softplus

    def forward(self, x: torch.Tensor, rope: object = None, past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: object = None) -> torch.Tensor:
        """x (B, T, d) -> (B, T, d). `past`: a decode step's cache, the convolution state (B, 3h_kda·d_kda, d_conv)
        and the recurrent state (B, h_kda, d_kda, d_kda) fp32, before x's one token (`model.parts.delta.step`)."""
        B, T, _ = x.shape
        if past is not None and T != 1:
            raise ValueError(f"a decode step takes one new token per sequence, got T={T}")
        mixed = self.mixed(torch.cat((self.q_proj(x), self.k_proj(x), self.v_proj(x)), dim=-1).transpose(1, 2))
        conv = self.conv(self.convolve(mixed, None if past is None else past[0]).transpose(1, 2))  # (B, T, 3h·d)
        q, k, v = (t.reshape(B, T, self.h, self.d_k).transpose(1, 2).float() for t in conv.chunk(3, dim=-1))
        g = self.g(self.decay(x).transpose(1, 2).contiguous())  # (B, h_kda, T, d_kda), ≤ 0
        beta = self.beta(self.b_proj(x).sigmoid().transpose(1, 2).float())  # (B, h_kda, T)
        q = self.q(l2_unit(q) * self.d_k ** -0.5)  # (B, h_kda, T, d_kda)
        k, v = self.k(l2_unit(k)), self.v(v)
        if past is None:
            out, S = chunked_rule(q, k, v, g, beta)
        else:
            out, S = step(q, k, v, g.exp().transpose(-1, -2), beta, past[1])  # a decay per row of S: (B, h, d_kda, 1)
        self.state(S)  # (B, h_kda, d_kda, d_kda), fp32
        out = self.rule(out.transpose(1, 2).to(x.dtype))  # (B, T, h_kda, d_kda)
        gate = self.gate(self.g_b(self.g_a(x)).view(B, T, self.h, self.d_k))
        normed = out.float() * torch.rsqrt(out.float().pow(2).mean(-1, keepdim=True) + EPS)
        normed = self.normed((self.norm_weight.float() * normed * gate.float().sigmoid()).to(x.dtype))
        return self.o_proj(normed.reshape(B, T, self.h * self.d_k))  # (B, T, d)


def module(cfg: Config) -> nn.Module:
    """One KDA block's mixer."""
    return KimiDeltaAttention(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`) --------------------------------------------------
ROWS: dict[str, tuple[str, str]] = {
    "q_proj": ("(B, T, h_kda·d_kda)", "x W_q: q, h_kda heads of d_kda"),
    "k_proj": ("(B, T, h_kda·d_kda)", "x W_k: k"),
    "v_proj": ("(B, T, h_kda·d_kda)", "x W_v: v"),
    "mixed": ("(B, 3h_kda·d_kda, T)", "q, k and v side by side, channels first for the convolution"),
    "conv": ("(B, T, 3h_kda·d_kda)", "SiLU of the causal convolution: d_conv taps per channel, each position and the "
             "d_conv − 1 before it"),
    "f_a": ("(B, T, d_kda)", "x W_fa: the decay's low-rank input"),
    "f_b": ("(B, T, h_kda·d_kda)", "W_fb: one decay input per head and channel"),
    "g": ("(B, h_kda, T, d_kda)", "g = −exp(A_log)·softplus(x W_fa W_fb + dt_bias): each token's decay of each of the "
          "state's rows, in log space (fp32)"),
    "b_proj": ("(B, T, h_kda)", "x W_b: β's input, one per head"),
    "beta": ("(B, h_kda, T)", "β = sigmoid(x W_b): how far each token writes its value into the state (fp32)"),
    "q": ("(B, h_kda, T, d_kda)", "q to unit norm, by 1/√d_kda (fp32)"),
    "k": ("(B, h_kda, T, d_kda)", "k to unit norm (fp32)"),
    "v": ("(B, h_kda, T, d_kda)", "v (fp32)"),
    "state": ("(B, h_kda, d_kda, d_kda)", "the state S after the last token: fixed whatever T, what the cache keeps "
              "(fp32); attention's (B, h, T, T) scores have no counterpart"),
    "rule": ("(B, T, h_kda, d_kda)", "the delta rule's output o = q S, chunk by chunk of 64 tokens"),
    "g_a": ("(B, T, d_kda)", "x W_ga: the output gate's low-rank input"),
    "g_b": ("(B, T, h_kda·d_kda)", "W_gb: the output gate, per head and channel"),
    "gate": ("(B, T, h_kda, d_kda)", "the output gate, per head"),
    "normed": ("(B, T, h_kda, d_kda)", "o RMS-normed per head, times its gain and sigmoid of the gate"),
    "o_proj": ("(B, T, d)", "output projection, h_kda·d_kda → d"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """A KDA block's rows, under "kda." (`model.tensor_notation` places them under the block's mixer)."""
    if present(cfg):
        rows.update({"kda." + name: row for name, row in ROWS.items()})


# --- a decode step (`model.inference`) -------------------------------------------------------------------------------
WRITTEN = ("the new token's cache written in the attention blocks, and each Kimi delta attention block's states "
           "rewritten")


def cache_shapes(cfg: Config) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """One block's states for B sequences as transformers' LinearAttentionLayer holds them: the convolution state (B,
    3h_kda·d_kda, d_conv) at the model's dtype and the recurrent state (B, h_kda, d_kda, d_kda) at fp32."""
    h, d_k = cfg.kda_heads, cfg.kda_head_dim
    return (cfg.B, 3 * h * d_k, cfg.conv_width), (cfg.B, h, d_k, d_k)


def decode_flops(cfg: Config) -> Expr:
    """One KDA block's FLOPs per new token in a decode step: the projections, the convolution over its d_conv kept
    positions and the new one (2 outputs computed, the last kept), and the state read twice and written once
    (`model.parts.delta.step`)."""
    return E("{p} + 4d_conv·{c} + 6h_kda·d_kda²", p=projections(cfg), c=CONV)


def decode_state_flops(cfg: Config) -> Expr:
    """A decode step's products with the state, all L_kda blocks, B new tokens: 6B·L_kda·h_kda·d_kda²."""
    return E("6B·L_kda·h_kda·d_kda²")


DECODE_ROWS: dict[str, tuple[str, str]] = {  # a decode step's tensors of a KDA block (its first one's)
    "kda.conv_cache": ("(B, 3h_kda·d_kda, d_conv + 1)", "the convolution state's d_conv positions and the new token's "
                       "q, k and v"),
    "kda.q": ("(B, h_kda, 1, d_kda)", "q of the new token"),
    "kda.state": ("(B, h_kda, d_kda, d_kda)", "the state after the new token: each row decayed at its own rate, moved "
                  "towards v along k (fp32), the same size after {T} cached tokens as after one"),
    "kda.rule": ("(B, 1, h_kda, d_kda)", "o = q S, the new token's output"),
}


LAST_CHANGE = ("kda", NAME)  # its step from the GPT-2 twin, the chain's last (`model.changes`): key, short name
CHANGE_TITLES = {"kda": (
    "Kimi delta attention in L_kda = {L_kda} of the L = {L} blocks: a fixed state (B, h_kda, d_kda, d_kda) in place "
    "of {kv_what} — h_kda = {h_kda} heads of d_kda × d_kda = {d_kda} × {d_kda} per sequence whatever T, each row "
    "decaying at its own rate, where {kv_what} grew by {kv_grew} numbers a token — and no q kᵀ over all T keys there: "
    "those blocks' FLOPs per token no longer grow with T (the delta rule runs over chunks of 64 tokens, T padded to "
    "T_pad)")}
ORDER_NOTE = ("Kimi delta attention comes last: the changes before it reach this model with attention in every block "
              "(as its attention blocks have it), and its change puts a fixed state in the L_kda blocks' attention's "
              "place; its FLOPs per token are the real count at this T, so their formula divides by T (T_pad/T for "
              "the chunks of 64, (T + d_conv − 1)/T for the convolution's padded positions).")

NO_PEAK = delta.NO_PEAK.replace(delta.NAME, NAME)  # its chunked rule is Gated DeltaNet's: the same words, its name


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers its change's title names (`model.changes.title_values`), none without it."""
    if not present(cfg):
        return {}
    values = dict(L_kda=cfg.L_kda, h_kda=cfg.kda_heads, d_kda=cfg.kda_head_dim)
    return {k: f"{v:,}" for k, v in values.items()}


def order_note(cfg: Config) -> list[str]:
    """Where its change comes in the chain, in words."""
    return [ORDER_NOTE] if present(cfg) else []


def words(cfg: Config) -> list[str]:
    """The model's KDA blocks in the recipe's words (`model.report`)."""
    if not present(cfg):
        return []
    return [f"Kimi delta attention in {cfg.L_kda:,} of {cfg.L:,} blocks (a fixed state of h_kda = {cfg.kda_heads:,} "
            f"heads of {cfg.kda_head_dim:,} × {cfg.kda_head_dim:,}, each row decaying at its own rate, in place of a "
            "growing KV cache)"]
