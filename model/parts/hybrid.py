"""A parallel hybrid block (TII's Falcon-H1): attention and Mamba 2 (`model.parts.mamba`) both read one norm of x, in
every block, and add to x together; then the lesson's second norm and the MLP:
x = x + Attn(ln_1(x)) + Mamba2(ln_1(x)); x = x + MLP(ln_2(x)). Every block keeps both caches: attention's K and V of
all T tokens, and Mamba 2's convolution and SSM states whatever T. `ssm_parallel` says so; `mamba_layers` then lists
every block (L_ssm = L), and the figures count attention in L blocks and Mamba 2 in L blocks (`model.stack.beside`).

As transformers' FalconH1DecoderLayer runs it, each mixer reads its own copy of ln_1(x), scaled by its muP input
multiplier (ssm_in_multiplier, attention_in_multiplier), and each output is scaled before the two are summed
(ssm_out_multiplier, attention_out_multiplier): elementwise products, no FLOPs in torch's count and no parameters; the
two copies are what each mixer's first matmul keeps for backward (`scale`). The multipliers' values change no count,
shape or byte, so this module scales by 1.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config
    from ..gpt import Block

FIELDS = (
    Field("ssm_parallel", "flag", "a parallel hybrid block: attention and Mamba 2 both read ln_1(x) in every block and "
          "add to x together, x = x + Attn(ln_1(x)) + Mamba2(ln_1(x)), then x + MLP(ln_2(x)) (Falcon-H1; mamba_layers "
          "lists every block)", default=False, group="linear", needs="mamba_layers", control=False, tensors=True),
)
NORMS = ("ln_1", "ln_2")  # before both mixers, before the MLP
SCALES = ("ssm_in", "attn_in", "ssm_out", "attn_out")  # the block's elementwise scalings, as taps (`scale`)


def check(cfg: Config) -> None:
    """A parallel hybrid block needs Mamba 2 in every block and the lesson's wiring otherwise (ValueError naming the
    fix)."""
    if not cfg.ssm_parallel:
        return
    if cfg.mamba_layers != tuple(range(cfg.L)):
        raise ValueError(f"ssm_parallel puts Mamba 2 beside attention in every block: list every block in mamba_layers "
                         f"(0 to {cfg.L - 1:,}), or drop ssm_parallel")
    if cfg.parallel or cfg.post_norm or cfg.post_norms:
        raise ValueError("ssm_parallel wires the block its own way (both mixers, then the MLP): drop parallel, "
                         "post_norm and post_norms")


def present(cfg: Config) -> bool:
    """Every block mixes with attention and Mamba 2 side by side."""
    return cfg.ssm_parallel


def scale(block: Block, name: str, x: torch.Tensor) -> torch.Tensor:
    """x times the block's muP multiplier `name` (`SCALES`; its value 1 here): a new tensor, as transformers makes it."""
    return getattr(block, name)(x * 1.0)


def wire(block: Block, x: torch.Tensor, mixed: tuple) -> torch.Tensor:
    """x + Mamba2(ln_1(x)) + Attn(ln_1(x)), each mixer reading its own scaled copy of ln_1(x); then x + MLP(ln_2(x)).
    A decode step's cache (`mixed`'s second item) is attention's K and V, then Mamba 2's two states."""
    rope, past, band = mixed
    h = block.ln_1(x)
    ssm = scale(block, "ssm_out", block.ssm(scale(block, "ssm_in", h), None, None if past is None else past[2:]))
    attn = scale(block, "attn_out", block.attn(scale(block, "attn_in", h), rope, None if past is None else past[:2],
                                                  band))
    x = block.resid_1(x + (ssm + attn))
    return block.resid_2(x + block.ffn(block.ln_2(x)))


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The norm both mixers read, their scaled copies and outputs, and what the first residual add holds."""
    if present(cfg):
        norm = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
        rows["ln_1"] = ("(B, T, d)", f"{norm} before attention and Mamba 2 (both read it: a parallel hybrid block)")
        rows["ssm_in"] = ("(B, T, d)", "ln_1(x) times ssm_in_multiplier: Mamba 2's own copy of its input")
        rows["attn_in"] = ("(B, T, d)", "ln_1(x) times attention_in_multiplier: attention's own copy of its input")
        rows["ssm_out"] = ("(B, T, d)", "Mamba 2's output times ssm_out_multiplier")
        rows["attn_out"] = ("(B, T, d)", "attention's output times attention_out_multiplier")
        rows["resid_1"] = ("(B, T, d)", "x + attention + Mamba 2 (both read ln_1(x))")

