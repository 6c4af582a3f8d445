"""The two rules that tie the sliders together, with the message a learner sees when one applies.

- h must divide d (each head gets d_head = d / h features): h snaps to the nearest divisor (`model.snap_heads`).
- T must not exceed T_max (the learned position table W_pe has T_max rows and cannot extrapolate): T is clamped.

`settle` takes the values a user asked for (each already within `model.BOUNDS`) and returns a valid
`model.Config` and the notices explaining any change. The URL parser and the page state both use it.
"""
from __future__ import annotations

from collections.abc import Mapping

from model import Config, snap_heads

FIELDS = ("B", "T", "d", "h", "L", "V", "T_max", "tie")  # Config's fields, in the lesson's order


def h_notice(asked: int, h: int, d: int) -> str:
    """ "h snapped 12 → 11: 770 is not divisible by 12" """
    return f"h snapped {asked:,} → {h:,}: {d:,} is not divisible by {asked:,}"


def T_notice(asked: int, T_max: int) -> str:
    """Why T was lowered to T_max."""
    return (f"T clamped {asked:,} → {T_max:,}: T cannot exceed T_max = {T_max:,}, the rows of the learned "
            f"position table W_pe (it cannot extrapolate to later positions)")


def settle(asked: Mapping[str, int | bool]) -> tuple[Config, list[str]]:
    """A valid Config as close as possible to `asked` (all of FIELDS, each in bounds), and what was changed.

    >>> cfg, notes = settle(dict(B=8, T=2048, d=770, h=12, L=12, V=50257, T_max=1024, tie=True))
    >>> cfg.h, cfg.T, notes[0]
    (11, 1024, 'h snapped 12 → 11: 770 is not divisible by 12')
    """
    values = {k: asked[k] for k in FIELDS}
    notes = []
    h = snap_heads(values["d"], values["h"])
    if h != values["h"]:
        notes.append(h_notice(values["h"], h, values["d"]))
        values["h"] = h
    if values["T"] > values["T_max"]:
        notes.append(T_notice(values["T"], values["T_max"]))
        values["T"] = values["T_max"]
    return Config(**values), notes
