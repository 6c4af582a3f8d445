"""The Panel app: an interactive explorer of the lesson's GPT-2 shapes and budget (`panel serve app/explorer.py`).

    >>> from app import Explorer
    >>> Explorer()  # displays in a Jupyter cell

The app formats and lays out what `model.trace`, `model.budget` and `model.tokenizer` return.
"""
from .page import Explorer
from .query import ViewOptions, parse_config, parse_query, to_query
from .state import ExplorerState

__all__ = ["Explorer", "ExplorerState", "ViewOptions", "parse_config", "parse_query", "to_query"]
