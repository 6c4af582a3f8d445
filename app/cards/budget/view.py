"""Right column: N, the parameter chart and every line of `model.budget`, as markup in two HTML panes (made by
app/cards/budget/markup.py, which the exported page runs compiled)."""
from __future__ import annotations

import panel as pn
import param
from model import Budget

from ...state import ExplorerState
from ...styles import BUDGET_CSS
from .markup import budget_parts, panes


class BudgetView(pn.viewable.Viewer):
    """N, the parameter breakdown chart, FLOPs per token and captions, for the state's configuration."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        # two panes: the title, N and the chart; its note, every line and the captions below
        self._head = pn.pane.HTML(sizing_mode="stretch_width", stylesheets=[BUDGET_CSS], margin=(0, 0, 4, 0))
        self._lines = pn.pane.HTML(sizing_mode="stretch_width", stylesheets=[BUDGET_CSS], margin=0)
        self._show(self.state.budget)
        self.state.param.watch(self._update, ["config"])

    @property
    def chart(self) -> dict[str, list]:
        """The chart's bars now (`budget_parts`)."""
        return budget_parts(self.state.budget)

    def _show(self, b: Budget) -> None:
        p = panes(b)
        # T, B and h change no parameter: the head's markup stays the same and nothing is sent for it
        self._head.object = "<h2>Parameter budget</h2>" + p["head"] + p["chart"]
        self._lines.object = p["chart_note"] + p["lines"] + p["captions"]

    def _update(self, *_events) -> None:
        self._show(self.state.budget)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._head, self._lines, sizing_mode="stretch_width", margin=0)
