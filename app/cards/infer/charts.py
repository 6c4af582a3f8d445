"""The inference card's Bokeh charts, built the same way by the live page and the exported page (Bokeh only, no
Panel). The parameter and memory charts are HTML bars (`chart_html` of app/cards/budget/markup.py and of
app/cards/train/markup.py)."""
from __future__ import annotations

from bokeh.models import ColumnDataSource, DataRange1d, HoverTool, LogTicker, NumeralTickFormatter
from bokeh.plotting import figure

from ...styles import FONT, INK, MUTED, RULE, T2


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


def _line_axes(p, x_label: str, y_label: str) -> None:
    """The house style of a line chart: muted axes, a light grid both ways, x at powers of 2 written 1,024, the
    legend under the plot, one entry a line (it never covers a line and fits a phone), labels from `model.infer_report`."""
    style_axes(p)
    p.xaxis.axis_label, p.yaxis.axis_label = x_label, y_label
    p.xaxis.ticker = LogTicker(base=2, mantissas=[1], desired_num_ticks=6)
    for axis in (p.xaxis, p.yaxis):
        axis.formatter = NumeralTickFormatter(format="0,0.[00]")
    p.yaxis.axis_label_text_font_size = "11px"
    p.yaxis.axis_label_text_font_style = "normal"
    p.yaxis.axis_label_text_color = MUTED
    p.yaxis.major_label_text_color = MUTED
    p.yaxis.major_label_text_font_size = "11px"
    p.ygrid.grid_line_color = "#f0f1f3"
    legend = p.legend[0]
    legend.label_text_font = FONT
    legend.label_text_font_size = "11.5px"
    legend.border_line_color = None
    legend.padding, legend.spacing, legend.margin = 2, 0, 0
    p.add_layout(legend, "below")


def _line_figure(y_axis_type: str):
    """A line chart without a title: each page writes the title above it as text, which wraps on a phone."""
    return figure(height=280, sizing_mode="stretch_width", toolbar_location=None, tools="", x_axis_type="log",
                  y_axis_type=y_axis_type, min_border_left=4, min_border_right=14, min_border_top=8,
                  outline_line_color=None)


def tokens_chart(source: ColumnDataSource, here: ColumnDataSource, knee: ColumnDataSource, words: dict):
    """The inference card's chart of decode tokens per second against B (log–log): all B sequences together and each
    one, this page's B as a dot, and the knee, where a step turns compute-bound, as a dotted line (words:
    `model.infer_report.CHART_B`). Both pages only ever assign new data to the three sources
    (`model.infer_report.chart_data`)."""
    p = _line_figure("log")
    total = p.line("B", "all", source=source, line_width=2.5, color="#5b4fd6", legend_label=words["all"])
    p.scatter("B", "all", source=source, size=5, color="#5b4fd6")
    each = p.line("B", "seq", source=source, line_width=2, color="#1098ad", line_dash="dashed",
                  legend_label=words["seq"])
    p.scatter("B", "all", source=here, size=11, color=T2, line_color="#ffffff", legend_label=words["here"])
    p.segment(x0="B", x1="B", y0=1e-6, y1=1e15, source=knee, line_color=T2, line_width=1.5, line_dash="dotted",
              legend_field="label")  # no knee, no entry
    p.y_range.renderers = [total, each]  # the knee's line spans the chart without stretching its range
    p.add_tools(HoverTool(renderers=[total, each], tooltips=[("B", "@B"), (words["all"], "@all_text"),
                                                             (words["seq"], "@seq_text"), ("step", "@step_text"),
                                                             ("", "@bound")]))
    _line_axes(p, words["x"], words["y"])
    return p


TWIN = "twin"  # the step chart's all-attention twin's line (`step_chart`, `show_twin`)


def show_twin(p, shown: bool) -> None:
    """The step chart's all-attention twin (`step_chart`'s dashed line) and its legend entry shown where the model has
    one (Gated DeltaNet blocks), hidden elsewhere."""
    for item in p.legend[0].items:
        if any(r.name == TWIN for r in item.renderers):
            item.visible = shown
            for r in item.renderers:
                r.visible = shown


def step_chart(source: ColumnDataSource, here: ColumnDataSource, words: dict, twin: ColumnDataSource | None = None):
    """The inference card's chart of a decode step's time against the context T (T on a log axis, time from 0, so
    that the cache's share of a step shows as it is), this page's T as a dot (words: `model.infer_report.CHART_T`;
    sources from `model.infer_report.chart_data`); with Gated DeltaNet blocks, the all-attention twin's steps
    (`twin`), dashed, so that the hybrid's flatter line shows where it pulls ahead."""
    p = _line_figure("linear")
    p.y_range = DataRange1d(start=0)
    if twin is not None:
        twin_line = p.line("T", "step_ms", source=twin, line_width=2, color="#868e96", line_dash="dashed",
                           legend_label=words["twin"], name=TWIN, visible=False)
        p.add_tools(HoverTool(renderers=[twin_line], tooltips=[("T", "@T"), ("twin's step", "@step_text")]))
    step = p.line("T", "step_ms", source=source, line_width=2.5, color="#1098ad", legend_label=words["step"])
    p.scatter("T", "step_ms", source=source, size=5, color="#1098ad")
    p.scatter("T", "step_ms", source=here, size=11, color=T2, line_color="#ffffff", legend_label=words["here"])
    p.add_tools(HoverTool(renderers=[step], tooltips=[("T", "@T"), ("step", "@step_text"), ("decode", "@rate_text")]))
    _line_axes(p, words["x"], words["y"])
    return p
