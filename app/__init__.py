"""The Panel app: an interactive explorer of the lesson's GPT-2 shapes and budget (`panel serve app/explorer.py`).

    >>> from app import Explorer
    >>> Explorer()  # displays in a Jupyter cell

The app formats and lays out what `model.trace`, `model.budget` and `model.tokenizer` return.
"""
from .query import ViewOptions, parse_config, parse_query, to_query

__all__ = ["Explorer", "ExplorerState", "ViewOptions", "parse_config", "parse_query", "to_query"]


def __getattr__(name: str):
    """`Explorer` and `ExplorerState` import Panel only when asked for: `python -m app export` never does, so the
    exported page carries BokehJS alone."""
    if name == "Explorer":
        from .page import Explorer
        return Explorer
    if name == "ExplorerState":
        from .state import ExplorerState
        return ExplorerState
    raise AttributeError(f"module 'app' has no attribute {name!r}")
