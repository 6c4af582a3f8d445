"""A parallel block (Cohere's Command R, Falcon, GPT-J, Phi-2): attention and the MLP both read one norm of x and add
to it together, x = x + Attn(ln_1(x)) + MLP(ln_1(x)), where the lesson's block feeds the MLP a second norm of x +
attention. One norm per block instead of two (d or 2d fewer parameters a block); the same matrices, FLOPs and cache.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config
    from ..gpt import Block

FIELDS = (
    Field("parallel", "flag", "a parallel block: attention and the MLP both read one norm of x, x = x + Attn(ln_1(x)) "
          "+ MLP(ln_1(x)) (Cohere, Falcon, GPT-J; one norm per block)", default=False, control=False, tensors=True,
          says="a parallel block: attention and the MLP both read ln_1(x), one norm per block"),
)
NORMS = ("ln_1",)  # the one norm both read
CHANGE = ("parallel", "parallel block")  # its step from the GPT-2 twin (`model.changes.ORDER`): key, short name
CHANGE_TITLES = {"parallel": "a parallel block: attention and the MLP both read ln_1(x) and add to x together, one norm "
                             "per block instead of two (Cohere's Command R, Falcon, GPT-J)"}


def present(cfg: Config) -> bool:
    """The blocks are parallel."""
    return cfg.parallel


def wire(block: Block, x: torch.Tensor, mixed: tuple) -> torch.Tensor:
    """x + Attn(ln_1(x)) + MLP(ln_1(x)): one norm, both outputs added to x (through sandwich norms where present)."""
    h = block.ln_1(x)
    y = block.resid_1(x + block.post(block.mixer(h, *mixed), "post_ln_1"))
    return block.resid_2(y + block.post(block.ffn(h), "post_ln_2"))


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The one norm read by both, and what each residual add holds."""
    if present(cfg):
        norm = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
        rows["ln_1"] = ("(B, T, d)", f"{norm} before attention and the MLP (both read it: a parallel block)")
        rows["resid_2"] = ("(B, T, d)", "x + attention + MLP (the MLP read ln_1(x), not x + attention)")


def words(cfg: Config) -> list[str]:
    """The recipe's words (`model.report.recipe_text`)."""
    return ["parallel attention and MLP (one norm per block)"] if present(cfg) else []
