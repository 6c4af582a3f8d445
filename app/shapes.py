"""Left column: one forward pass, tensor by tensor, as `model.trace` lists it at the current configuration.

`shape_rows` turns a `Trace` into display rows (pure, tested without a browser); `render_table` writes them
as one HTML table with fixed column widths, so dragging a slider changes text and bar widths, never layout;
`ShapesTable` is the view.
"""
from __future__ import annotations

import functools
import html
from dataclasses import dataclass

import panel as pn
import param
from panel.reactive import ReactiveHTML

import model
from model import NOTATION, Config, Trace
from model import units as fmt

from .rules import FIELDS
from .state import ExplorerState, bar_scale
from .styles import BASE, MONO, MUTED, PLAIN, RULE, T2

QUADRATIC = "(B, h, T, T)"  # the attention matrices: the tensors that balloon with T
MAX_LISTED_BLOCKS = 96  # expanded listing: GPT-3 175B in full; beyond, one line stands for the rest


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


def _tensor(row, scale: int, collapsed: bool) -> ShapeRow:
    name = row.local if collapsed and row.block is not None else row.name
    return ShapeRow(kind="tensor", name=name, label=row.label, symbolic=row.symbolic, shape=fmt.shape(row.shape),
                    elements=fmt.thousands(row.numel), memory=fmt.nbytes(row.nbytes),
                    bar=min(1.0, row.nbytes / scale) if scale else 0.0, quadratic=row.symbolic == QUADRATIC,
                    in_block=row.block is not None, view=getattr(row, "view", False),
                    saved=getattr(row, "saved", False))


def _group_heading(block: int | None, L: int, per_block: int) -> ShapeRow:
    if block is None:  # collapsed: block 0 stands for all L blocks
        span = "block 0" if L == 1 else f"blocks 0 … {L - 1}"
        return ShapeRow(kind="group", name=f"{span} × L = {L:,}",
                        label=f"one block's {per_block} tensors; every block repeats these shapes")
    return ShapeRow(kind="group", name=f"block {block}", label=f"of {L:,}")


def shape_rows(trace: Trace, scale_bytes: int, expanded: bool = False) -> list[ShapeRow]:
    """Display rows of `trace`: block rows under a heading (one group "× L", or every block when expanded,
    up to MAX_LISTED_BLOCKS blocks and one line for the rest).

    `scale_bytes` is the memory of a full bar (the largest tensor at T = T_max keeps bars comparable as T moves).
    A pass at T = 1 has no loss (no next token to predict); its place is kept with an "absent" row.
    """
    L = trace.cfg.L
    rows = trace.expanded() if expanded else trace.rows
    per_block = sum(1 for r in trace.rows if r.block is not None)
    out: list[ShapeRow] = []
    previous_block: int | None = None
    for row in rows:
        if expanded and row.block is not None and row.block >= MAX_LISTED_BLOCKS:
            if previous_block == MAX_LISTED_BLOCKS - 1:  # once, where the unlisted blocks begin
                out.append(ShapeRow(kind="group", name=f"blocks {MAX_LISTED_BLOCKS} … {L - 1}",
                                    label=f"{L - MAX_LISTED_BLOCKS:,} more blocks with the same shapes, not listed"))
            previous_block = row.block
            continue
        if row.block is not None and (row.block != previous_block):
            out.append(_group_heading(row.block if expanded else None, L, per_block))
        previous_block = row.block
        out.append(_tensor(row, scale_bytes, collapsed=not expanded))
    if not any(r.name == "loss" for r in rows):
        out.append(ShapeRow(kind="absent", name="loss", label="none at T = 1: no next token to predict",
                            symbolic=NOTATION["loss"][0]))
    return out


# Compact markup (the expanded listing of GPT-3 175B has 1,632 rows): row classes t tensor, k in a block,
# q (B, h, T, T), a absent, g block heading, v view (no new memory), w saved for backward; cell classes
# n tensor name (<b> name, <i> what it is, <u> lesson shape on phones), s lesson shape, c concrete shape,
# e elements, m memory, b bar (<s> is the filled part). Every element that changes while a slider moves
# (concrete shape, elements, memory, bar width, block heading, totals) carries `data-v`: the page receives
# the markup once and afterwards only the list of those contents (see TableSlots).
SLOT = "\x00"  # where a changing value goes in the template; never in escaped text


class _Writer:
    """Writes the table's markup with a SLOT for each changing value, and collects the values in order."""

    def __init__(self) -> None:
        self.values: list[str] = []

    def slot(self, tag: str, value: str, attrs: str = "") -> str:
        """<tag attrs data-v>value</tag>; a bar (<s>) carries its value as its width."""
        self.values.append(value)
        if tag == "s":
            return f'<s data-v style="width:{SLOT}"></s>'
        return f"<{tag}{attrs} data-v>{SLOT}</{tag}>"


def _tr(r: ShapeRow, w: _Writer) -> str:
    e = html.escape
    if r.kind == "group":
        return f'<tr class="g"><td colspan="6">{w.slot("b", r.name)} {w.slot("i", r.label)}</td></tr>'
    classes = " ".join(c for c in ("t", "k" if r.in_block else "", "q" if r.quadratic else "",
                                   "a" if r.kind == "absent" else "", "v" if r.view else "",
                                   "w" if r.saved else "") if c)
    marks = ('<em class="view" title="a view of the tensor above: no new memory">view</em>' if r.view else "") + \
            ('<em class="saved" title="kept by autograd for the backward pass">saved</em>' if r.saved else "")
    shape = w.slot("td", r.shape or "—", ' class="c"')
    elements = w.slot("td", r.elements or "—", ' class="e"')
    memory = w.slot("span", r.memory or "—")
    bar = w.slot("s", f"{100 * r.bar:.1f}%")
    return (f'<tr class="{classes}"><td class="n"><b>{e(r.name)}</b><i>{e(r.label)}</i><u>{e(r.symbolic)}</u></td>'
            f'<td class="s">{e(r.symbolic)}</td>{shape}{elements}<td class="m">{marks}{memory}</td>'
            f'<td class="b">{bar}</td></tr>')


@dataclass(frozen=True)
class TableParts:
    """The table as a template (SLOTs where values change) and the values; `html` puts them together."""

    template: str
    values: tuple[str, ...]

    @property
    def html(self) -> str:
        pieces = self.template.split(SLOT)
        out = [pieces[0]]
        for value, piece in zip(self.values, pieces[1:]):
            out += [html.escape(value), piece]
        return "".join(out)


def table_parts(rows: list[ShapeRow], total: str, dtype: str, scale: str, saved: str | None = None) -> TableParts:
    """The table: fixed column widths, one row per ShapeRow; the footer holds the activation total (new memory
    only: views add none) and, when the trace measures it, the bytes autograd keeps for the backward pass."""
    w = _Writer()
    body = "".join(_tr(r, w) for r in rows)
    e = html.escape
    active = w.slot("td", total, ' class="m total"')  # slots in document order: total, saved, scale
    kept = "" if saved is None else (
        '<tr class="saved"><td class="n"><b>saved for backward</b></td><td class="s"></td>'
        '<td class="c note">what autograd keeps from this pass for one training step</td><td class="e"></td>'
        + w.slot("td", saved, ' class="m total"') + '<td class="b"></td></tr>')
    scale_text = w.slot("span", scale)
    template = f"""<table class="shapes">
<thead><tr><th class="n">tensor</th><th class="s">lesson shape</th><th class="c">shape now</th>
<th class="e">elements</th><th class="m" title="bytes at {e(dtype)}">memory</th>
<th class="b" title="share of the largest tensor at T = T_max">size</th></tr></thead>
<tbody>{body}</tbody>
<tfoot><tr><td class="n"><b>activations</b></td><td class="s"></td>
<td class="c note">new memory at {e(dtype)} (views add none); block rows × L</td>
<td class="e"></td>{active}<td class="b"></td></tr>{kept}
<tr class="scale"><td colspan="6">bars: share of {scale_text}, the largest tensor at T = T_max, so they grow as T does</td></tr>
</tfoot>
</table>"""
    return TableParts(template, tuple(w.values))


def render_table(rows: list[ShapeRow], total: str, dtype: str, scale: str, saved: str | None = None) -> str:
    """The table as one HTML string (what the page shows; `table_parts` splits it for patching)."""
    return table_parts(rows, total, dtype, scale, saved).html


@functools.lru_cache(maxsize=128)
def table_at(cfg: Config, dtype: str, expanded: bool) -> TableParts:
    """The table at one configuration (cached per whole Config, dtype and listing: a slider that returns to
    a value costs a dictionary look-up)."""
    trace = model.trace(cfg, dtype)
    scale = bar_scale(trace)
    saved = getattr(trace, "saved_bytes", None)  # issue 7 adds it; until then no second footer line
    return table_parts(shape_rows(trace, scale, expanded), fmt.nbytes(trace.activation_bytes), dtype,
                       fmt.nbytes(scale), None if saved is None else fmt.nbytes(saved))


class TableSlots(ReactiveHTML):
    """An HTML table drawn once from `markup`; afterwards only `values` travels, and the page writes each value
    into its [data-v] element (text, or a bar's width) if it differs. A change of `markup` redraws."""

    # A one-item list, not a String: Panel runs every str parameter of a ReactiveHTML through nh3, which strips
    # class, style and data-v. The markup is ours, every value in it escaped (table_parts).
    markup = param.List(item_type=str, doc="[the table's HTML, values inline]")
    values = param.List(item_type=str, doc="the contents of the [data-v] elements, in document order")

    _template = '<div id="box" class="slots"></div>'
    _scripts = {
        "render": """
state.draw = () => { box.innerHTML = data.markup[0]; state.slots = box.querySelectorAll('[data-v]'); };
state.patch = () => {
  const v = data.values, s = state.slots;
  if (!s || s.length !== v.length) return;
  for (let i = 0; i < v.length; i++) {
    const el = s[i];
    if (el.tagName === 'S') { if (el.style.width !== v[i]) el.style.width = v[i]; }
    else if (el.textContent !== v[i]) el.textContent = v[i];
  }
};
state.draw(); state.patch();""",
        "markup": "state.draw(); state.patch();",
        "values": "state.patch();",
    }


TABLE_CSS = BASE + f"""
.shapes {{ width: 100%; border-collapse: collapse; table-layout: fixed; }}
th.n {{ width: 19.5%; }} th.s {{ width: 19%; }} th.c {{ width: 21%; }} th.e {{ width: 15.5%; }}
th.m {{ width: 12%; }} th.b {{ width: 13%; }}
th {{ font-size: 11.5px; font-weight: 600; color: {MUTED}; text-align: left; padding: 4px 6px;
      border-bottom: 1px solid {RULE}; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
td {{ padding: 3px 5px; border-bottom: 1px solid #f1f3f5; vertical-align: middle; height: 31px; line-height: 1.2;
      box-sizing: border-box; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }}
td.s, td.c, td.n b, td.n u {{ font-family: {MONO}; font-size: 12px; }}
th.e, th.m, td.e, td.m {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.e {{ font-size: 13px; }}
td.n b {{ display: block; font-weight: 600; overflow: hidden; text-overflow: ellipsis; }}
td.n i {{ display: block; font-style: normal; font-size: 11px; color: {MUTED}; overflow: hidden; text-overflow: ellipsis; }}
td.n u {{ display: none; text-decoration: none; }}
tr.k td.n {{ padding-left: 16px; border-left: 3px solid #d9dcf7; }}
tr.g td {{ height: 28px; background: #f4f5fb; font-size: 12.5px; border-left: 3px solid #b9bff0; }}
tr.g b {{ font-weight: 650; }} tr.g i {{ font-style: normal; color: {MUTED}; }}
tr.q td {{ background: #fff6ef; }}
tr.q td.s {{ color: {T2}; font-weight: 650; }}
tr.a td {{ color: {MUTED}; }}
td.b s {{ display: block; height: 10px; background: {PLAIN}; border-radius: 3px; text-decoration: none; }}
td.b {{ background: linear-gradient(#eef0f3, #eef0f3) left center / 100% 10px no-repeat content-box; }}
tr.q td.b s {{ background: {T2}; }}
tfoot td {{ border-top: 2px solid {RULE}; border-bottom: none; font-weight: 600; height: 32px; background: none !important; }}
tfoot td.note {{ white-space: normal; font-weight: 400; font-size: 11.5px; color: {MUTED}; line-height: 1.25;
                 font-family: inherit; }}
td.m em {{ font-style: normal; font-size: 10.5px; font-weight: 600; border-radius: 3px; padding: 0 3px;
            margin-right: 4px; }}
td.m em.view {{ color: {MUTED}; border: 1px solid {RULE}; }}
td.m em.saved {{ color: #5b4fd6; border: 1px solid #d9d6f7; }}
tr.v td.m span {{ color: {MUTED}; }}
tr.v td.b s {{ background: repeating-linear-gradient(45deg, #c9d3e8 0 3px, transparent 3px 6px); }}
tfoot tr.saved td {{ border-top: none; }}
tfoot tr.scale td {{ border-top: none; font-weight: 400; font-size: 11.5px; color: {MUTED}; height: 20px; }}
.total {{ font-size: 14px; }}
@media (max-width: 640px) {{
  th.s, td.s, th.e, td.e {{ display: none; }}
  th.n {{ width: 31%; }} th.c {{ width: 39%; }} th.m {{ width: 19%; }} th.b {{ width: 11%; }}
  td.n i {{ display: none; }} td.n u {{ display: block; color: {MUTED}; font-size: 10.5px; }}
  .total {{ font-size: 13px; }}
  tr.q td.n u {{ color: {T2}; font-weight: 600; }}
  td.c {{ font-size: 11px; }}
  td, th {{ padding-left: 3px; padding-right: 3px; }}
  td.m {{ font-size: 12.5px; }}
  tr.k td.n {{ padding-left: 8px; }}
}}
"""


class ShapesTable(pn.viewable.Viewer):
    """Every intermediate tensor of one forward pass at the state's configuration, with memory bars.

    Inputs: the whole `config`, `dtype` and `expanded` (nothing else). A change sends the page the new values
    only; the markup travels again only when the table's structure changes (rows, dtype, listing).
    """

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._dtype = pn.widgets.RadioButtonGroup.from_param(self.state.param.dtype, label="", color="light",
                                                             margin=(0, 8, 0, 0),
                                                             stylesheets=[":host { font-size: 12px; }"])
        self._expand = pn.widgets.Checkbox.from_param(self.state.param.expanded, label="list all L blocks",
                                                      margin=(6, 0, 0, 0))
        parts = self.parts()
        self._template = parts.template
        self._table = TableSlots(markup=[parts.html], values=list(parts.values), sizing_mode="stretch_width",
                                 stylesheets=[TABLE_CSS], margin=0)
        self.state.on_inputs(self._update, [*FIELDS, "dtype", "expanded"])

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
            self._table.values = list(parts.values)
        else:
            self._template = parts.template
            self._table.param.update(markup=[parts.html], values=list(parts.values))

    def __panel__(self) -> pn.viewable.Viewable:
        title = pn.pane.HTML("<h2>One forward pass, tensor by tensor</h2>", stylesheets=[BASE], margin=(2, 12, 0, 0))
        note = pn.pane.HTML(
            "<p class='muted'>In execution order, as <code>model.trace</code> records it. "
            "<span style='color:#e8590c;font-weight:600'>Orange</span>: the attention matrices (B, h, T, T), "
            "which grow with T².</p>", stylesheets=[BASE], sizing_mode="stretch_width", margin=(0, 0, 6, 0))
        head = pn.FlexBox(title, pn.Row(self._dtype, self._expand, margin=0), flex_wrap="wrap",
                          justify_content="space-between", align_items="center", margin=(0, 0, 2, 0),
                          sizing_mode="stretch_width")
        return pn.Column(head, note, self._table, sizing_mode="stretch_width", margin=0)
