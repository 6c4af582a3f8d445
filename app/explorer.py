"""Entry point: `panel serve app/explorer.py` serves the explorer at http://localhost:5006/explorer.

Each browser session gets its own `Explorer`, configured by the address it was opened with
(`?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1`, `?preset=gpt3-175b`, `?embed=1&controls=T,d`).
In a notebook use `from app import Explorer; Explorer()` instead.
"""
from __future__ import annotations

import panel as pn

from app.page import TITLE, Explorer
from app.styles import PAGE


def create_app() -> Explorer:
    """The explorer for the current session."""
    return Explorer.from_location()


if pn.state.served:
    # The full page sits on a light grey; an embedded view stays transparent over its course page.
    pn.extension(raw_css=[f"body {{ margin: 0; }} body:has(.full) {{ background: {PAGE}; }}"], notifications=False)
    create_app().servable(title=TITLE)
