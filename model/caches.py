"""Every cache of the model layer, forgotten at once: `clear_caches()`, for benchmarks and tests that must measure
uncached calls (passes, traces, saved-bytes formulas, budgets, the symbolic passes and the meta kernels' answers)."""
from __future__ import annotations

from . import budgeting, config, memory, passes, symbolic, tracing
from .budgeting import budget


def clear_caches() -> None:
    """Forget every cached pass, trace and budget."""
    for cached in (passes._module, passes.run_pass, tracing._trace, tracing.memory_lines, memory.saved_formula,
                   budget, config.one_of_each_arch):
        cached.cache_clear()
    budgeting.clear_formulas()
    symbolic.clear()
    passes.KNOWN_SHAPES.clear()
