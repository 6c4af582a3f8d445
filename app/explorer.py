"""Entry point: `panel serve app/explorer.py` serves the explorer at http://localhost:5006/explorer.

Each browser session gets its own `Explorer`, configured by the address it was opened with
(`?B=8&T=1024&d=768&h=12&L=12&V=50257&T_max=1024&tie=1`, `?preset=gpt3-175b`, `?embed=1&controls=T,d`).
In a notebook use `from app import Explorer; Explorer()` instead.
"""
from __future__ import annotations

import asyncio
import gc
import logging
import os

import panel as pn
from panel.io.resources import get_dist_path

from app.page import TITLE, Explorer
from app.styles import PAGE
from model import symbolic


def create_app() -> Explorer:
    """The explorer for the current session."""
    return Explorer.from_location()


def keep_stylesheets_on_this_server() -> None:
    """Point the session's Panel stylesheets at this server for every way a session starts, not just one.

    Panel's components name their stylesheets by CDN address (cdn.holoviz.org/panel/...) and rewrite them to
    the server's static/extensions/panel/ from the document's `dist_url` template variable, which Panel sets
    only while rendering the HTML page (`server_html_page_for_session`). A session made without that page kept
    the CDN addresses: one Bokeh re-creates when the page's websocket connects after its session was discarded
    (a slow load, a busy server, `--num-procs` sending the websocket to another process), and one made for
    `server_document`'s autoload.js. Set before the page is built, every component's model is made with
    local addresses. `get_dist_path` is Panel's own choice of address: relative to the page, absolute where
    Panel knows the server's address (autoload.js), and the CDN only if `BOKEH_RESOURCES=cdn` asks for it.
    """
    pn.state.curdoc.template_variables["dist_url"] = get_dist_path()


def one_theme() -> None:
    """Give the session Panel's default theme, so that Panel never reads `?theme=` from the link.

    Without a theme set, Panel takes it from the query while the page is built and decodes it as UTF-8:
    `?theme=%FF` raised UnicodeDecodeError (no page), and `?theme=dark` darkened the page while its notice says
    the key was ignored. Set in a session, `pn.config.theme` holds for that session only.
    """
    pn.config.theme = "default"


def freeze_startup_heap() -> None:
    """Once per process, before the first page is built: move every object alive now (torch, the model, Panel,
    Bokeh: millions of objects that live as long as the process) out of the garbage collector's sight.

    A full collection traverses every tracked object. Panel runs one after each closed session, and Python one
    whenever enough allocations pile up, which building a page does: with the start-up heap traversed each time,
    these collections were a fifth of the server's time to open a page (py-spy, issue 16). Frozen objects are
    never collected, so this runs once, while the heap holds no session yet (`gc.get_freeze_count()` says it ran);
    it does not collect first (a full collection here took seconds off the first page under load).
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()


def _closed_page_write(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The event loop's exception handler: a write to a page that has just closed is one warning line, not a
    traceback; everything else goes to asyncio's default handler."""
    from tornado.iostream import StreamClosedError
    from tornado.websocket import WebSocketClosedError

    if isinstance(context.get("exception"), (WebSocketClosedError, StreamClosedError)):
        logging.getLogger("app.explorer").warning("a page closed while the server was writing to it; nothing sent")
    else:
        loop.default_exception_handler(context)


def quiet_closed_pages() -> None:
    """Once per process: a page closed while an update to it was on its way logs one line, not a traceback.

    Panel writes an update for a page straight to its websocket and awaits the writes in a task of its own
    (`panel.io.document.unlocked`), where it catches a closed connection and logs a warning. When the session is
    discarded first (the page closed mid-update), that task never runs, and asyncio reports the writes'
    `WebSocketClosedError` as "Task exception was never retrieved" with a traceback: harmless (there is no page
    to update), but it reads like a crash in the server's log. Other unretrieved exceptions keep their traceback.
    """
    loop = asyncio.get_event_loop()
    if loop.get_exception_handler() is not _closed_page_write:
        loop.set_exception_handler(_closed_page_write)


if pn.state.served:
    # a class moving B and T shares one symbolic pass per architecture (model.symbolic); =off: real passes only
    symbolic.enable(os.environ.get("TRANSFORMER_SHAPES_SYMBOLIC", "on") != "off")
    quiet_closed_pages()
    freeze_startup_heap()
    keep_stylesheets_on_this_server()
    one_theme()
    # The full page sits on a light grey; an embedded view stays transparent over its course page.
    pn.extension(raw_css=[f"body {{ margin: 0; }} body:has(.full) {{ background: {PAGE}; }}"], notifications=False)
    create_app().servable(title=TITLE)
