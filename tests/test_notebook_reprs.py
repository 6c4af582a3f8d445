"""What a notebook shows without a browser: the model layer's HTML reprs, `Explorer(preset=)`, and the inlined
stylesheets of the explorer's notebook output (tests/test_notebook.py runs the same in JupyterLab and Chromium)."""
from __future__ import annotations

import ast
import html
import json
import re
from dataclasses import replace
from decimal import Decimal
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
# A decimal fraction or a number with an exponent, as the values pass prints its float32 measurements (0.5533,
# -3.501e-09, 8.9e-08), with the spaces that pad it to its column (a number's width can change with its round-off);
# integers (12, 1,728, 124,439,808) are not matched and stay part of the exact text.
DECIMAL = re.compile(r" *(?<![\w.#])(-?\d+(?:\.\d+(?:e[+-]?\d+)?|e[+-]?\d+))(?![\w.]) *")
# The stated tolerance for those numbers: the values they print may differ by float round-off (another BLAS or CPU
# sums float32 in another order: a LayerNorm's mean, exactly 0 in theory, prints 5.715e-09 on one install and
# 9.423e-10 on another), within a relative 1e-6 or an absolute 1e-6 (float32's epsilon, 1.2e-07, times the few
# roundings of a mean of order-one values), plus half a unit of each number's last printed digit (the true values
# 0.553349 and 0.553351 print as 0.5533 and 0.5534).
REL, ABS = 1e-6, 1e-6


def _split_numbers(text: str) -> tuple[str, list[str]]:
    """The text with each decimal number and its padding replaced by "#", and those numbers in order."""
    return DECIMAL.sub("#", text), DECIMAL.findall(text)


def _agree(a: str, b: str) -> bool:
    """Whether two printed decimal numbers can be the same value up to REL, ABS and their printed rounding."""
    x, y = Decimal(a), Decimal(b)
    half_units = (Decimal(1).scaleb(x.as_tuple().exponent) + Decimal(1).scaleb(y.as_tuple().exponent)) / 2
    return abs(x - y) <= half_units + max(Decimal(REL) * max(abs(x), abs(y)), Decimal(ABS))


def _output_differences(saved: list, want: list) -> list[str]:
    """Where the saved outputs differ from the outputs now: the text, structure and integers exactly, the decimal
    numbers to the tolerance above; [] when they agree."""
    saved_text, saved_numbers = _split_numbers(TIMING.sub("pass: … s", json.dumps(saved, ensure_ascii=False)))
    now = TIMING.sub("pass: … s", json.dumps(want, ensure_ascii=False))
    want_text, want_numbers = _split_numbers(now)
    if saved_text != want_text:
        at = next((i for i, (s, w) in enumerate(zip(saved_text, want_text)) if s != w),
                  min(len(saved_text), len(want_text)))
        return [f"text differs at character {at}: saved {saved_text[at - 60:at + 60]!r}, now "
                f"{want_text[at - 60:at + 60]!r}"]
    before = [now[max(0, m.start() - 40):m.start()].strip() for m in DECIMAL.finditer(now)]
    return [f"{before[i]!r} then saved {s}, now {w}" for i, (s, w) in enumerate(zip(saved_numbers, want_numbers))
            if not _agree(s, w)]


def test_the_tolerance_tells_round_off_from_a_change() -> None:
    assert _agree("5.715e-09", "9.423e-10") and _agree("-3.501e-09", "5.019e-10")  # round-off about 0
    assert _agree("0.5533", "0.5534") and _agree("8.9e-08", "1.1e-07")  # the last printed digit; round-off
    assert not _agree("0.5533", "0.5535") and not _agree("10.75", "10.77") and not _agree("0.0003634", "0.0003654")
    assert not _agree("1.3e-05", "3.1e-05") and not _agree("0.02814", "-0.02814")
    assert _split_numbers("blocks.0.ln_2  -1.307e-09  0.9937 · 1,728 entries, T=12, #1e3a5f") == \
        ("blocks.0.ln_2##· 1,728 entries, T=12, #1e3a5f", ["-1.307e-09", "0.9937"])
    assert _output_differences([["a 0.5533 b 12"]], [["a 0.5534 b 12"]]) == []
    assert _output_differences([["a 0.5533 b 12"]], [["a 0.5533 b 13"]]) != []
    assert _output_differences([["a 0.5533 b"]], [["a 0.5536 b"]]) == ["'[[\"a' then saved 0.5533, now 0.5536"]


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
    differences = _output_differences(saved, want)
    assert not differences, "static/explorer.ipynb's outputs are not what its cells print now (pytest tests/" \
                            "test_notebook_reprs.py --update-golden saves them again): " + "; ".join(differences[:5])
    assert sum(1 for outputs in saved if outputs) >= 7
    words = "".join("".join(c["source"]) for c in nb["cells"])
    assert "pip install transformer-shapes" not in words and "not on PyPI" in words
    assert all(name in words for name in ("llama3-8b", "mistral-7b", "qwen3-0.6b"))
