"""The example notebook (static/explorer.ipynb) in a real JupyterLab, driven by headless Chromium, offline.

A Jupyter server runs on 127.0.0.1 with a token, its notebook folder a temporary copy of the example (so the kernel
imports the installed `app` and `model`, not files beside it) and its configuration, runtime and settings folders
temporary too. Chromium opens the notebook and runs every cell; every request for anything outside this machine is
aborted and counted, and the count must be 0: the first render, the explorer's updates through the kernel after a
slider moves and after a field is set from Python, and the model layer's tables. Teardown stops the server's
process group and every kernel it started.

A second notebook checks a plain `pn.extension()` in a kernel with PANEL_INLINE=1 in its environment.
The screenshot of the explorer in JupyterLab is written to $NOTEBOOK_SHOT when that is set (for a person to look at).
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from appserver import free_port
from processes import stop_group
from model import PRESETS, budget
from model import units as fmt

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "static" / "explorer.ipynb"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
# JupyterLab's news prompt asks jupyter.org once the user agrees; say no in advance so the page stays quiet
NO_NEWS = {"@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"}}
KERNEL_IDLE_JS = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.status === 'idle';
}"""
# idle, and idle for the last QUIET_MS: a moved slider's figures are computed in the kernel after the first of its
# views has updated (a card not served computes at once), and a kernel shut down in the middle of that work, or while
# the page's replies to it are on their way, logs ipykernel's tracebacks (a closed socket, a closed event loop)
QUIET_MS = 2000
KERNEL_QUIET_JS = """(quiet) => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k) return false;
  if (k !== window.__watched) {
    window.__watched = k;
    window.__busyAt = Date.now();
    k.statusChanged.connect((_, status) => { if (status !== 'idle') window.__busyAt = Date.now(); });
  }
  if (k.status !== 'idle') window.__busyAt = Date.now();
  return Date.now() - window.__busyAt > quiet;
}"""


class Jupyter(str):
    """The server's base URL ("http://127.0.0.1:PORT"), with its token, notebook folder and log."""

    token: str
    root: Path
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _wait_ready(base: Jupyter, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}:\n{base.log()}")
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={base.token}", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"jupyter lab did not answer within {timeout:.0f} s:\n{base.log()}")


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory):
    """`jupyter lab` on 127.0.0.1 with a token, serving a copy of the example notebook; stopped with its kernels."""
    home = tmp_path_factory.mktemp("jupyter")
    notebooks = home / "notebooks"
    notebooks.mkdir()
    shutil.copy(NOTEBOOK, notebooks / NOTEBOOK.name)
    for name, settings in NO_NEWS.items():
        path = home / "settings" / name
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(settings))
    base = Jupyter(f"http://127.0.0.1:{free_port()}")
    base.token, base.root, base.log_path = os.urandom(16).hex(), notebooks, home / "server.log"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_DATA_DIR": str(home / "data"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython"),
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
           "PYTHONUNBUFFERED": "1"}
    env.pop("PANEL_INLINE", None)  # the notebook itself asks for inline resources
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser", "--allow-root",
           "--ip=127.0.0.1", f"--port={urlparse(base).port}", f"--IdentityProvider.token={base.token}",
           f"--ServerApp.root_dir={notebooks}", "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate"]
    with open(base.log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=notebooks, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        _wait_ready(base, proc)
        yield base
    finally:
        assert stop_group(proc) == [], "kernels left running"


@contextlib.contextmanager
def notebook_page(jupyter: Jupyter, chromium, name: str):
    """Open notebook `name` in JupyterLab and run all its cells; yield (page, outside), `outside` the requests for
    anything beyond this machine (aborted). Closed afterwards; the server must not have logged a traceback."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000}, service_workers="block")
    outside: list[str] = []

    def route(r) -> None:
        if urlparse(r.request.url).hostname in LOOPBACK:
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("websocket", lambda ws: None if urlparse(ws.url).hostname in LOOPBACK else outside.append(ws.url))
    try:
        # a workspace of its own: JupyterLab's default one reopens the notebooks an earlier test opened
        page.goto(f"{jupyter}/lab/workspaces/{Path(name).stem}/tree/{name}?token={jupyter.token}")
        page.wait_for_function(KERNEL_IDLE_JS, timeout=120_000)
        page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        yield page, outside
        page.wait_for_timeout(1000)  # late stylesheet or font requests of the last update
        assert outside == [], f"{len(outside)} requests left the machine: {outside[:6]}"
        page.wait_for_function(KERNEL_QUIET_JS, arg=QUIET_MS, polling=100, timeout=180_000)
        page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")  # its kernel, now
    finally:
        context.close()
    assert "Traceback" not in jupyter.log(), jupyter.log()


def test_notebook_runs_offline_in_jupyterlab(jupyter, chromium, tmp_path):
    """The example notebook, run all: the explorer shows N, follows a field set from Python and slider moves, the
    model layer's tables show; 0 requests outside the machine."""
    cfg = PRESETS["gpt2-small"]
    with notebook_page(jupyter, chromium, NOTEBOOK.name) as (page, outside):
        budget_card = page.locator(".budget-card")
        expect(budget_card).to_contain_text("N = 124,439,808", timeout=180_000)  # GPT-2 small, the lesson's figure
        shapes = page.locator("table.shapes")
        expect(shapes).to_contain_text("(8, 12, 256, 256)", timeout=60_000)  # explorer.state.T = 256, from Python
        outputs = page.locator(".jp-OutputArea")
        expect(outputs.last).to_contain_text("Real values of one forward pass at init", timeout=120_000)
        for text in ("Config(B=8, T=256, d=768, h=12, L=12", "One forward pass, shape by shape",
                     "Budget (FLOPs, not MACs", "Chinchilla"):
            expect(outputs.filter(has_text=text).first).to_be_attached()
        assert page.locator("[data-mime-type='application/vnd.jupyter.error']").count() == 0

        # every cell has run (the last one's real forward pass can keep a loaded kernel busy past the wait below)
        page.wait_for_function(KERNEL_IDLE_JS, timeout=180_000)
        page.locator(".slider-T .noUi-handle").press("ArrowLeft")  # through the kernel: T 256 -> 255
        expect(shapes).to_contain_text("(8, 12, 255, 255)", timeout=60_000)
        page.locator(".slider-L .noUi-handle").press("ArrowRight")  # L 12 -> 13: a new N
        expect(budget_card).to_contain_text(f"N = {fmt.thousands(budget(replace(cfg, L=13)).params_exact)}",
                                            timeout=30_000)
        expect(shapes).to_contain_text("× L = 13")

        page.locator(".shapes-card").first.scroll_into_view_if_needed()
        page.screenshot(path=os.environ.get("NOTEBOOK_SHOT") or str(tmp_path / "notebook.png"))


def test_plain_extension_offline_with_panel_inline(jupyter, chromium):
    """A plain `pn.extension()` in a kernel whose environment has PANEL_INLINE=1: the explorer renders and
    updates, 0 requests outside the machine (without it, BokehJS comes from cdn.bokeh.org)."""
    source = ['%env PANEL_INLINE=1', 'import panel as pn\n\npn.extension()', 'from app import Explorer\n\nExplorer()']
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": c}
             for c in source]
    nb = {"cells": cells, "metadata": json.loads(NOTEBOOK.read_text())["metadata"], "nbformat": 4, "nbformat_minor": 5}
    (jupyter.root / "plain.ipynb").write_text(json.dumps(nb))
    with notebook_page(jupyter, chromium, "plain.ipynb") as (page, outside):
        expect(page.locator(".budget-card")).to_contain_text("N = 124,439,808", timeout=180_000)
        page.wait_for_function(KERNEL_IDLE_JS, timeout=60_000)  # every cell has run: the output's comm is open
        page.locator(".slider-T .noUi-handle").press("ArrowLeft")
        expect(page.locator("table.shapes")).to_contain_text("(8, 12, 1023, 1023)", timeout=30_000)
