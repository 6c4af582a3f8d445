"""Offline in a notebook: Panel's own stylesheets inlined for good, not only in the first render.

With `pn.extension(inline=True)` (or `PANEL_INLINE=1` in the kernel's environment, which makes a plain
`pn.extension()` inline) Panel puts BokehJS and its own scripts into the notebook, and inlines the stylesheets
of the first render. But a pane whose content changes later (`html_pane.object = ...`, as the explorer's cards
do on every move) is sent all its properties again, its stylesheets as Panel's cached `ImportedStyleSheet`s
addressed to cdn.holoviz.org (css/loading.css, theme/default.css, theme/native.css): offline, each update of
such a pane asked the CDN three times and lost those styles.

`offline(view)` fixes it in two steps. Bokeh's resources setting is made "inline" (what `pn.extension(inline=True)`
asks for), so that Panel names a stylesheet in an update as it did in the first render instead of by the
server's relative path; and `inline_panel_stylesheets` runs as a preprocessing hook of the rendered view
(before Panel's own inlining) and points each of those stylesheet models at a `data:` URL holding the file from
Panel's installed `dist/`. They are the instances Panel caches per document and re-sends with every update, so
no update asks for anything outside the machine. Panel has no public option for this; `hooks=` is the
constructor argument through which Panel applies its own designs, used in this one place, and
tests/test_notebook.py counts the requests of a notebook in Chromium.
"""
from __future__ import annotations

import base64
import functools
import re
from pathlib import Path

import panel as pn
from bokeh.models import ImportedStyleSheet
from bokeh.settings import settings
from panel.io.resources import CDN_DIST, DIST_DIR

ASSET = re.compile(r"url\(['\"]?\.\./assets/([\w.-]+\.svg)['\"]?\)")


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@functools.lru_cache(maxsize=64)
def inlined(path: Path) -> str | None:
    """A file of Panel's dist/ as a data: URL (its ../assets/*.svg spinners inlined too); None if absent."""
    if not path.is_file():
        return None
    css = path.read_text(encoding="utf-8")
    css = ASSET.sub(lambda m: f"url('{data_url((DIST_DIR / 'assets' / m[1]).read_bytes(), 'image/svg+xml')}')"
                    if (DIST_DIR / "assets" / m[1]).is_file() else m[0], css)
    return data_url(css.encode("utf-8"), "text/css")


def inline_panel_stylesheets(_viewable, root) -> None:
    """Preprocessing hook: every stylesheet of `root` addressed to Panel's CDN gets its file as a data: URL."""
    if not pn.config.inline:
        return
    for sheet in root.select({"type": ImportedStyleSheet}):
        url = str(sheet.url)
        if url.startswith(CDN_DIST) and (local := inlined(DIST_DIR / url.removeprefix(CDN_DIST).split("?")[0])):
            sheet.url = local


def offline(view: pn.viewable.Viewable) -> pn.viewable.Viewable:
    """`view` wrapped so that its notebook output fetches nothing from outside (see the module's docstring).
    Without inline resources (a plain `pn.extension()`) BokehJS itself comes from the CDN: nothing to keep."""
    if pn.config.inline:
        settings.resources.set_value("inline")
    return pn.Column(view, hooks=[inline_panel_stylesheets], sizing_mode="stretch_width", margin=0)
