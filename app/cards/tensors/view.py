"""What the tensors hold: real values of one forward pass at init (`model.values`), in a card collapsed by default.

Nothing runs until the card is opened; then a pass runs when its inputs change (the configuration, except B,
which a values pass does not use, and the text), never for anything else. The pass runs in a worker thread
(the event loop keeps serving every session) and `model.values` lets one pass run at a time per process;
a spinner shows when it takes longer than SPINNER_MS. Above the limits the card says why and offers the
scaled-down copy (`model.values.plan`), which runs only when asked for and is labelled as a copy.

`heatmap_data`, `stats_html`, `scaling_html` are pure (tested without a browser); `ValuesView` is the view.
The numbers and labels come from `model.values_report`, as the CLI's `python -m model --values` prints them.
"""
from __future__ import annotations

import html
import threading
from dataclasses import dataclass, replace

import numpy as np
import panel as pn
import param
from bokeh.models import (ColorBar, ColumnDataSource, FixedTicker, HoverTool, LogColorMapper, LogTicker, Range1d)
from bokeh.palettes import Blues256
from bokeh.plotting import figure

from model import Config
from model.tensor_notation import notation
from model import units as fmt
from model import values as mv
from model import values_report as vr

from ...background import served_document
from ...flex import wrap
from ...state import ExplorerState
from ...styles import BASE, FONT, INK, MONO, MUTED, RULE, T2

SPINNER_MS = 200  # a pass longer than this shows a spinner
MASKED = "#e9ebef"  # cells above the diagonal (masked): weight exactly 0
PALETTE = tuple(reversed(Blues256))  # white (0) … dark blue (1)
TITLE = "What the tensors hold: real values of one forward pass at init (attention, √d_head, loss vs ln V)"
CLOSED_HINT = ": open to run it"
HEATMAP_MAX_WIDTH = 640
HEATMAP_SCALE = "Colours are on a log scale from 1/T to 1, so that each row's 1/(t + 1) shows."


def _tick(token: str) -> str:
    return (token.replace(" ", "·").replace("\n", "↵").replace("\t", "→") or "∅")[:14]


def heatmap_data(v: mv.Values, block: int, head: int) -> tuple[dict[str, list], dict[str, list]]:
    """Columns for the two sources: cells at or below the diagonal (weights) and above it (masked, exactly 0)."""
    a = v.attention(block, head)
    T = v.cfg.T
    t, j = np.indices((T, T))
    ticks = [_tick(s) for s in v.tokens]
    cols: list[dict[str, list]] = []
    for keep in (j <= t, j > t):
        tt, jj = t[keep], j[keep]
        w = a[tt, jj]
        cols.append({"x": jj.tolist(), "y": tt.tolist(), "w": w.tolist(), "text": [f"{x:.4f}" for x in w],
                     "q": [f"{i}: {ticks[i]}" for i in tt], "k": [f"{i}: {ticks[i]}" for i in jj]})
    return cols[0], cols[1]


def check_line(v: mv.Values, block: int, head: int) -> str:
    above, row_err = v.causal_check(block, head)
    T = v.cfg.T
    n_above = T * (T - 1) // 2
    return (f"Grey cells: the {fmt.thousands(n_above)} weights above the diagonal, masked, largest "
            f"{vr.num(above)}: exactly 0, so token t never sees t + 1. Each row sums to 1 (within {row_err:.0e}).")


def scaling_html(v: mv.Values) -> str:
    """The √d_head comparison as a table, with the lesson's sentence and this d_head's finding."""
    e = html.escape
    rows = "".join(f"<tr><td>{e(r.label)}</td>" + "".join(f'<td class="num">{e(a)}</td><td class="num s">{e(b)}</td>'
                                                          for a, b in (r.std, r.max_prob, r.entropy)) + "</tr>"
                   for r in vr.scaling_rows(v))
    sub = '<th class="num">q·kᵀ</th><th class="num s">/√d_head</th>' * 3
    return (f'<h3>Why divide by √d_head? ({e(vr.scale_words(v.cfg))}, T = {v.cfg.T})</h3>'
            f'<p class="lesson">{e(vr.LESSON)}</p>'
            f'<div class="wrap"><table class="sc"><thead><tr><th></th><th colspan="2">score std</th>'
            f'<th colspan="2">largest weight</th>'
            f'<th colspan="2">entropy (nats)</th></tr><tr><th></th>{sub}</tr></thead><tbody>{rows}</tbody></table></div>'
            f'<p class="note">{e(vr.scaling_note(v))} Averages over the causal rows of every head; uniform attention '
            f'over t tokens has entropy ln t.</p>')


def stats_html(v: mv.Values, block: int) -> str:
    """Mean, std, min and max of every tensor outside the blocks and of one block's, by the trace's names."""
    e = html.escape
    body, labels = [], notation(v.cfg)  # the recipe's labels (RoPE's angles, a mixture of experts' router, ...)
    for r in vr.stat_rows(v, [block]):
        local = r.name.split(".", 2)[2] if r.name.startswith("blocks.") else r.name
        label = labels[local][1] + (f"; {r.note}" if r.note else "")
        body.append(f'<tr title="{e(label)}"><td class="n">{e(r.name)}</td><td class="num">{e(r.mean)}</td>'
                    f'<td class="num">{e(r.std)}</td><td class="num">{e(r.min)}</td><td class="num">{e(r.max)}</td></tr>')
    return (f'<h3>Every tensor of the pass (block {block}; names as in the shapes table)</h3><div class="wrap">'
            '<table class="st"><thead><tr><th>tensor</th><th class="num">mean</th><th class="num">std</th>'
            f'<th class="num">min</th><th class="num">max</th></tr></thead><tbody>{"".join(body)}</tbody></table></div>'
            '<p class="note">GELU dips slightly below 0 (never below −0.17); LayerNorm outputs have mean 0 and std 1; '
            'attn.masked leaves its −inf entries out. Hover a row for what the tensor is.</p>')


def experts_html(v: mv.Values) -> str:
    """A mixture of experts' tokens per expert at init, block by block (`model.values_report.expert_rows`, as the
    CLI's --values prints them); "" for a dense model."""
    rows = vr.expert_rows(v)
    if not rows:
        return ""
    e = html.escape
    body = "".join(f'<tr><td class="n">block {r.block}</td><td>{e(", ".join(f"{t:,}" for t in r.tokens))}</td>'
                   f'<td class="num">{e(r.busiest)}</td><td class="num">{r.idle:,}</td></tr>' for r in rows)
    return (f'<h3>{e(vr.expert_title(v))}</h3><div class="wrap"><table class="st"><thead><tr><th>block</th>'
            f'<th>tokens per expert, experts 0 … E − 1</th><th class="num">busiest</th><th class="num">idle experts'
            f'</th></tr></thead><tbody>{body}</tbody></table></div>')


def summary_html(v: mv.Values) -> str:
    e = html.escape
    scaled = vr.scaled_line(v)
    head = "Scaled-down copy"
    label = f'<p class="scaled"><b>{head}</b>{e(scaled.removeprefix(head))}.</p>' if scaled else ""
    loss = (f'<span class="big">loss {v.loss:.3f}</span> <span class="vs">beside ln V = ln {v.cfg.V:,} = '
            f'<b>{v.ln_V:.3f}</b></span>' if v.loss is not None else
            f'<span class="vs">no loss at T = 1 (nothing to predict); ln V = {v.ln_V:.3f}</span>')
    return (f'{label}<p class="run">{e(vr.INIT)}, seed {v.seed}. {e(vr.run_line(v))}. '
            f'<span class="muted">d = {v.cfg.d:,}, h = {v.cfg.h:,}, L = {v.cfg.L:,}; pass {v.seconds:.2f} s.</span></p>'
            f'<p class="loss">{loss}</p><p class="note">An untrained model spreads its guess over all V tokens, so its '
            f'cross-entropy starts near ln V.</p>')


VALUES_CSS = BASE + f"""
h3 {{ font-size: 13.5px; font-weight: 650; margin: 10px 0 4px 0; }}
.run {{ font-size: 12.5px; line-height: 1.4; }}
.scaled {{ background: #fff7ed; border: 1px solid #fdba74; border-radius: 6px; padding: 6px 8px; font-size: 12.5px;
          margin-bottom: 6px; }} .scaled b {{ color: {T2}; }}
.loss {{ margin: 6px 0 0 0; }} .big {{ font-size: 19px; font-weight: 700; font-variant-numeric: tabular-nums; }}
.vs {{ font-size: 13.5px; margin-left: 6px; }}
.note {{ font-size: 11.5px; color: {MUTED}; line-height: 1.35; margin-top: 4px; }}
.lesson {{ font-size: 12.5px; font-style: italic; margin: 0 0 4px 0; }}
table {{ border-collapse: collapse; font-size: 12px; }} .st {{ width: 100%; }}
th {{ font-weight: 600; color: {MUTED}; font-size: 11px; text-align: left; padding: 2px 4px;
      border-bottom: 1px solid {RULE}; }}
td {{ padding: 2px 4px; border-bottom: 1px solid #f1f3f5; }}
td.n {{ font-family: {MONO}; font-size: 11.5px; white-space: nowrap; }}
.sc td.s, .sc th.s {{ background: #f4f7ff; }}
.st {{ font-variant-numeric: tabular-nums; }}
.wrap {{ overflow-x: auto; }}
.msg {{ font-size: 13px; line-height: 1.4; }} .msg b {{ color: {T2}; }}
"""


@dataclass(frozen=True)
class Request:
    """What a pass depends on: the configuration (B set to 1: unused), the text, and the scaled copy's consent."""

    config: Config
    text: str
    scale_down: bool


class ValuesView(pn.viewable.Viewer):
    """A collapsed card; opened, the attention heatmap, √d_head, loss vs ln V, statistics and residual std."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    collapsed = param.Boolean(default=True, doc="the card starts closed: nothing runs until it is opened")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self.result: mv.Values | None = None
        self.message: str = ""  # why no values are shown (too large, bad text), as HTML
        self._shown: Request | None = None  # the request whose outcome is on screen
        self._running = False
        self._scale_down = False  # the learner asked for the scaled-down copy of this configuration
        self.card = pn.Card(title=TITLE + (CLOSED_HINT if self.collapsed else ""), collapsed=self.collapsed,
                            sizing_mode="stretch_width", margin=0, header_background="#f4f5f7",
                            styles={"border": "1px solid #e5e7eb"}, css_classes=["values-fold"])
        self._body: pn.Column | None = None  # made when the card is first opened: closed, it is one model
        self.card.param.watch(self._on_toggle, ["collapsed"])
        self.state.param.watch(self._on_inputs, ["config", "text"])
        if not self.collapsed:
            self.refresh()

    def _make_body(self) -> None:
        """The card's contents: block and head pickers, the message and offer, the results (hidden until a pass)."""
        if self._body is not None:
            return
        self._block = pn.widgets.IntInput(label="block", value=0, start=0, end=0, width=90, margin=(0, 8, 0, 0))
        self._head = pn.widgets.IntInput(label="head", value=0, start=0, end=0, width=90, margin=(0, 8, 0, 0))
        self.cells = ColumnDataSource(heatmap_data_empty(), name="values-attention")
        self.masked = ColumnDataSource(heatmap_data_empty(), name="values-masked")
        self.resid = ColumnDataSource({"x": [], "std": [], "where": []}, name="values-resid")
        self._summary, self._check, self._scaling, self._stats = (_pane() for _ in range(4))
        self._message = _pane(css_classes=["values-message"])
        self._offer = pn.widgets.Button(label="Run the scaled-down copy", color="warning", visible=False,
                                        margin=(6, 0, 0, 0), css_classes=["values-offer"])
        self._offer.on_click(self._accept_scaled)
        self._results = wrap(gap="18px", align="flex-start", visible=False, css_classes=["values-results"])
        self._build_results()
        self._body = pn.Column(self._message, self._offer, self._results, sizing_mode="stretch_width",
                               margin=(8, 0, 0, 0))
        self._block.param.watch(self._on_pick, ["value"])
        self._head.param.watch(self._on_pick, ["value"])
        self.card.objects = [self._body]

    # --- when to compute ---------------------------------------------------------------------------------------
    def request(self) -> Request:
        return Request(replace(self.state.config, B=1), self.state.text, self._scale_down)

    def _on_toggle(self, event: param.parameterized.Event) -> None:
        self.collapsed = event.new
        self.card.title = TITLE + (CLOSED_HINT if event.new else "")
        if not event.new:
            self.refresh()

    def _on_inputs(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "config" and replace(e.old, B=1, T=1) != replace(e.new, B=1, T=1) for e in events):
            self._scale_down = False  # consent was for that configuration's copy
        if not self.collapsed:
            self.refresh()

    def _accept_scaled(self, _event=None) -> None:
        self._scale_down = True
        self.refresh()

    def refresh(self) -> None:
        """Compute for the current inputs unless they are on screen or being computed: in a worker thread when
        served (results come back through the document's next tick), inline otherwise (tests, notebooks)."""
        self._make_body()
        req = self.request()
        if req == self._shown or self._running:
            return
        doc = served_document()
        if doc is None:
            self._apply(req, compute(req))
            return
        self._running = True
        if self.result is None:  # nothing on screen yet: say what is coming (the spinner covers it after SPINNER_MS)
            self._message.object = (f'<p class="msg">Running one forward pass of GPT(config) at init on the first '
                                    f'{min(req.config.T, mv.MAX_T)} tokens at most…</p>')
            self._message.visible, self._offer.visible = True, False
        pn.state.onload(lambda: doc.add_timeout_callback(self._spin, SPINNER_MS))  # not before load: see _spin
        threading.Thread(target=self._work, args=(doc, req), daemon=True, name="values-pass").start()

    def _work(self, doc, req: Request) -> None:
        try:
            outcome = compute(req)
        except Exception as e:  # noqa: BLE001 — never a card stuck on its spinner: say what failed
            outcome = f"the pass failed ({type(e).__name__}: {e}); try a smaller configuration"
        session = doc.session_context
        if session is None or session.destroyed:  # the page was closed while the pass ran
            return
        doc.add_next_tick_callback(lambda: self._done(req, outcome))  # Bokeh's thread-safe way back

    def _done(self, req: Request, outcome) -> None:
        self._running = False
        self._body.loading = False
        self._apply(req, outcome)
        if not self.collapsed and self.request() != req:  # the inputs moved on while it ran
            self.refresh()

    def _spin(self) -> None:
        """Cover the card while a pass runs. Its timer starts only once the page has loaded: until the websocket
        connects, Panel defers each model update to the next tick, so an "on" set just before the connection
        could land after the "off" of a pass that ended just after it, leaving a spinner over the finished card
        (seen once in CI: the scaled-down offer under a spinner that never went away)."""
        if self._running:
            self._body.loading = True

    # --- showing -------------------------------------------------------------------------------------------------
    def _apply(self, req: Request, outcome: mv.Values | str | mv.Plan) -> None:
        self._shown = req
        if isinstance(outcome, mv.Values):
            self.result, self.message = outcome, ""
            self._show(outcome)
        else:
            self.result = None
            if isinstance(outcome, mv.Plan):
                self.message = offer_html(outcome)
                self._offer.label = f"Run the scaled-down copy (d = {outcome.run.d:,}, L = {outcome.run.L:,})"
            else:
                self.message = f'<p class="msg"><b>No values for this input.</b> {html.escape(outcome)}</p>'
        self._message.object = self.message
        self._message.visible = bool(self.message)
        self._offer.visible = isinstance(outcome, mv.Plan)
        self._results.visible = self.result is not None

    def _build_results(self) -> None:
        """The heatmap, the residual chart and their panes, made with the card's body when it is first opened
        (a closed card costs a session none of their Bokeh models, issue 16) and hidden until a pass is shown.
        A pass then only sets properties of models the page already has: made in the tick that also changed
        them, a page under load was sent a change to one before the layout that holds it ('reference isn't
        known', and a heatmap left on its first colour scale)."""
        self.heatmap = self._heatmap()
        self.resid_figure = self._resid_figure()
        picks = pn.Row(self._block, self._head, margin=(6, 0, 0, 0))
        left = pn.Column(self._summary, picks, pn.pane.Bokeh(self.heatmap, sizing_mode="stretch_width", margin=0,
                                                               max_width=HEATMAP_MAX_WIDTH),
                         self._check, sizing_mode="stretch_width", margin=0,
                         styles={"flex": "1 1 480px", "min-width": "0", "max-width": f"{HEATMAP_MAX_WIDTH}px"})
        right = pn.Column(self._scaling,
                          pn.pane.HTML("<h3>Residual stream std through depth</h3>", stylesheets=[VALUES_CSS], margin=0),
                          pn.pane.Bokeh(self.resid_figure, sizing_mode="stretch_width", margin=0), self._stats,
                          sizing_mode="stretch_width", margin=0, styles={"flex": "1 1 420px", "min-width": "0"})
        self._results.objects = [left, right]

    def _show(self, v: mv.Values) -> None:
        L, h = v.cfg.L, v.cfg.h
        self._block.param.update(end=L - 1, value=min(self._block.value, L - 1))
        self._head.param.update(end=h - 1, value=min(self._head.value, h - 1))
        self._summary.object = summary_html(v) + experts_html(v)
        self._scaling.object = scaling_html(v)
        self.resid.data = {"x": list(range(L + 1)), "std": [v.embed_std, *v.resid_std],
                           "where": ["embeddings"] + [f"after block {b}" for b in range(L)]}
        self._draw()

    def _on_pick(self, *_events) -> None:
        if self.result is not None:
            self._draw()

    def _draw(self) -> None:
        v = self.result
        block, head = self._block.value, self._head.value
        if v is None or not (0 <= block < v.cfg.L and 0 <= head < v.cfg.h):
            return
        cells, masked = heatmap_data(v, block, head)
        T = v.cfg.T
        ticks = {i: _tick(s) for i, s in enumerate(v.tokens)}
        for axis in (self.heatmap.xaxis[0], self.heatmap.yaxis[0]):
            axis.ticker.ticks = list(range(T))  # the ticker made with the figure: a draw makes no new model, so no
            axis.major_label_overrides = ticks  # patch can name one that a later draw has already replaced
        self.heatmap.x_range.update(start=-0.5, end=T - 0.5)
        self.heatmap.y_range.update(start=T - 0.5, end=-0.5)  # query 0 at the top
        self.cells.data = cells
        self.masked.data = masked
        self.heatmap.title.text = f"attention weights, block {block}, head {head}: row = query t, column = key j"
        self._mapper.low = 1 / max(T, 2)  # a log scale from 1/T to 1: rows of 1/(t + 1) show, not a blank square
        self._check.object = (f'<p class="note">{html.escape(vr.uniform_line(v, block, head))} {HEATMAP_SCALE}</p>'
                              f'<p class="note">{html.escape(check_line(v, block, head))}</p>')
        self._stats.object = stats_html(v, block)

    # --- figures ---------------------------------------------------------------------------------------------------
    def _heatmap(self):
        mapper = self._mapper = LogColorMapper(palette=list(PALETTE), low=1 / 64, high=1)
        p = figure(x_range=Range1d(-0.5, 0.5), y_range=Range1d(0.5, -0.5), height=600, sizing_mode="stretch_width",
                   toolbar_location=None, tools="", min_border_left=4, min_border_right=4, outline_line_color=None,
                   name="values-heatmap")
        p.rect(x="x", y="y", width=1, height=1, source=self.cells, fill_color={"field": "w", "transform": mapper},
               line_color="#ffffff", line_width=0.5)
        p.rect(x="x", y="y", width=1, height=1, source=self.masked, fill_color=MASKED, line_color="#ffffff",
               line_width=0.5, hatch_pattern="/", hatch_color="#c9ced6", hatch_scale=6, hatch_weight=0.6)
        p.add_tools(HoverTool(tooltips=[("query", "@q"), ("key", "@k"), ("weight", "@text")]))
        bar = ColorBar(color_mapper=mapper, ticker=LogTicker(desired_num_ticks=3), width=8, padding=2,
                       major_label_text_font_size="10px", major_label_text_color=MUTED, title="weight",
                       title_text_font_size="10px", title_text_color=MUTED, title_text_font_style="normal")
        p.add_layout(bar, "right")
        for axis in (p.xaxis[0], p.yaxis[0]):
            axis.ticker = FixedTicker(ticks=[0])
            axis.major_label_text_font = MONO
            axis.major_label_text_font_size = "10px"
            axis.major_label_text_color = INK
            axis.axis_line_color = RULE
            axis.major_tick_line_color = None
            axis.minor_tick_line_color = None
        p.xaxis.major_label_orientation = 1.1
        p.xaxis.axis_label = "key j (the token attended to)"
        p.yaxis.axis_label = "query t"
        for axis in (p.xaxis, p.yaxis):
            axis.axis_label_text_font_size = "11px"
            axis.axis_label_text_font_style = "normal"
            axis.axis_label_text_color = MUTED
            axis.axis_label_text_font = FONT
        p.title.text_font_size = "11.5px"
        p.title.text_font_style = "normal"
        p.title.text_color = MUTED
        p.grid.grid_line_color = None
        return p

    def _resid_figure(self):
        p = figure(height=150, sizing_mode="stretch_width", toolbar_location=None, tools="", min_border_left=4,
                   outline_line_color=None, name="values-resid-figure")
        p.line(x="x", y="std", source=self.resid, line_color="#5b4fd6", line_width=2)
        p.scatter(x="x", y="std", source=self.resid, size=5, fill_color="#5b4fd6", line_color=None)
        p.add_tools(HoverTool(tooltips=[("", "@where"), ("std", "@std{0.0000}")]))
        p.xaxis.axis_label = "blocks passed (0 = the embeddings tok + pos)"
        p.yaxis.axis_label = "std"
        for axis in (p.xaxis, p.yaxis):
            axis.axis_label_text_font_size = "11px"
            axis.axis_label_text_font_style = "normal"
            axis.axis_label_text_color = MUTED
            axis.major_label_text_color = MUTED
            axis.axis_line_color = RULE
            axis.minor_tick_line_color = None
        p.xgrid.grid_line_color = None
        p.ygrid.grid_line_color = "#f0f1f3"
        return p

    def __panel__(self) -> pn.viewable.Viewable:
        return self.card


def _pane(**params) -> pn.pane.HTML:
    """An empty HTML pane in the card's style."""
    return pn.pane.HTML("", stylesheets=[VALUES_CSS], sizing_mode="stretch_width", margin=0, **params)


def heatmap_data_empty() -> dict[str, list]:
    return {"x": [], "y": [], "w": [], "text": [], "q": [], "k": []}


def offer_html(p: mv.Plan) -> str:
    """Why this configuration gets no real pass here, and what the scaled-down copy is."""
    e = html.escape
    reasons = "".join(f"<li>{e(r)}</li>" for r in p.reasons)
    return (f'<p class="msg"><b>Too large for a real pass here.</b> Limits per pass: {mv.MAX_L} blocks, '
            f'{e(fmt.params(mv.MAX_PARAMS))} parameters, {e(fmt.nbytes(mv.MAX_ACTIVATION_BYTES))} of activations '
            f'(so that one pass stays short on a server shared by a class).</p><ul class="msg">{reasons}</ul>'
            f'<p class="msg">The nearest configuration that runs is a <b>scaled-down copy</b>: {e(p.describe_run())}; '
            f'the same d_head, V and T_max. Its numbers are labelled as the copy\'s, not this model\'s.</p>')


def compute(req: Request) -> mv.Values | mv.Plan | str:
    """The outcome of a request: values, the plan of a scaled-down copy to offer, or what is wrong (text)."""
    try:
        return mv.values(req.config, req.text, scale_down=req.scale_down)
    except mv.TooLarge as e:
        return e.plan
    except ValueError as e:
        return str(e)
