"""Links and embed code for the current view: the page's address and an `<iframe>` for a course page.

`page_link` and `embed_code` are pure; `ShareView` shows them with a copy button (the browser's clipboard;
on a plain-http host, where the Clipboard API is off, it falls back to a hidden textarea and execCommand).
"""
from __future__ import annotations

from dataclasses import replace

import panel as pn
import param

from model import Config
from model.training import TrainSetup

from .query import CONTROLS, PANELS, RECIPE_KEYS, ViewOptions, to_query
from .state import ExplorerState
from .styles import BASE
from .words import TAGLINE

DEFAULT_BASE = "http://localhost:5006/explorer"
# Starting iframe heights in px, for a course page's column (~700-900 px wide: the panels stack)
HEIGHTS = {"few controls": 130, "many controls": 270, "few recipe controls": 70, "recipe controls": 165, "shapes": 1040, "budget": 590, "tokens": 360,
           "values": 1900, "values closed": 60,  # values: open when a link names it, closed among all panels
           "training": 1500, "changes": 900, "changes closed": 60}  # changes: closed like values on the full page

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


def page_link(base: str, config: Config, options: ViewOptions, train: TrainSetup | None = None) -> str:
    """The address that reproduces this view (and the training run's settings, where given)."""
    return base + to_query(config, options, train)


def embed_height(options: ViewOptions) -> int:
    """A starting iframe height for the chosen controls and panels, stacked as in a course page's column."""
    recipe = [c for c in options.controls if c in RECIPE_KEYS]  # the recipe's row and its switches' row
    sized = [c for c in options.controls if c not in recipe]
    fields = [c for c in sized if c not in ("preset", "T_max", "tie")]  # one row holds about four
    controls = 0 if not sized else HEIGHTS["few controls" if len(fields) <= 4 and len(sized) == len(fields) else "many controls"]
    if recipe:
        controls += HEIGHTS["few recipe controls" if len(recipe) <= 3 and "recipe" not in recipe else "recipe controls"]
    closed = options.panels == PANELS  # the values card starts closed on the full set of panels (app.page)
    return controls + sum(HEIGHTS[f"{p} closed" if p in ("values", "changes") and closed else p] for p in options.panels)


def embed_code(base: str, config: Config, options: ViewOptions, train: TrainSetup | None = None) -> str:
    """`<iframe>` markup showing this configuration in embed mode with the chosen controls and panels."""
    options = replace(options, embed=True)
    src = page_link(base, config, options, train).replace('"', "%22").replace("<", "%3C").replace(">", "%3E")
    return (f'<iframe src="{src}" title="Transformer Shapes: {TAGLINE}" '
            f'width="100%" height="{embed_height(options)}" style="border: 0;" loading="lazy"></iframe>')


class ShareView(pn.viewable.Viewer):
    """The link to this view and the embed code, with choices of controls and panels for the embed."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")
    base = param.String(default=DEFAULT_BASE, doc="the page's address without query")
    options = param.ClassSelector(class_=ViewOptions, default=ViewOptions(), doc="the page's own view options")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._controls = pn.widgets.CheckButtonGroup(options=list(CONTROLS),
                                                     value=list(self.options.controls), color="light",
                                                     sizing_mode="stretch_width", margin=(0, 0, 6, 0),
                                                     stylesheets=[":host { font-size: 12px; }"])
        self._panels = pn.widgets.CheckButtonGroup(options=list(PANELS), value=list(self.options.panels),
                                                   color="light", margin=(0, 0, 6, 0), width=240,
                                                   stylesheets=[":host { font-size: 12px; }"])
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
        self.state.param.watch(self._update, ["config", "dtype", "expanded", "train"])
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
        return page_link(self.base, self.state.config, self._view_options(embed=False), self.state.train)

    def code(self) -> str:
        return embed_code(self.base, self.state.config, self._view_options(embed=True), self.state.train)

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
