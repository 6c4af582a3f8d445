"""The controls: a preset picker, one slider + number box per field, T_max and tying under "advanced".

Slider ranges (soft) keep each slider usable by pointer and keyboard (arrows move one step, PageUp/PageDown
five, Home/End to the ends); the number box beside each slider accepts anything in `model.BOUNDS`, and a
preset or a link stretches a slider's range by doubling its end (GPT-3 175B: d 64 … 16,384, L 1 … 96):

- B 1 … 64, step 1          - T 1 … T_max, step 1 (T cannot pass T_max)
- d 64 … 4,096, step 64 (multiples of 64, as real models; type 770 in the box to see h snap)
- h: the divisors of d only (the slider walks them: 1, 2, 3, 4, 6, 8, 12, … for d = 768)
- L 1 … 48, step 1          - V 1 … 131,072, step 1      - T_max 1 … 8,192, step 1

The whole card is one ESM component (`ControlsPanel`, drawn by esm.py): a session holds one Bokeh model for
it instead of five Panel widgets and panes per field (issue 16). The page sends each input as `asked`
([count, name, value]); `Controls.ask` gives it to the state (`set_field`, which rejects out-of-bounds input with
a notice) and the state's settled fields come back as `view`, data only (`controls_view`, pure). The page
applies a view only once the server has answered its latest input (`view["ack"]`), so a fast drag or a held
arrow key never jumps back to a value the server answered earlier. The controls come from the fields' declarations
(`model.config.LINKED`, those `controlled`), by kind: the lesson's whole numbers get a slider and a box (T_max under
"advanced"), the others' a box; a choice a switch; a flag a checkbox.
"""
from __future__ import annotations

import functools
import json

import panel as pn
import param
from panel.custom import JSComponent

from model import Config, divisors
from model.config import FIELD, FIELDS, LINKED
from model.families import MLP_KINDS, QK_NORM_LABEL, RECIPE_LABELS, SWITCH_LABELS, extras_line, menu_groups
from model.fields import Field
from model.parts import latent

from ...state import BOXES, CUSTOM, ExplorerState, preset_labels
from ...templates import TEMPLATES, fill_html
from ...styles import ACCENT, BASE, INK, MUTED, RULE, STATUS_CSS
from ...words import MOE_SWITCH_DOC, SHORT, field_names, slider_range, status_rules
from .esm import CONTROLS_ESM

CONTROLLED = {f.key: f for f in LINKED if f.controlled}  # key -> the field of each control, in the page's order
SLIDERS = [k for k, f in CONTROLLED.items() if f.group == "lesson" and f.kind == "whole"]  # B, T, d, h, L, V, T_max
ADVANCED = ("T_max",)  # whole-number fields in the "advanced" fold, with the switches
CHECKBOX_LABELS = {"tie": "tie the head to W_te (GPT-2)"}
ADVANCED_TITLE = "Advanced: T_max and weight tying"
SIZES = [f for k, f in CONTROLLED.items() if k in BOXES]  # the boxes beside the switches: d_ff, h_kv, d_head, the
# window's and latent attention's; and in the MLP's row (a mixture of experts' only) E, k, d_expert, E_shared, d_shared,
# moe_step, dense_first and dense_layers (a list of block indices, as text)
MOE_SIZES = [f.key for f in SIZES if f.group == "moe"]

CONTROLS_CSS = BASE + STATUS_CSS + f"""
.controls {{ display: flex; flex-direction: column; }}
.preset-row {{ display: flex; align-items: center; gap: 8px; margin: 0 0 6px 0; }}
.preset-row b {{ font-weight: 600; }}
.preset select, .recipe select {{ width: 250px; height: 31px; font: inherit; font-size: 14px; border: 1px solid #d1d5db;
  border-radius: 4px; padding: 0 6px; background: #fff; color: inherit; }}
.preset {{ flex: 0 1 560px; min-width: 0; }} .preset select {{ width: 100%; }}  /* the longest label whole at 1400 px:
   "DeepSeek-V3 (no MTP module) · L 61, d 7,168, top-8 of 256 experts"; narrower screens shrink it */
.fields {{ display: flex; flex-wrap: wrap; }}
.control {{ flex: 1 1 154px; max-width: 224px; margin: 0 6px 2px 0; min-width: 0; }}
.control .head {{ display: flex; align-items: flex-start; }}
.lab {{ flex: 1 1 auto; line-height: 1.2; min-width: 0; margin-left: 2px; }}
.sym {{ font-weight: 700; font-size: 15px; }}
.name {{ font-size: 11.5px; }}  /* wraps where the box leaves it too little room (a phone), never cut */
.box input {{ width: 82px; height: 31px; box-sizing: border-box; margin: 2px 0 0 4px; text-align: right;
  font: inherit; font-size: 14px; font-variant-numeric: tabular-nums; border: 1px solid #d1d5db;
  border-radius: 4px; padding: 0 4px; color: inherit; }}
.box input:focus, .preset select:focus, .recipe select:focus {{ outline: 2px solid {ACCENT}; outline-offset: -1px; }}
.slider {{ margin: 10px 16px 10px 16px; touch-action: none; cursor: pointer; }}
.slider .track {{ position: relative; height: 8px; border-radius: 4px; background: #e9ebef;
  border: 1px solid #d3d6dc; box-sizing: border-box; }}
.slider .fill {{ position: absolute; left: 0; top: 0; bottom: 0; border-radius: 4px; background: #e9ebef; }}
.slider .noUi-handle {{ position: absolute; top: 50%; width: 18px; height: 18px; margin: -9px 0 0 -9px;
  box-sizing: border-box; border: 1px solid #c5c9d0; border-radius: 4px; background: #fafafa;
  box-shadow: inset 0 0 1px #fff, inset 0 1px 7px #ebebeb, 0 3px 6px -3px #bbb; cursor: grab; }}
.slider .noUi-handle:focus-visible {{ outline: 2px solid {ACCENT}; outline-offset: 2px; }}
.slider.disabled {{ opacity: 0.5; cursor: default; }} .slider.disabled .noUi-handle {{ cursor: default; }}
details.advanced {{ margin: 4px 0 0 0; border: 1px solid {RULE}; border-radius: 4px; }}
details.advanced > summary {{ background: #f4f5f7; padding: 8px 12px; font-weight: 650; font-size: 14.5px;
  cursor: pointer; list-style: none; }}
details.advanced > summary::before {{ content: "›"; display: inline-block; margin-right: 8px; font-weight: 700;
  transition: transform 0.1s; }}
details.advanced[open] > summary::before {{ transform: rotate(90deg); }}
details.advanced .fields {{ padding: 8px 8px 4px 8px; }}
.switches {{ display: flex; flex-wrap: wrap; align-items: flex-end; gap: 4px 10px; margin: 0 0 6px 0; }}
.switch {{ display: flex; flex-direction: column; gap: 2px; }}
.switch .top {{ display: flex; align-items: center; gap: 4px; }}
.help {{ position: relative; display: inline-flex; align-items: center; justify-content: center; width: 15px;
  height: 15px; border-radius: 50%; border: 1px solid #c5c9d0; color: {MUTED}; font-size: 10.5px; font-weight: 700;
  cursor: help; line-height: 1; }}
.help:focus-visible {{ outline: 2px solid {ACCENT}; outline-offset: 1px; }}
.help .tip {{ display: none; position: absolute; z-index: 10; left: -8px; top: 20px; width: max-content; max-width: 260px;
  background: #fff; color: {INK}; border: 1px solid {RULE}; border-radius: 6px; padding: 6px 8px; font-size: 12px;
  font-weight: 400; line-height: 1.4; box-shadow: 0 2px 8px rgba(0, 0, 0, 0.12); white-space: normal; }}
.help:hover .tip, .help:focus .tip {{ display: block; }}
.switch select {{ height: 31px; font: inherit; font-size: 14px; border: 1px solid #d1d5db; border-radius: 4px;
  padding: 0 4px; background: #fff; color: inherit; }}
.switch select:focus {{ outline: 2px solid {ACCENT}; outline-offset: -1px; }}
.switch.size .box input {{ margin-left: 0; }}
.size-dense_layers .box input, .size-full_layers .box input {{ width: 210px; text-align: left; }}  /* lists of blocks */
.switches .check {{ margin: 0 0 6px 0; }}
.check {{ display: flex; align-items: center; gap: 6px; margin: 18px 8px 0 8px; font-size: 14px; }}
.status-line {{ margin: 2px 0 0 0; }}
.extras {{ font-size: 12.5px; line-height: 1.45; margin: 2px 0 0 0; color: {MUTED}; }}
.status-line .muted {{ color: {MUTED}; }}
"""


def _field_view(state: ExplorerState, name: str) -> dict:
    """One slider and box as the page shows them: the value, the slider's range and step, and for h the
    divisors of d that the slider walks (its positions are their indices)."""
    value = getattr(state, name)
    if name == "h":
        stops = divisors(state.d)
        index = stops.index(value) if value in stops else 0
        return {"value": value, "start": 0, "end": max(1, len(stops) - 1), "step": 1, "position": index,
                "stops": stops, "disabled": len(stops) == 1}
    start, end, step = slider_range(name, value, state.T_max)
    return {"value": value, "start": start, "end": end, "step": step, "position": value, "stops": None,
            "disabled": False}


def status_html(state: ExplorerState) -> str:
    """The notices (h snapped, T clamped, input rejected), or the configuration's own rules in one line when
    there are none (`app.words.status_rules`)."""
    return fill_html(TEMPLATES["status"], {"notes": [{"text": n} for n in state.notices],
                                           "rules": status_rules(state.config)})


def controls_view(state: ExplorerState, ack: int = 0) -> dict:
    """Everything the controls show for `state` (data, no markup but the status line); `ack` is the count of
    the page's inputs answered so far. The recipe's sizes show the values in use (d_ff = 4d for GELU)."""
    labels = {v: k for k, v in preset_labels().items()}
    return {"fields": {f: _field_view(state, f) for f in SLIDERS},
            "checks": {k: bool(getattr(state, k)) for k, f in CONTROLLED.items() if f.kind == "flag"},
            "preset": labels[state.preset], "status": status_html(state), "ack": ack,
            "names": field_names(state.config),
            "recipe": state.recipe,
            "switches": {**{k: getattr(state, k) for k, f in CONTROLLED.items() if f.kind == "choice"},
                         "moe": "moe" if state.config.moe else "dense"},
            "sizes": sizes_view(state.config), "extras": extras_line(state.config) or ""}


def sizes_view(cfg: Config) -> dict[str, int | str | None]:
    """The boxes' values: d_ff, h_kv, d_head and a mixture of experts' sizes and layout in use, dense_layers as text
    ("0,1,2" or "none"); the window W ("none": full attention) and full_layers as text; None (the box hidden) for a
    dense model's MoE boxes, for d_shared without shared experts, for full_layers without a window, and for d_ff
    where every block is MoE (no dense MLP: d_ff is no part of the model); latent attention's d_c, d_cq ("none": q
    from x directly), d_R, d_nope and d_v, hidden without it, and with it h_kv, d_head and W hidden (every head has
    its own K and V from the latent, q and k are d_nope + d_R wide, and it has no window: `model.rules`)."""
    out = {f.key: _box(cfg, f) for f in SIZES}
    out.update({FIELD[name].key: None for name in latent.hides(cfg) if FIELD[name].key in out})  # h_kv, d_head, W
    return {**out, "d_ff": out["d_ff"] if "dense" in cfg.mlp_kinds else None}


def _box(cfg: Config, f: Field) -> int | str | None:
    """A box's value: the value in use (by the field's key: d_ff = 4d for GELU), block indices as text ("0,1,2" or
    "none"), "none" for a field unset where a box takes none (W, d_cq); None (hidden) where the part it sizes is
    absent (`Field.needs`) or it has no value (d_shared without shared experts)."""
    if f.needs and getattr(cfg, f.needs) is None:
        return None
    value = getattr(cfg, f.key)
    if f.kind == "blocks":
        return ",".join(map(str, value)) or "none"
    return "none" if value is None and f.unset == "none" else value


def controls_spec(show: list[str]) -> dict:
    """What the page draws once: each field's symbol, name and description, where it sits, the preset labels."""
    def field(k: str) -> dict:
        return {"name": k, "short": SHORT[k], "doc": f"{k}: {CONTROLLED[k].about}"}

    shown = [k for k in SLIDERS if k in show]
    return {"main": [field(k) for k in shown if k not in ADVANCED],
            "advanced": [field(k) for k in shown if k in ADVANCED],
            "checks": [{"name": k, "label": CHECKBOX_LABELS[k]} for k, f in CONTROLLED.items()
                       if f.group == "lesson" and f.kind == "flag" and k in show],
            "advanced_title": ADVANCED_TITLE, "preset": "preset" in show, "presets": list(preset_labels()),
            "groups": menu_groups(moe=True), **recipe_spec(show)}  # the presets by family (model.families)


def recipe_spec(show: list[str]) -> dict:
    """The recipe's controls among `show` (URL and embed names): the recipe choice, each switch with its choices
    and the MLP choice (dense or MoE), the sizes d_ff, h_kv and d_head and a mixture of experts' E, k and d_expert as
    number boxes with its shared experts and which blocks are MoE, the window W and full_layers, latent attention's
    d_c, d_cq, d_R, d_nope and d_v, and QK-norm;
    `model.families` names every choice; each control's tooltip is its field's declared doc."""
    moe = [{"name": "moe", "doc": MOE_SWITCH_DOC, "options": list(MLP_KINDS.items()), "moe": True}]
    moe = moe if "moe" in show else []
    rows = [f for f in SIZES if f.group != "moe"] + [f for f in SIZES if f.group == "moe"]  # the switches', the MLP's
    qk = FIELD["qk_norm"]
    return {"recipe": [[k, v] for k, v in RECIPE_LABELS.items()] if "recipe" in show else None,
            "switches": [{"name": k, "doc": f"{k}: {f.about}", "options": list(SWITCH_LABELS[k].items()),
                          "moe": False} for k, f in CONTROLLED.items() if f.kind == "choice" and k in show] + moe,
            "sizes": [{"name": f.key, "doc": f"{f.key}: {f.about}", "moe": f.group == "moe"}  # "moe": in the MLP's row
                      for f in rows if f.key in show],
            "qk": {"name": qk.key, "label": QK_NORM_LABEL, "doc": qk.about} if qk.key in show else None}


@functools.lru_cache(maxsize=64)
def spec_json(show: tuple[str, ...]) -> str:
    """`controls_spec(show)` as the page receives it, made once per list of controls."""
    return _json(controls_spec(list(show)))


class ControlsPanel(JSComponent):  # the page names its element after the class: "controls-panel"
    """The controls drawn in the browser from `spec` and `view`; the learner's inputs come back as `asked`. Both
    travel as JSON text: on every change Bokeh and Panel walk a nested value item by item (for references, for
    equality), a string they compare at once (issue 16)."""

    spec = param.String(default="{}", doc="what is drawn once: controls_spec as JSON")
    view = param.String(default="{}", doc="what the controls show now: controls_view as JSON")
    asked = param.List(default=[], doc="the page's unanswered inputs, oldest first: [[count, name, value], ...]")

    _esm = CONTROLS_ESM
    _stylesheets = [CONTROLS_CSS]


class Controls(pn.viewable.Viewer):
    """The preset picker, the field controls listed in `show`, the advanced fold and the status line."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    show = param.List(default=["preset", *FIELDS], item_type=str, doc="which controls to show (ViewOptions.controls)")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._ack = 0
        self._view = controls_view(self.state)
        self.card = ControlsPanel(spec=spec_json(tuple(self.show)), view=_json(self._view),
                                  sizing_mode="stretch_width", margin=0)
        self.card.param.watch(self._asked, ["asked"])
        self.state.param.watch(self._push, [*FIELDS, "preset", "recipe", "notices", "config"])

    @property
    def view(self) -> dict:
        """What the page shows now (`controls_view`)."""
        return self._view

    def _push(self, *_events) -> None:
        view = controls_view(self.state, self._ack)
        if view != self._view:
            self._view = view
            self.card.view = _json(view)

    def _asked(self, event: param.parameterized.Event) -> None:
        """Apply, in order, each input of the page's list not answered yet (a count above the last answered)."""
        with pn.io.hold():
            for item in event.new:
                if not (isinstance(item, list) and len(item) == 3 and isinstance(item[0], int)):
                    continue
                n, name, value = item
                if n > self._ack:
                    self._ack = n
                    self.ask(name, value)

    def ask(self, name: str, value: object) -> None:
        """Apply one input from the page: a field's value (a box sends its text), a checkbox, a preset's label, the
        recipe, a switch's choice (the MLP's "moe": dense or MoE), a size d_ff / h_kv / d_head / E / k / d_expert /
        E_shared / d_shared / W / d_c / d_cq / d_R / d_nope / d_v, or the layout's moe_step / dense_first / dense_layers (block indices as text).
        A box's text is read by `model.numbers`' grammar (the state's `set_field`); a rejected or unreadable value
        gets a notice and the box shows the state's value again, and so does an emptied box."""
        f = CONTROLLED.get(name)
        if name == "preset":
            chosen = preset_labels().get(value) if isinstance(value, str) else None
            if chosen is not None and chosen != CUSTOM:  # "custom" describes a state, it is not something to apply
                self.state.preset = chosen
        elif name == "recipe":
            if value in RECIPE_LABELS and value != "custom":  # "custom" too describes a state
                self.state.recipe = value
        elif name == "moe":
            if value in MLP_KINDS:
                self.state.set_field("moe", value == "moe")
        elif f is None:
            pass
        elif f.kind == "choice":
            self.state.set_field(f.name, value)  # a choice it does not know gets a notice
        elif f.kind == "flag":
            self.state.set_field(f.name, bool(value))
        elif isinstance(value, (int, str)) and not isinstance(value, bool):  # a slider's int or a box's text
            self.state.set_field(f.name, value)
        self._push()

    def __panel__(self) -> pn.viewable.Viewable:
        return self.card


def _json(data: dict) -> str:
    return json.dumps(data, separators=(",", ":"))
