"""What a notebook shows without a browser: the model layer's HTML reprs, `Explorer(preset=)`, and the inlined
stylesheets of the explorer's notebook output (tests/test_notebook.py runs the same in JupyterLab and Chromium)."""
from __future__ import annotations

import html
from dataclasses import replace

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from bokeh.settings import settings
from pyviz_comms import Comm

from app import Explorer
from app.notebook import offline
from model import PRESETS, Config, budget, plan, report, trace, train_report, values_report
from model.values import values

SMALL = Config(B=2, T=8, d=64, h=4, L=2, V=50_257, T_max=64)


def _shown(markup: str, text: str) -> bool:
    return html.escape(text) in markup


@pytest.mark.parametrize("cfg", [PRESETS["gpt2-small"], SMALL, replace(SMALL, tie=False)])
def test_trace_html_holds_every_cell_of_the_cli_table(cfg: Config) -> None:
    tr = trace(cfg)
    markup = tr._repr_html_()
    assert markup.startswith("<div>") and markup.count("<table") == 2
    assert _shown(markup, report.describe(cfg))
    for row in tr.rows:
        for cell in report._cells(row, expand=False):
            assert _shown(markup, cell.strip()), cell
    for line in tr.lines:
        assert _shown(markup, line.label) and _shown(markup, line.formula) and _shown(markup, report._human(line))


def test_budget_html_holds_every_line() -> None:
    b = budget(PRESETS["gpt2-small"])
    markup = b._repr_html_()
    assert _shown(markup, "124,439,808")
    assert markup.count("<tr>") == len(b.lines) + 1  # the header, then one row per line
    for line in b.lines:
        assert _shown(markup, line.label) and _shown(markup, line.formula) and _shown(markup, report._human(line))


def test_plan_html_holds_every_section_and_line() -> None:
    p = plan(PRESETS["gpt2-small"])
    markup = p._repr_html_()
    assert _shown(markup, train_report.describe_setup(p))
    for title, note, lines in train_report._sections(p):
        assert _shown(markup, title) and _shown(markup, note)
        for line in lines:
            assert _shown(markup, line.label) and _shown(markup, train_report.human(line))


def test_values_html_is_the_cli_report() -> None:
    v = values(SMALL, "The Transformer reads text as tokens.")
    assert v._repr_html_() == f'<pre style="font-size:12px;line-height:1.35">{html.escape(values_report.text(v))}</pre>'


def test_explorer_takes_a_preset() -> None:
    assert Explorer(preset="gpt2-medium").state.config == PRESETS["gpt2-medium"]
    assert Explorer(preset="gpt2-medium", query="?T=512").state.config == replace(PRESETS["gpt2-medium"], T=512)
    with pytest.raises(ValueError, match="unknown preset 'gpt2-mediun'; presets: gpt2-small, gpt2-medium"):
        Explorer(preset="gpt2-mediun")


@pytest.fixture
def inline_notebook():
    """Panel configured as `pn.extension(inline=True)` leaves it; restored afterwards."""
    before = pn.config.inline
    pn.config.inline = True
    try:
        yield
    finally:
        pn.config.inline = before
        settings.resources.unset_value()


def test_updates_keep_panels_stylesheets_inline(inline_notebook) -> None:
    """The explorer's notebook output as Panel renders it for a Jupyter comm, then moves: no stylesheet is ever
    addressed to Panel's CDN (before app/notebook.py, three training-card panes asked it for 3 files per move)."""
    explorer = Explorer(preset="gpt2-small")
    doc = Document()
    root = offline(explorer).get_root(doc, Comm())
    doc.add_root(root)
    for move in ({"T": 1023}, {"L": 13}, {"d": 1024, "h": 16}):
        explorer.state.param.update(**move)
    explorer.state.train = replace(explorer.state.train, gpus=16)
    urls = [str(s.url) for s in root.select({"type": ImportedStyleSheet})]
    assert urls and all(u.startswith("data:text/css;base64,") for u in urls), [u[:60] for u in urls]
