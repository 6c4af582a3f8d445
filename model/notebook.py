"""Rich reprs for Jupyter: a `Trace`, `Budget`, training `Plan` or `Values` shown in a cell as HTML.

    >>> from model import PRESETS, budget, plan, trace
    >>> trace(PRESETS["gpt2-small"])        # the shapes table of `python -m model --table shapes`, as HTML
    >>> budget(PRESETS["gpt2-small"])       # every budget line: label, formula, value

Each `_repr_html_` renders the records the CLI prints with the CLI's own formatters and titles (`model.report`,
`model.train_report`, `model.values_report`): the same cells, labels, formulas and values, as an HTML table
instead of aligned text. Nothing here computes a figure or writes a label. Plain HTML with inline styles: a
notebook shows it without Panel and offline, and a saved notebook keeps it.
"""
from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence

from . import report, train_report, values_report
from .budgeting import Budget
from .figures import HTML_REPRS, Line
from .recipe_rows import recipe_rows
from .tracing import Trace
from .training import Plan
from .values import Values

TABLE = "border-collapse:collapse;font-size:12.5px;margin:4px 0 10px 0"
CELL = "padding:2px 12px 2px 0;text-align:{align};vertical-align:top"
GROUP = "padding:8px 0 2px 0;font-weight:600;text-align:left"


def _e(text: object) -> str:
    return html.escape(str(text))


def caption(*lines: str) -> str:
    """Lines of prose above or under a table."""
    return "".join(f"<div>{_e(x)}</div>" for x in lines)


def table(header: Sequence[str], rows: Iterable[Sequence[str] | str], right: Iterable[int] = (),
          code: Iterable[int] = ()) -> str:
    """An HTML table; a `str` row is a group heading across every column. Columns in `right` align right;
    those in `code` hold lesson notation (monospace)."""
    right, code = set(right), set(code)

    def cell(i: int, text: str, tag: str = "td") -> str:
        body = f"<code>{_e(text)}</code>" if tag == "td" and i in code and text else _e(text)
        return f'<{tag} style="{CELL.format(align="right" if i in right else "left")}">{body}</{tag}>'

    out = ["<tr>" + "".join(cell(i, h, "th") for i, h in enumerate(header)) + "</tr>"]
    for row in rows:
        if isinstance(row, str):
            out.append(f'<tr><td colspan="{len(header)}" style="{GROUP}">{_e(row)}</td></tr>')
        else:
            out.append("<tr>" + "".join(cell(i, c) for i, c in enumerate(row)) + "</tr>")
    return f'<table style="{TABLE}">{"".join(out)}</table>'


def lines_table(lines: Iterable[Line | str], human: Callable[[Line], str] = report._human) -> str:
    """Figures as the CLI prints them: label, formula and value (`human`); a `str` is a section heading."""
    rows = [x if isinstance(x, str) else (x.label, x.formula, human(x)) for x in lines]
    return table(("quantity", "formula", "value"), rows, right=(2,), code=(1,))


def trace_html(tr: Trace, expand: bool = False) -> str:
    """The shapes table and activation memory of `python -m model --table shapes` (its ◆ marks and legend too)."""
    marks = recipe_rows(tr.cfg)
    rows = [r if isinstance(r, str) else report._cells(r, expand, marks) for r in report._display_rows(tr, expand)]
    return (caption(report.describe(tr.cfg), report.SHAPES_TITLE.format(dtype=tr.dtype))
            + table(report.SHAPE_HEADER, rows, right=(3, 4, 5), code=(1,)) + caption(*marks.legend, *report._notes(tr.cfg))
            + caption(report.MEMORY_TITLE.format(dtype=tr.dtype, L=tr.cfg.L)) + lines_table(tr.lines))


def budget_html(b: Budget) -> str:
    """Every line of `python -m model --table budget`."""
    return caption(report.BUDGET_TITLE) + lines_table(b.lines)


def plan_html(p: Plan) -> str:
    """The training run of `python -m model --table train`, section by section."""
    lines: list[Line | str] = []
    for title, note, section in train_report._sections(p):
        lines += [title, *([note] if note else []), *section]
    return caption(report.describe(p.cfg), train_report.describe_setup(p)) + lines_table(lines, train_report.human)


def values_html(v: Values) -> str:
    """The report of `python -m model --values` (block 0, head 0): prose, a small table, an attention grid and
    statistics, kept in the CLI's monospace layout."""
    return f'<pre style="font-size:12px;line-height:1.35">{_e(values_report.text(v))}</pre>'


HTML_REPRS.update({Trace: trace_html, Budget: budget_html, Plan: plan_html, Values: values_html})
