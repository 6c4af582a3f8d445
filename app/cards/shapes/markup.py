"""The shapes table's rows and markup (pure: no Panel, so the exported page runs `display_rows`, `row_html` and
`recipe_legend_html` compiled, app/export/compiled.py).

`shape_rows` turns a `Trace` into display rows; `render_table` writes them as one HTML table with fixed column
widths, so dragging a slider changes text and bar widths, never layout (view.py's `ShapesTable` shows it).
"""
from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from model import NOTATION, Config, Trace
from model import units as fmt
from model.config import ATTN_LABELS, KIND_LABELS, typed_blocks
from model.memory import KORTHIKANTI_NOTE
from model.recipe_rows import MARK, recipe_rows
from model.tracing import Row, block_groups, expanded_rows, window_text

from ...templates import MARKED, TEMPLATES, fill_html
from ...words import GROUP_WORDS, MAX_LISTED_BLOCKS, QUADRATIC
from ..budget.markup import lines_html

LOSS_SHAPE = NOTATION["loss"][0]  # the absent loss row's lesson shape



@dataclass(frozen=True)
class ShapeRow:
    """One line of the table: a tensor, a block heading, or the loss when T = 1 leaves nothing to predict."""

    kind: str  # "tensor", "group" (heading of block rows) or "absent"
    name: str
    label: str = ""
    symbolic: str = ""
    shape: str = ""
    elements: str = ""
    memory: str = ""
    bar: float = 0.0  # memory / largest tensor of the pass at T = T_max, 0 ... 1
    quadratic: bool = False  # a (B, h, T, T) tensor
    in_block: bool = False
    view: bool = False  # shares an earlier tensor's storage: no new memory (model.Row.view)
    saved: bool = False  # kept by autograd for the backward pass (model.Row.saved)
    only: bool = False  # not in the pass of the GPT-2 twin: only in this recipe (model.recipe_rows)


def _tensor(row: Row, scale: int, collapsed: bool, only: bool) -> ShapeRow:
    name = row.local if collapsed and row.block is not None else row.name
    return ShapeRow(kind="tensor", name=name, label=row.label, symbolic=row.symbolic, shape=fmt.shape(row.shape),
                    elements=fmt.thousands(row.numel), memory="view" if row.view else fmt.nbytes(row.nbytes),
                    bar=min(1.0, row.nbytes / scale) if scale else 0.0, quadratic=row.symbolic == QUADRATIC,
                    in_block=row.block is not None, view=row.view, saved=row.saved, only=only)


def _group_heading(cfg: Config, row: Row, expanded: bool, per_block: dict[str, int]) -> ShapeRow:
    """The heading of a block's rows: collapsed, one group "× L" (a mixture of experts: each kind's group, titled by
    `model.tracing.block_groups`; a window: which blocks are sliding and which full, `model.tracing.window_text`),
    expanded, each block (with its kind of MLP in a mixture of experts, of attention with a window)."""
    w = GROUP_WORDS
    L, typed, window = cfg.L, typed_blocks(cfg), window_text(cfg)
    if expanded:
        kind = w["kind"].format(label=KIND_LABELS[row.kind]) if typed else ""
        kind += w["kind"].format(label=ATTN_LABELS[cfg.attn_kinds[row.block]]) if window else ""
        return ShapeRow(kind="group", name=w["block"].format(b=row.block), label=w["of"].format(L=f"{L:,}") + kind)
    label = w["tensors"].format(n=per_block[row.kind])
    if window:  # which blocks slide
        label += w["window"]["moe" if typed else "dense"].format(window=window)
    elif not typed:
        label += w["repeats"]
    if typed:
        return ShapeRow(kind="group", name={g.kind: g.title for g in block_groups(cfg)}[row.kind], label=label)
    span = w["span_one"] if L == 1 else w["span"].format(last=L - 1)  # block 0 stands for all L blocks
    return ShapeRow(kind="group", name=w["all"].format(span=span, L=f"{L:,}"), label=label)


def shape_rows(trace: Trace, scale_bytes: int, expanded: bool = False) -> list[ShapeRow]:
    """Display rows of `trace` (`display_rows`, with the rows its GPT-2 twin's pass lacks, `model.recipe_rows`)."""
    return display_rows(trace.cfg, trace.rows, scale_bytes, expanded, recipe_rows(trace.cfg).only)


def display_rows(cfg: Config, rows: tuple[Row, ...], scale_bytes: int, expanded: bool,
                 only: tuple[str, ...]) -> list[ShapeRow]:
    """Display rows of a trace's `rows` at `cfg`: block rows under a heading (one group "× L", a mixture of experts'
    one group per kind of block, "blocks 3 … 60: MoE, × 58"; or every block when expanded, up to MAX_LISTED_BLOCKS
    blocks and one line for the rest). The exported page runs it on the rows of its structures.

    `scale_bytes` is the memory of a full bar (the largest tensor at T = T_max keeps bars comparable as T moves).
    A pass at T = 1 has no loss (no next token to predict); its place is kept with an "absent" row. A row whose
    local name is in `only` is marked: its GPT-2 twin's pass lacks it.
    """
    L = cfg.L
    listed = expanded_rows(cfg, rows) if expanded else rows
    per_block: dict[str, int] = {}  # tensors of one block of each kind
    for r in rows:
        if r.block is not None:
            per_block[r.kind] = per_block.get(r.kind, 0) + 1
    out: list[ShapeRow] = []
    previous_block: int | None = None
    for row in listed:
        if expanded and row.block is not None and row.block >= MAX_LISTED_BLOCKS:
            if previous_block == MAX_LISTED_BLOCKS - 1:  # once, where the unlisted blocks begin
                w = GROUP_WORDS
                same = w["same"]["moe" if typed_blocks(cfg) else "dense"]
                out.append(ShapeRow(kind="group", name=w["rest"].format(first=MAX_LISTED_BLOCKS, last=L - 1),
                                    label=w["rest_label"].format(n=f"{L - MAX_LISTED_BLOCKS:,}", same=same)))
            previous_block = row.block
            continue
        if row.block is not None and (row.block != previous_block):
            out.append(_group_heading(cfg, row, expanded, per_block))
        previous_block = row.block
        out.append(_tensor(row, scale_bytes, not expanded, row.local in only))
    if not any(r.name == "loss" for r in listed):
        out.append(ShapeRow(kind="absent", name="loss", label=GROUP_WORDS["absent"], symbolic=LOSS_SHAPE))
    return out


# Compact markup (the expanded listing of GPT-3 175B has 1,632 rows), as the exported page writes it (rowHtml
# in app/export/page.js): row classes t tensor, k in a block, q (B, h, T, T), a absent, g block heading,
# v view (memory "view": no new memory), sv saved for backward (a dot after the name), r only in this recipe
# (MARKED after the name, model.recipe_rows); cell classes n tensor
# name (<b> name, <i> what it is, <u> lesson shape on phones), s lesson shape, c concrete shape, e elements,
# m memory, b bar (<s> is the filled part). Every element that changes while a slider moves (concrete shape,
# elements, memory, bar width, block headings, the scale, the memory lines' values) carries `data-v` (text)
# or `data-h` (markup): the page receives the markup once, then only the list of those contents (TableSlots).
SLOT = "\x00"  # where a changing value goes in the template; never in escaped text
_LINE_VALUE = re.compile(r'<td class="v">(.*?)</td>')  # a value cell of app.cards.budget.markup.lines_html


class _Writer:
    """Writes markup with a SLOT for each changing value, and collects the values (and which are markup)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.raw: list[bool] = []

    def value(self, value: str, raw: bool = False) -> str:
        """A SLOT for `value` (text; `raw`: markup), collected in the order the markup names them."""
        self.values.append(value)
        self.raw.append(raw)
        return SLOT

    def slot(self, tag: str, value: str, attrs: str = "", raw: bool = False) -> str:
        """<tag attrs data-v>value</tag> (data-h: `value` is markup)."""
        return f"<{tag}{attrs} data-{'h' if raw else 'v'}>{self.value(value, raw)}</{tag}>"


def row_title(r: ShapeRow) -> str:
    """A tensor row's tooltip: its name, what it is and its lesson shape, whole."""
    return f"{r.name}: {r.label} · lesson shape {r.symbolic}"


def row_html(r: ShapeRow, slot: Callable[[str], str], dv: str) -> str:
    """A row (the templates "group_row" and "tensor_row" of app/templates.py), each changing value through `slot`:
    the live page's SLOT with `dv` " data-v" (`_Writer.value` collects them in the template's order), the exported
    page's the value itself (`str`, `dv` "")."""
    if r.kind == "group":
        return fill_html(TEMPLATES["group_row"], {"dv": dv, "name": slot(r.name), "label": slot(r.label)})
    classes = " ".join(c for c in ("t", "k" if r.in_block else "", "q" if r.quadratic else "",
                                   "a" if r.kind == "absent" else "", "v" if r.view else "",
                                   "sv" if r.saved else "", "r" if r.only else "") if c)
    return fill_html(TEMPLATES["tensor_row"], {
        "cls": classes, "title": row_title(r), "name": r.name, "label": r.label, "symbolic": r.symbolic,
        "mark": f" {MARKED}" if r.only else "", "dv": dv, "shape": slot(r.shape or "—"),
        "elements": slot(r.elements or "—"), "memory": slot(r.memory or "—"), "bar": slot(f"{100 * r.bar:.1f}%")})


@dataclass(frozen=True)
class TableParts:
    """The view as a template (SLOTs where values change) and the values; `html` puts them together."""

    template: str
    values: tuple[str, ...]
    raw: tuple[bool, ...]  # the value is markup (escaped where it was made), not text

    @property
    def html(self) -> str:
        pieces = self.template.split(SLOT)
        out = [pieces[0]]
        for value, raw, piece in zip(self.values, self.raw, pieces[1:]):
            out += [value if raw else html.escape(value), piece]
        return "".join(out)


def recipe_legend_html(legend: tuple[str, ...] | list[str]) -> str:
    """`model.recipe_rows`' legend lines under the table, their MARK as the rows show it ("" for GPT-2's recipe)."""
    items = [{"text": html.escape(x).replace(MARK, MARKED, 1)} for x in legend]
    return fill_html(TEMPLATES["legend"], {"legend": items})


def table_parts(rows: list[ShapeRow], dtype: str, scale: str, memory: list[dict[str, str]],
                legend: tuple[str, ...] = ()) -> TableParts:
    """The table (fixed column widths, one row per ShapeRow), the recipe's `legend` (`model.recipe_rows`), the
    legend of bars, views and dots, and the memory lines (new memory, views excluded; saved for backward; the
    16-bit estimate), as the exported page lays them out."""
    e = html.escape
    w = _Writer()
    body = "".join(row_html(r, w.value, " data-v") for r in rows)
    bars = (f'<p class="legend muted">bars: share of {w.slot("span", scale)}, the largest tensor at T = T_max, so '
            f'they grow as T does. <b>view</b>: shares an earlier tensor\'s storage (no new memory). '
            f'<span class="dot">●</span> kept for the backward pass.</p>')
    lines = _LINE_VALUE.sub(lambda m: w.slot("td", m.group(1), ' class="v"', raw=True), lines_html(memory))
    note = (f'<p class="note muted">{e(KORTHIKANTI_NOTE)}</p>'
            if any(x["key"] == "memory/korthikanti" for x in memory) else "")
    template = (f'<table class="shapes"><thead><tr><th class="n">tensor</th><th class="s">lesson shape</th>'
                f'<th class="c">shape now</th><th class="e">elements</th>'
                f'<th class="m" title="bytes at {e(dtype)}">memory</th>'
                f'<th class="b" title="share of the largest tensor at T = T_max">size</th></tr></thead>'
                f'<tbody>{body}</tbody></table>{recipe_legend_html(legend)}{bars}{lines}{note}')
    return TableParts(template, tuple(w.values), tuple(w.raw))


def render_table(rows: list[ShapeRow], dtype: str, scale: str, memory: list[dict[str, str]],
                 legend: tuple[str, ...] = ()) -> str:
    """The view as one HTML string (what the page shows; `table_parts` splits it for patching)."""
    return table_parts(rows, dtype, scale, memory, legend).html
