"""Post-norm wiring (OLMo 2 and 3): each block's two norms sit on attention's and the MLP's outputs, none before them,
x = x + ln_1(Attn(x)); x = x + ln_2(MLP(x)). Attention and the MLP read the residual stream itself; the final norm before
the head stays. The same parameters (two norms over d a block), matrices, FLOPs and cache as the lesson's pre-norm block.
A block whose mixer keeps a fixed state (Gated DeltaNet's) stays pre-norm, as OLMo Hybrid wires its: post-norm is
its attention blocks' wiring.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..fields import Field
from . import residual

if TYPE_CHECKING:
    from ..config import Config
    from ..gpt import Block

FIELDS = (
    Field("post_norm", "flag", "post-norm wiring: a norm on attention's and on the MLP's output before each residual "
          "add, none before them, x = x + ln_1(Attn(x)); x = x + ln_2(MLP(x)) (OLMo 2)", default=False, control=False,
          tensors=True, says="post-norm wiring in the attention blocks: ln_1 on attention's output and ln_2 on the MLP's, none "
          "before them"),  # (a block with a fixed state stays pre-norm: OLMo Hybrid's Gated DeltaNet blocks)
)
NORMS = ("ln_1", "ln_2")  # on attention's output, on the MLP's
CHANGE = ("post_norm", "post-norm")  # its step from the GPT-2 twin (`model.changes.ORDER`): key, short name
CHANGE_TITLES = {"post_norm": "post-norm wiring: the block's two norms on attention's and the MLP's outputs before "
                              "each residual add, none before them (OLMo 2)"}


def check(cfg: Config) -> None:
    """Post-norm wiring puts the block's norms on the outputs: not with Gemma's sandwich norms there too (ValueError;
    another part that wires the block: `model.stack.check_wiring`)."""
    if cfg.post_norm and cfg.post_norms:
        raise ValueError("post_norm and post_norms each wire the block their own way: set one of them")


def present(cfg: Config) -> bool:
    """The blocks are wired post-norm."""
    return cfg.post_norm


def wire(block: Block, x: torch.Tensor, mixed: tuple) -> torch.Tensor:
    """x + ln_1(Attn(x)), then + ln_2(MLP(x)): each output normalised before its add; a block with a fixed state the
    lesson's way (`model.parts.residual`)."""
    if not block.attends:
        return residual.wire(block, x, mixed)
    x = block.resid_1(x + block.ln_1(block.mixer(x, *mixed)))
    return block.resid_2(x + block.ln_2(block.ffn(x)))


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The two norms, on the outputs (in the attention blocks, where other blocks keep a fixed state)."""
    if present(cfg):
        norm = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
        if not cfg.stateful:
            rows["ln_1"] = ("(B, T, d)", f"{norm} on attention's output (post-norm), before the residual add")
            rows["ln_2"] = ("(B, T, d)", f"{norm} on the MLP's output (post-norm), before the residual add")
            rows["resid_1"] = ("(B, T, d)", "x + ln_1(attention(x))")
            rows["resid_2"] = ("(B, T, d)", "x + ln_2(MLP(x))")
            return
        rows["ln_1"] = ("(B, T, d)", f"{norm}: on attention's output (post-norm) in an attention block, before the "
                                     "mixer in a block with a fixed state")
        rows["ln_2"] = ("(B, T, d)", f"{norm}: on the MLP's output (post-norm) in an attention block, before the MLP "
                                     "in a block with a fixed state")
        rows["resid_1"] = ("(B, T, d)", "x + ln_1(attention(x)), or x + mixer(ln_1(x))")
        rows["resid_2"] = ("(B, T, d)", "x + ln_2(MLP(x)), or x + MLP(ln_2(x))")


def words(cfg: Config) -> list[str]:
    """The recipe's words (`model.report.recipe_text`)."""
    if not present(cfg):
        return []
    return ["post-norm (a norm on each output, none before)" + (" in the attention blocks" if cfg.stateful else "")]
