"""What a notebook shows without a browser: the model layer's HTML reprs, `Explorer(preset=)`, and the inlined
stylesheets of the explorer's notebook output (tests/test_notebook.py runs the same in JupyterLab and Chromium)."""
from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import replace
from pathlib import Path

import panel as pn
import pytest
from bokeh.document import Document
from bokeh.models import ImportedStyleSheet
from bokeh.settings import settings
from pyviz_comms import Comm

from app import Explorer
from app.offline import offline
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
    with pytest.raises(ValueError, match=r"unknown preset 'gpt2-mediun' \(did you mean gpt2-medium\?\); presets: "
                                         r"gpt2-small"):
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
    addressed to Panel's CDN (before app/offline.py, three training-card panes asked it for 3 files per move)."""
    explorer = Explorer(preset="gpt2-small")
    doc = Document()
    root = offline(explorer).get_root(doc, Comm())
    doc.add_root(root)
    for move in ({"T": 1023}, {"L": 13}, {"d": 1024, "h": 16}):
        explorer.state.param.update(**move)
    explorer.state.train = replace(explorer.state.train, gpus=16)
    urls = [str(s.url) for s in root.select({"type": ImportedStyleSheet})]
    assert urls and all(u.startswith("data:text/css;base64,") for u in urls), [u[:60] for u in urls]


NOTEBOOK = Path(__file__).resolve().parents[1] / "static" / "explorer.ipynb"
TIMING = re.compile(r"pass: \d+\.\d+ s")  # a pass's seconds differ from run to run


def _run_cells(cells: list[dict]) -> list[list[dict]]:
    """Each code cell of the notebook run in order in one namespace, as a kernel would, and the outputs Jupyter
    saves for its last expression: HTML where the value has an HTML repr, else its repr. The panel cell only
    configures the notebook's display and the explorer's cell shows a live view: neither saves an output."""
    ns: dict = {}
    outputs = []
    count = 0
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tree = ast.parse(source)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if "pn.extension" not in source:
            exec(compile(tree, "cell", "exec"), ns)
        shown = last is not None and "pn.extension" not in source
        value = eval(compile(ast.Expression(last.value), "cell", "eval"), ns) if shown else None
        count += 1
        if value is None or isinstance(value, Explorer):
            outputs.append([])
            continue
        html_repr = getattr(value, "_repr_html_", None)
        data = {"text/html": html_repr().splitlines(keepends=True),
                "text/plain": [f"<{type(value).__module__}.{type(value).__name__}>"]} if html_repr else \
            {"text/plain": repr(value).splitlines(keepends=True)}
        outputs.append([{"data": data, "execution_count": count, "metadata": {}, "output_type": "execute_result"}])
    return outputs


def test_the_example_notebook_keeps_the_outputs_its_code_prints_now(request) -> None:
    """static/explorer.ipynb shows, saved, what its cells print (`pytest --update-golden` saves them again after a
    change), so a learner who opens it without running it sees the tables; and it says how to install the package
    that is not on PyPI and names the modern presets."""
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    want = _run_cells(nb["cells"])
    if request.config.getoption("--update-golden"):
        for cell, outputs in zip(code, want):
            cell["outputs"], cell["execution_count"] = outputs, outputs[0]["execution_count"] if outputs else None
        NOTEBOOK.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    saved = [c["outputs"] for c in code]
    norm = lambda outs: TIMING.sub("pass: … s", json.dumps(outs))  # noqa: E731
    assert norm(saved) == norm(want), "static/explorer.ipynb's outputs are not what its cells print now: pytest " \
                                      "tests/test_notebook_reprs.py --update-golden saves them again"
    assert sum(1 for outputs in saved if outputs) >= 7
    words = "".join("".join(c["source"]) for c in nb["cells"])
    assert "pip install transformer-shapes" not in words and "not on PyPI" in words
    assert all(name in words for name in ("llama3-8b", "mistral-7b", "qwen3-0.6b"))
