"""Left column: one forward pass, tensor by tensor, as `model.trace` lists it at the current configuration.

app/cards/shapes/markup.py makes the rows and the table's markup (pure, tested without a browser); `ShapesTable` is the
view, which patches only the values that change while a slider moves.
"""
from __future__ import annotations

import functools
import json

import panel as pn
import param
from panel.custom import JSComponent

import model
from model import DTYPES, Config
from model import units as fmt
from model.config import FIELDS
from model.recipe_rows import recipe_rows

from ...state import ExplorerState, bar_scale
from ...styles import INK, TABLE_CSS
from ...words import SHAPES_NOTES, SHAPES_TITLE
from ..budget.markup import shown
from .markup import ShapeRow, TableParts, shape_rows, table_parts


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
