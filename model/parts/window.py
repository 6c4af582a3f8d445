"""A sliding window: a windowed block's query sees only the last W keys (itself and the W − 1 before it), so its
KV cache keeps W − 1 tokens whatever T; the blocks of `full_layers` keep full causal attention beside them."""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from ..expr import E, total
from ..fields import Field
from ..figures import Line, line, number

if TYPE_CHECKING:
    from ..budgeting import Budget, Formulas
    from ..config import Config

FIELDS = (
    Field("window", "whole", "the sliding window: the keys a windowed block's query sees, itself and the W − 1 before "
          "it", symbol="W", bounds=(1, 16_777_216), optional=True, more=" (default none: full attention)",
          group="window"),  # W's bound: any context a RoPE model may have (T_max's)
    Field("full_layers", "blocks", "blocks that keep full causal attention beside the windowed ones, by index (default "
          "none)", default=(), group="window"),
)


def check(cfg: Config) -> None:
    """The window's fields together (ValueError naming the problem and the fix)."""
    if cfg.window is None:
        if cfg.full_layers:
            raise ValueError(f"full_layers={list(cfg.full_layers)} is set but window is not: without a window every "
                             f"block has full attention; set window (W) or drop full_layers")
        return
    outside = [i for i in cfg.full_layers if not 0 <= i < cfg.L]
    if outside:
        raise ValueError(f"full_layers lists block {outside[0]:,}, but the blocks are 0 … {cfg.L - 1:,}: list "
                         f"indices below L={cfg.L:,}")
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
    if cfg.window is None:
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
