"""The budget card's markup: N, the parameter chart and every line of `model.budget` (pure: no Panel, so the
exported page runs these functions compiled, app/export/compiled.py).

Nothing here writes a figure, label or formula: `budget_parts`, `chart_html` and `lines_html` render `Budget.lines`.
The chart is HTML bars, not a Bokeh figure: a figure was ~28 Bokeh models per session and half of the server's time
to build a page (issue 16).
"""
from __future__ import annotations

import html

from model import Budget, Line
from model import units as fmt
from model.budgeting import GROUPS, chart, chart_note

from ...styles import BAR_INSIDE, BAR_SHARE, PART_COLOURS
from ...templates import TEMPLATES, columns_to_rows, fill_html
from ...words import STEP_PREFIX, SUM_KEYS


def shown(line: Line) -> dict[str, str]:
    """A line as the page shows it: key, label, formula and formatted value (the export's JavaScript makes
    the same dicts from the same lines; tests compare the two)."""
    return {"key": line.key, "label": line.label, "formula": line.formula, "value": fmt.value(line.value, line.unit),
            "short": fmt.short(line.value, line.unit)}


def lines_html(lines: list[dict[str, str]]) -> str:
    """The budget's lines as one table, grouped by the key's first part (model.budgeting.GROUPS): the template
    "lines" of app/templates.py, which the exported page's `linesHtml` fills the same way (tests compare them)."""
    rows, group = [], None
    for x in lines:
        g = x["key"].split("/", 1)[0]
        cls = "sum" if x["key"] in SUM_KEYS else "step" if x["key"].startswith(STEP_PREFIX) else ""
        rows.append({**x, "group": GROUPS[g] if g != group else "", "cls": cls})
        group = g
    return fill_html(TEMPLATES["lines"], {"rows": rows})


def headline_html(lines: dict[str, dict[str, str]]) -> str:
    """N in large type with its formula; a mixture of experts' N_active under it, as large (the line
    params/active: the parameters one token uses). The template "headline"."""
    return fill_html(TEMPLATES["headline"], {"n": lines["params/exact"], "active": lines.get("params/active")})


def captions_html(lines: dict[str, dict[str, str]]) -> str:
    """The captions under the chart (the template "captions")."""
    return fill_html(TEMPLATES["captions"], {"mlp_share": lines["params/mlp_share"]["value"]})


def bar_text(key: str, value: int, in_sum: bool, total: int) -> str:
    """A bar's text: the head's "0: tied to W_te"; a part outside N's sum (a dense block's halves; a mixture of
    experts' routed experts a token uses) per block or as a share of N; a part of N's sum, its share (the
    templates "bar_*", which page.js's `budgetParts` fills the same way)."""
    if key == "params/head" and value == 0:
        return TEMPLATES["bar_tied"]
    kind = "bar_share" if in_sum else "bar_block" if key.endswith("_block") else "bar_of_n"
    return TEMPLATES[kind].format(params=fmt.params(value), percent=fmt.percent(value / total))  # text, not markup


def budget_parts(b: Budget) -> dict[str, list]:
    """The chart's bars as columns, one entry per part of `model.budgeting.chart(b)` (a dense model's CHART, a
    mixture of experts' MOE_CHART): label, value, exact count, formula, what it is, the bar's text, colour, and
    whether the text sits inside the bar (long bars). It reads `b.lines` only (the exported page's lines too)."""
    bars, line = chart(b), {x.key: x for x in b.lines}
    value = [line[key].value for key, _, _ in bars]
    top, total = max(value), line["params/exact"].value
    return {
        "key": [key for key, _, _ in bars],
        "label": [label + ("*" if in_sum else "") for _, label, in_sum in bars],
        "value": value,
        "exact": [fmt.thousands(v) for v in value],
        "formula": [line[key].formula for key, _, _ in bars],
        "what": [line[key].label for key, _, _ in bars],
        "text": [bar_text(key, v, in_sum, total) for (key, _, in_sum), v in zip(bars, value)],
        "colour": [PART_COLOURS[key] for key, _, _ in bars],
        "inside": [v > BAR_INSIDE * top for v in value],  # long bars carry their text inside
    }


def chart_html(parts: dict[str, list]) -> str:
    """The parameter chart: one labelled bar per part, to scale (the longest fills BAR_SHARE of the track, as a
    CSS calc of whole numbers, so the exported page's `chartHtml` writes the same markup), the part's formula
    and exact count on hover: the template "chart". Mirrored by `chartHtml` in the exported page; tests compare
    the two."""
    return fill_html(TEMPLATES["chart"], {"bars": columns_to_rows(parts), "share": BAR_SHARE,
                                       "top": max(parts["value"]) or 1})


def note_html(b: Budget) -> str:
    """The note under the chart (`model.budgeting.chart_note`)."""
    return f"<p class='note muted'>{html.escape(chart_note(b))}</p>"


def panes(b: Budget) -> dict[str, str]:
    """The card's markup by pane (the exported page's widgets by these names): N, the chart, its note, every line
    and the captions."""
    rows = [shown(x) for x in b.lines]
    by_key = {x["key"]: x for x in rows}
    return {"head": headline_html(by_key), "chart": chart_html(budget_parts(b)), "chart_note": note_html(b),
            "lines": lines_html(rows), "captions": captions_html(by_key)}
