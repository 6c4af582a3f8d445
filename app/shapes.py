"""Left column: one forward pass, tensor by tensor, as `model.trace` lists it at the current configuration.

`shape_rows` turns a `Trace` into display rows (pure, tested without a browser); `render_table` writes them
as one HTML table with fixed column widths, so dragging a slider changes text and bar widths, never layout;
`ShapesTable` is the view.
"""
from __future__ import annotations

import functools
import html
import json
import re
from dataclasses import dataclass

import panel as pn
import param
from panel.custom import JSComponent

import model
from model import DTYPES, NOTATION, Config, Trace
from model import units as fmt
from model.config import ATTN_LABELS, FIELDS, KIND_LABELS
from model.memory import KORTHIKANTI_NOTE
from model.recipe_rows import MARK, recipe_rows
from model.tracing import window_text

from .budget import lines_html, shown
from .state import ExplorerState, bar_scale
from .styles import INK, TABLE_CSS
from .templates import MARKED, TEMPLATES, fill_html
from .words import GROUP_WORDS, MAX_LISTED_BLOCKS, QUADRATIC, SHAPES_NOTES, SHAPES_TITLE



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


def _tensor(row, scale: int, collapsed: bool, only: bool) -> ShapeRow:
    name = row.local if collapsed and row.block is not None else row.name
    return ShapeRow(kind="tensor", name=name, label=row.label, symbolic=row.symbolic, shape=fmt.shape(row.shape),
                    elements=fmt.thousands(row.numel), memory="view" if row.view else fmt.nbytes(row.nbytes),
                    bar=min(1.0, row.nbytes / scale) if scale else 0.0, quadratic=row.symbolic == QUADRATIC,
                    in_block=row.block is not None, view=row.view, saved=row.saved, only=only)


def _group_heading(trace: Trace, row, expanded: bool, per_block: dict[str, int]) -> ShapeRow:
    """The heading of a block's rows: collapsed, one group "× L" (a mixture of experts: each kind's group, titled by
    `Trace.groups`; a window: which blocks are sliding and which full, `model.tracing.window_text`), expanded, each
    block (with its kind of MLP in a mixture of experts, of attention with a window)."""
    cfg, w = trace.cfg, GROUP_WORDS
    L, moe, window = cfg.L, cfg.moe, window_text(cfg)
    if expanded:
        kind = w["kind"].format(label=KIND_LABELS[row.kind]) if moe else ""
        kind += w["kind"].format(label=ATTN_LABELS[cfg.attn_kinds[row.block]]) if window else ""
        return ShapeRow(kind="group", name=w["block"].format(b=row.block), label=w["of"].format(L=f"{L:,}") + kind)
    label = w["tensors"].format(n=per_block[row.kind])
    if window:  # which blocks slide
        label += w["window"]["moe" if moe else "dense"].format(window=window)
    elif not moe:
        label += w["repeats"]
    if moe:
        return ShapeRow(kind="group", name=next(g.title for g in trace.groups if g.kind == row.kind), label=label)
    span = w["span_one"] if L == 1 else w["span"].format(last=L - 1)  # block 0 stands for all L blocks
    return ShapeRow(kind="group", name=w["all"].format(span=span, L=f"{L:,}"), label=label)


def shape_rows(trace: Trace, scale_bytes: int, expanded: bool = False) -> list[ShapeRow]:
    """Display rows of `trace`: block rows under a heading (one group "× L", a mixture of experts' one group per
    kind of block, "blocks 3 … 60: MoE, × 58"; or every block when expanded, up to MAX_LISTED_BLOCKS blocks and one
    line for the rest).

    `scale_bytes` is the memory of a full bar (the largest tensor at T = T_max keeps bars comparable as T moves).
    A pass at T = 1 has no loss (no next token to predict); its place is kept with an "absent" row. A row that its
    GPT-2 twin's pass lacks is `only` (`model.recipe_rows`, computed once per recipe).
    """
    L, marks = trace.cfg.L, recipe_rows(trace.cfg)
    rows = trace.expanded() if expanded else trace.rows
    per_block: dict[str, int] = {}  # tensors of one block of each kind
    for r in trace.rows:
        if r.block is not None:
            per_block[r.kind] = per_block.get(r.kind, 0) + 1
    out: list[ShapeRow] = []
    previous_block: int | None = None
    for row in rows:
        if expanded and row.block is not None and row.block >= MAX_LISTED_BLOCKS:
            if previous_block == MAX_LISTED_BLOCKS - 1:  # once, where the unlisted blocks begin
                w = GROUP_WORDS
                same = w["same"]["moe" if trace.cfg.moe else "dense"]
                out.append(ShapeRow(kind="group", name=w["rest"].format(first=MAX_LISTED_BLOCKS, last=L - 1),
                                    label=w["rest_label"].format(n=f"{L - MAX_LISTED_BLOCKS:,}", same=same)))
            previous_block = row.block
            continue
        if row.block is not None and (row.block != previous_block):
            out.append(_group_heading(trace, row, expanded, per_block))
        previous_block = row.block
        out.append(_tensor(row, scale_bytes, collapsed=not expanded, only=marks.marked(row.local)))
    if not any(r.name == "loss" for r in rows):
        out.append(ShapeRow(kind="absent", name="loss", label=GROUP_WORDS["absent"],
                            symbolic=NOTATION["loss"][0]))
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
_LINE_VALUE = re.compile(r'<td class="v">(.*?)</td>')  # a value cell of app.budget.lines_html


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


def _tr(r: ShapeRow, w: _Writer) -> str:
    """A row (the templates "group_row" and "tensor_row" of app/templates.py, which page.js's `rowHtml` fills with
    the values inline): each changing value a SLOT, collected by `w` in the template's order."""
    if r.kind == "group":
        return fill_html(TEMPLATES["group_row"], {"dv": " data-v", "name": w.value(r.name), "label": w.value(r.label)})
    classes = " ".join(c for c in ("t", "k" if r.in_block else "", "q" if r.quadratic else "",
                                   "a" if r.kind == "absent" else "", "v" if r.view else "",
                                   "sv" if r.saved else "", "r" if r.only else "") if c)
    return fill_html(TEMPLATES["tensor_row"], {
        "cls": classes, "title": row_title(r), "name": r.name, "label": r.label, "symbolic": r.symbolic,
        "mark": f" {MARKED}" if r.only else "", "dv": " data-v", "shape": w.value(r.shape or "—"),
        "elements": w.value(r.elements or "—"), "memory": w.value(r.memory or "—"), "bar": w.value(f"{100 * r.bar:.1f}%")})


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
    body = "".join(_tr(r, w) for r in rows)
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


@functools.lru_cache(maxsize=128)
def table_at(cfg: Config, dtype: str, expanded: bool) -> TableParts:
    """The view at one configuration (cached per whole Config, dtype and listing: a slider that returns to
    a value costs a dictionary look-up)."""
    trace = model.trace(cfg, dtype)
    scale = bar_scale(trace)
    return table_parts(shape_rows(trace, scale, expanded), dtype, fmt.nbytes(scale), [shown(x) for x in trace.lines],
                       recipe_rows(cfg).legend)


HEAD_CSS = f"""
.head {{ display: flex; flex-wrap: wrap; justify-content: space-between; align-items: center; gap: 4px 12px;
  margin: 0 0 2px 0; }}
.head h2 {{ margin: 2px 0 0 0; }}
.picks {{ display: flex; align-items: center; gap: 8px; font-size: 12px; }}
.dtypes {{ display: inline-flex; }}
.dtypes button {{ font: inherit; font-size: 12px; padding: 6px 12px; border: 1px solid transparent;
  border-radius: 4px; background: transparent; color: {INK}; cursor: pointer; }}
.dtypes button:hover {{ background: #f1f3f5; }}
.dtypes button.active {{ background: #e9ecef; border-color: #dee2e6; }}
.picks label {{ display: inline-flex; align-items: center; gap: 4px; font-size: 14px; cursor: pointer; }}
p.intro {{ margin: 0 0 6px 0; }}
"""

SEP = "\x1f"  # ends each value in ShapesPanel.values (ASCII's unit separator: never in a value)

SHAPES_ESM = r"""
export function render({ model, el }) {
  el.innerHTML = `<div class="head"><h2>${model.title}</h2><div class="picks"><div class="dtypes" role="group">${
    model.dtypes.map((d) => `<button type="button">${d}</button>`).join("")}</div>
    <label><input type="checkbox"> list all L blocks</label></div></div>
    <p class="muted intro"></p><div class="slots"></div>`;
  const box = el.querySelector(".slots"), intro = el.querySelector(".intro");
  const note = () => { intro.innerHTML = model.note; };
  const buttons = [...el.querySelectorAll(".dtypes button")];
  const expand = el.querySelector(".picks input");
  buttons.forEach((b, i) => b.addEventListener("click", () => { model.dtype = model.dtypes[i]; }));
  expand.addEventListener("change", () => { model.expanded = expand.checked; });
  let slots = [];
  const draw = () => { box.innerHTML = model.markup; slots = box.querySelectorAll("[data-v], [data-h]"); };
  const patch = () => {  // write each changed value into its element
    const v = model.values.split(%SEP%);
    v.pop();
    if (slots.length !== v.length) return;
    for (let i = 0; i < v.length; i++) {
      const el = slots[i];
      if (el.tagName === "S") { if (el.style.width !== v[i]) el.style.width = v[i]; }
      else if (el.hasAttribute("data-h")) { if (el.innerHTML !== v[i]) el.innerHTML = v[i]; }
      else if (el.textContent !== v[i]) el.textContent = v[i];
    }
  };
  const picks = () => {
    buttons.forEach((b, i) => { const on = model.dtypes[i] === model.dtype; b.classList.toggle("active", on);
                                b.setAttribute("aria-pressed", String(on)); });
    expand.checked = model.expanded;
  };
  draw(); patch(); picks(); note();
  model.on("markup", () => { draw(); patch(); });
  model.on("note", note);
  model.on("values", patch);
  model.on(["dtype", "expanded"], picks);
}
""".replace("%SEP%", json.dumps(SEP))  # the page splits on the separator Python joins with


def joined(values: tuple[str, ...] | list[str]) -> str:
    """The table's values as ShapesPanel sends them: each ended by SEP."""
    return "".join(v + SEP for v in values)


class ShapesPanel(JSComponent):
    """The card in one ESM component: title, dtype buttons, the listing switch, and the table drawn once from
    `markup`; afterwards only `values` travels, and the page writes each value into its [data-v] element (text,
    or a bar's width) or [data-h] element (markup) if it differs. A change of `markup` redraws."""

    title = param.String(default=SHAPES_TITLE, constant=True)
    note = param.String(default=SHAPES_NOTES["eager"], doc="the intro under the title (markup): app.words.SHAPES_NOTES "
                        "of the attention shown")
    dtypes = param.List(default=list(DTYPES), constant=True, doc="the dtype buttons")
    dtype = param.Selector(default="fp32", objects=list(DTYPES), doc="the dtype shown")
    expanded = param.Boolean(default=False, doc="every block listed")
    markup = param.String(doc="the table's HTML, values inline; every value in it escaped (table_parts)")
    values = param.String(doc="the contents of the [data-v] and [data-h] elements, in document order, each ended "
                               "by SEP: one string, which Bokeh sends without walking a list of hundreds")

    _esm = SHAPES_ESM
    _stylesheets = [TABLE_CSS + HEAD_CSS]


class ShapesTable(pn.viewable.Viewer):
    """Every intermediate tensor of one forward pass at the state's configuration, with memory bars.

    Inputs: the whole `config`, `dtype` and `expanded` (nothing else). A change sends the page the new values
    only; the markup travels again only when the table's structure changes (rows, dtype, listing).
    """

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        parts = self.parts()
        self._template = parts.template
        self._table = ShapesPanel(markup=parts.html, values=joined(parts.values), dtype=self.state.dtype,
                                 note=SHAPES_NOTES[self.state.config.attention],
                                 expanded=self.state.expanded, sizing_mode="stretch_width", margin=0)
        self._table.param.watch(self._picked, ["dtype", "expanded"])
        self.state.param.watch(self._shown, ["dtype", "expanded"])
        self.state.on_inputs(self._update, [*FIELDS, "dtype", "expanded"])

    def _picked(self, event: param.parameterized.Event) -> None:
        with pn.io.hold():
            setattr(self.state, event.name, event.new)

    def _shown(self, event: param.parameterized.Event) -> None:
        setattr(self._table, event.name, event.new)

    def parts(self) -> TableParts:
        return table_at(self.state.config, self.state.dtype, self.state.expanded)

    def rows(self) -> list[ShapeRow]:
        """The rows handed to the table at the current state."""
        trace = self.state.trace
        return shape_rows(trace, bar_scale(trace), self.state.expanded)

    def table_html(self) -> str:
        """The table as the page shows it now."""
        return self.parts().html

    def _update(self) -> None:
        parts = self.parts()
        if parts.template == self._template:
            self._table.values = joined(parts.values)
        else:
            self._template = parts.template
            self._table.param.update(markup=parts.html, values=joined(parts.values),
                                     note=SHAPES_NOTES[self.state.config.attention])

    def __panel__(self) -> pn.viewable.Viewable:
        return self._table
