"""The training card's Bokeh chart, built the same way by the live page and the exported page (Bokeh only, no
Panel). The parameter chart is HTML bars (app/budget.py `chart_html`)."""
from __future__ import annotations

from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Range1d
from bokeh.plotting import figure

from .styles import FONT, INK, MUTED, RULE, T2
from .words import PARTS, ROWS


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
