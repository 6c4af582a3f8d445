"""Attention sinks (gpt-oss): one learned logit s per head joins each softmax row's denominator, a column no value
follows, so a row's weights sum to less than 1. h parameters per block; the row is T + 1 wide."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("sinks", "flag", "attention sinks: one learned logit s per head (h per block) in each softmax row's "
          "denominator; the row's weights sum to less than 1 (eager attention only)", default=False, group="extras",
          family="oss"),
)
SINKS_FUSED = ("sinks add a logit per head to each softmax row, which the fused kernel here does not take: set "
               "attention to eager, or drop sinks")  # Config's refusal (the exported page says the same)


def check(cfg: Config) -> None:
    """Sinks join the softmax, which a fused kernel does not take (ValueError naming the fix)."""
    if cfg.sinks and cfg.attention == "fused":
        raise ValueError(SINKS_FUSED)
