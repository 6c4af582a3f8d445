"""A page that needs no server: `python -m app export lesson.html [config options]`.

Writes one self-contained HTML file (BokehJS inlined, no network, works from file://) with the explorer's
sliders, the shapes table and the parameter budget, all recomputed in the browser by one Bokeh `CustomJS`
callback (app/export.js). Nothing the page shows is copied by hand:

- the shape rows are `model.trace` rows (name, label, lesson-notation shape), embedded as data and evaluated
  in the page with model/notation.py's grammar; one row list per structural case (`structure_key`);
- the budget is `FORMULAS`, written once in a tiny expression language that is both Python (checked against
  `model.budget` by tests/test_export.py) and, translated by `formulas_js`, BigInt JavaScript;
- bounds, field docs, dtypes and presets come from `model`.
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import html
import json
import operator
import os
import sys
import tempfile
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.layouts import column, row
from bokeh.models import (Checkbox, ColumnDataSource, CustomJS, Div, FactorRange, HoverTool, InlineStyleSheet,
                          LabelSet, NumericInput, Select, Slider)
from bokeh.plotting import figure
from bokeh.resources import Resources

import model
from model import BOUNDS, DTYPES, FIELD_DOCS, PRESETS, Config
from model.cli import OneLineParser, add_config_arguments, config_from_args

FIELDS: tuple[str, ...] = ("B", "T", "d", "h", "L", "V", "T_max")
PAGE_TITLE = "Transformer Shapes"

# ---------------------------------------------------------------------------------------------------------
# Budget formulas. Grammar: whole numbers, names, +, -, *, parentheses. Names are Config fields (tie is 1 when
# the head is tied, else 0) or earlier formulas. Each mirrors the model.budget field / function of its name;
# tests/test_export.py checks `evaluate_formulas` against model.budget for many configs.
# ---------------------------------------------------------------------------------------------------------
FORMULAS: dict[str, str] = {
    "params_emb": "(V + T_max) * d",  # model.budget.params_emb: W_te (V, d) + W_pe (T_max, d)
    "params_attn_block": "4*d*d + 4*d",  # params_attn_block: W_qkv (d, 3d) + W_o (d, d) + biases
    "params_mlp_block": "8*d*d + 5*d",  # params_mlp_block: (d, 4d) + (4d, d) + biases
    "params_norms": "(2*L + 1) * 2*d",  # params_norms: gain + bias of 2L + 1 LayerNorms
    "params_head": "(1 - tie) * V * d",  # params_head: 0 when tied to W_te
    "params_attn": "L * params_attn_block",  # the chart's "attention × L"
    "params_mlp": "L * params_mlp_block",  # the chart's "MLP × L"
    "params_approx": "12*L*d*d + params_emb + params_head",  # params_approx
    "params_exact": "params_emb + params_attn + params_mlp + params_norms + params_head",  # N (module count)
    "flops_fwd_per_token": "2 * params_exact",  # 2N
    "flops_train_per_token": "6 * params_exact",  # 6N
    # FlopCounterMode on the real forward, per token: per block qkv 6d² + proj 2d² + MLP 16d² = 24d², q kᵀ and
    # attn @ v 2Td each = 4Td (the full (T, T) score matrix); the head 2Vd (also when tied).
    "flops_fwd_measured_per_token": "L*(24*d*d + 4*T*d) + 2*V*d",
    "flops_attn_per_token": "4*L*T*d",  # flops_attn_per_token
    "T_attn_equals_dense": "6*d",  # 4LTd = 24Ld² at T = 6d
}
# The one float: attn_share = flops_attn_per_token / flops_fwd_measured_per_token (Number division in JS).

_OPS = {ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul)}


def _compile(expr: str, known: set[str], name_of, number_of, binop) -> object:
    """Walk one formula's AST, allowing only the grammar above; the three callbacks build the result."""

    def walk(node: ast.AST) -> object:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return binop(type(node.op), walk(node.left), walk(node.right))
        if isinstance(node, ast.Name) and node.id in known:
            return name_of(node.id)
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
            return number_of(node.value)
        raise ValueError(f"formula {expr!r}: {ast.dump(node)} is outside the formula grammar")

    return walk(ast.parse(expr, mode="eval").body)


def _symbols(cfg: Config) -> dict[str, int]:
    return {**{f: getattr(cfg, f) for f in FIELDS}, "tie": int(cfg.tie)}


def evaluate_formulas(cfg: Config) -> dict[str, int | float]:
    """`FORMULAS` evaluated in Python at `cfg`, plus attn_share: what the page computes, for the tests."""
    values: dict[str, int | float] = dict(_symbols(cfg))
    for name, expr in FORMULAS.items():
        values[name] = _compile(expr, set(values), values.__getitem__, int, lambda op, a, b: _OPS[op][1](a, b))
    values["attn_share"] = values["flops_attn_per_token"] / values["flops_fwd_measured_per_token"]
    return {name: values[name] for name in (*FORMULAS, "attn_share")}


def formulas_js() -> str:
    """`FORMULAS` as a JavaScript function `budget(s)` over BigInt config values `s` (tie as 1n / 0n)."""
    known = set(FIELDS) | {"tie"}
    lines = ["function budget(s) {"]
    for name, expr in FORMULAS.items():
        js = _compile(expr, known, lambda n: n if n in FORMULAS else f"s.{n}", lambda v: f"{v}n",
                      lambda op, a, b: f"({a} {_OPS[op][0]} {b})")
        lines.append(f"  const {name} = {js};  // {expr}")
        known.add(name)
    lines.append(f"  return {{{', '.join(FORMULAS)}}};")
    lines.append("}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# Shape rows from the real model's trace.
# ---------------------------------------------------------------------------------------------------------
def structure_key(cfg: Config) -> str:
    """Which row list a config gets: the loss row exists only for T > 1, the head's label depends on tie.

    Mirrored in export.js (`structureKey`); tests check every traced config has exactly its variant's rows.
    """
    return f"{'T>1' if cfg.T > 1 else 'T=1'},{'tied' if cfg.tie else 'untied'}"


def _probe(T: int, tie: bool) -> Config:
    return Config(B=1, T=T, d=2, h=1, L=1, V=2, T_max=2, tie=tie)


def row_variants() -> tuple[dict[str, list[dict]], int]:
    """Row lists per `structure_key`, traced from tiny probe configs, and the bytes of an integer element.

    A row is {name, local, label, symbolic, block, float}; `float` is whether its bytes follow the dtype
    (found by tracing at two dtypes), `block` whether it repeats L times.
    """
    variants: dict[str, list[dict]] = {}
    int_bytes: set[int] = set()
    for T in (1, 2):
        for tie in (True, False):
            cfg = _probe(T, tie)
            rows = []
            for r32, r16 in zip(model.trace(cfg, "fp32").rows, model.trace(cfg, "bf16").rows, strict=True):
                is_float = r32.nbytes != r16.nbytes
                if not is_float:
                    int_bytes.add(r32.nbytes // r32.numel)
                rows.append({"name": r32.name, "local": r32.local, "label": r32.label, "symbolic": r32.symbolic,
                             "block": r32.block is not None, "float": is_float})
            variants[structure_key(cfg)] = rows
    if len(int_bytes) != 1:
        raise RuntimeError(f"integer tensors of the trace have differing element sizes {sorted(int_bytes)}")
    return variants, int_bytes.pop()


# ---------------------------------------------------------------------------------------------------------
# The page.
# ---------------------------------------------------------------------------------------------------------
# Slider ends (inclusive); a typed value beyond one stretches its slider. Every preset fits.
SLIDER_END: dict[str, int] = {"B": 64, "T": 4096, "d": 12288, "h": 128, "L": 96, "V": 131072, "T_max": 4096}

TEMPLATE = """
{% block preamble %}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="Tensor shapes and parameter/FLOP budget of a GPT-2-style Transformer, computed in your browser.">
<style>
  body { background: #f7f7f5; color: #1f2328; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  noscript p { padding: 16px; font-size: 16px; }
</style>
{% endblock %}
{% block contents %}
<noscript><p>This page computes everything in your browser: please enable JavaScript.</p></noscript>
{{ super() }}
{% endblock %}
"""


class _InlineOnly(Resources):
    """BokehJS inlined, without the external files other libraries' Bokeh models declare.

    Bokeh adds the `__javascript__` / `__css__` of every imported model class to every page: importing panel
    (app/__init__.py does) would add a relative <script src> for es-module-shims that fails from file://.
    No such model is in this page.
    """

    def __init__(self, components: list | None = None) -> None:
        super().__init__(mode="inline", components=components)

    def _collect_external_resources(self, resource_attr: str) -> list[str]:
        return []

    def clone(self, *, components: list | None = None) -> _InlineOnly:
        return _InlineOnly(components if components is not None else list(self.components))


class _PageDocument(Document):
    """A Document whose JSON leaves out other libraries' data-model definitions (panel registers some)."""

    def to_json(self, *, deferred: bool = True):  # type: ignore[override]
        doc_json = super().to_json(deferred=deferred)
        if isinstance(doc_json, dict):
            doc_json.pop("defs", None)  # this page defines no DataModel; see _InlineOnly for why others appear
        return doc_json


def _text(name: str) -> str:
    """A file shipped in the app package (package data: export.js, export.css)."""
    try:
        root = resources.files("app")
    except NotADirectoryError:  # `app` seen as a namespace package (an editable install made before app/__init__.py)
        root = Path(__file__).parent
    return root.joinpath(name).read_text(encoding="utf-8")


def page_spec(cfg: Config, dtype: str) -> dict:
    """Everything the page's JavaScript needs, all taken from `model`."""
    variants, int_bytes = row_variants()
    return {
        "fields": list(FIELDS),
        "bounds": {f: list(BOUNDS[f]) for f in FIELDS},
        "docs": {f: FIELD_DOCS[f] for f in FIELDS},
        "dtypes": dict(DTYPES),
        "int_bytes": int_bytes,
        "presets": {name: dataclasses.asdict(p) for name, p in PRESETS.items()},
        "variants": variants,
        "initial": {**dataclasses.asdict(cfg), "dtype": dtype},
    }


def _field_controls(field: str, value: int, css: InlineStyleSheet) -> tuple[Slider, NumericInput, object]:
    lo, hi = BOUNDS[field]
    end = max(SLIDER_END[field], value, *(getattr(p, field) for p in PRESETS.values()))
    slider = Slider(start=lo, end=min(end, hi), value=value, step=1, show_value=False, name=field,
                    title=f"{field} — {FIELD_DOCS[field]}", sizing_mode="stretch_width", min_width=160,
                    stylesheets=[css])
    box = NumericInput(value=value, low=lo, high=hi, mode="int", name=f"{field}_input", width=92,
                       align="end", stylesheets=[css])
    return slider, box, row(slider, box, sizing_mode="stretch_width")


def _params_chart() -> tuple[object, ColumnDataSource]:
    """Horizontal bars of the parameter breakdown; export.js fills the source."""
    parts = ["embeddings", "attention × L", "MLP × L", "LayerNorms", "head"]
    source = ColumnDataSource({"part": parts, "value": [0.0] * 5, "text": [""] * 5, "exact": [""] * 5,
                               "color": ["#8a8f98"] * 5}, name="params_source")
    fig = figure(y_range=FactorRange(factors=parts[::-1]), height=260, sizing_mode="stretch_width", min_width=260,
                 toolbar_location=None, tools="", title="Parameters by part", name="params_chart")
    fig.hbar(y="part", right="value", height=0.45, color="color", source=source)
    # values sit above their bars, from the axis: legible at any width, never clipped at the right edge
    fig.add_layout(LabelSet(x=0, y="part", text="text", source=source, x_offset=3, y_offset=9, text_baseline="bottom",
                            text_font_size="12px", text_color="#1f2328"))
    fig.add_tools(HoverTool(tooltips=[("part", "@part"), ("parameters", "@exact")]))
    fig.x_range.start = 0
    fig.x_range.range_padding = 0.05
    fig.xaxis.visible = False
    fig.xgrid.visible = False
    fig.ygrid.visible = False
    fig.outline_line_color = None
    fig.yaxis.major_label_text_font_size = "13px"
    fig.title.text_font_size = "14px"
    fig.background_fill_color = "#ffffff"
    return fig, source


def _controls(cfg: Config, dtype: str, css: InlineStyleSheet) -> tuple[list, object]:
    """The widgets (preset, a slider and a box per field, tie, dtype, notice) and their card."""
    preset = Select(title="Preset", options=["custom", *PRESETS], name="preset", sizing_mode="stretch_width",
                    value=next((name for name, p in PRESETS.items() if p == cfg), "custom"))
    fields = [_field_controls(f, getattr(cfg, f), css) for f in FIELDS]
    tie = Checkbox(label="Head tied to the token table W_te (GPT-2)", active=cfg.tie, name="tie")
    dtype_select = Select(title="Activation dtype (token ids stay int64)", value=dtype, options=list(DTYPES),
                          name="dtype", sizing_mode="stretch_width")
    notice = Div(text="", name="notice", sizing_mode="stretch_width", stylesheets=[css], disable_math=True)
    card = column(preset, *(f[2] for f in fields), tie, dtype_select, notice, width=360, min_width=300,
                  max_width=420, sizing_mode="stretch_width", name="controls", stylesheets=[css], css_classes=["card"])
    widgets = [preset, *(f[0] for f in fields), *(f[1] for f in fields), tie, dtype_select, notice]
    return widgets, card


def build_document(cfg: Config, dtype: str = "fp32", title: str = PAGE_TITLE) -> Document:
    """The page as a Bokeh `Document`: widgets, Divs and the chart, wired to one CustomJS callback."""
    css = InlineStyleSheet(css=_text("export.css"))
    header = Div(text=(f"<h1>{html.escape(title)}</h1><p class='lead'>A GPT-2-style decoder's tensor shapes "
                       "and parameter/FLOP budget, computed in your browser. Drag a slider or type a value; "
                       "pick a preset to start from a published model.</p>"),
                 sizing_mode="stretch_width", stylesheets=[css], disable_math=True, name="header")
    widgets, controls = _controls(cfg, dtype, css)
    budget_div, shapes = (Div(text="<p>Computing…</p>", name=name, sizing_mode="stretch_width", stylesheets=[css],
                              disable_math=True) for name in ("budget", "shapes"))
    chart, source = _params_chart()
    callback = CustomJS(
        args={"spec": json.dumps(page_spec(cfg, dtype)), "widgets": [*widgets, budget_div, shapes, source]},
        code=_text("export.js") + "\n" + formulas_js() + "\nreturn main(cb_obj);\n",
    )
    for widget in widgets:
        if isinstance(widget, (Slider, NumericInput, Select)):
            widget.js_on_change("value", callback)
        elif isinstance(widget, Checkbox):
            widget.js_on_change("active", callback)
    budget_card = column(budget_div, chart, sizing_mode="stretch_width", min_width=300, name="budget_panel",
                         css_classes=["card"], stylesheets=[css])
    top = row(controls, budget_card, sizing_mode="stretch_width", styles={"flex-wrap": "wrap", "gap": "12px"})
    doc = _PageDocument()
    doc.add_root(column(header, top, shapes, sizing_mode="stretch_width", styles={"padding": "8px 12px"}, name="page"))
    doc.title = title
    doc.js_on_event("document_ready", callback)
    return doc


class _References(HTMLParser):
    """Collects every tag attribute that loads something (script text is not parsed as tags)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [f"<{tag} {k}={v!r}>" for k, v in attrs if k in ("src", "href", "srcset", "data") and v]


def external_references(text: str) -> list[str]:
    """The tags of an HTML page that would load another file: none, for a self-contained page."""
    parser = _References()
    parser.feed(text)
    parser.close()
    return parser.found


def render_html(cfg: Config, dtype: str = "fp32", title: str = PAGE_TITLE) -> str:
    """The whole page as one HTML string, BokehJS inlined; raises RuntimeError if it references any file."""
    text = file_html(build_document(cfg, dtype, title), resources=_InlineOnly(), title=title, template=TEMPLATE)
    found = external_references(text)
    if found:
        raise RuntimeError(f"the page would not be self-contained: it references {', '.join(found)}")
    return text


# ---------------------------------------------------------------------------------------------------------
# The command line.
# ---------------------------------------------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The export subcommand's arguments: the output file, `python -m model`'s config options, a title."""
    parser.add_argument("out", metavar="OUT.html", help="file to write (created or replaced; not a directory)")
    add_config_arguments(parser)
    parser.add_argument("--title", default=PAGE_TITLE, help=f"page title (default {PAGE_TITLE!r})")


def check_output_path(raw: str) -> Path:
    """`raw` as a Path that can be written as a plain file; else ValueError naming the problem."""
    if raw.strip() == "":
        raise ValueError("the output path is empty: give a file name such as lesson.html")
    path = Path(raw)
    if path.is_dir():
        raise ValueError(f"{path} is a directory: give a file path such as {path / 'lesson.html'}")
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} exists and is not a regular file: choose another output path")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"cannot write {path}: permission denied")
    return path


def write_page(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory (no half-written page)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".export-", suffix=".html")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Validate, render and write; bad input ends in `parser.error` (one line, exit status 2)."""
    try:
        cfg = config_from_args(args)
        path = check_output_path(args.out)
    except ValueError as e:
        parser.error(str(e))
    text = render_html(cfg, args.dtype, args.title)
    try:
        write_page(path, text)
    except OSError as e:
        parser.error(f"cannot write {path}: {e.strerror or e}")
    print(f"wrote {path} ({len(text.encode()):,} bytes): open it in any browser, no server needed")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m app.export OUT.html [options]` (the same as `python -m app export ...`)."""
    parser = OneLineParser(prog="python -m app export", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
