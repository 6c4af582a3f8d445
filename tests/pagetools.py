"""Helpers for the browser tests: open explorer pages and collect every console error and page error."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlparse



@dataclass
class Opened:
    """A page and the errors its console and scripts reported."""

    page: object
    errors: list[str] = field(default_factory=list)


def watch_errors(page) -> list[str]:
    """Collect console errors and uncaught exceptions of `page` (and its frames) into a list."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    return errors


def watch_outside(page, own: set[str], delay_bokehjs: float = 0) -> list[str]:
    """Block every request `page` makes to a host:port not in `own` and list it; optionally delay bokeh.min.js."""
    outside: list[str] = []

    def handle(route):
        url = route.request.url
        if urlparse(url).netloc not in own:
            outside.append(url)
            return route.abort()
        if delay_bokehjs and urlparse(url).path.endswith("/bokeh.min.js"):
            time.sleep(delay_bokehjs)
        return route.continue_()

    page.route("**/*", handle)
    return outside


def open_explorer(browser, base: str, query: str = "", width: int = 1280, height: int = 800) -> Opened:
    """Open the explorer at `query` and wait until the page has rendered its first view."""
    page = browser.new_page(viewport={"width": width, "height": height})
    opened = Opened(page, watch_errors(page))
    page.goto(f"{base}/explorer{query}")
    page.locator(".control, table.shapes, .budget-card").first.wait_for(timeout=60_000)
    page.wait_for_function("() => window.Bokeh && Bokeh.documents.length > 0")
    return opened


def reveal(page, card: str) -> None:
    """Scroll to a card that the page builds when it comes into view (app.lazy: tokens, share, training)."""
    from playwright.sync_api import expect

    page.locator(card).first.scroll_into_view_if_needed()
    expect(page.locator(card).first).not_to_contain_text("is built when you scroll to it", timeout=30_000)


def run_cli(argv: list[str], capsys, columns: int | None = None) -> tuple[int, str, str]:
    """`python -m model ARGV` in-process: (exit status, stdout, stderr); a normal return counts as status 0.
    `columns`: the terminal width it is given (COLUMNS); None, as a file or a pipe: full lines."""
    import os

    import pytest

    from model.cli import main

    saved = os.environ.pop("COLUMNS", None)
    if columns is not None:
        os.environ["COLUMNS"] = str(columns)
    try:
        with pytest.raises(SystemExit) as exc:
            main(argv)
            raise SystemExit(0)
    finally:
        os.environ.pop("COLUMNS", None)
        if saved is not None:
            os.environ["COLUMNS"] = saved
    out, err = capsys.readouterr()
    return exc.value.code, out, err
