"""Layout helpers shared by the views: a wrapping row that costs one Bokeh model.

Panel's `FlexBox` is a ReactiveHTML: building it walks its children through ReactiveHTML's template machinery,
which took 22 % of the server's time to open a page (issue 16). A Bokeh `Row` whose host element is styled as
a wrapping flexbox lays its items out the same way for the price of a plain layout model.
"""
from __future__ import annotations

import panel as pn


def wrap(*objects, gap: str = "0px", align: str = "stretch", justify: str = "flex-start",
         styles: dict[str, str] | None = None, **params) -> pn.Row:
    """A row whose items wrap onto more lines (CSS flex-wrap), `gap` apart, aligned by `align` across a line."""
    params.setdefault("margin", 0)
    params.setdefault("sizing_mode", "stretch_width")
    return pn.Row(*objects, styles={"flex-wrap": "wrap", "gap": gap, "align-items": align, "min-width": "0",
                                    "justify-content": justify, **(styles or {})}, **params)
