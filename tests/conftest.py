"""Shared fixtures. Browser tests use Debian's Chromium through Playwright (no browser download here)."""
from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import sys
import tempfile

import psutil
import pytest

from appserver import CHROMIUM, CHROMIUM_ARGS, alive, serve_app
from pagetools import open_explorer


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium for the whole run; tests open their own pages (`chromium.new_page()`)."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} not found: run `make test`, which installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def server():
    """One `panel serve app/explorer.py` on a free port for all browser tests; none may make it log an error."""
    with serve_app() as base:
        yield base
        log = base.log()
        assert "Traceback" not in log and "ERROR" not in log, log


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test's report ends with its server's last log lines (what the server saw, for a CI run)."""
    report = yield
    served = getattr(item, "funcargs", {}).get("server")
    if report.failed and served is not None:
        report.sections.append(("the server's last log lines", "\n".join(served.log().splitlines()[-40:])))
    return report


def pytest_configure(config):
    """Make this process the subreaper of everything the tests start (Linux): a process orphaned by its parent's
    exit (a forked worker, a browser's helper) becomes its child instead of init's, so the check below sees it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    # The exported page's disk cache (app.export.cache): a fresh one per run, shared by the processes it starts
    # (pytest-xdist's workers inherit the controller's folder through the environment).
    if hasattr(config, "workerinput"):
        return
    config._export_cache = tempfile.mkdtemp(prefix="export-cache-")
    os.environ["TRANSFORMER_SHAPES_CACHE"] = config._export_cache


def pytest_unconfigure(config):
    shutil.rmtree(getattr(config, "_export_cache", ""), ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    """Every test stops what it starts: after the last fixture, no process the run started may still be running
    (10 s of grace: a closed Chromium's crash handlers end shortly after it)."""
    left = alive(psutil.wait_procs(alive(psutil.Process().children(recursive=True)), timeout=10)[1])
    if left:
        names = ", ".join(f"{p.pid} {' '.join(p.cmdline()[:4])}" for p in left)
        for p in left:
            p.kill()
        print(f"\nthe tests left {len(left)} process(es) running (now killed): {names}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The files that take longest, longest first (`make test --durations` lists them): `make test` runs them first, so
# that two workers taking whole files (`--dist loadfile --no-loadscope-reorder`) end together instead of one of them
# running test_wheel.py alone at the end, where xdist's own order (by number of tests) put it
SLOW_FIRST = ("test_app_views.py", "test_hf.py", "test_export_mla.py", "test_wheel.py", "test_export_recipe.py",
              "test_export_window.py", "test_export.py", "test_training.py", "test_export_hybrid.py", "test_kda.py",
              "test_browser_fused.py", "test_symbolic.py", "test_browser_screens.py", "test_recipe.py",
              "test_export_dsa.py", "test_browser_inference.py", "test_export_mamba.py", "test_export_kda.py",
              "test_mla.py", "test_browser_offline.py", "test_servers.py", "test_browser_embed.py",
              "test_browser_recipe.py", "test_notebook.py", "test_families.py", "test_export_moe.py",
              "test_export_jamba.py", "test_nope.py", "test_gemma4.py", "test_browser_explorer.py")


def pytest_collection_modifyitems(items):
    """The files of SLOW_FIRST first, in its order; the others after them as collected (each file's tests in order)."""
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from the current output")


@pytest.fixture
def golden(request):
    """Compare text with tests/golden/NAME, or rewrite it with --update-golden."""
    from pathlib import Path

    update = request.config.getoption("--update-golden")

    def check(name: str, actual: str) -> None:
        path = Path(__file__).parent / "golden" / name
        if update or not path.exists():
            if not update:
                pytest.fail(f"{path} is missing: run pytest --update-golden and review the new file")
            path.write_text(actual, encoding="utf-8")
        assert actual == path.read_text(encoding="utf-8"), f"output differs from {path} (pytest --update-golden rewrites it)"

    return check


@pytest.fixture
def explorer(chromium, server):
    """open(query, width, height) -> page; at the end, every opened page must have logged no error."""
    opened = []

    def _open(query: str = "", width: int = 1280, height: int = 800):
        o = open_explorer(chromium, server, query, width, height)
        opened.append(o)
        return o.page

    yield _open
    for o in opened:
        o.page.close()
    assert [e for o in opened for e in o.errors] == []
