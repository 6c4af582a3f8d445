"""Right column: N, the parameter chart and every line of `model.budget`, as markup in two HTML panes.

Nothing here writes a figure, label or formula: `budget_parts`, `chart_html` and `lines_html` render
`Budget.lines` (pure, tested without a browser). The chart is HTML bars, not a Bokeh figure: a figure was ~28
Bokeh models per session and half of the server's time to build a page (issue 16). The exported page renders
the same chart and lines with the same markup (`chartHtml`, `linesHtml`; tests compare them in Chromium).
"""
from __future__ import annotations

import html

import panel as pn
import param
from model import Budget, Line
from model import units as fmt
from model.budgeting import GROUPS, chart, chart_note

from .state import ExplorerState
from .styles import BAR_INSIDE, BAR_SHARE, BUDGET_CSS, PART_COLOURS
from .templates import TEMPLATES, columns_to_rows, fill_html
from .words import STEP_PREFIX, SUM_KEYS


def shown(line: Line) -> dict[str, str]:
    """A line as the page shows it: key, label, formula and formatted value (the export's JavaScript makes
    the same dicts from the same lines; tests compare the two)."""
    return {"key": line.key, "label": line.label, "formula": line.formula, "value": fmt.value(line.value, line.unit),
            "short": fmt.short(line.value, line.unit)}


def lines_html(lines: list[dict[str, str]]) -> str:
    """The budget's lines as one table, grouped by the key's first part (model.budgeting.GROUPS): the template
    "lines" of app/templates.py, which the exported page's `linesHtml` fills the same way (tests compare them)."""
    rows, group = [], None
    for x in lines:
        g = x["key"].split("/", 1)[0]
        cls = "sum" if x["key"] in SUM_KEYS else "step" if x["key"].startswith(STEP_PREFIX) else ""
        rows.append({**x, "group": GROUPS[g] if g != group else "", "cls": cls})
        group = g
    return fill_html(TEMPLATES["lines"], {"rows": rows})


def headline_html(lines: dict[str, dict[str, str]]) -> str:
    """N in large type with its formula; a mixture of experts' N_active under it, as large (the line
    params/active: the parameters one token uses). The template "headline"."""
    return fill_html(TEMPLATES["headline"], {"n": lines["params/exact"], "active": lines.get("params/active")})


def captions_html(lines: dict[str, dict[str, str]]) -> str:
    """The captions under the chart (the template "captions")."""
    return fill_html(TEMPLATES["captions"], {"mlp_share": lines["params/mlp_share"]["value"]})


def bar_text(key: str, value: int, in_sum: bool, total: int) -> str:
    """A bar's text: the head's "0: tied to W_te"; a part outside N's sum (a dense block's halves; a mixture of
    experts' routed experts a token uses) per block or as a share of N; a part of N's sum, its share (the
    templates "bar_*", which page.js's `budgetParts` fills the same way)."""
    if key == "params/head" and value == 0:
        return TEMPLATES["bar_tied"]
    kind = "bar_share" if in_sum else "bar_block" if key.endswith("_block") else "bar_of_n"
    return TEMPLATES[kind].format(params=fmt.params(value), percent=fmt.percent(value / total))  # text, not markup


def budget_parts(b: Budget) -> dict[str, list]:
    """The chart's bars as columns, one entry per part of `model.budgeting.chart(b)` (a dense model's CHART, a
    mixture of experts' MOE_CHART): label, value, exact count, formula, what it is, the bar's text, colour, and
    whether the text sits inside the bar (long bars)."""
    bars = chart(b)
    value = [b.line(key).value for key, _, _ in bars]
    top = max(value)
    return {
        "key": [key for key, _, _ in bars],
        "label": [label + ("*" if in_sum else "") for _, label, in_sum in bars],
        "value": value,
        "exact": [fmt.thousands(v) for v in value],
        "formula": [b.line(key).formula for key, _, _ in bars],
        "what": [b.line(key).label for key, _, _ in bars],
        "text": [bar_text(key, v, in_sum, b.params_exact) for (key, _, in_sum), v in zip(bars, value)],
        "colour": [PART_COLOURS[key] for key, _, _ in bars],
        "inside": [v > BAR_INSIDE * top for v in value],  # long bars carry their text inside
    }


def chart_html(parts: dict[str, list]) -> str:
    """The parameter chart: one labelled bar per part, to scale (the longest fills BAR_SHARE of the track, as a
    CSS calc of whole numbers, so the exported page's `chartHtml` writes the same markup), the part's formula
    and exact count on hover: the template "chart". Mirrored by `chartHtml` in the exported page; tests compare
    the two."""
    return fill_html(TEMPLATES["chart"], {"bars": columns_to_rows(parts), "share": BAR_SHARE,
                                       "top": max(parts["value"]) or 1})


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
        return self._parts

    def _show(self, b: Budget) -> None:
        rows = [shown(x) for x in b.lines]
        by_key = {x["key"]: x for x in rows}
        self._parts = budget_parts(b)
        # T, B and h change no parameter: the head's markup stays the same and nothing is sent for it
        self._head.object = "<h2>Parameter budget</h2>" + headline_html(by_key) + chart_html(self._parts)
        self._lines.object = (f"<p class='note muted'>{html.escape(chart_note(b))}</p>" + lines_html(rows)
                              + captions_html(by_key))

    def _update(self, *_events) -> None:
        self._show(self.state.budget)

    def __panel__(self) -> pn.viewable.Viewable:
        return pn.Column(self._head, self._lines, sizing_mode="stretch_width", margin=0)
