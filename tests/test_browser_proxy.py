"""Past one machine: nginx (Debian's package) in front of two `panel serve` processes with signed sessions, run
from the instructors' recipe (docs/instructors.md, static/nginx-explorer.conf, only its ports changed).

Real Chromium pages, each with its own cookies as separate learners have, open through the proxy, move a slider
and see the shapes table change; every request to another host is blocked and counted (must be 0). Sticky
sessions: each page makes exactly one session, on one server (a page whose websocket reached the other server
would make a second one there), and the pages spread over both servers. A made-up session id is refused at the
page (403) and at the websocket, and a websocket from an origin not on the allow-list is refused.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import pytest
from bokeh.util.token import generate_jwt_token
from playwright.sync_api import expect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from appserver import ROOT, Served, alive, free_port, group, http_status, secret_key, serve_app, spawn, stop_group, wait_ready
from pagetools import reveal, watch_errors, watch_outside

pytestmark = pytest.mark.browser
NGINX = os.environ.get("NGINX", "/usr/sbin/nginx")
SITE = ROOT / "static" / "nginx-explorer.conf"
TOKEN = re.compile(r'"token":"([^"]+)"')
# a made-up token refused at the websocket: Bokeh raises ProtocolError in `open`, which Tornado logs with a traceback
REFUSED_WS = re.compile(r"Uncaught exception GET /explorer/ws .*?ProtocolError: Invalid token signature\n", re.S)


def site_conf(listen: int, servers: tuple[int, int]) -> str:
    """The instructors' site configuration (docs/instructors.md), listening on 127.0.0.1:`listen`, proxying to `servers` on 127.0.0.1."""
    text = SITE.read_text()
    for old, new in (("listen 80;", f"listen 127.0.0.1:{listen};"),
                     ("server 127.0.0.1:5006;", f"server 127.0.0.1:{servers[0]};"),
                     ("server 127.0.0.1:5007;", f"server 127.0.0.1:{servers[1]};")):
        assert text.count(old) == 1, f"{SITE} no longer has exactly one {old!r}"
        text = text.replace(old, new)
    return text


@contextlib.contextmanager
def nginx(site: str) -> Iterator[tuple[str, list]]:
    """nginx in the foreground with its own prefix in a temporary folder (pid, logs, temp files); yields (its
    log, the processes of its group) and stops the group (master and workers)."""
    if not os.path.exists(NGINX):
        pytest.fail(f"{NGINX} not found: run `make test`, which installs Debian's nginx")
    with tempfile.TemporaryDirectory() as tmp:
        prefix = Path(tmp)
        prefix.chmod(0o755)  # run as root, nginx's workers run as nobody and must reach their temp folders
        (prefix / "site.conf").write_text(site)
        (prefix / "nginx.conf").write_text(f"""
daemon off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    include {prefix}/site.conf;
}}
""")
        log = prefix / "nginx.out"
        proc = spawn([NGINX, "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(prefix / "nginx.conf")],
                     log)
        try:
            url = re.search(r"listen (\S+);", site).group(1)
            wait_ready(f"http://{url}/explorer", proc, log)
            yield (prefix / "error.log").read_text, group(proc.pid)
        finally:
            stop_group(proc)


@dataclass
class Proxy:
    base: str  # "http://127.0.0.1:PORT", nginx
    servers: tuple[Served, Served]
    processes: list  # every process of the three groups, checked gone afterwards

    def sessions(self) -> tuple[int, int]:
        return tuple(s.sessions_launched() for s in self.servers)


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    port = free_port()
    public = f"127.0.0.1:{port}"
    env = {"BOKEH_SECRET_KEY": secret_key(), "PANEL_LOG_LEVEL": "info"}  # one key: each accepts the other's ids
    args = ("--allow-websocket-origin", public, "--use-xheaders", "--unused-session-lifetime", "60000")
    with serve_app(args, env=env) as a, serve_app(args, env=env) as b:
        site = site_conf(port, (urlparse(a).port, urlparse(b).port))
        with nginx(site) as (error_log, nginx_procs):
            processes = [*nginx_procs, *group(a.pid), *group(b.pid)]
            yield Proxy(f"http://{public}", (a, b), processes)
            failed = [line for line in error_log().splitlines() if re.search(r"\[(error|crit|alert|emerg)\]", line)
                      and "while proxying upgraded connection" not in line]  # a websocket reset, by the refusals
            assert failed == [], error_log()
        for s in (a, b):
            log = REFUSED_WS.sub("", s.log())  # the refusals this module provokes; nothing else may fail
            assert "Traceback" not in log and "ERROR" not in log and "Uncaught" not in log, log
    assert alive(processes) == []


def test_nginx_recipe_is_the_readme_one():
    page = (ROOT / "docs" / "instructors.md").read_text()
    assert SITE.read_text().strip() in page, "docs/instructors.md must show static/nginx-explorer.conf"


def test_pages_through_the_proxy_stick_to_one_server_spread_and_fetch_nothing_outside(chromium, proxy):
    """Pages open in fresh browser contexts (each learner their own cookies) until both servers have served one."""
    before = proxy.sessions()

    def per_server() -> list[int]:
        return [n - b for n, b in zip(proxy.sessions(), before)]

    pages = 0
    while pages < 12 and 0 in per_server():
        T = 200 + pages
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            errors = watch_errors(page)
            outside = watch_outside(page, {proxy.base.removeprefix("http://")})
            page.goto(f"{proxy.base}/explorer?T={T}")
            table = page.locator("table.shapes")
            expect(table).to_contain_text(f"(8, 12, {T}, {T})", timeout=60_000)
            page.locator(".slider-T .noUi-handle").press("ArrowLeft")
            expect(table).to_contain_text(f"(8, 12, {T - 1}, {T - 1})")
            reveal(page, ".share-card")
            expect(page.locator(".share-link input")).to_have_value(re.compile(
                re.escape(f"{proxy.base}/explorer?B=8&T={T - 1}&")))  # the address the learner used
            assert outside == [] and errors == []
            assert len(context.cookies()) == 1 and context.cookies()[0]["name"] == "explorer_server"
        finally:
            context.close()
        pages += 1
        assert sum(per_server()) == pages, f"{per_server()} sessions for {pages} pages: a page's websocket reached " \
                                           "the other server"
    assert 0 not in per_server(), f"{pages} pages all went to one server"


def test_a_made_up_session_id_is_refused(chromium, proxy):
    page = chromium.new_page()
    try:
        response = page.goto(f"{proxy.base}/explorer?bokeh-session-id=abc")
        assert response.status == 403
        expect(page.locator("table.shapes")).to_have_count(0)
    finally:
        page.close()
    assert http_status(f"{proxy.base}/explorer?bokeh-session-id=abc") == 403
    assert http_status(f"{proxy.base}/explorer") == 200


def websocket_answers(proxy: Proxy, token: str, origin: str) -> bool:
    """True if the explorer's websocket, opened through the proxy with `token` from `origin`, acknowledges it
    (Bokeh's first message, ACK); False if the handshake is refused or the connection closed."""
    ws_url = proxy.base.replace("http://", "ws://") + "/explorer/ws"
    try:
        with connect(ws_url, subprotocols=["bokeh", token], origin=origin, open_timeout=30) as ws:
            return json.loads(ws.recv(timeout=30))["msgtype"] == "ACK"  # the header of Bokeh's first message
    except (ConnectionClosed, InvalidStatus):
        return False


def test_the_websocket_refuses_made_up_tokens_and_other_origins(proxy):
    with urllib.request.urlopen(f"{proxy.base}/explorer", timeout=30) as r:
        token = TOKEN.search(r.read().decode()).group(1)  # a real, signed token made for this page
    assert websocket_answers(proxy, token, proxy.base)
    assert not websocket_answers(proxy, token, "http://elsewhere.example")  # not on --allow-websocket-origin
    assert not websocket_answers(proxy, generate_jwt_token("abc", signed=False), proxy.base)
