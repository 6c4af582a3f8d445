"""The servers the tests start, and `make run`'s: a stopped server leaves no process behind, and sessions are signed.

A server runs in its own process group and is stopped with the whole group (tests/appserver.py). Before that,
stopping `panel serve --num-procs 2` ended only the parent: its two forked workers were found after the suite,
orphaned and still serving.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest
from bokeh.embed import server_document

from appserver import alive, free_port, group, http_status, serve_app, spawn, stop_group, wait_ready

pytestmark = pytest.mark.browser  # starts servers


def test_a_stopped_server_leaves_none_of_its_workers():
    with serve_app(("--num-procs", "2")) as base:
        server = psutil.Process(base.pid)
        tree = [server, *server.children(recursive=True)]
        assert len(alive(tree)) == 3, "panel serve --num-procs 2: the parent and two forked workers"
        assert http_status(base + "/explorer") == 200
    assert alive(tree) == []
    with pytest.raises(OSError):
        urllib.request.urlopen(base + "/explorer", timeout=5)


def test_stop_group_kills_a_process_that_ignores_sigterm():
    script = "import signal, subprocess, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); print('up', flush=True); " \
             "time.sleep(600)"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log"
        proc = spawn([sys.executable, "-c", script], log)
        while "up" not in log.read_text():
            assert proc.poll() is None
        members = group(proc.pid)
        assert len(members) == 2  # the process and its child
        stop_group(proc, timeout=1)
    assert alive(members) == [] and proc.returncode == -9


def test_make_run_refuses_a_made_up_session_id():
    """`make run` signs session ids: a link with ?bokeh-session-id=abc gets 403 instead of a session that anyone
    opening the same link would share."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "BOKEH_SECRET_KEY"}  # make run makes its own key
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "make.log"
        venv = Path(sys.executable).parents[1]  # this one, installed already: -o skips the install step
        proc = spawn(["make", "--no-print-directory", "-o", f"{venv}/.installed", "run", f"PORT={port}",
                      f"VENV={venv}"], log, env)
        try:
            wait_ready(f"http://localhost:{port}/explorer", proc, log)
            assert http_status(f"http://localhost:{port}/explorer?bokeh-session-id=abc") == 403
            assert http_status(f"http://localhost:{port}/explorer?T=5") == 200
        finally:
            stop_group(proc)


def _make_run(port: int, *options: str) -> tuple[subprocess.Popen, Path, tempfile.TemporaryDirectory]:
    """`make run` with these options, on this checkout's virtual environment (installed: -o skips the step)."""
    env = {k: v for k, v in os.environ.items() if k != "BOKEH_SECRET_KEY"}
    venv = Path(sys.executable).parents[1]
    tmp = tempfile.TemporaryDirectory()
    log = Path(tmp.name) / "make.log"
    proc = spawn(["make", "--no-print-directory", "-o", f"{venv}/.installed", "run", f"PORT={port}", f"VENV={venv}",
                  *options], log, env)
    return proc, log, tmp


@pytest.mark.parametrize("allow", [False, True], ids=["without-ORIGIN", "with-ORIGIN"])
def test_make_run_serves_a_class_on_the_rooms_network(chromium, allow):
    """`make run ADDRESS=… ORIGIN=…`: the explorer at the address students type is live (a page and its iframes are
    the server's own origin), and a course page on another site embeds it with `server_document` only when ORIGIN
    names that site. 127.0.0.2, a loopback address, stands for the machine's address on the room's network."""
    from test_browser_offline import LESSON, course_site

    port = free_port()
    host = f"127.0.0.2:{port}"
    with course_site() as (site, folder):
        proc, log, tmp = _make_run(port, "ADDRESS=127.0.0.2", *([f"ORIGIN={site}"] if allow else []))
        page = chromium.new_page()
        try:
            wait_ready(f"http://{host}/explorer", proc, log)
            page.goto(f"http://{host}/explorer?T=64")
            page.locator("table.shapes").first.wait_for(timeout=60_000)
            assert "(8, 12, 64, 64)" in page.locator("table.shapes").first.inner_text()
            script = server_document(f"http://{host}/explorer", arguments={"embed": "1", "panels": "shapes", "T": "32"})
            (folder / "lesson.html").write_text(LESSON.format(script=script))
            page.goto(f"http://{site}/lesson.html")
            if allow:
                page.locator("table.shapes").first.wait_for(timeout=60_000)
                assert "(8, 12, 32, 32)" in page.locator("table.shapes").first.inner_text()
            else:
                deadline = time.monotonic() + 30
                while "Refusing websocket connection from Origin" not in log.read_text() and time.monotonic() < deadline:
                    time.sleep(0.2)
                assert f"Refusing websocket connection from Origin 'http://{site}'" in log.read_text()
                assert page.locator("table.shapes").count() == 0
        finally:
            page.close()
            stop_group(proc)
            tmp.cleanup()
