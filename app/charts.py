"""The page's Bokeh charts, built the same way by the live page and the exported page (Bokeh only, no Panel)."""
from __future__ import annotations

from bokeh.core.properties import value as literal
from bokeh.models import ColumnDataSource, CustomJSTickFormatter, FactorRange, HoverTool, LabelSet, Range1d
from bokeh.plotting import figure

from .styles import FONT, INK, MUTED, RULE, T2
from .words import PARTS, ROWS

# Axis ticks of parameter counts, in model.units.params' words (never "B" or "T" for billions and trillions).
TICKS_JS = """
const units = [[1e12, ' trillion'], [1e9, ' billion'], [1e6, ' million'], [1e3, ' k']];
for (const [s, u] of units) { if (Math.abs(tick) >= s) { return (+(tick / s).toPrecision(3)) + u; } }
return String(tick);
"""


def style_axes(p) -> None:
    """The house style of a horizontal bar chart's axes and grid."""
    for axis in (p.xaxis, p.yaxis):
        axis.major_label_text_font = FONT
        axis.axis_label_text_font = FONT
        axis.axis_line_color = RULE
        axis.major_tick_line_color = RULE
        axis.minor_tick_line_color = None
    p.xaxis.axis_label_text_font_size = "11px"
    p.xaxis.axis_label_text_font_style = "normal"
    p.xaxis.axis_label_text_color = MUTED
    p.xaxis.major_label_text_color = MUTED
    p.yaxis.major_label_text_font_size = "12px"
    p.yaxis.major_label_text_color = INK
    p.ygrid.grid_line_color = None
    p.xgrid.grid_line_color = "#f0f1f3"


def parts_chart(source: ColumnDataSource, x_range: Range1d, labels: list[str]):
    """The parameter chart: one bar per model.budgeting.CHART part, labelled, with the line's formula on hover.

    `source` holds the columns of app.budget.budget_parts (label, value, exact, formula, what, text, colour,
    align, offset, ink); both pages only ever assign new data to it.
    """
    p = figure(y_range=FactorRange(*reversed(labels)), x_range=x_range, height=236, sizing_mode="stretch_width",
               toolbar_location=None, tools="", min_border_left=4, min_border_right=8, min_border_top=4,
               outline_line_color=None)
    p.hbar(y="label", right="value", height=0.62, source=source, fill_color="colour", line_color=None)
    p.add_layout(LabelSet(x="value", y="label", text="text", source=source, x_offset="offset", y_offset=0,
                          text_align="align", text_baseline="middle", text_font_size="11.5px", text_color="ink",
                          text_font=literal(FONT)))
    p.add_tools(HoverTool(tooltips=[("", "@what"), ("parameters", "@exact"), ("formula", "@formula")]))
    p.xaxis.formatter = CustomJSTickFormatter(code=TICKS_JS)  # a model per figure: Bokeh models belong to one page
    p.xaxis.axis_label = "parameters"
    style_axes(p)
    p.xaxis.ticker.desired_num_ticks = 4
    return p


def memory_chart(source: ColumnDataSource, capacity: ColumnDataSource, x_range: Range1d):
    """The training card's memory chart: training per GPU and serving as stacked bars (words.PARTS) in GiB, and
    the GPU's memory as a dashed line.

    `source` holds the columns of app.training.chart_data, `capacity` those of capacity_data (x, label); both
    pages only ever assign new data to them.
    """
    p = figure(y_range=FactorRange(*ROWS), x_range=x_range, height=170, sizing_mode="stretch_width",
               toolbar_location=None, tools="", min_border_left=4, min_border_right=12, min_border_top=4,
               outline_line_color=None)
    renderers = p.hbar_stack([c for c, _, _ in PARTS], y="row", height=0.6, source=source,
                             color=[c for _, _, c in PARTS], line_color="#ffffff", line_width=1)
    for r, (col, lab, _) in zip(renderers, PARTS):
        p.add_tools(HoverTool(renderers=[r], tooltips=[("", "@row"), (lab, f"@{col}_text"), ("total", "@total_text")]))
    p.segment(x0="x", x1="x", y0=0, y1=len(ROWS), source=capacity, line_color=T2, line_width=2, line_dash="dashed")
    p.xaxis.axis_label = "GiB"
    style_axes(p)
    return p
