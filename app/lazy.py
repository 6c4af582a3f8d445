"""Cards built when a learner scrolls to them, one build at a time per process.

A card below the first screen costs a session nothing until the page shows it: `Deferred` lays out a light
placeholder holding `Reveal`, an ESM component (`pn.custom.JSComponent`) whose IntersectionObserver reports
when the placeholder comes within REVEAL_MARGIN of the viewport; the server then builds the card and puts it in
the placeholder's place. Builds go through `BUILDS`, which runs one at a time and hands the event loop back
between two, so a class whose pages all load at once still gets its key presses answered between builds
(Panel's `defer_load` built every deferred card at page load: a class of 10 went to a p95 of 3 s, issue 16).

Not served (a notebook, a test), a card is built at once.
"""
from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable

import panel as pn
import param
from panel.custom import JSComponent
from tornado.ioloop import IOLoop

from .background import closing, offload, served_document, worker_now

LOG = logging.getLogger(__name__)
REVEAL_MARGIN = "300px"  # build a card this far before it scrolls into view
ASK_AGAIN_S = 10  # a placeholder still shown this long after it asked asks again


class Reveal(JSComponent):
    """An empty element that counts up `asks` once it is within REVEAL_MARGIN of the viewport, and again every
    ASK_AGAIN_S for as long as it is shown (the card has not come: an ask lost, or a server slow to build)."""

    asks = param.Integer(default=0, doc="how many times the page has asked for the card")
    note = param.String(default="", doc="what the placeholder says until the card is built")

    _esm = f"""
export function render({{ model, el }}) {{
  el.innerHTML = `<p style="color:#6b7280;font-size:13px;margin:0">${{model.note}}</p>`;
  let again = null;
  const io = new IntersectionObserver((entries) => {{
    if (!entries.some((e) => e.isIntersecting)) return;
    io.disconnect();
    model.asks += 1;
    again = setInterval(() => {{ model.asks += 1; }}, {ASK_AGAIN_S * 1000});
  }}, {{ rootMargin: "{REVEAL_MARGIN}" }});
  io.observe(el);
  model.on("remove", () => {{ io.disconnect(); clearInterval(again); }});
}}
"""


class BuildQueue:
    """Runs card builds one at a time, each in its session's document lock, the event loop free between two.

    A build handed to a page that is closed before its tick comes never runs (Bokeh drops a destroyed document's
    callbacks): every WATCH_S the queue looks, and goes on past a closed page's build rather than wait for it, and
    past any build whose tick has not come in GIVE_UP_S (it still runs when its tick comes; the queue only spreads
    builds out, and must never hold the next page's card)."""

    WATCH_S = 2.0
    GIVE_UP_S = 6.0

    def __init__(self) -> None:
        self._waiting: collections.deque[tuple[object, Callable[[], bool], Callable[[], None]]] = collections.deque()
        self._running: object | None = None  # a token for the build handed to its page, until it is done

    @property
    def waiting(self) -> int:
        """How many builds wait for their turn."""
        return len(self._waiting)

    def submit(self, doc, build: Callable[[], None]) -> None:
        """Build in `doc` when the builds before it are done."""
        self._waiting.append((doc, closing(doc), build))
        if self._running is None:
            self._running = object()
            IOLoop.current().add_callback(self._next)

    def _next(self) -> None:
        while self._waiting:
            doc, closed, build = self._waiting.popleft()
            if closed():  # the page was closed while it waited
                continue
            token = self._running = object()

            def run(build=build) -> None:
                try:
                    build()
                finally:
                    self._done(token)

            doc.add_next_tick_callback(run)
            IOLoop.current().call_later(self.WATCH_S, self._watch, token, closed, time.monotonic())
            return
        self._running = None

    def _done(self, token: object) -> None:
        if self._running is token:
            self._running = object()
            IOLoop.current().add_callback(self._next)

    def _watch(self, token: object, closed: Callable[[], bool], handed: float) -> None:
        if self._running is not token:
            return
        if closed():  # its page was closed before the build ran: it never will
            self._done(token)
        elif (waited := time.monotonic() - handed) > self.GIVE_UP_S:
            LOG.warning("a card's build waited %.1f s for its page's tick; the next page's build goes first", waited)
            self._done(token)
        else:
            IOLoop.current().call_later(self.WATCH_S, self._watch, token, closed, handed)


BUILDS = BuildQueue()


class Deferred(pn.viewable.Viewer):
    """`build()`'s view, made when the page scrolls to it (served) or at once (not served). `prepare()`, if
    given, computes its figures first, in a worker thread (`app.background`), so the build finds them made."""

    def __init__(self, build: Callable[[], pn.viewable.Viewable], placeholder: str,
                 prepare: Callable[[], object] | None = None, **params) -> None:
        super().__init__(**params)
        self._build, self._prepare = build, prepare
        self._placeholder = placeholder
        self._box: pn.Column | None = None
        self._doc = None  # the served page's document, once laid out
        self._asked: float | None = None  # when the page first asked for the card

    def _unbuilt(self) -> bool:
        """Its placeholder is still shown: laid out on a served page, the card not built yet."""
        return self._box is not None and isinstance(self._box.objects[0], Reveal)

    def _reveal(self, event: param.parameterized.Event) -> None:
        if not (event.new and self._unbuilt()):
            return  # built already
        if self._asked is None:
            self._asked = time.monotonic()
        else:
            LOG.warning("a page asked again for a card not built %.1f s after its first ask (%s; worker %s, "
                        "%d builds waiting); asked once more", time.monotonic() - self._asked,
                        self._placeholder, worker_now(), BUILDS.waiting)
        doc = self._doc  # the page that laid it out (pn.state.curdoc may be another's in a watcher)
        if self._prepare is None:
            BUILDS.submit(doc, self._fill)
        else:  # its figures first, off the event loop; then the card, from them (app.background)
            offload(self._prepare, lambda _: BUILDS.submit(doc, self._fill), doc=doc)

    def _fill(self) -> None:
        if self._unbuilt():  # not built by an earlier ask
            self._box.objects = [self._build()]

    def __panel__(self) -> pn.viewable.Viewable:
        self._doc = served_document()
        if self._doc is None:
            return self._build()
        reveal = Reveal(note=self._placeholder, sizing_mode="stretch_width", margin=0)
        reveal.param.watch(self._reveal, ["asks"])
        self._box = pn.Column(reveal, sizing_mode="stretch_width", margin=0)
        return self._box
