"""Attention sinks (gpt-oss): one learned logit s per head joins each softmax row's denominator, a column no value
follows, so a row's weights sum to less than 1. h parameters per block; the row is T + 1 wide."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("sinks", "flag", "attention sinks: one learned logit s per head (h per block) in each softmax row's "
          "denominator; the row's weights sum to less than 1 (eager attention only)", default=False, group="extras",
          family="oss", says="attention sinks (a logit per head)"),
)
SINKS_FUSED = ("sinks add a logit per head to each softmax row, which the fused kernel here does not take: set "
               "attention to eager, or drop sinks")  # Config's refusal (the exported page says the same)


SAYS = {"budget/no_sinks": ", no sinks", "budget/and_sinks": " and sinks"}  # the budget's approximate lines


def present(cfg: Config) -> bool:
    """Each head has a sink logit."""
    return cfg.sinks


def check(cfg: Config) -> None:
    """Sinks join the softmax, which a fused kernel does not take (ValueError naming the fix)."""
    if cfg.sinks and cfg.attention == "fused":
        raise ValueError(SINKS_FUSED)


def extras(cfg: Config) -> list[Expr]:
    """One block's sinks: a logit per head, h parameters (no matmul weights)."""
    return [E("h")] if cfg.sinks else []


# --- its tensors in the lesson's notation (`model.tensor_notation`): the sinks' columns of the softmax -------------
NOTATION: dict[str, tuple[str, str]] = {
    "attn.sink": ("(B, h, T, 1)", "each head's sink logit s, one learned per head, a column for every query (a view)"),
    "attn.with_sink": ("(B, h, T, T + 1)", "masked scores and each head's sink logit s (one learned per head), one "
                       "more column"),
    "attn.attn_sink": ("(B, h, T, T + 1)", "softmax over the T keys and the sink: the sink's column takes its share"),
    "attn.attn": ("(B, h, T, T)", "attention weights, the sink's column dropped (a view): rows sum to less than 1"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The sinks' rows."""
    if cfg.sinks:
        rows.update(NOTATION)


def words(cfg: Config) -> list[str]:
    return ["attention sinks"] if cfg.sinks else []
