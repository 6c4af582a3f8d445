"""From a forward pass to serving: the controls of `ExplorerState.infer`, the prefill, a decode step, the roofline
and its two charts.

Everything shown comes from `model.inference.serving` (the lines, their formulas and values, the charts' points) and
`model.infer_report` (the words, the headline, the charts' columns), printed with `model.train_report.human`; this
view lays it out. Decode's B and T are the page's sliders. It recomputes only when the configuration or the card's
settings change, off the event loop (app.background), and its charts' sources are updated in place. Where
`model.inference.serving` raises a ValueError for a configuration, the card shows its one line in the figures' place.
"""
from __future__ import annotations

import html

import panel as pn
import param
from bokeh.models import ColumnDataSource

from model import numbers
from model.inference import CUSTOM_GPU, Serving
from model.infer_report import CHART_B, CHART_T, CONTROLS, GPU_CHOICES, KV_CHOICES, WEIGHT_CHOICES, chart_data

from ...background import Latest
from ...flex import wrap
from ...state import ExplorerState
from ...styles import BASE
from ...styles import TRAIN_CSS as CSS
from ..train.settings import news
from .charts import show_twin, step_chart, tokens_chart
from .markup import (COLUMNS, chart_title_html, headline_html, knee_html, leaves_out_html, lines_html,
                     title_html)
from .settings import CUSTOM_START, settle_infer

def _text(x: int | float) -> str:
    """A number as its box shows it: 128; 0.5; 3.35 (`model.numbers.show`)."""
    return numbers.show(x, str(x))


def _box(key: str, width: int) -> pn.widgets.TextInput:
    """A number box of the card, labelled as `model.infer_report.CONTROLS` names it."""
    return pn.widgets.TextInput(label=CONTROLS[key], width=width, css_classes=[f"infer-{key}"])


def _select(key: str, options: dict[str, str], width: int) -> pn.widgets.Select:
    return pn.widgets.Select(label=CONTROLS[key], options=options, width=width, css_classes=[f"infer-{key}"])


class InferenceView(pn.viewable.Viewer):
    """Controls for `state.infer`, the headline, the tokens-per-second and step-time charts and every figure."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._pushing = False
        self._gpu = _select("infer_gpu", GPU_CHOICES, 330)
        self._peak, self._memory = _box("infer_peak", 110), _box("infer_memory", 110)
        self._bandwidth = _box("infer_bandwidth", 120)
        self._weights = _select("weights", WEIGHT_CHOICES, 200)
        self._kv = _select("kv_dtype", KV_CHOICES, 140)
        self._group, self._efficiency = _box("group", 120), _box("efficiency", 120)
        self._widgets = (self._gpu, self._peak, self._memory, self._bandwidth, self._weights, self._kv, self._group,
                         self._efficiency)
        self._keys = dict(zip(self._widgets, ("infer_gpu", "infer_peak", "infer_memory", "infer_bandwidth", "weights",
                                              "kv_dtype", "group", "efficiency")))  # each widget's URL key
        pane = dict(stylesheets=[CSS], sizing_mode="stretch_width", margin=0)
        self._notices = pn.pane.HTML("", **pane, css_classes=["infer-notices"])
        self._said: list[str] = []
        self._refused = pn.pane.HTML("", **pane, visible=False, css_classes=["infer-refused"])
        self._headline = pn.pane.HTML("", **pane, css_classes=["infer-headline"])
        self._knee = pn.pane.HTML("", **pane, css_classes=["infer-knee"])
        self._lines = pn.pane.HTML("", **pane, css_classes=["infer-lines"])
        self.sources = {k: ColumnDataSource({c: [] for c in v}, name=f"infer-{k}") for k, v in COLUMNS.items()}
        self.tokens_figure = tokens_chart(self.sources["by_B"], self.sources["here_B"], self.sources["knee"], CHART_B)
        self.step_figure = step_chart(self.sources["by_T"], self.sources["here_T"], CHART_T, self.sources["twin_T"])
        self._figures = pn.Column(sizing_mode="stretch_width", margin=0, styles={"min-width": "0"})
        self._latest = Latest((self.state.config, self.state.infer))  # what the figures shown or coming are for
        self._push()
        self._show(_serving(self.state))
        for w in self._widgets:
            w.param.watch(self._changed, ["value"])
        self.state.param.watch(self._update, ["config", "infer"])

    # --- state -> widgets ----------------------------------------------------------------------------------------
    def _push(self) -> None:
        s = self.state.infer
        custom = s.gpu == CUSTOM_GPU
        device = s.device if custom else CUSTOM_START
        self._pushing = True
        try:
            self._gpu.value = s.gpu
            for box, field in ((self._peak, "peak_tflops"), (self._memory, "memory_gib"),
                               (self._bandwidth, "bandwidth_tbs")):
                box.param.update(value=_text(getattr(device, field)), visible=custom)
            self._weights.value, self._kv.value = s.weights, s.kv_dtype
            self._group.value, self._efficiency.value = _text(s.group), _text(s.efficiency)
        finally:
            self._pushing = False

    # --- widgets -> state ----------------------------------------------------------------------------------------
    def asked(self) -> dict[str, object]:
        """The widgets' values, keyed as the URL (app.cards.infer.settings.INFER_KEYS): the boxes' text as typed."""
        custom = self._gpu.value == CUSTOM_GPU
        out = {key: w.value for w, key in self._keys.items()}
        for key in ("infer_peak", "infer_memory", "infer_bandwidth"):
            out[key] = out[key] if custom else None
        return out

    def _changed(self, event: param.parameterized.Event) -> None:
        if self._pushing:
            return
        setup, notes = settle_infer(self.asked(), kept=self.state.infer)  # a box's bad text keeps the value in use
        said = news(notes, self._said, self._keys.get(event.obj, ""))
        self._said = notes
        self._notices.object = "".join(f'<div class="warn">⚠ {html.escape(n)}</div>' for n in said)
        with pn.io.hold():
            if setup != self.state.infer:
                self.state.infer = setup
            else:
                self._push()  # a rejected or empty value: show the state's again

    # --- outputs -------------------------------------------------------------------------------------------------
    def _update(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "config" for e in events):  # a later change: the card's notices were about the last one
            self._notices.object = ""
        self._push()
        # off the event loop (app.background); skipped, or its result dropped, after a later change
        self._latest.ask((self.state.config, self.state.infer), lambda: self.state.serving, self._show)

    def _show(self, s: Serving | ValueError) -> None:
        with pn.io.hold():
            refused = isinstance(s, ValueError)  # the model's own line
            self._refused.param.update(object=f'<div class="warn">⚠ {html.escape(str(s))}</div>' if refused else "",
                                       visible=refused)
            self._figures.visible = not refused
            if refused:
                return
            for k, v in chart_data(s).items():
                self.sources[k].data = v  # in place: same figures, same sources
            show_twin(self.step_figure, bool(s.twin_T))
            self._headline.object = headline_html(s)
            self._knee.object = knee_html(s)
            self._lines.object = lines_html(s)

    def __panel__(self) -> pn.viewable.Viewable:
        title = pn.pane.HTML(title_html(), stylesheets=[BASE], sizing_mode="stretch_width", margin=(0, 0, 6, 0))
        row = dict(margin=(0, 0, 4, 0), align="flex-end", gap="8px")
        controls = pn.Column(
            wrap(self._gpu, self._peak, self._memory, self._bandwidth, **row),
            wrap(self._weights, self._group, self._kv, self._efficiency, **row),
            self._notices, sizing_mode="stretch_width", margin=0, css_classes=["infer-controls"],
            styles={"min-width": "0"})
        charts = [pn.Column(pn.pane.HTML(chart_title_html(words), stylesheets=[CSS], sizing_mode="stretch_width",
                                         margin=(6, 0, 0, 0)),
                            pn.pane.Bokeh(f, sizing_mode="stretch_width", margin=0), sizing_mode="stretch_width",
                            margin=0) for f, words in ((self.tokens_figure, CHART_B), (self.step_figure, CHART_T))]
        note = pn.pane.HTML(leaves_out_html(), stylesheets=[CSS],
                            sizing_mode="stretch_width", margin=(0, 0, 6, 0))
        self._figures.objects = [self._headline, charts[0], self._knee, charts[1], note, self._lines]
        return pn.Column(title, controls, self._refused, self._figures, sizing_mode="stretch_width", margin=0,
                         styles={"min-width": "0"})


def _serving(state: ExplorerState) -> Serving | ValueError:
    """The state's serving figures, or the model's refusal (its one line)."""
    try:
        return state.serving
    except ValueError as e:
        return e
