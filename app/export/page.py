"""The exported page as a Bokeh `Document`: the live page's cards, controls, table, chart and lines, wired to one
`CustomJS` callback (page.js) that recomputes everything in the browser.

The page imports no Panel: only Bokeh's own models, so BokehJS inlined is all it needs (`render_html` checks
the result loads no other file). Looks come from app/styles.py, words from app/words.py and `model`.
"""
from __future__ import annotations

import html
import json
import sys
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.layouts import column, row
from bokeh.models import (Checkbox, ColumnDataSource, CustomJS, Div, InlineStyleSheet, RadioButtonGroup,
                          Select, Slider, TextInput)
from bokeh.resources import INLINE

from model import DTYPES, Config
from model.config import FIELD, MODEL_CHOICES as CHOICES  # GeGLU: Gemma's MLP
from model.fields import Field
from model.families import MLP_KINDS, QK_NORM_LABEL, RECIPE_LABELS, SWITCH_LABELS, menu_groups, preset_labels, recipe_of
from model.rules import preset_of
from model.training import TrainSetup

from model.inference import InferSetup
from model.infer_report import CHART_B, CHART_T

from ..cards.infer.charts import show_twin, step_chart, tokens_chart
from ..cards.infer.markup import COLUMNS as INFER_COLUMNS
from ..cards.infer.markup import chart_title_html, leaves_out_html
from ..cards.infer.markup import title_html as infer_title_html
from ..cards.recipe.markup import TITLE as CHANGES_TITLE
from ..styles import BASE, BUDGET_CSS, CARD, FONT, INK, MUTED, PAGE, RULE, STATUS_CSS, TABLE_CSS, TRAIN_CSS
from ..words import CHINCHILLA_RULE, MOE_SWITCH_DOC, SHORT, SHORT_WHEN, TAGLINE, TRAIN_NOTES, TRAIN_TITLE, shapes_title_html
from ..words import TRAIN_CONTROLS as C
from ..templates import TEMPLATES, fill_html
from .compiled import compiled_js
from .spec import BOXES, SLIDERS, lines_js, page_spec, static_spec
from model.parts import latent, moe

PAGE_TITLE = "Transformer Shapes"
TEMPLATE = """
{% block preamble %}
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="description" content="Tensor shapes and parameter/FLOP budget of a GPT-2-style Transformer, computed in your browser.">
<style>body { margin: 0; background: """ + PAGE + """; } noscript p { padding: 16px; font-size: 16px; }</style>
{% endblock %}
{% block contents %}
<noscript><p>This page computes everything in your browser: please enable JavaScript.</p></noscript>
{{ super() }}
{% endblock %}
"""
CARD_CSS = f""":host(.card) {{ background: {CARD}; border: 1px solid {RULE}; border-radius: 10px; padding: 12px 14px;
box-sizing: border-box; }}
:host {{ font-family: {FONT}; color: {INK}; }}
.bk-slider-title {{ display: none; }}
"""
BOX_CSS = "input { text-align: right; font-variant-numeric: tabular-nums; }"  # a number box's text
HEADER_CSS = BASE + f"""
h1 {{ font-size: 24px; font-weight: 750; margin: 0; letter-spacing: -0.3px; }}
h1 .tag {{ font-size: 13px; font-weight: 500; color: {MUTED}; margin-left: 8px; }}
p.what {{ font-size: 14.5px; margin: 4px 0 0 0; color: #374151; }}
"""
SWITCH_WIDTHS = {"attention": 220}  # px of a switch's menu where its choices are long (default 150)
WHAT_TO_DO = ("Drag a slider or pick a preset: every tensor of one forward pass, the parameter budget and "
              "the training run follow, computed in your browser. Tokens and real values need the live explorer "
              "(make run).")


def page_code() -> str:
    """page.js as the page carries it: its comment lines (what a maintainer reads) left out."""
    return "\n".join(x for x in _text("page.js").splitlines() if not x.lstrip().startswith("//"))


def _text(name: str) -> str:
    """A file shipped in the app.export package (page.js)."""
    try:
        root = resources.files("app.export")
    except (NotADirectoryError, ModuleNotFoundError):
        root = Path(__file__).parent
    return root.joinpath(name).read_text(encoding="utf-8")


def _sheet(*css: str) -> InlineStyleSheet:
    return InlineStyleSheet(css="\n".join(css))


def field_label(field: str, name: str) -> str:
    """A field's label: its symbol and the name under it (page.js writes it again where the recipe renames h and
    T_max, `app.words.field_names`)."""
    return fill_html(TEMPLATES["field_label"], {"field": field, "doc": FIELD[field].doc, "name": name})


def _field(field: str, label_css: InlineStyleSheet) -> tuple[Slider, TextInput, Div, object]:
    """One field as on the live page: symbol and short name, a number box (text in `model.numbers`' grammar, read
    and checked by the page) and a slider whose range page.js sets (h walks the divisors of d); page.js names both
    for screen readers (`ariaLabel`)."""
    label = Div(text=field_label(field, SHORT[field]), stylesheets=[label_css], width=100, name=f"{field}_label")
    slider = Slider(start=0, end=1, value=0, step=1, show_value=False, name=field, title=None,
                    sizing_mode="stretch_width", min_width=140)
    box = TextInput(value="", name=f"{field}_input", width=84, stylesheets=[_sheet(BOX_CSS)])
    return slider, box, label, column(row(label, box), slider, width=200, margin=(0, 8, 4, 0))


def _recipe_controls(cfg: Config, label_css: InlineStyleSheet) -> tuple[object, object]:
    """The recipe choice (GPT-2 (2019), modern, custom) and each change as its own control: the switches of
    `model.config.CHOICES` (norm, positions, mlp, bias, attention), QK-norm, and d_ff, h_kv and d_head as number
    boxes showing the values in use; page.js applies the rules."""
    recipe = row(Div(text="<b>Recipe</b>", stylesheets=[_sheet(BASE)]),
                 Select(options=[(k, v) for k, v in RECIPE_LABELS.items()], value=recipe_of(cfg), name="recipe",
                        width=220))
    selects = [Select(title=name, options=[(k, SWITCH_LABELS[name][k]) for k in CHOICES[name]],
                      value=getattr(cfg, name), name=name, width=SWITCH_WIDTHS.get(name, 150),
                      description=FIELD[name].about) for name in CHOICES if FIELD[name].group == "recipe"]  # not a
    # part's own choice (Mamba 2's biases: a file, a preset or a link sets it)
    qk = Checkbox(label=QK_NORM_LABEL, active=cfg.qk_norm, name="qk_norm", margin=(28, 8, 4, 4))
    boxes = [_box(f) for f in BOXES if f.group == "recipe"]
    return recipe, row(*selects, *boxes, qk, styles={"flex-wrap": "wrap", "gap": "6px"})


def _box(f: Field) -> TextInput:
    """A field's number box, titled by its key, named opt_ and its name (spec.widget_table), its doc as the tooltip."""
    return TextInput(title=f.key, value="", name=f"opt_{f.name}", width=96, description=f.about,
                     stylesheets=[_sheet(BOX_CSS)])


def _mlp_controls(cfg: Config) -> list:
    """A mixture of experts' page only: the MLP's switch, dense or MoE (`model.families.MLP_KINDS`), and number boxes
    for E, k and d_expert (`spec.PAGE_MOE_SIZES`) showing the values in use; page.js applies the rules (k ≤ E) and
    hides the boxes where the model is dense. A dense page has none: its MoE twin's pass structures are not carried."""
    if not moe.present(cfg):
        return []
    switch = Select(title="moe", options=list(MLP_KINDS.items()), value="moe", name="moe", width=170,
                    description=MOE_SWITCH_DOC)
    return [switch, *(_box(f) for f in BOXES if f.group == "moe")]


def _latent_controls(cfg: Config) -> list:
    """A latent attention's page only (DeepSeek-V3): number boxes for d_c, d_cq ("none": q projected from x directly),
    d_R, d_nope and d_v (`spec.BOXES`) showing the values in use; page.js applies the rules
    (`model.rules`: an even d_R, h_kv = h, d_head = d_nope + d_R) and hides the boxes where the model has none. Other
    pages have none: a latent attention's pass structures are carried only on the page written for one."""
    if not latent.present(cfg):
        return []
    return [_box(f) for f in BOXES if f.group == "latent"]


CLEARFIX = ".bk-clearfix { display: block !important; }"  # a Div's HTML as wide as the Div: a chart's tracks


def _train_card(card: InlineStyleSheet) -> tuple[object, list]:
    """The live page's training card (app/cards/train/view.py): controls, headline, legend, chart, note, lines."""
    train = static_spec()["train"]
    css = _sheet(TRAIN_CSS)
    div = lambda name: Div(text="", name=name, sizing_mode="stretch_width", stylesheets=[css], disable_math=True)  # noqa: E731
    D = TextInput(value="", title=C["D"], placeholder=f"empty = {CHINCHILLA_RULE}", name="train_D",
                  width=250)
    gpu = Select(title=C["gpu"], options=[tuple(x) for x in train["labels"]["gpu"]], value=train["default"]["gpu"],
                 name="train_gpu", width=250)
    # number boxes are text boxes, read by page.js in `model.numbers`' grammar (300e9, 300 billion, 0.4)
    # each input named train_ and its URL key (train_query.TRAIN_KEYS: page.js reads and writes them by it)
    peak = TextInput(title=C["gpu_peak"], name="train_gpu_peak", width=110, visible=False)
    memory = TextInput(title=C["gpu_memory"], name="train_gpu_memory", width=110, visible=False)
    gpus = TextInput(title=C["gpus"], name="train_gpus", width=110)
    mfu = TextInput(title=C["mfu"], name="train_mfu", width=110)
    price = TextInput(title=C["price"], name="train_price", width=170)
    radios = {k: RadioButtonGroup(labels=[label for _, label in train["labels"][k]], active=0, name=f"train_{k}")
              for k in ("optimizer", "zero", "recompute")}
    fit = Select(title=C["fit"], options=[tuple(x) for x in train["labels"]["fit"]], value=train["default"]["fit"],
                 name="train_fit", width=200)

    def group(label: str, widget) -> object:
        return column(Div(text=f"<span style='font-size:12px;font-weight:600'>{html.escape(label)}</span>",
                          stylesheets=[_sheet(BASE)]), widget)

    wrap = {"flex-wrap": "wrap", "gap": "8px", "align-items": "flex-end"}
    controls = column(row(D, gpu, peak, memory, gpus, mfu, price, sizing_mode="stretch_width", styles=wrap),
                      row(group(C["optimizer"], radios["optimizer"]),
                          group(C["zero"], radios["zero"]), group(C["recompute"], radios["recompute"]),
                          fit, sizing_mode="stretch_width", styles=wrap),
                      sizing_mode="stretch_width", name="train_controls")
    notices, head, legend, lines = (div(n) for n in ("train_notices", "train_head", "train_legend", "train_lines"))
    chart = Div(text="", name="train_chart", sizing_mode="stretch_width", disable_math=True,  # bars as wide as the card
                stylesheets=[_sheet(TRAIN_CSS, CLEARFIX)])
    title = Div(text=TRAIN_TITLE, sizing_mode="stretch_width", stylesheets=[_sheet(BASE)])
    note = Div(text=f"<p class='note muted'>{html.escape(TRAIN_NOTES['dense'])}</p>", sizing_mode="stretch_width",
               stylesheets=[css])
    inputs = [D, gpu, peak, memory, gpus, mfu, price, *radios.values(), fit]
    body = column(legend, chart, note, lines, sizing_mode="stretch_width", name="train_body")  # hidden for an MoE
    layout = column(title, controls, notices, head, body, sizing_mode="stretch_width",
                    css_classes=["card", "training-card"], stylesheets=[card])
    return layout, [*inputs, notices, head, legend, chart, lines, controls, body]


def _infer_card(card: InlineStyleSheet, spec: dict) -> tuple[object, list]:
    """The live page's inference card (app/cards/infer/view.py): its menus (GPU presets, weights, KV cache; group and
    efficiency as exported), the headline, the two charts, the knee, what the bound leaves out, every figure. page.js
    fills them from the spec's tables (`spec._inference`)."""
    infer = spec["infer"]
    css = _sheet(TRAIN_CSS, STATUS_CSS)
    div = lambda name: Div(text="", name=name, sizing_mode="stretch_width", stylesheets=[css],  # noqa: E731
                           disable_math=True)
    menus = [Select(title=infer["labels"][label], options=[tuple(x) for x in infer["menus"][key]],
                    value=infer["initial"][key], name=f"infer_{key}", width=width)
             for key, label, width in (("gpu", "infer_gpu", 330), ("weights", "weights", 200),
                                       ("kv_dtype", "kv_dtype", 140))]
    fixed = Div(text=f"<p class='note muted'>{html.escape(infer['fixed'])}</p>", stylesheets=[css],
                margin=(22, 0, 0, 8))
    sources = {k: ColumnDataSource({c: [] for c in cols}, name=f"infer-{k}") for k, cols in INFER_COLUMNS.items()}
    charts = [column(Div(text=chart_title_html(words), stylesheets=[css], sizing_mode="stretch_width"), chart,
                     sizing_mode="stretch_width")
              for words, chart in ((CHART_B, tokens_chart(sources["by_B"], sources["here_B"], sources["knee"], CHART_B)),
                                   (CHART_T, step_chart(sources["by_T"], sources["here_T"], CHART_T, sources["twin_T"])))]
    # the all-attention twin's dashed steps where the page's model has one (Gated DeltaNet blocks), as the live card
    show_twin(charts[1].children[1], any(t["charts"]["twin_T"]["T"] for t in infer["tables"].values()))
    notice, head, knee, lines = (div(n) for n in ("infer_notice", "infer_head", "infer_knee", "infer_lines"))
    leaves_out = Div(text=leaves_out_html(), stylesheets=[css], sizing_mode="stretch_width")
    figures = column(head, charts[0], knee, charts[1], leaves_out, lines, sizing_mode="stretch_width",
                     name="infer_figures")
    title = Div(text=infer_title_html(), stylesheets=[_sheet(BASE)], sizing_mode="stretch_width")
    layout = column(title, row(*menus, fixed, styles={"flex-wrap": "wrap", "gap": "8px"}), notice, figures,
                    sizing_mode="stretch_width", css_classes=["card", "inference-card"], stylesheets=[card])
    return layout, [*menus, notice, head, knee, lines, figures, *sources.values()]


def build_document(cfg: Config, dtype: str = "fp32", title: str = PAGE_TITLE,
                   setup: TrainSetup | None = None, infer: InferSetup | None = None) -> Document:
    """The page as a Bokeh `Document`: cards like the live page's, wired to one CustomJS callback."""
    card = _sheet(CARD_CSS)
    label_css = _sheet(BASE, ".sym { font-size: 15px; } .name { font-size: 11.5px; }")
    html_div = lambda name, css, **kw: Div(text="", name=name, sizing_mode="stretch_width", stylesheets=[css],  # noqa: E731
                                           disable_math=True, **kw)
    header = Div(text=f'<h1>{html.escape(title)}<span class="tag">{html.escape(TAGLINE)}</span></h1>'
                      f'<p class="what">{html.escape(WHAT_TO_DO)}</p>', sizing_mode="stretch_width",
                 stylesheets=[_sheet(HEADER_CSS)], disable_math=True)
    names = {v: k for k, v in preset_labels(moe=True).items()}  # every preset; a mixture of experts' page carries its own
    preset = Select(options=menu_groups(moe=True), value=names[preset_of(cfg)], name="preset", width=360,
                    styles={"max-width": "calc(100vw - 130px)"})  # a phone: a long label stays inside the card
    recipe, switches = _recipe_controls(cfg, label_css)
    mlp = _mlp_controls(cfg)
    latent = _latent_controls(cfg)
    fields = {f.key: _field(f.key, label_css) for f in SLIDERS}
    tie = Checkbox(label="tie the head to W_te (GPT-2)", active=cfg.tie, name="tie")
    status = html_div("status", _sheet(STATUS_CSS))
    advanced = Div(text="<b>Advanced: T_max and weight tying</b>", stylesheets=[_sheet(BASE)])
    controls = column(row(Div(text="<b>Preset</b>", stylesheets=[_sheet(BASE)]), preset),
                      row(*(fields[f][3] for f in ("B", "T", "d", "h", "L", "V")), sizing_mode="stretch_width",
                          styles={"flex-wrap": "wrap"}),
                      recipe, switches, *(row(*ws, styles={"flex-wrap": "wrap", "gap": "6px"}) for ws in (mlp, latent) if ws),
                      advanced, row(fields["T_max"][3], tie, styles={"flex-wrap": "wrap"}), status,
                      sizing_mode="stretch_width", css_classes=["card", "controls-card"], stylesheets=[card])
    dtypes = RadioButtonGroup(labels=list(DTYPES), active=list(DTYPES).index(dtype), name="dtype")
    expanded = Checkbox(label="list all L blocks", active=False, name="expanded")
    shapes = html_div("shapes", _sheet(TABLE_CSS, BUDGET_CSS))
    shapes_title = Div(text=shapes_title_html(cfg.attention), name="shapes_title", sizing_mode="stretch_width",
                       stylesheets=[_sheet(BASE)], styles={"flex": "1 1 320px", "min-width": "0"})  # page.js writes
    # it again when the attention switch flips; on a phone the dtype's buttons wrap below it
    shapes_card = column(row(shapes_title, dtypes, expanded, sizing_mode="stretch_width",
                             styles={"flex-wrap": "wrap", "gap": "6px"}), shapes,
                         sizing_mode="stretch_width", css_classes=["card", "shapes-card"], stylesheets=[card],
                         styles={"flex": "1 1 700px", "min-width": "0"})
    budget_css = _sheet(BUDGET_CSS)
    head, lines, captions = (html_div(n, budget_css) for n in ("head", "lines", "captions"))
    # the bars as wide as the card: Bokeh's Div shrinks its content to fit
    chart = html_div("chart", _sheet(BUDGET_CSS, CLEARFIX))
    note = html_div("chart_note", budget_css)  # page.js writes the chart's note (budget_markup.note_html)
    budget_card = column(Div(text="<h2>Parameter budget</h2>", stylesheets=[_sheet(BASE)]), head, chart, note, lines,
                         captions, sizing_mode="stretch_width", css_classes=["card", "budget-card"],
                         stylesheets=[card], styles={"flex": "1 1 430px", "min-width": "0"})
    train_card, train_models = _train_card(card)
    changes = html_div("changes", budget_css)
    changes_card = column(Div(text=f"<h2>{html.escape(CHANGES_TITLE)}</h2>", stylesheets=[_sheet(BASE)]), changes,
                          sizing_mode="stretch_width", css_classes=["card", "changes-card"], stylesheets=[card])
    recipe_widgets = [recipe.children[1], *switches.children, *mlp, *latent]  # named: recipe, norm, ..., opt_ff_dim,
    # qk_norm, a mixture of experts' moe, opt_experts, opt_top_k, opt_expert_dim, latent attention's opt_latent_dim, …
    widgets = [preset, tie, dtypes, expanded, status, shapes_title, shapes, head, chart, note, lines, captions, changes,
               *recipe_widgets, *(w for f in fields for w in fields[f][:2]), *train_models,
               *(fields[f][2] for f in SHORT_WHEN)]  # the labels of h and T_max: the recipe renames them
    spec_json = page_spec(cfg, dtype, setup, infer)
    infer_card, infer_models = _infer_card(card, spec_json)
    widgets += infer_models
    callback = CustomJS(args={"spec": json.dumps(spec_json), "widgets": widgets},
                        code=compiled_js() + "\n" + page_code() + "\n" + lines_js(spec_json)
                        + "\nreturn main(cb_obj);\n")
    for w in (preset, *(x for f in fields for x in fields[f][:2])):
        w.js_on_change("value", callback)
    for w in recipe_widgets:
        w.js_on_change("active" if isinstance(w, Checkbox) else "value", callback)
    tie.js_on_change("active", callback)
    dtypes.js_on_change("active", callback)
    expanded.js_on_change("active", callback)
    for w in train_models:
        if isinstance(w, RadioButtonGroup):
            w.js_on_change("active", callback)
        elif isinstance(w, (TextInput, Select)):
            w.js_on_change("value", callback)
    for w in infer_models[:3]:  # the card's menus
        w.js_on_change("value", callback)
    main = row(shapes_card, budget_card, sizing_mode="stretch_width",
               styles={"flex-wrap": "wrap", "gap": "14px", "align-items": "flex-start"})
    doc = Document()
    doc.add_root(column(header, controls, main, changes_card, train_card, infer_card, sizing_mode="stretch_width",
                        name="page",
                        styles={"padding": "16px 18px 28px 18px", "max-width": "1360px", "margin": "0 auto",
                                "gap": "12px", "background": PAGE}))
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


def render_html(cfg: Config, dtype: str = "fp32", title: str = PAGE_TITLE, setup: TrainSetup | None = None,
                infer: InferSetup | None = None) -> str:
    """The whole page as one HTML string, BokehJS inlined; raises RuntimeError if it would load any file.

    Bokeh adds every imported model library's scripts to a page; Panel's include a file that cannot load from
    file://. `python -m app export` imports no Panel; a process that has imported it gets a clear error here.
    """
    if "panel" in sys.modules:
        raise RuntimeError("render_html runs without Panel imported (its models would add scripts the page cannot "
                           "load from file://): use `python -m app export` or a fresh Python process")
    text = file_html(build_document(cfg, dtype, title, setup, infer), resources=INLINE, title=title, template=TEMPLATE)
    found = external_references(text)
    if found:
        raise RuntimeError(f"the page would not be self-contained: it references {', '.join(found)}")
    return text
