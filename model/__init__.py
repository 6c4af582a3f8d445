"""The lesson's GPT-2 and today's open models: model, configuration, traced shapes, budget, values and tokenizer.

    >>> from model import PRESETS, trace, budget
    >>> budget(PRESETS["gpt2-small"]).params_exact
    124439808
    >>> budget(PRESETS["llama3-8b"]).params_exact
    8030261248

In a Jupyter cell, `trace(cfg)`, `budget(cfg)`, `plan(cfg)` (the training run) and `values(cfg, text)`
(one real pass at init) show as tables (`model.notebook`).

This package never imports panel or bokeh: the app formats what it returns.
"""
import types

from .budgeting import Budget, budget
from .caches import clear_caches
from .config import BOUNDS, CHOICES, FIELD_DOCS, PRESETS, Config, divisors, snap_heads
from .gpt import GPT
from .figures import Line
from .passes import DTYPES
from .tensor_notation import NOTATION
from .tracing import Row, Trace, trace
from .training import TrainSetup, plan
from . import values as _values
from . import notebook  # noqa: F401 (registers the records' Jupyter HTML, model.figures.html_repr)


class _CallableModule(types.ModuleType):
    """`model.values` is the submodule (its `Values`, `plan`, `TooLarge` ...) and, called, its function `values`:
    so `from model import values; values(cfg, text)` and `model.values(cfg, text)` both run a pass."""

    def __call__(self, *args, **kwargs):
        return self.values(*args, **kwargs)


_values.__class__ = _CallableModule

__all__ = ["BOUNDS", "CHOICES", "DTYPES", "FIELD_DOCS", "NOTATION", "PRESETS", "Budget", "Config", "GPT", "Line", "Row", "Trace",
           "TrainSetup", "budget", "clear_caches", "divisors", "plan", "snap_heads", "trace", "values"]
