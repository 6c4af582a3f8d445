"""Right column: the parameter budget (a Bokeh bar chart updated in place) and the FLOPs per token.

`budget_parts` and `budget_figures` turn `model.budget` into display data (pure, tested without a browser);
`BudgetView` owns one figure per page and only ever assigns new data to its `ColumnDataSource`.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import panel as pn
import param
from bokeh.core.properties import value as literal
from bokeh.models import ColumnDataSource, CustomJSTickFormatter, FactorRange, HoverTool, LabelSet, Range1d
from bokeh.plotting import figure

from model import Budget, Config
from model import units as fmt

from .state import ExplorerState
from .styles import BASE, FONT, INK, MUTED, PART_COLOURS, RULE

INSIDE = 0.45  # a bar longer than this share of the longest one shows its label inside, in white

# Chart rows, top to bottom: (key, label, formula). Parts marked * add up to N.
PARTS = (
    ("embeddings", "embeddings*", "(V + T_max)·d: token table W_te and position table W_pe"),
    ("blocks", "blocks × L*", "L·(12d² + 9d): every block's attention and MLP"),
    ("attention", "attention, 1 block", "4d² + 4d: W_qkv (d, 3d) and W_o (d, d), with biases"),
    ("mlp", "MLP, 1 block", "8d² + 5d: (d, 4d) and (4d, d), with biases"),
    ("norms", "LayerNorms*", "(2L + 1)·2d: a gain and a bias per LayerNorm"),
    ("head", "head*", "V·d when untied; 0 when tied to W_te"),
)


@dataclass(frozen=True)
class Figures:
    """The budget's numbers as the page prints them."""

    N: str  # "124,439,808"
    N_short: str  # "124.4 M"
    approx: str  # "124,318,464"
    approx_share: str  # "99.9 %"
    fwd: str  # "249 MFLOP"
    train: str  # "747 MFLOP"
    measured: str
    attn_share: str
    T_cross: str  # "4,608"
    mlp_share: str  # share of one block's parameters in its MLP


def budget_parts(b: Budget, cfg: Config) -> dict[str, list]:
    """Columns for the chart's ColumnDataSource, one entry per PARTS row."""
    value = {"embeddings": b.params_emb, "blocks": b.params_blocks,
             "attention": b.params_attn_block, "mlp": b.params_mlp_block, "norms": b.params_norms,
             "head": b.params_head}
    text = []
    for key, _, _ in PARTS:
        v = value[key]
        if key == "head" and cfg.tie:
            text.append("0: tied to W_te")
        elif key in ("attention", "mlp"):
            text.append(f"{fmt.params(v)} per block")
        else:
            text.append(f"{fmt.params(v)} · {fmt.percent(v / b.params_exact)}")
    top = max(value.values())
    inside = [value[key] > INSIDE * top for key, _, _ in PARTS]  # long bars carry their label inside
    return {
        "label": [label for _, label, _ in PARTS],
        "value": [value[key] for key, _, _ in PARTS],
        "exact": [fmt.thousands(value[key]) for key, _, _ in PARTS],
        "formula": [formula for _, _, formula in PARTS],
        "text": text,
        "colour": [PART_COLOURS[key] for key, _, _ in PARTS],
        "align": ["right" if i else "left" for i in inside],
        "offset": [-6 if i else 5 for i in inside],
        "ink": ["#ffffff" if i else INK for i in inside],
    }


def budget_figures(b: Budget) -> Figures:
    """The numbers beside the chart, formatted."""
    return Figures(
        N=fmt.thousands(b.params_exact), N_short=fmt.params(b.params_exact), approx=fmt.thousands(b.params_approx),
        approx_share=fmt.percent(b.params_approx / b.params_exact), fwd=fmt.flops(b.flops_fwd_per_token),
        train=fmt.flops(b.flops_train_per_token), measured=fmt.flops(b.flops_fwd_measured_per_token),
        attn_share=fmt.percent(b.attn_share), T_cross=fmt.thousands(b.T_attn_equals_dense),
        mlp_share=fmt.percent(b.params_mlp_block / (b.params_attn_block + b.params_mlp_block)),
    )


def numbers_html(f: Figures, cfg: Config) -> str:
    """N, its approximation and the FLOPs per token, as a small table."""
    e = html.escape
    return f"""<div class="n"><span class="big">N = {e(f.N)}</span> <span class="muted">parameters ({e(f.N_short)})</span></div>
<div class="approx">≈ 12·L·d² + (V + T_max)·d = <b>{e(f.approx)}</b> <span class="muted">({e(f.approx_share)} of N;
the rest are biases and LayerNorms)</span></div>
<table class="flops">
<tr><td>forward, 2N</td><td class="num"><b>{e(f.fwd)}</b>/token</td></tr>
<tr><td>training, 6N <span class="muted">(forward + backward)</span></td><td class="num"><b>{e(f.train)}</b>/token</td></tr>
<tr><td>measured forward</td><td class="num"><b>{e(f.measured)}</b>/token</td></tr>
<tr><td class="sub">of which attention, 4·L·T·d</td><td class="num"><b>{e(f.attn_share)}</b></td></tr>
</table>
<p class="note muted">Measured: the matmuls of the real forward pass at T = {cfg.T:,} (FlopCounterMode), including
q·kᵀ and attn·v, which grow with T, and the head. Attention matches the rest of a block at T = 6d = {e(f.T_cross)}.</p>"""


def captions_html(f: Figures) -> str:
    """What the sliders show about N, in three short lines."""
    return f"""<ul class="captions">
<li><b>N does not depend on T or B</b>: they size the activations (the shapes), not the weights.</li>
<li><b>h changes no parameter</b>: the heads split d; W_qkv is (d, 3d) for any h.</li>
<li><b>The MLP holds ≈ 2/3 of each block</b>: 8d² of 12d² ({html.escape(f.mlp_share)} here).</li>
</ul>"""


NUMBERS_CSS = BASE + f"""
.big {{ font-size: 22px; font-weight: 700; font-variant-numeric: tabular-nums; letter-spacing: -0.2px; }}
.n {{ line-height: 1.25; }}
.approx {{ font-size: 13px; margin: 2px 0 8px 0; }}
.flops {{ border-collapse: collapse; font-size: 13px; }}
.flops td {{ padding: 1px 14px 1px 0; }}
.flops td.num {{ white-space: nowrap; }}
.sub {{ padding-left: 14px !important; color: #4b5563; }}
.note {{ font-size: 11.5px; margin-top: 6px; line-height: 1.35; }}
.captions {{ margin: 4px 0 0 0; padding-left: 18px; font-size: 12.5px; line-height: 1.45; }}
.captions li {{ margin: 1px 0; }}
"""

TICKS_JS = """
const units = [[1e12, ' T'], [1e9, ' B'], [1e6, ' M'], [1e3, ' k']];
for (const [s, u] of units) { if (Math.abs(tick) >= s) { return (+(tick / s).toPrecision(3)) + u; } }
return String(tick);
"""


class BudgetView(pn.viewable.Viewer):
    """N, the parameter breakdown chart, FLOPs per token and captions, for the state's configuration."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        b, cfg = self.state.budget, self.state.config
        self.source = ColumnDataSource(budget_parts(b, cfg), name="budget-parts")
        self.x_range = Range1d(0, self._x_end(self.source.data["value"]))
        self.figure = self._figure()
        f = budget_figures(b)
        self._numbers = pn.pane.HTML(numbers_html(f, cfg), stylesheets=[NUMBERS_CSS], sizing_mode="stretch_width",
                                     margin=(0, 0, 4, 0))
        self._captions = pn.pane.HTML(captions_html(f), stylesheets=[NUMBERS_CSS], sizing_mode="stretch_width",
                                      margin=0)
        self.state.param.watch(self._update, ["config"])

    @staticmethod
    def _x_end(values: list[int]) -> float:
        return max(values) * 1.1  # long bars hold their labels; shorter ones have room to their right

    def _figure(self):
        labels = list(reversed(self.source.data["label"]))
        p = figure(y_range=FactorRange(*labels), x_range=self.x_range, height=236, sizing_mode="stretch_width",
                   toolbar_location=None, tools="", min_border_left=4, min_border_right=8, min_border_top=4,
                   outline_line_color=None)
        p.hbar(y="label", right="value", height=0.62, source=self.source, fill_color="colour", line_color=None)
        p.add_layout(LabelSet(x="value", y="label", text="text", source=self.source, x_offset="offset", y_offset=0,
                              text_align="align", text_baseline="middle", text_font_size="11.5px", text_color="ink",
                              text_font=literal(FONT)))
        p.add_tools(HoverTool(tooltips=[("", "@label"), ("parameters", "@exact"), ("", "@formula")]))
        p.xaxis.formatter = CustomJSTickFormatter(code=TICKS_JS)  # a model per figure: Bokeh models belong to one page
        p.xaxis.axis_label = "parameters"
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
        p.xaxis.ticker.desired_num_ticks = 4
        return p

    def _update(self, *_events) -> None:
        b, cfg = self.state.budget, self.state.config
        data = budget_parts(b, cfg)
        self.source.data = data  # in place: same figure, same source
        self.x_range.end = self._x_end(data["value"])
        f = budget_figures(b)
        self._numbers.object = numbers_html(f, cfg)
        self._captions.object = captions_html(f)

    def __panel__(self) -> pn.viewable.Viewable:
        title = pn.pane.HTML("<h2>Parameter budget</h2>", stylesheets=[BASE], margin=(0, 0, 4, 0))
        chart = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", margin=(0, 0, 0, 0))
        legend = pn.pane.HTML("<p class='note muted'>* these parts add up to N; the per-block bars are the two "
                              "halves of each block in \"blocks × L\".</p>", stylesheets=[NUMBERS_CSS], margin=0,
                              sizing_mode="stretch_width")
        return pn.Column(title, self._numbers, chart, legend, self._captions, sizing_mode="stretch_width", margin=0)
