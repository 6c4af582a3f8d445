"""Nothing from outside the server: every script and stylesheet a page loads comes from the explorer's own server,
also when Bokeh re-creates the page's session and when the view is embedded with `server_document`.

Every request to another host is blocked and counted (Playwright routing); the count must be 0. Before the fix,
a session that Bokeh re-created because the page's websocket connected after the session was discarded (a slow
load, a busy server, `--num-procs` sending the websocket to another process) pointed its stylesheets at
cdn.holoviz.org: 6 requests per page, and 4 for a `server_document` embed. Re-creation is forced here by
delaying BokehJS by 10 s against a server that discards unused sessions after 6 s, and counted from Panel's log
("Session … launching" once per session made: more launches than pages opened means re-created sessions).
"""
from __future__ import annotations

import contextlib
import functools
import http.server
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest
from bokeh.embed import server_document
from playwright.sync_api import expect

from appserver import free_port, serve_app
from pagetools import reveal, watch_errors, watch_outside

pytestmark = pytest.mark.browser
LATE = ("--unused-session-lifetime", "6000", "--check-unused-sessions", "500")  # discard a session 6 s unused
DELAY_S = 10  # BokehJS arrives after its session was discarded: the websocket finds none, Bokeh re-creates it
LESSON = "<!doctype html><html><head><title>Lesson</title></head><body><h1>Lesson</h1>{script}</body></html>"


@contextlib.contextmanager
def serve_logged(extra_args: tuple[str, ...]):
    """The explorer as `make run` serves it, plus `extra_args`, with Panel's session log (INFO) in its log."""
    with serve_app(extra_args, env={"PANEL_LOG_LEVEL": "info"}) as base:
        yield base
        log = base.log()
        assert "Traceback" not in log and "ERROR" not in log, log


@contextlib.contextmanager
def course_site():
    """A plain static site on another origin of this machine (a loopback one: Chromium lets only such pages reach
    localhost), serving lesson.html; yields (origin "127.0.0.1:PORT", folder to write pages into)."""
    with tempfile.TemporaryDirectory() as folder:
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
        handler.log_message = lambda *args: None
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"127.0.0.1:{httpd.server_address[1]}", Path(folder)
        finally:
            httpd.shutdown()
            httpd.server_close()


@pytest.fixture(scope="module")
def course():
    with course_site() as site:
        yield site


@pytest.fixture(scope="module")
def late_server(course):
    """A server that discards unused sessions after 6 s and accepts websockets from the course site."""
    origin, _ = course
    with serve_logged((*LATE, "--allow-websocket-origin", origin)) as base:
        yield base


def open_counting(browser, server, query: str, delay_bokehjs: float = 0):
    """Open the explorer at `query`, counting requests that leave the server; return (page, outside, errors)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = watch_errors(page)
    local: list[str] = []
    page.on("request", lambda r: local.append(r.url) if "/static/extensions/panel/" in r.url else None)
    outside = watch_outside(page, {urlparse(server).netloc}, delay_bokehjs)
    page.goto(f"{server}/explorer{query}", wait_until="commit")
    page.locator("table.shapes").wait_for(timeout=60_000)
    page.wait_for_load_state("load")
    assert any(u.split("?")[0].endswith(".css") for u in local)  # Panel's stylesheets came, from this server
    return page, outside, errors


def test_a_normal_page_loads_nothing_from_outside(chromium, late_server):
    launched = late_server.sessions_launched()
    page, outside, errors = open_counting(chromium, late_server, "?T=77")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 77, 77)")
    page.close()
    assert outside == [] and errors == []
    assert late_server.sessions_launched() - launched == 1  # its own session, not re-created


def test_a_recreated_session_loads_nothing_from_outside_and_keeps_its_link(chromium, late_server):
    launched = late_server.sessions_launched()
    page, outside, errors = open_counting(chromium, late_server, "?T=%C2%B2&d=512&h=8", delay_bokehjs=DELAY_S)
    assert late_server.sessions_launched() - launched == 2  # the page's session, and the one re-created for it
    expect(page.locator("table.shapes")).to_contain_text("(8, 8, 1024, 1024)")  # d and h from the link
    expect(page.locator(".link-notices")).to_contain_text('T="²" is not a whole number')
    # the re-created session's request is the websocket's (/explorer/ws): links still name the page
    reveal(page, ".share-card")
    expect(page.locator(".share-link input")).to_have_value(
        f"{late_server}/explorer?B=8&T=1024&d=512&h=8&L=12&V=50257&T_max=1024&tie=1")
    page.close()
    assert outside == [] and errors == []


@pytest.mark.parametrize("delay_bokehjs", [0, DELAY_S], ids=["embed", "embed-recreated"])
def test_a_server_document_embed_loads_nothing_from_outside(chromium, late_server, course, delay_bokehjs):
    origin, folder = course
    script = server_document(f"{late_server}/explorer",
                             arguments={"embed": "1", "controls": "T", "panels": "shapes", "T": "256"})
    (folder / "lesson.html").write_text(LESSON.format(script=script))
    launched = late_server.sessions_launched()
    page = chromium.new_page()
    outside = watch_outside(page, {urlparse(late_server).netloc, origin}, delay_bokehjs)
    page.goto(f"http://{origin}/lesson.html")
    expect(page.locator("table.shapes")).to_contain_text("(8, 12, 256, 256)", timeout=60_000)
    expect(page.locator(".slider-T")).to_have_count(1)
    page.close()
    assert outside == []
    assert late_server.sessions_launched() - launched == (2 if delay_bokehjs else 1)


def test_num_procs_2_loads_nothing_from_outside(chromium):
    """With two processes a page's websocket often reaches the process that did not make its session, which then
    re-creates it. Pages are opened until that has happened (about every other page; at most 10)."""
    with serve_logged(("--num-procs", "2")) as base:
        pages = 0
        launched = base.sessions_launched()
        outside: list[str] = []
        while pages < 10 and base.sessions_launched() - launched <= pages:
            page, out, errors = open_counting(chromium, base, f"?T={100 + pages}")
            expect(page.locator("table.shapes")).to_contain_text(f"(8, 12, {100 + pages}, {100 + pages})")
            page.close()
            outside += out
            assert errors == []
            pages += 1
        assert base.sessions_launched() - launched > pages, "no websocket reached the other process in 10 pages"
        assert outside == []
