"""Right column: N, the parameter chart (a Bokeh figure updated in place) and every line of `model.budget`.

Nothing here writes a figure, label or formula: `budget_parts` and `lines_html` render `Budget.lines`
(pure, tested without a browser); `BudgetView` owns one figure per page and only ever assigns new data to its
`ColumnDataSource`. The exported page renders the same lines with the same markup (`linesHtml`).
"""
from __future__ import annotations

import html

import panel as pn
import param
from bokeh.models import ColumnDataSource, Range1d

from model import Budget, Line
from model import units as fmt
from model.budgeting import CHART, CHART_NOTE, GROUPS

from .charts import parts_chart
from .state import ExplorerState
from .styles import BUDGET_CSS, INK, PART_COLOURS
from .words import CAPTIONS, STEP_PREFIX, SUM_KEYS

INSIDE = 0.45  # a bar longer than this share of the longest one shows its label inside, in white

def shown(line: Line) -> dict[str, str]:
    """A line as the page shows it: key, label, formula and formatted value (the export's JavaScript makes
    the same dicts from the same lines; tests compare the two)."""
    return {"key": line.key, "label": line.label, "formula": line.formula, "value": fmt.value(line.value, line.unit),
            "short": fmt.short(line.value, line.unit)}


def lines_html(lines: list[dict[str, str]]) -> str:
    """The budget's lines as one table, grouped by the key's first part (model.budgeting.GROUPS).

    Mirrored by `linesHtml` in the exported page; tests check both give the same markup for the same lines.
    """
    e = html.escape
    out, group = [], None
    for x in lines:
        g = x["key"].split("/", 1)[0]
        if g != group:
            group = g
            out.append(f'<tr class="grp"><td colspan="2">{e(GROUPS[g])}</td></tr>')
        cls = "sum" if x["key"] in SUM_KEYS else "step" if x["key"].startswith(STEP_PREFIX) else ""
        short = f'<small>{e(x["short"])}</small>' if x["short"] else ""
        out.append(f'<tr class="{cls}" data-key="{e(x["key"])}"><td class="l">{e(x["label"])}'
                   f'<code>{e(x["formula"])}</code></td><td class="v">{e(x["value"])}{short}</td></tr>')
    return f'<table class="lines">{"".join(out)}</table>'


def headline_html(lines: dict[str, dict[str, str]]) -> str:
    """N in large type with its formula."""
    e = html.escape
    n = lines["params/exact"]
    return (f'<div class="n"><span class="big">N = {e(n["value"])}</span> <span class="muted">parameters '
            f'({e(n["short"])})</span></div><div class="nf muted">N = <code>{e(n["formula"])}</code></div>')


def captions_html(lines: dict[str, dict[str, str]]) -> str:
    """The captions under the chart."""
    items = "".join(f"<li>{c.format(mlp_share=html.escape(lines['params/mlp_share']['value']))}</li>" for c in CAPTIONS)
    return f'<ul class="captions">{items}</ul>'


def budget_parts(b: Budget) -> dict[str, list]:
    """Columns for the chart's ColumnDataSource, one entry per model.budgeting.CHART bar."""
    value = [b.line(key).value for key, _, _ in CHART]
    text = []
    for (key, _, in_sum), v in zip(CHART, value):
        if key == "params/head" and v == 0:
            text.append("0: tied to W_te")
        elif not in_sum:
            text.append(f"{fmt.params(v)} per block")
        else:
            text.append(f"{fmt.params(v)} · {fmt.percent(v / b.params_exact)}")
    top = max(value)
    inside = [v > INSIDE * top for v in value]  # long bars carry their label inside
    return {
        "label": [label + ("*" if in_sum else "") for _, label, in_sum in CHART],
        "value": value,
        "exact": [fmt.thousands(v) for v in value],
        "formula": [b.line(key).formula for key, _, _ in CHART],
        "what": [b.line(key).label for key, _, _ in CHART],
        "text": text,
        "colour": [PART_COLOURS[key] for key, _, _ in CHART],
        "align": ["right" if i else "left" for i in inside],
        "offset": [-6 if i else 5 for i in inside],
        "ink": ["#ffffff" if i else INK for i in inside],
    }





class BudgetView(pn.viewable.Viewer):
    """N, the parameter breakdown chart, FLOPs per token and captions, for the state's configuration."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        b = self.state.budget
        self.source = ColumnDataSource(budget_parts(b), name="budget-parts")
        self.x_range = Range1d(0, self._x_end(self.source.data["value"]))
        self.figure = self._figure()
        # two panes around the chart: the title and N above it; its legend, every line and the captions below
        self._head = pn.pane.HTML(sizing_mode="stretch_width", stylesheets=[BUDGET_CSS], margin=(0, 0, 4, 0))
        self._lines = pn.pane.HTML(sizing_mode="stretch_width", stylesheets=[BUDGET_CSS], margin=0)
        self._show(b)
        self.state.param.watch(self._update, ["config"])

    def _show(self, b: Budget) -> None:
        rows = [shown(x) for x in b.lines]
        by_key = {x["key"]: x for x in rows}
        self._head.object = "<h2>Parameter budget</h2>" + headline_html(by_key)
        self._lines.object = (f"<p class='note muted'>{html.escape(CHART_NOTE)}</p>" + lines_html(rows)
                              + captions_html(by_key))

    @staticmethod
    def _x_end(values: list[int]) -> float:
        return max(values) * 1.1  # long bars hold their labels; shorter ones have room to their right

    def _figure(self):
        return parts_chart(self.source, self.x_range, list(self.source.data["label"]))

    def _update(self, *_events) -> None:
        b = self.state.budget
        data = budget_parts(b)
        if data != dict(self.source.data):  # T, B and h change no parameter: nothing to send to the chart
            self.source.data = data  # in place: same figure, same source
            self.x_range.end = self._x_end(data["value"])
        self._show(b)

    def __panel__(self) -> pn.viewable.Viewable:
        chart = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", margin=(0, 0, 0, 0))
        return pn.Column(self._head, chart, self._lines, sizing_mode="stretch_width", margin=0)
