"""A parallel block with a norm each (GPT-NeoX, Pythia): attention reads ln_1(x), the MLP ln_2(x), and both add to x
together, x = x + Attn(ln_1(x)) + MLP(ln_2(x)), where the lesson's block feeds the MLP a norm of x + attention. Two
norms per block, as the lesson's: the same parameters, matrices, FLOPs and cache; only what the MLP reads differs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config
    from ..gpt import Block

FIELDS = (
    Field("parallel_norms", "flag", "a parallel block with a norm each: attention reads ln_1(x), the MLP ln_2(x), x = "
          "x + Attn(ln_1(x)) + MLP(ln_2(x)) (GPT-NeoX, Pythia; two norms per block)", default=False, control=False,
          tensors=True, says="a parallel block: attention reads ln_1(x), the MLP ln_2(x), both added to x"),
)
NORMS = ("ln_1", "ln_2")  # before attention, before the MLP: both of x
CHANGE = ("parallel_norms", "parallel block")  # its step from the GPT-2 twin (`model.changes.ORDER`): key, short name
CHANGE_TITLES = {"parallel_norms": "a parallel block: attention reads ln_1(x), the MLP ln_2(x), and both add to x "
                                   "together, the same two norms a block (GPT-NeoX, Pythia)"}


def present(cfg: Config) -> bool:
    """The blocks are parallel, a norm each."""
    return cfg.parallel_norms


def wire(block: Block, x: torch.Tensor, mixed: tuple) -> torch.Tensor:
    """x + Attn(ln_1(x)) + MLP(ln_2(x)): both norms of x, both outputs added to x (through sandwich norms where
    present)."""
    y = block.resid_1(x + block.post(block.mixer(block.ln_1(x), *mixed), "post_ln_1"))
    return block.resid_2(y + block.post(block.ffn(block.ln_2(x)), "post_ln_2"))


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The MLP's norm of x, and what the second residual add holds."""
    if present(cfg):
        norm = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
        rows["ln_2"] = ("(B, T, d)", f"{norm} of x before the MLP (not of x + attention: a parallel block)")
        rows["resid_2"] = ("(B, T, d)", "x + attention + MLP (the MLP read ln_2(x))")


def words(cfg: Config) -> list[str]:
    """The recipe's words (`model.report.recipe_text`)."""
    return ["parallel attention and MLP (a norm each)"] if present(cfg) else []
