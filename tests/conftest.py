"""Shared fixtures. Browser tests use Debian's Chromium through Playwright (no browser download here)."""
from __future__ import annotations

import os

import pytest

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"]


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
