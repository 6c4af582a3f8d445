"""The live page's words and control ranges that the exported page shares, without importing Panel.

The exported page is built with Bokeh alone, so what both pages show is defined here (or in `model`) and read
by app/controls.py, app/budget.py and app/shapes.py on one side and app/export on the other.
"""
from __future__ import annotations

from model import BOUNDS

SHORT = {"B": "batch", "T": "sequence length", "d": "model width", "h": "heads (divide d)", "L": "blocks",
         "V": "vocabulary", "T_max": "positions W_pe"}  # the name under each field's symbol
SOFT = {"B": (1, 64, 1), "T": (1, None, 1), "d": (64, 4096, 64), "L": (1, 48, 1), "V": (1, 131_072, 1),
        "T_max": (1, 8192, 1)}  # slider (start, end, step); T's end is T_max; h walks the divisors of d
RULES_LINE = ("h divides d (d_head = {d} / {h} = {d_head}) · T ≤ T_max = {T_max} · arrow keys move a focused slider; "
              "the boxes take any value")  # the status line when no notice applies; numbers with separators
QUADRATIC = "(B, h, T, T)"  # the attention matrices: the tensors that balloon with T
MAX_LISTED_BLOCKS = 96  # expanded listing: GPT-3 175B in full; beyond, one line stands for the rest
SUM_KEYS = ("params/exact", "flops/forward_measured")  # budget lines that close a group: a rule above
STEP_PREFIX = "flops/steps/"  # the steps from 2N to the measured count: indented
CAPTIONS = (  # what the sliders show about N; {mlp_share} is the line params/mlp_share
    "<b>N does not depend on T or B</b>: they size the activations (the shapes), not the weights.",
    "<b>h changes no parameter</b>: the heads split d; W_qkv is (d, 3d) for any h.",
    "<b>The MLP holds ≈ 2/3 of each block</b>: 8d² of 12d² ({mlp_share} here, with biases).",
)


def slider_range(name: str, value: int, T_max: int) -> tuple[int, int, int]:
    """(start, end, step) of the slider for `name` showing `value`.

    The soft range, with the end doubled until it reaches `value` (capped at the bound), so the range
    depends only on the value's order of magnitude: L = 96 gives 1 … 96 and stays so at L = 95.
    """
    start, end, step = SOFT[name]
    if end is None:
        end = T_max
    else:
        while end < value and end < BOUNDS[name][1]:
            end = min(2 * end, BOUNDS[name][1])
    start = min(start, value)
    return start, max(end, start + 1), step


def rules_line(d: int, h: int, T_max: int) -> str:
    """The status line's reminder of the rules at this configuration."""
    return RULES_LINE.format(d=f"{d:,}", h=f"{h:,}", d_head=f"{d // h:,}", T_max=f"{T_max:,}")
