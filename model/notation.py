"""Symbolic shapes in the lesson's notation, such as "(B, h, T, d_head)" or "(B, T, 3d)", as data.

Grammar: a parenthesised, comma-separated list of dimensions; each dimension is a whole number, a symbol
(B, T, d, h, d_head, L, V, T_max), or a whole-number coefficient written before a symbol ("4d").
The same grammar is evaluated in the exported page's JavaScript, so keep it this small.
"""
from __future__ import annotations

import re

SYMBOLS = ("B", "T", "d", "h", "d_head", "L", "V", "T_max")
_DIM = re.compile(r"^(\d*)(B|T_max|T|d_head|d|h|L|V)?$")


def parse(symbolic: str) -> tuple[tuple[int, str | None], ...]:
    """"(B, T, 3d)" -> ((1, "B"), (1, "T"), (3, "d")); a plain number n -> (n, None)."""
    text = symbolic.strip()
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"symbolic shape {symbolic!r} must be written in parentheses, like '(B, T, d)'")
    inner = text[1:-1].strip()
    dims = []
    for part in filter(None, (p.strip() for p in inner.split(","))):
        m = _DIM.match(part)
        if not m or not (m.group(1) or m.group(2)):
            raise ValueError(f"dimension {part!r} of {symbolic!r} is not a number, a symbol {SYMBOLS} or a multiple like '4d'")
        coeff = int(m.group(1)) if m.group(1) else 1
        dims.append((coeff, m.group(2)))
    return tuple(dims)


def evaluate(symbolic: str, values: dict[str, int]) -> tuple[int, ...]:
    """The concrete shape of a symbolic one: evaluate("(B, T, 3d)", {"B": 8, "T": 4, "d": 768}) == (8, 4, 2304)."""
    return tuple(coeff * (values[sym] if sym else 1) for coeff, sym in parse(symbolic))
