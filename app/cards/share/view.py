"""Links and embed code for the current view: the page's address and an `<iframe>` for a course page.

`page_link` and `embed_code` are pure; `ShareView` shows them with a copy button (the browser's clipboard;
on a plain-http host, where the Clipboard API is off, it falls back to a hidden textarea and execCommand).
"""
from __future__ import annotations

from dataclasses import replace

import panel as pn
import param
from panel.custom import JSComponent

from model import Config
from model.inference import InferSetup
from model.training import TrainSetup

from ...query import CONTROLS, PANELS, ViewOptions, to_query
from ...state import ExplorerState
from ...styles import ACCENT, BASE, INK, MUTED, RULE
from ...words import CHIP_TIPS, TAGLINE
from .heights import embed_height

DEFAULT_BASE = "http://localhost:5006/explorer"
# `box` is the text widget to copy; Panel passes the clicked button as `source`.
COPY_JS = """
const text = box.value;
const done = () => { const label = source.label; source.label = 'Copied ✓'; setTimeout(() => { source.label = label; }, 1500); };
const fallback = () => {
  const ta = document.createElement('textarea'); ta.value = text; ta.setAttribute('readonly', '');
  ta.style.position = 'fixed'; ta.style.opacity = '0'; document.body.appendChild(ta); ta.select();
  try { document.execCommand('copy'); done(); } finally { document.body.removeChild(ta); }
};
if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done, fallback); }
else { fallback(); }
"""


def base_url(href: str | None) -> str:
    """The page's address without query or fragment; the local default when unknown (a notebook)."""
    if not href or not href.startswith(("http://", "https://")):
        return DEFAULT_BASE
    base = href.split("#", 1)[0].split("?", 1)[0]
    return base.removesuffix("/autoload.js")  # embedded with Bokeh's server_document


def page_link(base: str, config: Config, options: ViewOptions, train: TrainSetup | None = None,
              infer: InferSetup | None = None) -> str:
    """The address that reproduces this view (and the training run's and inference card's settings, where given)."""
    return base + to_query(config, options, train, infer)


def embed_code(base: str, config: Config, options: ViewOptions, train: TrainSetup | None = None,
               infer: InferSetup | None = None) -> str:
    """`<iframe>` markup showing this configuration in embed mode with the chosen controls and panels."""
    options = replace(options, embed=True)
    src = page_link(base, config, options, train, infer).replace('"', "%22").replace("<", "%3C").replace(">", "%3E")
    return (f'<iframe src="{src}" title="Transformer Shapes: {TAGLINE}" '
            f'width="100%" height="{embed_height(options, config)}" style="border: 0;" loading="lazy"></iframe>')


CHIPS_CSS = BASE + f"""
.chips {{ display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }}
.chip {{ display: inline-flex; border-radius: 14px; overflow: hidden; border: 1px solid #c5c9d0; background: #fff; }}
.chip button {{ font: inherit; font-size: 12.5px; border: 0; background: transparent; color: {MUTED}; cursor: pointer;
  padding: 4px 10px; line-height: 1.3; }}
.chip .pick::before {{ content: ""; display: inline-block; width: 0.9em; }}
.chip.on {{ background: {ACCENT}; border-color: {ACCENT}; }}
.chip.on button {{ color: #fff; font-weight: 600; }}
.chip.on .pick::before {{ content: "✓"; }}
.chip .only {{ font-size: 11px; padding: 4px 8px 4px 6px; border-left: 1px solid #e5e7eb; }}
.chip.on .only {{ border-left-color: rgba(255, 255, 255, 0.35); font-weight: 400; }}
.chip button:hover {{ text-decoration: underline; }}
.chip button:focus-visible, .helper:focus-visible {{ outline: 2px solid {INK}; outline-offset: -2px; }}
.helper {{ font: inherit; font-size: 12px; border: 1px solid {RULE}; border-radius: 4px; background: #f8f9fa;
  color: {INK}; padding: 3px 10px; cursor: pointer; }}
.helper:hover {{ background: #eef0f3; }}
.count {{ font-size: 12px; color: {MUTED}; margin-left: 2px; }}
"""
CHIPS_ESM = r"""
export function render({ model, el }) {
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}[c]));
  const root = document.createElement("div");
  root.className = "chips";
  root.setAttribute("role", "group");
  root.setAttribute("aria-label", model.label);
  const set = (value) => { model.value = model.options.filter((o) => value.includes(o)); };
  const draw = () => {
    const on = new Set(model.value);
    root.innerHTML = model.options.map((o) => `<span class="chip ${on.has(o) ? "on" : "off"}" data-name="${esc(o)}"`
      + ` title="${esc(model.tips[o] || o)}"><button type="button" class="pick" aria-pressed="${on.has(o)}">${esc(o)}</button>`
      + `<button type="button" class="only" aria-label="only ${esc(o)}" title="keep only ${esc(o)}">only</button></span>`).join("")
      + `<button type="button" class="helper all">all</button>`
      + (model.allow_none ? `<button type="button" class="helper none">none</button>` : "")
      + `<span class="count">${on.size} of ${model.options.length}</span>`;
  };
  root.addEventListener("click", (e) => {
    const button = e.target.closest("button");
    if (!button) return;
    const chip = button.closest(".chip"), name = chip ? chip.dataset.name : null, value = model.value;
    if (button.classList.contains("all")) set(model.options);
    else if (button.classList.contains("none")) set([]);
    else if (button.classList.contains("only")) set([name]);
    else if (value.includes(name)) { if (model.allow_none || value.length > 1) set(value.filter((v) => v !== name)); }
    else set([...value, name]);
  });
  draw();
  el.appendChild(root);
  model.on("value", draw);
}
"""


class Chips(JSComponent):
    """A choice of names as chips that wrap: a selected chip is filled with a check mark, an unselected one white;
    each chip has "only" (keep just it), and the group "all" and (where an empty choice means something) "none".
    One Bokeh model for the whole group."""

    options = param.List(default=[], constant=True, doc="the names, in order")
    value = param.List(default=[], doc="the names chosen, in the order of options")
    tips = param.Dict(default={}, constant=True, doc="a name's tooltip: what it is")
    allow_none = param.Boolean(default=True, constant=True, doc="the choice may be empty (else the last chip stays)")
    label = param.String(default="", constant=True, doc="the group's name for screen readers")

    _esm = CHIPS_ESM
    _stylesheets = [CHIPS_CSS]


class ShareView(pn.viewable.Viewer):
    """The link to this view and the embed code, with choices of controls and panels for the embed."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    base = param.String(default=DEFAULT_BASE, doc="the page's address without query")
    options = param.ClassSelector(class_=ViewOptions, default=ViewOptions(), doc="the page's own view options")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._controls = Chips(options=list(CONTROLS), value=list(self.options.controls), tips=CHIP_TIPS,
                               label="controls of the embedded view", sizing_mode="stretch_width",
                               margin=(0, 0, 8, 0), css_classes=["share-controls"])
        self._panels = Chips(options=list(PANELS), value=list(self.options.panels), tips=CHIP_TIPS, allow_none=False,
                             label="panels of the embedded view", sizing_mode="stretch_width", margin=(0, 0, 8, 0),
                             css_classes=["share-panels"])
        self._link = pn.widgets.TextInput(label="Link to this view", value=self.link(), sizing_mode="stretch_width",
                                          margin=(0, 0, 8, 0), css_classes=["share-link"])
        self._code = pn.widgets.TextAreaInput(label="Embed code", value=self.code(), height=92,
                                              sizing_mode="stretch_width", margin=(0, 0, 6, 0),
                                              css_classes=["embed-code"])
        self._copy = pn.widgets.Button(label="Copy embed code", color="primary", width=160, margin=(0, 8, 0, 0),
                                       css_classes=["copy-embed"])
        self._copy.js_on_click(args={"box": self._code}, code=COPY_JS)
        self._copy_link = pn.widgets.Button(label="Copy link", color="light", width=100, margin=0)
        self._copy_link.js_on_click(args={"box": self._link}, code=COPY_JS)
        self.state.param.watch(self._update, ["config", "dtype", "expanded", "train", "infer"])
        self._controls.param.watch(self._update, ["value"])
        self._panels.param.watch(self._update, ["value"])

    def _view_options(self, embed: bool) -> ViewOptions:
        if not embed:
            return replace(self.options, dtype=self.state.dtype, expanded=self.state.expanded)
        controls = tuple(c for c in CONTROLS if c in self._controls.value)
        panels = tuple(p for p in PANELS if p in self._panels.value) or PANELS
        return ViewOptions(embed=True, controls=controls, panels=panels, dtype=self.state.dtype,
                           expanded=self.state.expanded)

    def link(self) -> str:
        return page_link(self.base, self.state.config, self._view_options(embed=False), self.state.train,
                         self.state.infer)

    def code(self) -> str:
        return embed_code(self.base, self.state.config, self._view_options(embed=True), self.state.train,
                          self.state.infer)

    def _update(self, *_events) -> None:
        with pn.io.hold():
            self._link.value = self.link()
            self._code.value = self.code()

    def __panel__(self) -> pn.viewable.Viewable:
        intro = pn.pane.HTML(
            "<h2>Share and embed</h2><p class='muted'>The address bar always holds this view. For a course page, "
            "choose what students may touch and paste the code; the view stays live (it needs this server).</p>",
            stylesheets=[BASE], sizing_mode="stretch_width", margin=(0, 0, 8, 0))
        label = "<span style='font-size:12.5px;font-weight:600'>{}</span>"
        return pn.Column(
            intro, self._link, self._copy_link,
            pn.pane.HTML(label.format("Embed with these controls"), margin=(12, 0, 2, 0)), self._controls,
            pn.pane.HTML(label.format("and these panels"), margin=(0, 0, 2, 0)), self._panels,
            self._code, self._copy, sizing_mode="stretch_width", margin=0)
