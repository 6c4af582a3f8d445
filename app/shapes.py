"""Left column: one forward pass, tensor by tensor, as `model.trace` lists it at the current configuration.

`shape_rows` turns a `Trace` into display rows (pure, tested without a browser); `render_table` writes them
as one HTML table with fixed column widths, so dragging a slider changes text and bar widths, never layout;
`ShapesTable` is the view.
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import panel as pn
import param

from model import NOTATION, Trace
from model import units as fmt

from .state import ExplorerState
from .styles import TABLE_CSS, BASE, MONO, MUTED, PLAIN, RULE, T2
from .words import MAX_LISTED_BLOCKS, QUADRATIC



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


def _tensor(row, scale: int, collapsed: bool) -> ShapeRow:
    name = row.local if collapsed and row.block is not None else row.name
    return ShapeRow(kind="tensor", name=name, label=row.label, symbolic=row.symbolic, shape=fmt.shape(row.shape),
                    elements=fmt.thousands(row.numel), memory=fmt.nbytes(row.nbytes),
                    bar=min(1.0, row.nbytes / scale) if scale else 0.0, quadratic=row.symbolic == QUADRATIC,
                    in_block=row.block is not None)


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


# Compact markup (the expanded listing of GPT-3 175B has 1,632 rows, re-sent on every change):
# row classes t tensor, k in a block, q (B, h, T, T), a absent, g block heading; cell classes n tensor name
# (<b> name, <i> what it is, <u> lesson shape on phones), s lesson shape, c concrete shape, e elements,
# m memory, b bar (<s> is the filled part).
def _tr(r: ShapeRow) -> str:
    e = html.escape
    if r.kind == "group":
        return f'<tr class="g"><td colspan="6"><b>{e(r.name)}</b> <i>{e(r.label)}</i></td></tr>'
    classes = " ".join(c for c in ("t", "k" if r.in_block else "", "q" if r.quadratic else "",
                                   "a" if r.kind == "absent" else "") if c)
    return (f'<tr class="{classes}"><td class="n"><b>{e(r.name)}</b><i>{e(r.label)}</i><u>{e(r.symbolic)}</u></td>'
            f'<td class="s">{e(r.symbolic)}</td><td class="c">{e(r.shape or "—")}</td>'
            f'<td class="e">{e(r.elements or "—")}</td><td class="m">{e(r.memory or "—")}</td>'
            f'<td class="b"><s style="width:{100 * r.bar:.1f}%"></s></td></tr>')


def render_table(rows: list[ShapeRow], total: str, dtype: str, scale: str) -> str:
    """The table as HTML: fixed column widths, one row per ShapeRow, the activation total in the footer."""
    e = html.escape
    body = "".join(_tr(r) for r in rows)
    return f"""<table class="shapes">
<thead><tr><th class="n">tensor</th><th class="s">lesson shape</th><th class="c">shape now</th>
<th class="e">elements</th><th class="m" title="bytes at {e(dtype)}">memory</th>
<th class="b" title="share of {e(scale)}, the largest tensor at T = T_max">size</th></tr></thead>
<tbody>{body}</tbody>
<tfoot><tr><td class="n"><b>activations</b></td><td class="s"></td>
<td class="c note">of this pass at {e(dtype)}, all kept for the backward pass; block rows × L</td>
<td class="e"></td><td class="m total">{e(total)}</td><td class="b"></td></tr>
<tr class="scale"><td colspan="6">bars: share of {e(scale)}, the largest tensor at T = T_max, so they grow as T does</td></tr>
</tfoot>
</table>"""




class ShapesTable(pn.viewable.Viewer):
    """Every intermediate tensor of one forward pass at the state's configuration, with memory bars."""

    state = param.ClassSelector(class_=ExplorerState, doc="the explorer's state")

    def __init__(self, **params) -> None:
        super().__init__(**params)
        self._dtype = pn.widgets.RadioButtonGroup.from_param(self.state.param.dtype, label="", color="light",
                                                             margin=(0, 8, 0, 0),
                                                             stylesheets=[":host { font-size: 12px; }"])
        self._expand = pn.widgets.Checkbox.from_param(self.state.param.expanded, label="list all L blocks",
                                                      margin=(6, 0, 0, 0))
        self._table = pn.pane.HTML(self.table_html(), sizing_mode="stretch_width", stylesheets=[TABLE_CSS],
                                   margin=0)
        self.state.param.watch(self._update, ["config", "dtype", "expanded"])

    def rows(self) -> list[ShapeRow]:
        """The rows handed to the table at the current state."""
        scale = max(r.nbytes for r in self.state.trace_at_T_max.rows)
        return shape_rows(self.state.trace, scale, self.state.expanded)

    def table_html(self) -> str:
        trace = self.state.trace
        scale = max(r.nbytes for r in self.state.trace_at_T_max.rows)
        rows = shape_rows(trace, scale, self.state.expanded)
        return render_table(rows, fmt.nbytes(trace.activation_bytes), self.state.dtype, fmt.nbytes(scale))

    def _update(self, *_events) -> None:
        self._table.object = self.table_html()

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
