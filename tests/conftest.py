"""Shared fixtures. Browser tests use Debian's Chromium through Playwright (no browser download here)."""
from __future__ import annotations

import os

import pytest

from appserver import CHROMIUM, CHROMIUM_ARGS, serve_app
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
