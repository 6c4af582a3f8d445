"""From N to a training run: the controls of `ExplorerState.train`, the run's figures and a memory chart.

Everything shown comes from `model.training.plan` (the lines, their formulas and values) and is printed with
`model.train_report.human`; this view lays it out. It recomputes only when the configuration or the training
settings change (not on dtype, text or layout changes); its memory chart is HTML bars, as the budget card's.
"""
from __future__ import annotations

import html

import panel as pn
import param
from panel.custom import JSComponent

from model import numbers
from model.training import CUSTOM_GPU, Plan

from ...background import Latest
from ...boxes import NumberBox
from ...flex import wrap
from ...state import ExplorerState
from ...styles import BASE
from ...styles import TRAIN_CSS as CSS
from ...templates import TEMPLATES, fill_html
from ...words import FIT_LABELS, GPU_LABELS, OPTIMIZER_LABELS, RECOMPUTE_LABELS, TRAIN_TITLE, ZERO_LABELS, chinchilla_rule
from ...words import TRAIN_CONTROLS as C
from .markup import note_html, panes
from .settings import CUSTOM_START, news, settle_train


class LabelledCheck(JSComponent):
    """A checkbox inside its <label>, so that its words name it for screen readers (Panel's Checkbox leaves its
    input unnamed); one Bokeh model, as the Checkbox was."""

    value = param.Boolean(default=False, doc="checked")
    label = param.String(default="", doc="the words beside the box, which name it")

    _esm = """
export function render({ model, el }) {
  const label = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  const words = document.createTextNode(" " + model.label);
  label.append(box, words);
  box.checked = model.value;
  model.on("label", () => { words.textContent = " " + model.label; });
  box.addEventListener("change", () => { model.value = box.checked; });
  model.on("value", () => { box.checked = model.value; });
  el.appendChild(label);
}
"""
    _stylesheets = [BASE + "label { display: inline-flex; align-items: center; gap: 4px; cursor: pointer; }"]


def _box(key: str, width: int) -> NumberBox:
    """A number box of the card, labelled as TRAIN_CONTROLS names it (its label names the input for screen readers;
    an answer never replaces what is being typed: app.boxes)."""
    return NumberBox(label=C[key], width=width, margin=(5, 10), css_classes=[f"train-{key}"])


def _text(x: int | float) -> str:
    """A number as its box shows it: 2,488,796,160; 0.4; 989 (`model.numbers.show`)."""
    return numbers.show(x, str(x))


class TrainingView(pn.viewable.Viewer):
    """Controls for `state.train`, the run's headline, a memory chart and every figure with its formula."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        s = self.state.train
        self._pushing = False
        self._rule = LabelledCheck(label=chinchilla_rule(self.state.config), value=s.D is None, margin=(22, 10, 0, 4),
                                   css_classes=["train-rule"])
        # number boxes are text boxes: `model.numbers`' grammar (300e9, 300,000,000,000, 300 billion) is read by
        # settle_train, and what it cannot read gets a notice (a number widget would drop the letters: 300e9 -> 3009)
        self._D = _box("D", 200)
        self._gpu = pn.widgets.Select(label=C["gpu"], options=GPU_LABELS, width=250, css_classes=["train-gpu"])
        self._peak, self._memory = _box("gpu_peak", 110), _box("gpu_memory", 110)
        self._mfu, self._gpus, self._price = _box("mfu", 110), _box("gpus", 110), _box("price", 170)
        self._optimizer = pn.widgets.RadioButtonGroup(options=OPTIMIZER_LABELS, color="primary", variant="outline",
                                                      css_classes=["train-optimizer"])
        self._zero = pn.widgets.RadioButtonGroup(options=ZERO_LABELS, color="primary", variant="outline",
                                                 css_classes=["train-zero"])
        self._recompute = pn.widgets.RadioButtonGroup(options=RECOMPUTE_LABELS, color="primary", variant="outline",
                                                      css_classes=["train-recompute"])
        self._fit = pn.widgets.Select(label=C["fit"], options=FIT_LABELS, width=200, css_classes=["train-fit"])
        self._widgets = (self._rule, self._D, self._gpu, self._peak, self._memory, self._mfu, self._gpus, self._price,
                         self._optimizer, self._zero, self._recompute, self._fit)
        self._keys = dict(zip(self._widgets, ("D", "D", "gpu", "gpu_peak", "gpu_memory", "mfu", "gpus", "price",
                                              "optimizer", "zero", "recompute", "fit")))  # each widget's URL key
        self._notices = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", margin=0)
        self._note = pn.pane.HTML(note_html(self.state.config), stylesheets=[CSS], sizing_mode="stretch_width",
                                  margin=(0, 0, 6, 0))
        self._said: list[str] = []  # the notes of the last change, shown or not
        self._latest = Latest((self.state.config, self.state.train))  # what the figures shown or coming are for
        shown = panes(self.state.plan)
        self._chart = pn.pane.HTML(shown["train_chart"], stylesheets=[CSS], sizing_mode="stretch_width", margin=(4, 0, 0, 0),
                                   css_classes=["train-memory"])
        self._legend = pn.pane.HTML(shown["train_legend"], stylesheets=[CSS], sizing_mode="stretch_width", margin=0)
        self._headline = pn.pane.HTML(shown["train_head"], stylesheets=[CSS], sizing_mode="stretch_width", margin=0,
                                      css_classes=["train-headline"])
        self._lines = pn.pane.HTML(shown["train_lines"], stylesheets=[CSS], sizing_mode="stretch_width", margin=0,
                                   css_classes=["train-lines"])
        self._push()
        for w in self._widgets:
            w.param.watch(self._changed, ["value"])
        self.state.param.watch(self._update, ["config", "train"])

    # --- state -> widgets ----------------------------------------------------------------------------------------
    def _push(self) -> None:
        s, N = self.state.train, self.state.budget.params_exact
        device = s.device if s.gpu == CUSTOM_GPU else CUSTOM_START
        self._pushing = True
        try:
            self._rule.value = s.D is None
            self._D.param.update(value=_text(s.D if s.D is not None else 20 * N), disabled=s.D is None)
            self._gpu.value = s.gpu
            self._peak.param.update(value=_text(device.peak_tflops), visible=s.gpu == CUSTOM_GPU)
            self._memory.param.update(value=_text(device.memory_gib), visible=s.gpu == CUSTOM_GPU)
            self._mfu.value = _text(s.mfu)
            self._gpus.value = _text(s.gpus)
            self._price.value = _text(s.price)
            self._optimizer.value = s.optimizer
            self._zero.value = s.zero
            self._recompute.value = s.recompute
            self._fit.value = s.fit
        finally:
            self._pushing = False

    # --- widgets -> state ----------------------------------------------------------------------------------------
    def asked(self) -> dict[str, object]:
        """The widgets' values, keyed as the URL (app.cards.train.settings.TRAIN_KEYS): the boxes' text as typed."""
        custom = self._gpu.value == CUSTOM_GPU
        return {"D": None if self._rule.value else self._D.value, "gpu": self._gpu.value,
                "gpu_peak": self._peak.value if custom else None, "gpu_memory": self._memory.value if custom else None,
                "mfu": self._mfu.value, "gpus": self._gpus.value, "price": self._price.value,
                "optimizer": self._optimizer.value, "zero": str(self._zero.value), "recompute": self._recompute.value,
                "fit": self._fit.value}

    def _changed(self, event: param.parameterized.Event) -> None:
        if self._pushing:
            return
        asked = self.asked()
        if event.obj is self._rule and not event.new and asked["D"] is None:
            asked["D"] = self._D.value
        setup, notes = settle_train(asked, kept=self.state.train)  # a box's bad text keeps the value in use
        said = news(notes, self._said, self._keys.get(event.obj, ""))
        self._said = notes
        self._notices.object = fill_html(TEMPLATES["warnings"], {"notes": [{"text": n} for n in said]})
        with pn.io.hold():
            if setup != self.state.train:
                self.state.train = setup
            else:
                self._push()  # a rejected or empty value: show the state's again

    # --- outputs -------------------------------------------------------------------------------------------------
    def _update(self, *events: param.parameterized.Event) -> None:
        if any(e.name == "config" for e in events):  # a later change: the card's notices were about the last one
            self._notices.object = ""
            self._rule.label = chinchilla_rule(self.state.config)  # N, or a mixture of experts' N_active
            self._note.object = note_html(self.state.config)
        self._push()  # the widgets show the settled setup; the rule's D follows N
        # off the event loop (app.background); skipped, or its result dropped, after a later change
        self._latest.ask((self.state.config, self.state.train), lambda: self.state.plan, self._show)

    def _show(self, p: Plan | ValueError) -> None:
        if isinstance(p, ValueError):  # no plan for this configuration: its one line, the last figures kept
            self._notices.object = f'<div class="warn">⚠ {html.escape(str(p))}</div>'
            return
        with pn.io.hold():
            shown = panes(p)
            self._chart.object, self._legend.object = shown["train_chart"], shown["train_legend"]
            self._headline.object, self._lines.object = shown["train_head"], shown["train_lines"]

    def __panel__(self) -> pn.viewable.Viewable:
        title = pn.pane.HTML(TRAIN_TITLE, stylesheets=[BASE], sizing_mode="stretch_width", margin=(0, 0, 6, 0))
        row = dict(margin=(0, 0, 4, 0), align="flex-end", gap="8px")

        def group(label: str, widget) -> pn.Column:
            return pn.Column(pn.pane.HTML(f"<span style='font-size:12px;font-weight:600'>{html.escape(label)}</span>",
                                          margin=(0, 0, 0, 4)), widget, margin=0)

        controls = pn.Column(
            wrap(self._D, self._rule, self._gpu, self._peak, self._memory, self._gpus, self._mfu, self._price,
                       **row),
            wrap(group(C["optimizer"], self._optimizer), group(C["zero"], self._zero),
                       group(C["recompute"], self._recompute), self._fit, **row),
            self._notices, sizing_mode="stretch_width", margin=0, css_classes=["train-controls"],
            styles={"min-width": "0"})  # Bokeh gives a column its children's widths as its least: let the rows wrap
        return pn.Column(title, controls, self._headline, self._legend, self._chart, self._note, self._lines, sizing_mode="stretch_width",
                         margin=0, styles={"min-width": "0"})
