"""A sliding window: a windowed block's query sees only the last W keys (itself and the W − 1 before it), so its
KV cache keeps W − 1 tokens whatever T; the blocks of `full_layers` keep full causal attention beside them."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("window", "whole", "the sliding window: the keys a windowed block's query sees, itself and the W − 1 before "
          "it", symbol="W", bounds=(1, 16_777_216), optional=True, more=" (default none: full attention)",
          group="window", unset="none", absent="{key} lists the blocks that keep full attention beside a sliding "
          "window: set W first; kept full attention everywhere"),  # W's bound: T_max's, any context RoPE may have
    Field("full_layers", "blocks", "blocks that keep full causal attention beside the windowed ones, by index (default "
          "none)", default=(), group="window", needs="window"),
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
