"""Every tensor's shape in the lesson's notation and its label, per recipe: `notation(cfg)`.

`NOTATION` is GPT-2's recipe as the lesson draws it, made of each part's lesson rows; each part (`model.parts`) writes
its own tensors' forms beyond it (`notation(cfg, rows)` of each part: RoPE's angles, RMSNorm's statistics, k and v at
h_kv heads, SwiGLU's gate and up, fused attention's log-sum-exp, a mixture of experts' rows, Gemma's, gpt-oss's sinks,
the sliding window's, latent attention's). The shapes are written in `model.notation`'s grammar; `model.tracing`
evaluates each one against the concrete shape of a real pass, so notation and code cannot drift apart. Keys are tensor
names without their block prefix (`local_name`).
"""
from __future__ import annotations

import re

from .config import Config
from .parts import PARTS as every_part
from .parts import attention, embedding, head, latent, mlp, moe, norms, positions, sinks, window
from .parts.attention import LSE_SHAPE  # noqa: F401 (the fused kernel's log-sum-exp, as tracing names it)
from .parts.moe import ROUTING_NOTE  # noqa: F401 (the routing's note under a mixture of experts' rows)

# The lesson's GPT-2, row by row in execution order: each part's lesson rows, and the block's two residual adds.
NOTATION: dict[str, tuple[str, str]] = {
    **embedding.NOTATION, **positions.NOTATION,
    "ln_1": norms.NOTATION["ln_1"], **attention.NOTATION, "resid_1": ("(B, T, d)", "x + attention"),
    "ln_2": norms.NOTATION["ln_2"], **mlp.NOTATION, "resid_2": ("(B, T, d)", "x + MLP"),
    "ln_f": norms.NOTATION["ln_f"], **head.NOTATION,
}
# Each part writes its forms of the rows beyond the lesson's, in this order: a later one's rows replace an earlier
# one's (a window's fused output, latent attention's every row of attention).
ORDER = (positions, norms, embedding, attention, mlp, moe, sinks, window, latent, head)
PARTS = (*ORDER, *(part for part in every_part if hasattr(part, "notation") and part not in ORDER))  # any other last


def notation(cfg: Config) -> dict[str, tuple[str, str]]:
    """Shape and label of every tensor at this configuration: the lesson's `NOTATION` for GPT-2's recipe, else with
    each part's forms (`PARTS`: k and v at h_kv heads, d_ff, RMSNorm's statistics, h·d_head where d_head is set
    apart, a mixture of experts' rows, ...)."""
    if cfg.gpt2_recipe:
        return NOTATION
    rows = dict(NOTATION)
    for part in PARTS:
        part.notation(cfg, rows)
    return rows


BLOCK_PREFIX = "blocks.0."  # a dense model's block rows (the exported page's)
_IN_BLOCK = re.compile(r"^blocks\.\d+\.")


def local_name(name: str) -> str:
    """A tensor's name without its block prefix: "blocks.3.moe.router" -> "moe.router"; "ln_f" stays."""
    return _IN_BLOCK.sub("", name)
