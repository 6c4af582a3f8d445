"""The residual stream through a block: how attention and the MLP read x and add to it.

The lesson's block (GPT-2, Llama, every pre-norm model) is sequential: attention reads norm(x) and adds to x, then
the MLP reads a norm of that sum: x = x + Attn(ln_1(x)); x = x + MLP(ln_2(x)). Gemma's sandwich norms (`post_norms`)
normalise each output before its add. A part that wires a block otherwise defines the same three names and is
present where its fields say: `NORMS` (the block's pre-norms, by module name), `wire` (the block's forward pass) and
`present`; the stack takes the last present one in `model.parts.PARTS`' order (`model.stack.wiring`), this one where
no other is.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from ..config import Config
    from ..gpt import Block

FIELDS = ()  # the lesson's wiring has no field: it is the block's where no other part wires it
NORMS = ("ln_1", "ln_2")  # before attention, before the MLP


def present(cfg: Config) -> bool:
    """Every model can be wired so; a part that wires a block otherwise takes its place (`model.stack.wiring`)."""
    return True


def wire(block: Block, x: torch.Tensor, mixed: tuple) -> torch.Tensor:
    """x = x + Attn(ln_1(x)); x = x + MLP(ln_2(x)), each output through its sandwich norm where the block has one.
    `mixed` is what attention takes besides its input (RoPE's angles, a decode step's cache, a window's band)."""
    x = block.resid_1(x + block.post(block.mixer(block.ln_1(x), *mixed), "post_ln_1"))
    return block.resid_2(x + block.post(block.ffn(block.ln_2(x)), "post_ln_2"))
