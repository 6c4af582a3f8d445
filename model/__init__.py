"""The lesson's GPT-2: its model, configuration, traced shapes, parameter/FLOP budget and tokenizer.

    >>> from model import PRESETS, trace, budget
    >>> budget(PRESETS["gpt2-small"]).params_exact
    124439808

In a Jupyter cell, `trace(cfg)`, `budget(cfg)`, `plan(cfg)` (the training run) and `model.values.values(cfg, text)`
(one real pass at init) show as tables (`model.notebook`).

This package never imports panel or bokeh: the app formats what it returns.
"""
from .budgeting import Budget, budget, clear_caches
from .config import BOUNDS, FIELD_DOCS, PRESETS, Config, divisors, snap_heads
from .gpt import GPT
from .figures import Line
from .passes import DTYPES
from .tracing import NOTATION, Row, Trace, trace
from .training import TrainSetup, plan

__all__ = ["BOUNDS", "DTYPES", "FIELD_DOCS", "NOTATION", "PRESETS", "Budget", "Config", "GPT", "Line", "Row", "Trace",
           "TrainSetup", "budget", "clear_caches", "divisors", "plan", "snap_heads", "trace"]
