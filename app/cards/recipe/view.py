"""The modern recipe's fold on the live page: a config.json pasted or dropped (or a Hugging Face model id, read from
this server's hub cache: `model.hub`, never fetched), and the "what each change buys"
card (`model.changes`, laid out by `app.cards.recipe.markup`). The recipe choice and its switches are controls
(`app.cards.controls.view`), so they cost a session nothing more than the controls' one model.

The notice about a config.json (what was read, or why nothing was) belongs to that file: it goes with the next
change of the configuration. A page costs what it shows: the card is one fold, closed while the configuration is GPT-2's recipe (unless a
link names it); its widgets are made when it is first opened, and the changes are computed only while it is
open and only when the configuration or dtype changed. Everything it shows comes from `model`.
"""
from __future__ import annotations

import html

import panel as pn
import param

from model import hf, hub
from model.changes import Changes, changes
from model.config import Config, read_hf

from ...background import Latest
from ...state import ExplorerState
from ...styles import BASE, BUDGET_CSS, STATUS_CSS
from .markup import TITLE, changes_groups, changes_html, notice_html


def read_config_json(text: str | bytes, keep: Config, source: str = "config.json") -> tuple[Config | None, str]:
    """A pasted or dropped config.json as a Config at `keep`'s B (and T, clamped to a learned table), and the
    notice to show: what was read (`source`) and what the reading did (`model.config.read_hf`'s notes), or the one
    line that says why nothing was (`model.hf.parse` and `read_hf` name the problem; never raises)."""
    try:
        doc = hf.parse(text)
        model = read_hf(doc, B=keep.B).config
        read = read_hf(doc, B=keep.B, T=keep.T if model.positions == "rope" else min(keep.T, model.T_max))
    except ValueError as e:
        return None, f"{e}; nothing was changed"
    cfg = read.config
    notes = "".join(f"; {n}" for n in read.notes)
    return cfg, f"read {doc['model_type']} {source}: B = {cfg.B:,} kept, T = {cfg.T:,}{notes}"


def read_model_id(model_id: str, keep: Config) -> tuple[Config | None, str]:
    """A Hugging Face model id's config.json from this server's hub cache (`model.hub.config_json`, never fetched:
    a served page reaches nothing outside its server), read as `read_config_json` reads a pasted one."""
    model_id = model_id.strip()
    try:
        data, _ = hub.config_json(model_id, fetch=False)
    except hub.HubError as e:
        return None, f"model id {e}, or paste its config.json; nothing was changed"
    return read_config_json(data, keep, f"config.json of {model_id} (this server's Hugging Face cache)")


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
        self._latest: Latest[tuple] = Latest()  # the configuration and dtype the card shows, or will
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
        # the box takes one character more than a config.json may hold, so a longer paste is named, not cut
        self._paste = pn.widgets.TextAreaInput(label="config.json", placeholder="paste a Hugging Face config.json here",
                                               height=70, min_width=280, sizing_mode="stretch_width",
                                               styles={"flex": "1 1 280px"}, max_length=hf.MAX_BYTES + 1)
        self._file = pn.widgets.FileInput(accept=".json,application/json", multiple=False)
        self._model_id = pn.widgets.TextInput(placeholder="or a model id: Qwen/Qwen3-8B", max_length=200,
                                              width=260, css_classes=["model-id"])
        self._paste.param.watch(lambda e: self._read(e.new), ["value"])
        self._file.param.watch(lambda e: self._read(e.new), ["value"])
        self._model_id.param.watch(lambda e: self._read(e.new.strip(), read_model_id), ["value"])
        self._read_notice = pn.pane.HTML("", stylesheets=[STATUS_CSS], sizing_mode="stretch_width", margin=0,
                                         css_classes=["read-notice"])
        self._changes = pn.pane.HTML("", stylesheets=[BASE, BUDGET_CSS], sizing_mode="stretch_width",
                                     css_classes=["changes"], margin=0)
        other = pn.Column(pn.pane.HTML("<small>or drop the file</small>", margin=0), self._file, self._model_id,
                          width=300, margin=0)
        # side by side where there is room, the box above the others on a phone (a row squeezed the box to nothing)
        drop = pn.FlexBox(self._paste, other, flex_wrap="wrap", sizing_mode="stretch_width", margin=0)
        self._body.objects = [drop, self._read_notice, self._changes]
        self.state.param.watch(self._on_state, ["config", "dtype"])

    # --- moving --------------------------------------------------------------------------------------------------
    def _read(self, text: str | bytes | None, reader=read_config_json) -> None:
        if not text:
            return
        cfg, note = reader(text, self.state.config)
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
        if key == self._latest.key:
            return
        self._latest.ask(key, lambda: changes(*key), self._show)  # off the event loop (app.background)

    def _show(self, c: Changes | ValueError) -> None:
        if isinstance(c, ValueError):  # no GPT-2 twin (T beyond T_max with RoPE, d not divisible by h)
            self._changes.object = notice_html(str(c))
            return
        self._changes.object = changes_html(changes_groups(c), self._latest.key[1], c.note)

    def __panel__(self) -> pn.viewable.Viewable:
        return self._card
