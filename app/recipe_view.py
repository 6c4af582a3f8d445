"""The modern recipe's fold on the live page: a config.json pasted or dropped, and the "what each change buys"
card (`model.changes`, laid out by `app.changes_card`). The recipe choice and its switches are controls
(`app.controls`), so they cost a session nothing more than the controls' one model.

The notice about a config.json (what was read, or why nothing was) belongs to that file: it goes with the next
change of the configuration. A page costs what it shows: the card is one fold, closed while the configuration is GPT-2's recipe (unless a
link names it); its widgets are made when it is first opened, and the changes are computed only while it is
open and only when the configuration or dtype changed. Everything it shows comes from `model`.
"""
from __future__ import annotations

import html
import json

import panel as pn
import param

from model.changes import changes
from model.config import Config, from_hf

from .changes_card import TITLE, changes_groups, changes_html, notice_html
from .state import ExplorerState
from .styles import BASE, BUDGET_CSS, STATUS_CSS

MAX_CONFIG_CHARS = 200_000  # a config.json is a few kB; longer pasted text is refused before parsing


def read_config_json(text: str | bytes, keep: Config) -> tuple[Config | None, str]:
    """A pasted or dropped config.json as a Config at `keep`'s B (and T, clamped to a learned table), and the
    notice to show: what was read, or why nothing was (never raises)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None, "the file is not UTF-8 text: drop the model's config.json"
    if len(text) > MAX_CONFIG_CHARS:
        return None, f"the text is {len(text):,} characters long: a config.json is a few thousand; nothing was read"
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        return None, f"not JSON ({e.msg} at line {e.lineno}, column {e.colno}): paste the whole config.json"
    try:
        cfg = from_hf(doc, B=keep.B)
    except ValueError as e:
        return None, f"{e}; nothing was changed"
    T = keep.T if cfg.positions == "rope" else min(keep.T, cfg.T_max)
    try:
        cfg = Config(**{**{f: getattr(cfg, f) for f in cfg.__dataclass_fields__}, "T": T})
    except ValueError as e:
        return None, f"{e}; nothing was changed"
    return cfg, f"read {doc.get('model_type')} config.json: every shape key taken (B = {cfg.B:,} and T = {cfg.T:,} kept)"


class RecipeView(pn.viewable.Viewer):
    """The recipe fold: a config.json read in, and what each change buys."""

    state = param.ClassSelector(class_=ExplorerState)
    collapsed = param.Boolean(default=True, doc="the fold is closed: nothing is built or computed")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._body = pn.Column(sizing_mode="stretch_width", margin=0)
        self._card = pn.Card(self._body, title="The modern recipe: " + TITLE.lower(), collapsed=self.collapsed,
                             sizing_mode="stretch_width", margin=0, css_classes=["recipe-card"])
        self._card.param.watch(self._toggled, ["collapsed"])
        self._built = False
        self._shown_key: tuple | None = None
        self._read_for: Config | None = None  # the configuration the last config.json notice is about
        if not self.collapsed:
            self._build()
            self._refresh()

    # --- building, once, when first opened ---------------------------------------------------------------------
    def _toggled(self, event: param.parameterized.Event) -> None:
        self.collapsed = event.new
        if not event.new:
            self._build()
            self._refresh()

    def _build(self) -> None:
        if self._built:
            return
        self._built = True
        self._paste = pn.widgets.TextAreaInput(name="config.json", placeholder="paste a Hugging Face config.json here",
                                               height=70, sizing_mode="stretch_width")
        self._file = pn.widgets.FileInput(accept=".json,application/json", multiple=False)
        self._paste.param.watch(lambda e: self._read(e.new), ["value"])
        self._file.param.watch(lambda e: self._read(e.new), ["value"])
        self._read_notice = pn.pane.HTML("", stylesheets=[STATUS_CSS], sizing_mode="stretch_width", margin=0)
        self._changes = pn.pane.HTML("", stylesheets=[BASE, BUDGET_CSS], sizing_mode="stretch_width",
                                     css_classes=["changes"], margin=0)
        drop = pn.Row(self._paste, pn.Column(pn.pane.HTML("<small>or drop the file</small>", margin=0), self._file),
                      sizing_mode="stretch_width", margin=0)
        self._body.objects = [drop, self._read_notice, self._changes]
        self.state.param.watch(self._on_state, ["config", "dtype"])

    # --- moving --------------------------------------------------------------------------------------------------
    def _read(self, text: str | bytes | None) -> None:
        if not text:
            return
        cfg, note = read_config_json(text, self.state.config)
        if cfg is not None:
            self.state.apply(cfg)
        self._read_for = self.state.config  # the notice holds for this configuration only
        self._read_notice.object = notice_html(note) if cfg is None else f'<div class="status muted">{html.escape(note)}</div>'

    def _on_state(self, *_events) -> None:
        if self._read_notice.object and self.state.config != self._read_for:  # a later change: the notice was
            self._read_notice.object = ""                                      # about the file, not about this
        self._refresh()

    def _refresh(self) -> None:
        """The changes card, computed only while open and only for a new configuration or dtype."""
        if self.collapsed or not self._built:
            return
        key = (self.state.config, self.state.dtype)
        if key == self._shown_key:
            return
        self._shown_key = key
        try:
            c = changes(*key)
        except ValueError as e:  # no GPT-2 twin (T beyond T_max with RoPE, d not divisible by h)
            self._changes.object = notice_html(str(e))
            return
        self._changes.object = changes_html(changes_groups(c), self.state.dtype)

    def __panel__(self) -> pn.viewable.Viewable:
        return self._card
