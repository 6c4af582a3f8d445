"""`Explorer`: the whole page, assembled from the views, with the configuration kept in the URL.

    from app import Explorer
    Explorer()                                  # in a Jupyter cell (after `pn.extension(inline=True)`)
    Explorer(preset="gpt2-medium")              # a named model (model.PRESETS)
    Explorer(query="?d=1024&h=16&L=24")         # a configuration from a link

Served (`panel serve app/explorer.py`), `Explorer.from_location()` reads the query of the address the page
was opened with and keeps the address in step with every change (history.replaceState, so dragging a slider
does not fill the Back button's history). Options from the query: `embed=1` drops the title and the share
card and fits an iframe; `controls=` and `panels=` pick what is shown (see app.query).
"""
from __future__ import annotations

import html
from dataclasses import replace

import panel as pn
import param

from model import PRESETS
from model.rules import did_you_mean

from .background import served_document
from .cards.budget.view import BudgetView
from .cards.controls.view import Controls
from .cards.infer.view import InferenceView
from .cards.recipe.view import RecipeView
from .cards.shapes.view import ShapesTable
from .cards.share.view import DEFAULT_BASE, ShareView, base_url
from .cards.tensors.view import ValuesView
from .cards.tokens.view import TokensView
from .cards.train.view import TrainingView
from .flex import wrap
from .lazy import Deferred
from .query import PANELS, Query, ViewOptions, parse_query, query_from_arguments, to_query
from .state import ExplorerState
from .styles import BASE, CARD_STYLES, FONT, INK, MUTED, PAGE, T2
from .words import TAGLINE

TITLE = "Transformer Shapes"
WHAT_TO_DO = ("Drag a slider or pick a preset: every tensor of one forward pass and the parameter budget "
              "follow. Try T first (watch the orange (B, h, T, T) rows of eager attention), then d and h.")
# Written 250 ms after the last change: history.replaceState is a synchronous call into the browser
# (~10 ms of the page's main thread in Chromium), too slow for every step of a drag.
REPLACE_URL_JS = """
clearTimeout(window.__shapesUrlTimer);
window.__shapesUrlTimer = setTimeout(() => {
  const q = cb_obj.value;
  if (q && window.location.search !== q) {
    window.history.replaceState(window.history.state, '', window.location.pathname + q + window.location.hash);
  }
}, 250);
"""

# The served page's <head>: a phone lays the page out at its own width (390 px: the narrow layout) instead of a
# desktop's 980 px shrunk to 0.4x. Panel's base template, extended (a string template extends `base`).
PAGE_HEAD = ('{% block preamble %}{{ super() }}<meta name="viewport" content="width=device-width, initial-scale=1">'
             '{% endblock %}')
HEADER_CSS = BASE + f"""
h1 {{ font-size: 24px; font-weight: 750; margin: 0; letter-spacing: -0.3px; }}
h1 .tag {{ font-size: 13px; font-weight: 500; color: {MUTED}; margin-left: 8px; letter-spacing: 0; }}
p.what {{ font-size: 14.5px; margin: 4px 0 0 0; color: #374151; }}
@media (max-width: 640px) {{ h1 .tag {{ display: block; margin: 2px 0 0 0; }} }}
"""
PAGE_CSS = "@media (max-width: 640px) { :host(.full) { padding: 10px 8px 20px 8px !important; } }"
ALERT_CSS = BASE + f"""
.alert {{ background: #fff7ed; border: 1px solid #fdba74; border-radius: 8px; padding: 8px 12px; font-size: 13px; }}
.alert b {{ color: {T2}; }}
.alert ul {{ margin: 4px 0 0 0; padding-left: 18px; }}
"""


def _session_request():
    """The request that opened this server session (the page, autoload.js or a late websocket), or None."""
    doc = served_document()
    return doc.session_context.request if doc is not None else None


def notices_html(notices: list[str]) -> str:
    """The link's problems, escaped (they quote the URL)."""
    items = "".join(f"<li>{html.escape(n)}</li>" for n in notices)
    return f'<div class="alert"><b>This link had problems; showing the nearest valid view.</b><ul>{items}</ul></div>'


class Explorer(pn.viewable.Viewer):
    """The explorer page: controls, the shapes of one forward pass, the budget, tokens, share and embed."""

    state = param.ClassSelector(class_=ExplorerState, doc="the configuration and display choices")
    options = param.ClassSelector(class_=ViewOptions, default=ViewOptions(), doc="embed mode, controls and panels shown")
    link_notices = param.List(default=[], item_type=str, doc="problems found in the query the page was opened with")
    base = param.String(default=DEFAULT_BASE, doc="the page's address without query, for links and embed code")
    sync_url = param.Boolean(default=False, doc="keep the browser's address in step with the state (served pages)")

    def __init__(self, query: str | None = None, preset: str | None = None, **params) -> None:
        """`preset` starts from a named model (`model.PRESETS`, the mixtures of experts included); fields in `query`
        override it, as in a link."""
        if preset is not None:
            if preset not in PRESETS:
                raise ValueError(f"unknown preset {preset!r}{did_you_mean(preset, PRESETS)}; presets: "
                                 f"{', '.join(PRESETS)}")
            query = f"?preset={preset}&{(query or '').removeprefix('?')}"
        q = parse_query(query) if query is not None else Query()
        if "state" not in params:
            params["state"] = ExplorerState(q.config, dtype=q.options.dtype, expanded=q.options.expanded, train=q.train,
                                            infer=q.infer)
        params.setdefault("options", q.options)
        params.setdefault("link_notices", list(q.notices))
        super().__init__(**params)
        panels = self.options.panels
        self.shapes = ShapesTable(state=self.state) if "shapes" in panels else None
        self.budget = BudgetView(state=self.state) if "budget" in panels else None
        self._below: dict[str, pn.viewable.Viewer] = {}  # tokens, share, training: made when first shown or used
        # real values cost a forward pass: closed on the full page, open where a link asks for the panel by name
        self.values = ValuesView(state=self.state, collapsed=panels == PANELS) if "values" in panels else None
        self.controls = Controls(state=self.state, show=list(self.options.controls))
        # the modern recipe's fold: open where the model is not GPT-2's recipe or a link names the panel; closed,
        # it builds and computes nothing (app.cards.recipe.view)
        closed = self.state.config.gpt2_recipe and panels == PANELS
        self.recipe = RecipeView(state=self.state, collapsed=closed) if "changes" in panels else None
        self._url = pn.widgets.TextInput(value="", visible=False, css_classes=["url-sync"])
        self._url.jscallback(value=REPLACE_URL_JS)
        self.state.param.watch(self._sync_url, ["config", "dtype", "expanded", "train", "infer"])

    # Cards that are below the first screen: made on first use; served, when the page scrolls to them (app.lazy).
    def _made(self, name: str, shown: bool, make) -> pn.viewable.Viewer | None:
        if shown and name not in self._below:
            self._below[name] = make()
        return self._below.get(name)

    @property
    def tokens(self) -> TokensView | None:
        """The tokens card's view (None when the link leaves the panel out)."""
        return self._made("tokens", "tokens" in self.options.panels, lambda: TokensView(state=self.state))

    @property
    def share(self) -> ShareView | None:
        """The share and embed card's view (None in embed mode)."""
        return self._made("share", not self.options.embed,
                          lambda: ShareView(state=self.state, base=self.base, options=self.options))

    @property
    def training(self) -> TrainingView | None:
        """The training card's view (None when the link leaves the panel out)."""
        return self._made("training", "training" in self.options.panels, lambda: TrainingView(state=self.state))

    @property
    def inference(self) -> InferenceView | None:
        """The inference card's view (None when the link leaves the panel out)."""
        return self._made("inference", "inference" in self.options.panels, lambda: InferenceView(state=self.state))

    def _deferred(self, name: str, what: str) -> pn.viewable.Viewable:
        """The card `name`, built when the page scrolls to it; the training card's plan and the inference card's
        figures first, off the event loop."""
        prepare = {"training": lambda: self.state.plan, "inference": lambda: self.state.serving}.get(name)
        return self._card(Deferred(lambda: getattr(self, name), f"{what} is built when you scroll to it…", prepare),
                          f"{name}-card")

    @classmethod
    def from_location(cls) -> Explorer:
        """The page for the current server session, configured by the address it was opened with.

        The query is read from the session's request as Tornado split it (`request.arguments`), never through
        `pn.state.location`: Panel's Location converts every value for which `str.isdigit()` holds with `int()`,
        which raises on "?T=²", "?B=①" or 4,300 digits before any notice could be shown. The arguments also
        survive a session that Bokeh re-creates when the page's websocket connects after the first was discarded
        (they travel in the session token); that request's path is the websocket's, ".../explorer/ws".
        """
        request = _session_request()
        if request is None:  # not served: a notebook or a script
            return cls(query="")
        arguments = getattr(request, "arguments", None) or {}
        path = str(getattr(request, "path", "") or "").removesuffix("/ws")
        href = f"{getattr(request, 'protocol', 'http')}://{getattr(request, 'host', '')}{path}"
        # Embedded with Bokeh's server_document, the page is the course page: leave its address alone.
        script_embed = "bokeh-autoload-element" in arguments
        explorer = cls(query=query_from_arguments(arguments), base=base_url(href), sync_url=not script_embed)
        if explorer.sync_url:
            pn.state.onload(explorer._sync_url)
        return explorer

    def servable(self, title: str | None = None, location: bool = False, area: str = "main",
                 target: str | None = None) -> pn.viewable.Viewable:
        """Serve the page as `served` makes it; without Panel's `Location` unless asked (the page keeps the
        address itself, and Location's int() conversion of the query raises on "?T=²", see `from_location`)."""
        return self.served().servable(title, location, area, target)

    def _repr_mimebundle_(self, include=None, exclude=None):
        """In a notebook: the page, with Panel's stylesheets kept inline in every update (`app.offline`)."""
        from .offline import offline

        return offline(self)._repr_mimebundle_(include, exclude)

    def query(self) -> str:
        """The query that reproduces the current view: "?B=8&T=1024&...". """
        return to_query(self.state.config, replace(self.options, dtype=self.state.dtype, expanded=self.state.expanded),
                        self.state.train, self.state.infer)

    def _sync_url(self, *_events) -> None:
        if self.sync_url:
            self._url.value = self.query()

    # --- layout ------------------------------------------------------------------------------------------------
    def _card(self, view, css_class: str) -> pn.viewable.Viewable:
        """`view` as a card: its own top model takes the card's looks and class (a Column around it was one more
        Bokeh model per card, issue 16)."""
        top = pn.panel(view)
        classes = list(dict.fromkeys([*top.css_classes, css_class]))
        top.param.update(styles={**top.styles, **CARD_STYLES}, css_classes=classes, sizing_mode="stretch_width",
                         margin=0)
        return top

    def _folded_card(self, view, css_class: str) -> pn.Column:
        """A fold (`pn.Card`) on the card's ground."""
        return pn.Column(view, styles=CARD_STYLES, sizing_mode="stretch_width", margin=0, css_classes=[css_class])

    def _header(self) -> pn.viewable.Viewable:
        return pn.pane.HTML(f'<h1>{TITLE}<span class="tag">{TAGLINE}</span></h1>'
                            f'<p class="what">{html.escape(WHAT_TO_DO)}</p>',
                            stylesheets=[HEADER_CSS], sizing_mode="stretch_width", margin=(0, 0, 2, 0))

    def _alert(self) -> pn.viewable.Viewable:
        dismiss = pn.widgets.Button(label="Dismiss", color="light", width=90, margin=(6, 0, 0, 0))
        box = pn.Column(pn.pane.HTML(notices_html(self.link_notices), stylesheets=[ALERT_CSS], margin=0,
                                     sizing_mode="stretch_width"), dismiss, sizing_mode="stretch_width", margin=0,
                        css_classes=["link-notices"])
        dismiss.on_click(lambda _: setattr(box, "visible", False))
        return box

    def __panel__(self) -> pn.viewable.Viewable:
        return self._page([*self._cards(), self._url])

    def served(self) -> pn.Column:
        """The page as a server sends it: its top column at once, holding only the hidden URL field, and the
        cards put in it on the document's next tick. The page's HTML goes out before that tick (it carries no
        models: the browser pulls the document over its websocket once BokehJS has loaded), so the server builds
        the cards while the browser loads BokehJS, not before the first byte (issue 16). Its <head> tells phones
        to use their own width (PAGE_HEAD). Not served: the page."""
        doc = served_document()
        if doc is None:
            return self.__panel__()
        doc.template = PAGE_HEAD
        page = self._page([self._url])
        doc.add_next_tick_callback(lambda: page.param.update(objects=[*self._cards(), self._url]))
        return page

    def _page(self, objects: list[pn.viewable.Viewable]) -> pn.Column:
        """The page's top column: its width, ground and stylesheet, around `objects`."""
        embed = self.options.embed
        page_styles = {"font-family": FONT, "color": INK, "gap": "12px", "box-sizing": "border-box",
                       "padding": "4px" if embed else "16px 18px 28px 18px", "max-width": "1360px",
                       "margin": "0 auto", "background": "transparent" if embed else PAGE}
        return pn.Column(*objects, sizing_mode="stretch_width", styles=page_styles, stylesheets=[PAGE_CSS],
                         css_classes=["explorer", "embed" if embed else "full"])

    def _cards(self) -> list[pn.viewable.Viewable]:
        """Everything the page shows, top to bottom."""
        embed = self.options.embed
        top: list[pn.viewable.Viewable] = []
        if not embed:
            top.append(self._header())
        if self.link_notices:
            top.append(self._alert())
        if self.options.controls:
            top.append(self._card(self.controls, "controls-card"))
        left = [self._card(self.shapes, "shapes-card")] if self.shapes else []
        right = [self._card(self.budget, "budget-card")] if self.budget else []
        if "tokens" in self.options.panels:
            right.append(self._deferred("tokens", "The tokens card"))
        if not embed:
            right.append(self._deferred("share", "The share and embed card"))
        columns = []
        if left:
            columns.append(pn.Column(*left, sizing_mode="stretch_width", margin=0,
                                     styles={"flex": "1 1 700px", "min-width": "0"}))
        if right:
            columns.append(pn.Column(*right, sizing_mode="stretch_width", margin=0,
                                     styles={"flex": "1 1 430px", "min-width": "0", "gap": "14px"}))
        main = wrap(*columns, gap="14px", align="flex-start")
        if self.values:  # full width under both columns: the heatmap beside its numbers
            main = pn.Column(main, self._folded_card(self.values, "values-card"), sizing_mode="stretch_width",
                             margin=0, styles={"gap": "14px"})
        below = [self._folded_card(self.recipe, "changes-card")] if self.recipe else []  # switches and buys
        below += [self._deferred("training", "The training run's card")] if "training" in self.options.panels else []
        below += [self._deferred("inference", "The inference card")] if "inference" in self.options.panels else []
        return [*top, main, *below]
