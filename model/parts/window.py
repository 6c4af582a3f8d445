"""A sliding window: a windowed block's query sees only the last W keys (itself and the W − 1 before it), so its
KV cache keeps W − 1 tokens whatever T; the blocks of `full_layers` keep full causal attention beside them.

Chunked attention (`chunked`, Llama 4's) windows the blocks otherwise: the positions fall into chunks of W tokens, and
a query sees the keys of its own chunk only, from ⌊t/W⌋·W to itself. Its cache is a sliding window's (transformers keeps
the last W − 1 tokens of a chunked block, as of a windowed one; the mask hides those before the new token's chunk), so
every count but the causal kernel's pairs is a window's."""
from __future__ import annotations

from dataclasses import replace

import torch

from fractions import Fraction
from typing import TYPE_CHECKING

from ..expr import E, Expr, total
from ..fields import Field, below
from ..figures import Line, line, number
from . import attention
from .attention import hidden_keys

if TYPE_CHECKING:
    from ..budgeting import Budget, Formulas
    from ..config import Config

FIELDS = (
    Field("window", "whole", "the sliding window: the keys a windowed block's query sees, itself and the W − 1 before "
          "it", symbol="W", bounds=(1, 16_777_216), optional=True, more=" (default none: full attention)",
          group="window", unset="none", absent="{key} lists the blocks that keep full attention beside a sliding "
          "window: set W first; kept full attention everywhere"),  # W's bound: T_max's, any context RoPE may have
    Field("full_layers", "blocks", "blocks that keep full causal attention beside the windowed ones, by index (default "
          "none)", default=(), group="window", needs="window"),
    Field("chunked", "flag", "chunked attention (Llama 4's): a windowed block's query sees the keys of its own chunk "
          "of W tokens, not the last W", default=False, group="window", needs="window", control=False, tensors=True,
          says="chunked attention: each query sees its own chunk of W = {cfg.W:,} tokens"),
)


def check(cfg: Config) -> None:
    """The window's fields together (ValueError naming the problem and the fix)."""
    if cfg.window is None:
        if cfg.chunked:
            raise ValueError("chunked is set but window is not: the chunks are W tokens long; set window (W) or drop "
                             "chunked")
        if cfg.full_layers:
            raise ValueError(f"full_layers={list(cfg.full_layers)} is set but window is not: without a window every "
                             f"block has full attention; set window (W) or drop full_layers")
        return
    below("full_layers", cfg.full_layers, cfg.L)
    if len(cfg.full_layers) == cfg.L:
        raise ValueError(f"full_layers lists every block (L={cfg.L:,}), so no block attends through the window "
                         f"W={cfg.window:,}: drop window for full attention, or list fewer blocks")


def budget_lines(f: Formulas, b: Budget) -> dict[str, list[Line]]:
    """With a sliding window, the FLOPs a windowed causal kernel runs beside the measured count ("end"; the count, as
    eager attention does, computes every (query, key) pair and masks the rest): q kᵀ and attn @ v over the pairs a
    query sees only. A windowed block's query t sees min(t + 1, W) keys, (T_W + 1)(T − T_W/2) pairs in all with T_W =
    min(T, W − 1): T(T + 1)/2 below the window, WT − W(W − 1)/2 past it; a full block's T(T + 1)/2. Per token,
    2(T_W + 1)(2T − T_W)·h·d_head / T per windowed block and 2(T + 1)·h·d_head per full block."""
    cfg, s = f.cfg, f.symbols
    if cfg.window is None or cfg.chunked:  # a chunk's pairs, ⌊T/W⌋ full chunks and a part, are no polynomial here
        return {}
    T, T_W, h, d_head, L, L_W = cfg.T, cfg.T_W, cfg.h, cfg.d_head, cfg.L, cfg.L_W
    windowed = Fraction(2 * (T_W + 1) * (2 * T - T_W) * h * d_head, T) * L_W + 2 * (L - L_W) * (T + 1) * h * d_head
    if b.flops_attn_per_token != 4 * L * T * h * d_head:
        raise RuntimeError("the measured attention FLOPs are not eager's 4LT·h·d_head per token")
    whole = number(windowed)
    formula = total(E("2L_W·(T_W + 1)(2T − T_W)·h·d_head/T"), E("2(L − L_W)(T + 1)·h·d_head") if L_W != L else None)
    return {"end": [
        line("flops/attention_windowed", "q kᵀ and attn @ v as a windowed causal kernel runs them: each query's last "
             "W keys in the windowed blocks (the measured count computes all T² and masks them, as eager does)",
             formula, s, "FLOP", whole),
        line("flops/forward_windowed", "forward FLOPs per token with a windowed causal kernel",
             E("{m} − 4LT·h·d_head + {w}", m=f.measured(), w=formula), s, "FLOP",
             b.flops_fwd_measured_per_token - b.flops_attn_per_token + whole),
    ]}


def present(cfg: Config) -> bool:
    """Some blocks attend through a sliding window."""
    return cfg.window is not None


# The numbers a windowed model's labels name, each a formula of its symbols: `window_values` fills them in, and the
# exported page evaluates the same formulas (compiled by `model.formula.to_js`) into the same labels' placeholders.
WINDOW_VALUES = {"W": "W", "W_kept": "W − 1", "L": "L", "L_W": "L_W", "L_full": "L − L_W", "T_W": "T_W"}



def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", W 512 on 22", ", chunks of 8,192 on 36"."""
    if not present(cfg):
        return ""
    return f", chunks of {cfg.W:,} on {cfg.L_W}" if cfg.chunked else f", W {cfg.W:,} on {cfg.L_W}"


def sizes(cfg: Config) -> dict[str, object]:
    """A window's fields, W, L_W, T_W and each block's attention in a configuration's JSON, none without one."""
    if not present(cfg):
        return {}
    return {"window": cfg.window, "full_layers": list(cfg.full_layers), "W": cfg.W, "L_W": cfg.L_W, "T_W": cfg.T_W,
            "attn_kinds": list(cfg.attn_kinds)}

def window_values(cfg: Config) -> dict[str, str]:
    """`WINDOW_VALUES` at `cfg` (a windowed model), with thousands separators: {"W": "512", "W_kept": "511", ...}."""
    symbols = cfg.symbols()
    return {k: f"{int(E(f).value(symbols)):,}" for k, f in WINDOW_VALUES.items()}  # whole numbers


def window_labels(cfg: Config, dtype: str, values: dict[str, str] | None = None) -> dict[str, str]:
    """The labels of a windowed model's KV-cache lines (`cache_lines`) by key, naming `values` (default
    `window_values(cfg)`; the exported page passes "{W}" and the like, and fills them itself)."""
    v = window_values(cfg) if values is None else values
    heads = "all h heads" if cfg.gpt2_recipe else "h_kv heads of d_head"
    unchanged = (" (a mixture of experts changes the MLP only: the cache is attention's, as a dense model's)"
                 if cfg.experts is not None else "")
    sees = (f"the next token's query sees those of its own chunk of W = {v['W']} and itself" if cfg.chunked else
            f"the next token's query sees those and itself, W = {v['W']} keys")
    kind = " (a chunked block's cache is a window's)" if cfg.chunked else ""
    convention = (f"T_W = min(T, W − 1) = {v['T_W']} tokens each: transformers' DynamicSlidingWindowLayer keeps the "
                  f"last W − 1 after a prefill{kind}, and {sees}")
    return {
        "memory/kv_cache": f"KV cache at {dtype}: keys and values of {heads}, B sequences of T tokens, the "
                           f"{v['L_W']} windowed blocks keeping at most W − 1 = {v['W_kept']} tokens{unchanged}",
        "memory/kv_cache_per_token": f"KV cache per token of context past the window at {dtype} (one sequence, one "
                                     "more token): " + ("every block is windowed, and each one's stays at W − 1 tokens"
                                                        if cfg.L_W == cfg.L else "the full-attention blocks' only, a "
                                                        "windowed block's stays at W − 1 tokens"),
        "memory/kv_cache_full": f"of it, the L − L_W = {v['L_full']} full-attention blocks: all T tokens each",
        "memory/kv_cache_window": f"of it, the L_W = {v['L_W']} windowed blocks: {convention}",
        "memory/kv_cache_no_window": "the same cache with full attention in every block (all T tokens)",
        "memory/kv_cache_window_ratio": "the window divides the cache by (full attention's cache over this one)",
    }


def kept(cfg: Config) -> Expr:
    """The block-tokens the cache keeps for B sequences: a windowed block's T_W = min(T, W − 1) tokens, a full one's
    T."""
    return E("B·T_W·L") if cfg.L_W == cfg.L else E("B·((L − L_W)·T + L_W·T_W)")


def cache_lines(cfg: Config, dtype: str, size: int) -> list[Line]:
    """The KV cache of a windowed model at `dtype` (`size` bytes an element; labels: `window_labels`): a windowed
    block's cache is capped at T_W = min(T, W − 1) tokens, transformers' convention (its DynamicSlidingWindowLayer
    keeps the last W − 1 tokens after a prefill: the next token's query then sees those and itself, W keys). So the
    L_W windowed blocks keep 2·L_W·B·T_W·h_kv·d_head elements, the L − L_W full ones 2(L − L_W)·B·T·h_kv·d_head, and
    past the window one more token adds to the full blocks only."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    label = window_labels(cfg, dtype)
    every = cfg.L_W == cfg.L

    def kv(key: str, x: Expr | None, value: int | float | None = None) -> Line:
        formula = E("0") if x is None else E("{e}·{b}", e=attention.cache(cfg, x), b=size)
        return line(key, label[key], formula, s, "bytes", value)

    whole, this = E("2LBT·h_kv·d_head"), E("2{x}·h_kv·d_head", x=kept(cfg))
    return [
        kv("memory/kv_cache", kept(cfg)),
        kv("memory/kv_cache_per_token", None if every else E("(L − L_W)")),
        *([] if every else [kv("memory/kv_cache_full", E("(L − L_W)·BT"))]),
        kv("memory/kv_cache_window", E("L_W·B·T_W")),
        kv("memory/kv_cache_no_window", E("LBT")),
        line("memory/kv_cache_window_ratio", label["memory/kv_cache_window_ratio"], E("LT / ((L − L_W)·T + L_W·T_W)"),
             s, "ratio", float(whole.value(s) / this.value(s))),
    ]


def decode_scores(cfg: Config) -> Expr:
    """A decode step's q kᵀ and attn @ v: B new tokens over each block's keys, a windowed block's T_W = min(T, W − 1)
    cached ones and its own, a full block's T and its own."""
    return E("4B·((L − L_W)·(T + 1) + L_W·(T_W + 1))·h·d_head")


def decode_flops(cfg: Config, f: Expr) -> Expr:
    """A decode step's FLOPs per new token `f` (the forward pass's at T + 1 keys), less the keys the windowed blocks
    do not see: 4(T − T_W)·h·d_head per windowed block."""
    return E("{f} − 4L_W·(T − T_W)·h·d_head", f=f) if present(cfg) else f


# --- the module in the real forward pass ------------------------------------------------------------------------------
def width(cfg: Config, kind: str) -> int | None:
    """The window of a block whose attention is of `kind` ("full": None; "sliding": cfg's W)."""
    return cfg.window if kind == "sliding" else None


def of_kind(cfg: Config, kind: str) -> Config:
    """`cfg` with every block's attention of `kind` (`width`), no full layers (and no chunks without a window)."""
    W = width(cfg, kind)
    return replace(cfg, window=W, full_layers=(), chunked=cfg.chunked and W is not None)


def band_mask(T: int, window: int, device: torch.device, dtype: torch.dtype, chunked: bool = False) -> torch.Tensor:
    """The fused kernel's additive (T, T) band of a window W (or its chunks of W): 0 where a query sees a key, −inf
    elsewhere."""
    hidden = hidden_keys(T, T, window, device, chunked)
    return torch.zeros(T, T, device=device, dtype=dtype).masked_fill(hidden, float("-inf"))


def banded(cfg: Config) -> bool:
    """Fused attention through a window takes the band of W as its mask, one (T, T) tensor made once per pass."""
    return present(cfg) and cfg.attention == "fused"


# --- its tensors in the lesson's notation (`model.tensor_notation`): the traced block is a windowed one -------------
WINDOW_MASKED = ("(B, h, T, T)", "window mask: −inf above the diagonal and W or more keys back, a band of W "
                 "(the full (T, T) scores are still computed)")
BAND = ("(T, T)", "the band of W keys: 0 where a query sees a key, −inf elsewhere (made once per pass, every windowed "
        "block's fused kernel takes it and keeps it for backward)")


CHUNK_MASKED = ("(B, h, T, T)", "chunk mask: −inf above the diagonal and before each query's chunk of W (the full "
                "(T, T) scores are still computed)")
CHUNKS = ("(T, T)", "the chunks of W: 0 where a query sees a key of its own chunk, −inf elsewhere (made once per pass, "
          "every chunked block's fused kernel takes it and keeps it for backward)")


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The band (fused attention takes it as its mask) and the windowed mask of eager attention (chunks: their own)."""
    if not present(cfg):
        return
    rows.update({"window_mask": CHUNKS, "attn.masked": CHUNK_MASKED} if cfg.chunked else
                {"window_mask": BAND, "attn.masked": WINDOW_MASKED})
    if cfg.attention == "fused":
        mask = "the chunks of W" if cfg.chunked else "the band of W"
        rows["attn.attn_v"] = ("(B, h, T, d_head)", f"fused attention: softmax(q kᵀ / √{attention.scale(cfg)} + {mask}) "
                               "@ v in one kernel, no (T, T) scores")


def words(cfg: Config) -> list[str]:
    if not present(cfg):
        return []
    what = f"chunked attention (chunks of W = {cfg.W:,})" if cfg.chunked else f"a sliding window W = {cfg.W:,}"
    return [f"{what} on {cfg.L_W:,} of {cfg.L:,} blocks"]


# --- its change from the GPT-2 twin (`model.changes`) ----------------------------------------------------------------
ORDER_NOTE = ("{what} comes last: it changes no parameter and no measured FLOP (eager attention computes the whole "
              "(T, T) scores and masks them to {mask}), only what the windowed blocks cache.")


def order_note(cfg: Config) -> list[str]:
    """Where the window's change comes in the chain, in words (chunked attention's, where its chunks)."""
    if not present(cfg):
        return []
    what, mask = ("Chunked attention", "the chunks") if cfg.chunked else ("A sliding window", "the band")
    return [ORDER_NOTE.format(what=what, mask=mask)]


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers the change's title names: W, L_W, W − 1, ... (`window_values`)."""
    return window_values(cfg) if present(cfg) else {}


def change_label(values: dict[str, str], chunked: bool = False) -> str:
    """The window's changes line's label, naming `values` (`window_values`; the exported page passes "{W}" and the
    like); chunked attention's cache is a window's."""
    what = "chunked attention: chunks of" if chunked else "sliding window: a window of"
    return (f"{what} W = {values['W']} on {values['L_W']} of {values['L']} blocks divides "
            f"those blocks' cache by T/W at T (T/T_W after a prefill: transformers keeps T_W = min(T, W − 1) tokens, "
            f"and the next token makes W)")


def change_lines(cfg: Config, cache: dict[str, Line]) -> tuple[Line, ...]:
    """The change's line beside its figures: a window of W on L_W of the L blocks divides those blocks' cache by T/W
    at T (T/T_W after a prefill, T_W = min(T, W − 1) the tokens transformers keeps; the cache's lines, checked)."""
    s = {**cfg.symbols(), "h_kv": cfg.h_kv}
    if cache["memory/kv_cache_window"].value * cfg.L * cfg.T != cache["memory/kv_cache_no_window"].value * cfg.L_W * cfg.T_W:
        raise RuntimeError("the windowed blocks' cache is not T_W/T of their full attention's")
    return (line("changes/window/cache_ratio", change_label(window_values(cfg), cfg.chunked), E("T/T_W"), s, "ratio"),)
