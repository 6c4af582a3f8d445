"""The markup of the budget card, the shapes table, the changes card and the training card, each piece once, as a
template (pure: no Panel, so the export ships them in its spec).

The live page (the cards' markup: app/cards/budget/markup.py, app/cards/shapes/markup.py, app/cards/recipe/markup.py,
app/cards/train/markup.py) and the exported page (the same functions and `fill_html`, compiled to JavaScript:
app/export/compiled.py) fill the same templates with the same values by the same rules:

- ``{x}``: the value ``x``, HTML-escaped (``html.escape(str(x), quote=True)``: & < > " ' become entities);
- ``{&x}``: the value ``x`` as it is (markup, escaped where it was made);
- ``{#x}…{/x}``: the part between, once for each item of the list ``x`` (each item a dict whose keys, for that item,
  stand beside and above the outer values), or once if ``x`` is a non-empty dict (its keys likewise), or once if ``x``
  is any other true value; nothing if ``x`` is missing, false, empty or 0;
- ``{^x}…{/x}``: the part between, once if ``x`` is missing, false, empty or 0.

A section's name does not nest inside a section of the same name. Values are text or whole numbers (no floats, no
booleans in a slot), and never an empty dict.
"""
from __future__ import annotations

import html
import re
from collections.abc import Mapping

from model.recipe_rows import MARK

from .words import CAPTIONS

# {#x}…{/x} or {^x}…{/x} (a section: its name, its inside), else {x} or {&x} (a value)
TOKEN = re.compile(r"\{([#^])(\w+)\}(.*?)\{/\2\}|\{(&?)(\w+)\}", re.S)


def fill_html(template: str, values: Mapping[str, object]) -> str:
    """`template` with every slot and section filled from `values` (the rules in this module's docstring)."""
    def one(m: re.Match) -> str:
        kind, name, inside, raw, slot = m.groups()
        if kind:
            x = values.get(name)
            if kind == "^":
                return "" if x else fill_html(inside, values)
            if isinstance(x, list):
                return "".join(fill_html(inside, {**values, **item}) for item in x)
            if not x:
                return ""
            return fill_html(inside, {**values, **x} if isinstance(x, dict) else values)
        return str(values[slot]) if raw else html.escape(str(values[slot]))
    return TOKEN.sub(one, template)


def columns_to_rows(columns: Mapping[str, list]) -> list[dict]:
    """{"key": [a, b], "value": [1, 2]} -> [{"key": a, "value": 1}, {"key": b, "value": 2}] (a chart's parts)."""
    return [{k: v for k, v in zip(columns, row)} for row in zip(*columns.values())]


MARKED = f'<em class="mk">{html.escape(MARK)}</em>'  # a shapes row's mark and the legend's, in the recipe's colour

# A line's two cells (app.cards.budget.markup.shown's dicts: label with its formula; value with its short form, if any)
_CELLS = ('<td class="l">{label}<code>{formula}</code></td>'
          '<td class="v">{value}{#short}<small>{short}</small>{/short}</td></tr>')

TEMPLATES: dict[str, str] = {
    # app.cards.budget.markup.lines_html: rows {group (its title where a group starts, else ""), cls, key, label,
    # formula, value, short}
    "lines": ('<table class="lines">{#rows}{#group}<tr class="grp"><td colspan="2">{group}</td></tr>{/group}'
              '<tr class="{cls}" data-key="{key}">' + _CELLS + '{/rows}</table>'),
    # app.cards.budget.markup.headline_html: n, the line params/exact; active, the line params/active (a mixture of
    # experts)
    "headline": ('{#n}<div class="n"><span class="big">N = {value}</span> <span class="muted">parameters '
                 '({short})</span></div><div class="nf muted">N = <code>{formula}</code></div>{/n}'
                 '{#active}<div class="n active"><span class="big">N_active = {value}</span> <span class="muted">'
                 'per token ({short})</span></div><div class="nf muted">{label}: <code>{formula}</code></div>'
                 '{/active}'),
    # app.cards.budget.markup.bar_text: a bar's text (text, not markup: filled by str.format, and escaped where
    # the chart shows it), params (units.params), percent (units.percent) of N
    "bar_tied": "0: tied to W_te",
    "bar_block": "{params} per block",
    "bar_of_n": "{params} · {percent} of N",
    "bar_share": "{params} · {percent}",
    # app.cards.budget.markup.chart_html: bars, budget_parts' columns as rows; share (styles.BAR_SHARE), top (the
    # largest value, or 1): a bar's width is a CSS calc of whole numbers
    "chart": ('<div class="parts">{#bars}<div class="part{#inside} in{/inside}" data-key="{key}" data-value="{value}" '
              'tabindex="0"><span class="pl">{label}</span><span class="track"><span class="bar" style="width: '
              'calc({share}% * {value} / {top}); background: {colour}">{#inside}<span class="pt">{text}</span>'
              '{/inside}</span>{^inside}<span class="pt">{text}</span>{/inside}</span><span class="tip"><b>{what}</b>'
              '<br>parameters: {exact}<br>formula: <code>{formula}</code></span></div>{/bars}</div>'),
    # app.cards.train.markup.chart_html: the memory chart, bars (training.memory_bars: key, row, total, capacity, parts
    # {key, label, colour, text, width}) stacked, widths and the GPU's memory (a dashed line across each track) in % of
    # the track; the totals under the rows' names
    "memory_chart": ('<div class="parts mem">{#bars}<div class="part" data-row="{key}" tabindex="0"><span class="pl">'
                     '{row}<b>{total}</b></span><span class="track">{#parts}<span class="bar" data-key="{key}" '
                     'style="width: {width}%; background: {colour}"></span>{/parts}<span class="cap" style="left: '
                     '{capacity}%"></span></span><span class="tip"><b>{row}</b>{#parts}<br>{label}: {text}{/parts}'
                     '<br>total: {total}</span></div>{/bars}</div>'),
    # app.cards.budget.markup.captions_html: the captions (app.words.CAPTIONS, markup, each caption's one slot
    # {mlp_share} the line params/mlp_share's value) as a list
    "captions": '<ul class="captions">' + "".join(f"<li>{c}</li>" for c in CAPTIONS) + "</ul>",
    # app.cards.shapes.markup.row_html: a row of the table (a block heading, or a tensor: cls its classes, mark the
    # recipe's MARKED or "", title shapes.row_title, bar its width as "12.5%"); dv " data-v" where the live page patches
    # the value
    "group_row": '<tr class="g"><td colspan="6"><b{&dv}>{name}</b> <i{&dv}>{label}</i></td></tr>',
    "tensor_row": ('<tr class="{cls}" title="{title}"><td class="n"><b>{name}{&mark}</b><i>{label}</i>'
                   '<u>{symbolic}</u></td><td class="s">{symbolic}</td><td class="c"{&dv}>{shape}</td>'
                   '<td class="e"{&dv}>{elements}</td><td class="m"{&dv}>{memory}</td>'
                   '<td class="b"><s{&dv} style="width:{bar}"></s></td></tr>'),
    # app.cards.shapes.markup.recipe_legend_html: legend, model.recipe_rows' lines (text); its MARK shown as MARKED
    "legend": '{#legend}<p class="legend muted">{&text}</p>{/legend}',
    # the exported page's table around its rows (app.cards.shapes.markup.table_parts writes the live page's, with
    # slots): dtype, scale (units.nbytes of the largest tensor at T_max), rows (markup), legend and lines (markup),
    # korthikanti (its note, or "")
    "table": ('<table class="shapes"><thead><tr><th class="n">tensor</th><th class="s">lesson shape</th>'
              '<th class="c">shape now</th><th class="e">elements</th>'
              '<th class="m" title="bytes at {dtype}">memory</th>'
              '<th class="b" title="share of {scale}, the largest tensor at T = T_max">size</th></tr></thead>'
              '<tbody>{&rows}</tbody></table>{&legend}<p class="legend muted">bars: share of {scale}, the largest '
              "tensor at T = T_max, so they grow as T does. <b>view</b>: shares an earlier tensor's storage (no new "
              "memory). "
              '<span class="dot">●</span> kept for the backward pass.</p>{&lines}'
              '{#korthikanti}<p class="note muted">{korthikanti}</p>{/korthikanti}'),
    # app.cards.recipe.markup.changes_html: dtype, note (Changes.note), groups {key, title, lines (as "lines" has them)}
    "changes": ('<p class="muted">Bytes at {dtype}. {note}</p><table class="lines changes">{#groups}'
                '<tr class="grp {key}"><td colspan="2">{title}</td></tr>{#lines}<tr data-key="{key}">' + _CELLS
                + '{/lines}{/groups}</table>'),
    # app.cards.recipe.markup.changes_html for GPT-2's recipe: same, its sentence
    "same": '<p class="note muted">{same}</p>',
    # app.cards.recipe.markup.notice_html: a notice in a card's place
    "notice": '<div class="status"><span class="n">⚠</span> {text}</div>',
    # app.cards.train.markup.lines_html: sections {title, note (the Chinchilla fit's, else ""), lines {label, formula,
    # human}}
    "train_lines": ('<table class="lines">{#sections}<tr><th colspan="3">{title}</th></tr>{#note}<tr class="sub">'
                    '<td colspan="3">{note}</td></tr>{/note}{#lines}<tr><td>{label}</td><td class="f">{formula}</td>'
                    '<td class="v">{human}</td></tr>{/lines}{/sections}</table>'),
    # app.cards.train.markup.legend_html: parts {label, colour} (app.words.PARTS), capacity (the GPU's line, "capacity")
    "train_legend": ('<div class="legend">{#parts}<span class="key"><i style="background:{colour}"></i>{label}</span>'
                     '{/parts}<span class="key"><i class="line"></i>{capacity}</span></div>'),
    # app.cards.train.markup.capacity_label: the GPU's memory line (text: filled by str.format)
    "capacity": "memory of one {device}: {capacity}",
    # app.cards.train.view.TrainingView: the card's notices, texts
    "warnings": '{#notes}<div class="warn">⚠ {text}</div>{/notes}',
    # a field's label on the exported page: its symbol and, under it, its name (app/export/page.py field_label)
    "field_label": '<div title="{field}: {doc}"><b class="sym">{field}</b><div class="muted name">{name}</div></div>',
    # the controls' status line: the notices, else the rules that hold (app/cards/controls/view.py status_html), and a
    # preset's extras in words (the exported page's; the live page's controls show them apart)
    "status": ('{#notes}<div class="status"><span class="n">⚠</span> {text}</div>{/notes}'
               '{^notes}<div class="status muted">{rules}</div>{/notes}'
               '{#extras}<div class="status muted">{extras}</div>{/extras}'),
}
