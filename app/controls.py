"""The controls: a preset picker, one slider + number box per field, T_max and tying under "advanced".

Slider ranges (soft) keep each slider usable by pointer and keyboard (arrows move one step, PageUp/PageDown
five, Home/End to the ends); the number box beside each slider accepts anything in `model.BOUNDS`, and a
preset or a link stretches a slider's range by doubling its end (GPT-3 175B: d 64 … 16,384, L 1 … 96):

- B 1 … 64, step 1          - T 1 … T_max, step 1 (T cannot pass T_max)
- d 64 … 4,096, step 64 (multiples of 64, as real models; type 770 in the box to see h snap)
- h: the divisors of d only (the slider walks them: 1, 2, 3, 4, 6, 8, 12, … for d = 768)
- L 1 … 48, step 1          - V 1 … 131,072, step 1      - T_max 1 … 8,192, step 1

Widgets write to the state with `set_field` (which rejects out-of-bounds input with a notice) and the
state writes back to the widgets; a guard keeps the two directions from echoing. (`from_param` would tie a
slider's range to the parameter's hard bounds, 1 … 32,768 for d, which no keyboard can use, and would refuse
out-of-bounds input silently.) Sliders update on `value`, as the handle moves. Panel holds every change from the
page for 50 ms (`Reactive._debounce`) to gather the ones that follow; the sliders here wait SLIDER_DELAY_MS
instead, and the changes that arrive while one is processed are still coalesced into one, so a fast drag never
builds a backlog (benchmarks/bench_app_latency.py measures both).
"""
from __future__ import annotations

import html

import panel as pn
import param

from model import FIELD_DOCS, divisors

from .layout import wrap
from .state import CUSTOM, ExplorerState, preset_labels
from .styles import ACCENT, BASE, STATUS_CSS
from .words import SHORT, rules_line, slider_range

CONTROL_WIDTH = 194
SLIDER_DELAY_MS = 5  # Panel's default wait before it processes a change from the page is 50 ms

LABEL_CSS = BASE + """
.lab { white-space: nowrap; line-height: 1.2; overflow: hidden; }
.sym { font-weight: 700; font-size: 15px; }
.name { font-size: 11.5px; overflow: hidden; text-overflow: ellipsis; }
"""
SLIDER_CSS = f"""
:host {{ --handle-size: 18px; }}
.noUi-handle {{ cursor: grab; }}
.noUi-handle:focus-visible {{ outline: 2px solid {ACCENT}; outline-offset: 2px; }}
"""


class FieldControl(pn.viewable.Viewer):
    """One integer field: its symbol and name, a number box (any value in bounds) and a slider."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    field = param.Selector(objects=list(SHORT), doc="the Config field this control sets")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        name, value = self.field, getattr(self.state, self.field)
        self._pushing = False
        self._label = pn.pane.HTML(self._label_html(), stylesheets=[LABEL_CSS], margin=(0, 0, 0, 2),
                                   sizing_mode="stretch_width")
        self._box = pn.widgets.IntInput(value=value, width=82, margin=(2, 0, 0, 4), css_classes=[f"box-{name}"],
                                        description=None, stylesheets=[":host input { text-align: right; "
                                                                       "font-variant-numeric: tabular-nums; }"])
        self._slider = pn.widgets.IntSlider(value=0, start=0, end=1, show_value=False, tooltips=False,
                                            sizing_mode="stretch_width", margin=(2, 8, 4, 8),
                                            css_classes=[f"slider-{name}"], stylesheets=[SLIDER_CSS])
        self._slider._debounce = SLIDER_DELAY_MS  # Panel's knob (a class attribute, read per instance)
        self._push()
        self._slider.param.watch(self._slid, ["value"])
        self._box.param.watch(self._typed, ["value"])
        watched = [name] + {"T": ["T_max"], "h": ["d"]}.get(name, [])
        self.state.param.watch(lambda *_: self._push(), watched)

    # --- state -> widgets --------------------------------------------------------------------------------------
    def _label_html(self) -> str:
        name = SHORT[self.field]
        return (f'<div class="lab" title="{html.escape(self.field)}: {html.escape(FIELD_DOCS[self.field])}">'
                f'<span class="sym">{html.escape(self.field)}</span><div class="name muted">{html.escape(name)}</div></div>')

    def _push(self) -> None:
        value = getattr(self.state, self.field)
        self._pushing = True
        try:
            if self.field == "h":
                divs = divisors(self.state.d)
                index = divs.index(value) if value in divs else 0
                self._slider.param.update(start=0, end=max(1, len(divs) - 1), step=1, value=index,
                                          disabled=len(divs) == 1)
            else:
                start, end, step = slider_range(self.field, value, self.state.T_max)
                self._slider.param.update(start=start, end=end, step=step, value=value)
            self._box.value = value
        finally:
            self._pushing = False

    # --- widgets -> state --------------------------------------------------------------------------------------
    def _slid(self, event: param.parameterized.Event) -> None:
        if self._pushing or event.new is None:
            return
        value = event.new
        if self.field == "h":  # the slider walks the divisors of d: its value is an index
            divs = divisors(self.state.d)
            value = divs[min(value, len(divs) - 1)]
        with pn.io.hold():
            self.state.set_field(self.field, value)

    def _typed(self, event: param.parameterized.Event) -> None:
        if self._pushing:
            return
        with pn.io.hold():
            if event.new is None or not self.state.set_field(self.field, event.new):
                self._push()  # empty or rejected: show the state's value again

    def __panel__(self) -> pn.viewable.Viewable:
        head = pn.Row(self._label, self._box, margin=0, sizing_mode="stretch_width")
        return pn.Column(head, self._slider, sizing_mode="stretch_width", margin=(0, 6, 2, 0),
                         styles={"flex": f"1 1 {CONTROL_WIDTH - 40}px", "max-width": f"{CONTROL_WIDTH + 30}px"},
                         css_classes=["control", f"control-{self.field}"])




def status_html(state: ExplorerState) -> str:
    """The notices (h snapped, T clamped, input rejected), or the rules in one line when there are none."""
    if state.notices:
        return "".join(f'<div class="status"><span class="n">⚠</span> {html.escape(n)}</div>' for n in state.notices)
    c = state.config
    return f'<div class="status muted">{html.escape(rules_line(c.d, c.h, c.T_max))}</div>'


class Controls(pn.viewable.Viewer):
    """The preset picker, the field controls listed in `show`, the advanced fold and the status line."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    show = param.List(default=["preset", "B", "T", "d", "h", "L", "V", "T_max", "tie"], item_type=str,
                      doc="which controls to show (ViewOptions.controls)")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        labels = preset_labels()
        self._names = {v: k for k, v in labels.items()}
        self._preset = pn.widgets.Select(label="", options=list(labels), value=self._names[self.state.preset],
                                         width=250, margin=(0, 10, 0, 0), css_classes=["preset"])
        self._preset.param.watch(self._chose, ["value"])
        self.state.param.watch(self._preset_shown, ["preset"])
        self._fields = {f: FieldControl(state=self.state, field=f) for f in SHORT}
        self._tie = pn.widgets.Checkbox.from_param(self.state.param.tie, label="tie the head to W_te (GPT-2)",
                                                   margin=(18, 8, 0, 8))
        self._status = pn.pane.HTML(status_html(self.state), stylesheets=[STATUS_CSS], sizing_mode="stretch_width",
                                    margin=(2, 0, 0, 0))
        self.state.param.watch(lambda *_: setattr(self._status, "object", status_html(self.state)),
                               ["notices", "config"])

    def _chose(self, event: param.parameterized.Event) -> None:
        name = preset_labels()[event.new]
        if name == CUSTOM:  # "custom" describes a state, it is not something to apply
            self._preset.value = self._names[self.state.preset]
            return
        with pn.io.hold():
            self.state.preset = name

    def _preset_shown(self, event: param.parameterized.Event) -> None:
        self._preset.value = self._names[event.new]

    def __panel__(self) -> pn.viewable.Viewable:
        main = [self._fields[f] for f in ("B", "T", "d", "h", "L", "V") if f in self.show]
        advanced = [w for key, w in (("T_max", self._fields["T_max"]), ("tie", self._tie)) if key in self.show]
        items: list[pn.viewable.Viewable] = []
        if "preset" in self.show:
            intro = pn.pane.HTML("<span style='font-weight:600'>Preset</span>", stylesheets=[BASE],
                                 margin=(7, 8, 0, 0))
            items.append(pn.Row(intro, self._preset, margin=(0, 0, 6, 0)))
        if main:
            items.append(wrap(*main))
        if advanced:
            fold = pn.Card(wrap(*advanced, sizing_mode=None), title="Advanced: T_max and weight tying",
                           collapsed=True, sizing_mode="stretch_width", margin=(4, 0, 0, 0), header_background="#f4f5f7",
                           styles={"border": "1px solid #e5e7eb"}, css_classes=["advanced"])
            items.append(fold)
        items.append(self._status)
        return pn.Column(*items, sizing_mode="stretch_width", margin=0)
