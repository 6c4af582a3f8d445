"""The lesson's GPT-2: its model, configuration, traced shapes, parameter/FLOP budget and tokenizer.

    >>> from model import PRESETS, trace, budget
    >>> budget(PRESETS["gpt2-small"]).params_exact
    124439808

This package never imports panel or bokeh: the app formats what it returns.
"""
from .budgeting import Budget, budget, clear_caches
from .config import BOUNDS, CHOICES, FIELD_DOCS, PRESETS, Config, divisors, snap_heads
from .gpt import GPT
from .figures import Line
from .passes import DTYPES
from .tracing import NOTATION, Row, Trace, trace

__all__ = ["BOUNDS", "CHOICES", "DTYPES", "FIELD_DOCS", "NOTATION", "PRESETS", "Budget", "Config", "GPT", "Line", "Row", "Trace",
           "budget", "clear_caches", "divisors", "snap_heads", "trace"]
