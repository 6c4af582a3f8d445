"""`Line`: one figure as data — key, label, formula, value, unit — made once here and rendered everywhere.

The CLI tables, the live page and the exported page render `Line`s; none of them writes a label, formula or
unit of its own. A line's `formula` is lesson notation for exactly its configuration and it is true:
`model.formula.evaluate(line.formula, symbols)` gives `line.value` (tests check every line, `check_lines`).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from .expr import Expr
from .formula import matches

UNITS: dict[str, str] = {  # every line's unit, the one vocabulary (`model.units.value` writes each)
    "params": "a count of parameters",
    "tokens": "a count of tokens (a sequence length, a count of rows, training tokens D)",
    "count": "a whole count of something else (GPUs, a micro-batch B)",
    "FLOP": "floating-point operations (per token unless the label says otherwise; FLOPs, not MACs)",
    "share": "a fraction from 0 to 1",
    "ratio": "how many times",
    "bytes": "bytes",
    "bool": "yes or no",
    "flop_per_s": "FLOP per second",
    "flop_per_byte": "FLOP per byte moved (arithmetic intensity)",
    "tokens_per_s": "tokens per second",
    "pf_days": "PF-days: 10¹⁵ FLOP/s for a day",
    "seconds": "seconds",
    "days": "days of wall-clock time",
    "gpu_hours": "GPU-hours",
    "usd": "US dollars",
    "loss": "nats per token",
}
HTML_REPRS: dict[type, Callable[[object], str]] = {}  # a record's class -> its Jupyter HTML (`model.notebook` fills it)


def html_repr(record: object) -> str:
    """A record's HTML in a Jupyter cell: `Trace`, `Budget`, `Plan` and `Values` call this from `_repr_html_`, and
    `model.notebook` (imported with `model`) registers their renderers, so no record module imports a formatter."""
    return HTML_REPRS[type(record)](record)


@dataclass(frozen=True)
class Line:
    """One figure. `unit` is one of `UNITS`; `formula` is "" for a figure that is no formula of the symbols (a
    GPU's memory, whether the peak fits)."""

    key: str  # slash-separated, e.g. "params/emb"
    label: str  # what it is, in the lesson's words
    formula: str  # lesson notation, true for this configuration
    value: int | float
    unit: str


def check_lines(lines: Iterable[Line], symbols: Mapping[str, int | float]) -> None:
    """Raise RuntimeError naming the first line whose unit is not one of `UNITS` or whose formula does not evaluate
    to its value (a line without a formula has none to check)."""
    for line in lines:
        if line.unit not in UNITS:
            raise RuntimeError(f"line {line.key}: unknown unit {line.unit!r}")
        if line.formula and not matches(line.formula, symbols, line.value):
            raise RuntimeError(f"line {line.key}: formula {line.formula!r} does not give {line.value!r}")


def number(v: Fraction | float) -> int | float:
    """An expression's value as a figure holds it: a whole number as an int, anything else as a float."""
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v  # an int or a float already


def line(key: str, label: str, formula: Expr, symbols: Mapping[str, int | float], unit: str,
         value: int | float | None = None) -> Line:
    """The Line of a figure whose formula is `formula`, its value the formula's at `symbols` (`value`: a measured or
    otherwise computed figure the formula must give, as `check_lines` checks)."""
    return Line(key, label, formula.text, number(formula.value(symbols)) if value is None else value, unit)
