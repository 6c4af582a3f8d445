"""`Line`: one figure as data — key, label, formula, value, unit — made once here and rendered everywhere.

The CLI tables, the live page and the exported page render `Line`s; none of them writes a label, formula or
unit of its own. A line's `formula` is lesson notation for exactly its configuration and it is true:
`model.formula.evaluate(line.formula, symbols)` gives `line.value` (tests check every line, `check_lines`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from .formula import matches

UNITS = ("params", "FLOP", "share", "tokens", "bytes", "ratio")  # how model.units.value writes a value
HTML_REPRS: dict[type, Callable[[object], str]] = {}  # a record's class -> its Jupyter HTML (`model.notebook` fills it)


def html_repr(record: object) -> str:
    """A record's HTML in a Jupyter cell: `Trace`, `Budget`, `Plan` and `Values` call this from `_repr_html_`, and
    `model.notebook` (imported with `model`) registers their renderers, so no record module imports a formatter."""
    return HTML_REPRS[type(record)](record)


@dataclass(frozen=True)
class Line:
    """One figure. `unit`: "params" (a count), "FLOP" (per token unless the label says otherwise), "share"
    (0 ... 1), "tokens" (a sequence length or a count of rows), "bytes" or "ratio" (how many times)."""

    key: str  # slash-separated, e.g. "params/emb"
    label: str  # what it is, in the lesson's words
    formula: str  # lesson notation, true for this configuration
    value: int | float
    unit: str


def check_lines(lines: Iterable[Line], symbols: Mapping[str, int | float]) -> None:
    """Raise RuntimeError naming the first line whose formula does not evaluate to its value."""
    for line in lines:
        if line.unit not in UNITS:
            raise RuntimeError(f"line {line.key}: unknown unit {line.unit!r}")
        if not matches(line.formula, symbols, line.value):
            raise RuntimeError(f"line {line.key}: formula {line.formula!r} does not give {line.value!r}")
