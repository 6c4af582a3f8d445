"""Colours and CSS shared by the views. Each view carries its own stylesheet (Panel renders views in shadow
roots), so the page looks the same served, embedded in an iframe, or in a Jupyter cell."""
from __future__ import annotations

INK = "#1f2937"
MUTED = "#6b7280"
RULE = "#e5e7eb"
PAGE = "#f6f7f9"
CARD = "#ffffff"
ACCENT = "#2563eb"
T2 = "#e8590c"  # the (B, h, T, T) attention matrices: they grow with T²
PLAIN = "#6b8cce"  # every other tensor
RECIPE_ONLY = "#0f766e"  # the mark of a tensor only in this recipe (model.recipe_rows.MARK)
# each part with a fixed state's bars (its KEY, `model.stack.STATEFUL`): Gated DeltaNet, Mamba 2, Kimi delta attention,
# Mamba
STATEFUL_COLOURS = {"lin": "#c2255c", "ssm": "#9c36b5", "kda": "#d6336c", "mb": "#862e9c"}
PART_COLOURS = {  # the budget chart's bars, by line key (model.budgeting.CHART)
    "params/emb": "#64748b",
    "params/attn_block": "#e8590c",
    "params/mlp_block": "#2f9e44",
    "params/blocks": "#5b4fd6",
    "params/norms": "#a3b1c2",
    "params/head": "#1098ad",
    # a mixture of experts' chart (model.budgeting.MOE_CHART): attention's orange, the MLP's greens
    "params/attention": "#e8590c",
    "params/dense_mlps": "#2f9e44",
    "params/experts": "#5b4fd6",
    "params/experts_active": "#9c8ff0",
    "params/shared": "#2f9e44",
    "params/routers": "#f08c00",
    # a hybrid's (model.budgeting.STATEFUL_BARS, in LIN_CHART and MOE_CHART): its attention blocks in attention's orange,
    # the blocks of its part with a fixed state in that part's colour (`STATEFUL_COLOURS`), a dense one's MLPs green
    **{f"params/attention_{key}": "#e8590c" for key in STATEFUL_COLOURS},
    **{f"params/{key}{every}": colour for key, colour in STATEFUL_COLOURS.items() for every in ("", "_all")},
    "params/mlps": "#2f9e44",
}
BAR_INSIDE = 0.45  # a chart bar longer than this share of the longest one carries its text inside, in white
BAR_SHARE = 88  # the longest chart bar's share of its track, in %; the rest holds a short bar's text
FONT = ("system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Noto Sans', sans-serif")
MONO = "ui-monospace, 'SFMono-Regular', 'DejaVu Sans Mono', Menlo, Consolas, monospace"

BASE = f"""
:host {{ font-family: {FONT}; color: {INK}; font-size: 14px; }}
code, .mono {{ font-family: {MONO}; font-size: 12.5px; }}
.muted {{ color: {MUTED}; }}
.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
h2 {{ font-size: 16px; font-weight: 650; margin: 0 0 2px 0; }}
p {{ margin: 0; }}
"""

CARD_STYLES = {"background": CARD, "border": f"1px solid {RULE}", "border-radius": "10px",
               "padding": "12px 14px", "box-sizing": "border-box",
               "min-width": "0"}  # Bokeh's least width of a column is its widest row's: a card wraps its rows instead


# --- per view (Panel renders each view in a shadow root; the exported page reuses the same sheets) ---------
LINES_CSS = f"""
table.lines {{ border-collapse: collapse; width: 100%; font-size: 12.5px; margin-top: 4px; }}
table.lines td {{ padding: 3px 6px 3px 0; vertical-align: top; line-height: 1.3; }}
table.lines td.l code {{ display: block; font-size: 11.5px; color: {MUTED}; }}
table.lines td.v {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; font-weight: 600; }}
table.lines td.v small {{ display: block; font-weight: 400; color: {MUTED}; font-size: 11px; }}
table.lines tr.grp td {{ padding-top: 8px; font-weight: 650; font-size: 12.5px; border-bottom: 1px solid {RULE}; }}
table.lines tr.step td.l {{ padding-left: 12px; color: #374151; }}
table.lines tr.sum td {{ border-top: 1px solid {RULE}; }}
"""

TABLE_CSS = BASE + LINES_CSS + f"""
.shapes {{ width: 100%; border-collapse: collapse; table-layout: fixed; }}
th.n {{ width: 19.5%; }} th.s {{ width: 19%; }} th.c {{ width: 21%; }} th.e {{ width: 15.5%; }}
th.m {{ width: 12%; }} th.b {{ width: 13%; }}
.shapes th {{ font-size: 11.5px; font-weight: 600; color: {MUTED}; text-align: left; padding: 4px 6px;
      border-bottom: 1px solid {RULE}; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }}
.shapes td {{ padding: 3px 5px; border-bottom: 1px solid #f1f3f5; vertical-align: middle; height: 31px; line-height: 1.2;
      box-sizing: border-box; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }}
/* the lesson's notation, the shapes now and the descriptions wrap, never cut: a row is as tall as its words */
.shapes td.s, .shapes td.c, td.n i, td.n u {{ white-space: normal; overflow-wrap: break-word; text-overflow: clip; }}
td.n b {{ white-space: normal; overflow-wrap: anywhere; }}
.shapes tr.g td {{ white-space: normal; }}
td.s, td.c, td.n b, td.n u {{ font-family: {MONO}; font-size: 12px; }}
th.e, th.m, td.e, td.m {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.e {{ font-size: 13px; }}
td.n b {{ display: block; font-weight: 600; }}
td.n i {{ display: block; font-style: normal; font-size: 11px; color: {MUTED}; }}
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
tfoot tr.scale td {{ border-top: none; font-weight: 400; font-size: 11.5px; color: {MUTED}; height: 20px; }}
.total {{ font-size: 14px; }}
tr.v td.m {{ color: {MUTED}; font-style: italic; }}
tr.sv td.n b::after {{ content: " ●"; color: {ACCENT}; font-size: 10px; }}
p.legend {{ font-size: 11.5px; margin: 6px 0 2px 0; }} p.legend .dot {{ color: {ACCENT}; }}
em.mk {{ font-style: normal; font-weight: 700; font-size: 13px; color: {RECIPE_ONLY}; }}
tr.r td.n {{ background: #f0fdfa; }}
p.note {{ font-size: 11.5px; margin: 4px 0 0 0; line-height: 1.35; }}
@media (max-width: 640px) {{
  th.s, td.s, th.e, td.e {{ display: none; }}
  th.n {{ width: 31%; }} th.c {{ width: 39%; }} th.m {{ width: 19%; }} th.b {{ width: 11%; }}
  td.n i {{ display: none; }} td.n u {{ display: block; color: {MUTED}; font-size: 10.5px; }}
  .total {{ font-size: 13px; }}
  tr.q td.n u {{ color: {T2}; font-weight: 600; }}
  td.c {{ font-size: 11px; }}
  .shapes td, .shapes th {{ padding-left: 3px; padding-right: 3px; }}
  td.m {{ font-size: 12.5px; }}
  tr.k td.n {{ padding-left: 8px; }}
}}
"""


CHART_CSS = f"""  /* HTML bar charts: the budget card's parameters, the training card's memory (app/templates.py) */
.parts {{ display: flex; flex-direction: column; gap: 5px; margin: 10px 0 2px 0; font-size: 12px; width: 100%;
  box-sizing: border-box; }}
.part {{ position: relative; display: flex; align-items: center; outline: none; }}
.part .pl {{ flex: 0 0 124px; text-align: right; padding-right: 8px; line-height: 1.15; overflow-wrap: anywhere; }}
.part .track {{ flex: 1 1 auto; display: flex; align-items: center; min-width: 0; height: 22px;
  border-left: 1px solid {RULE}; }}
.part .bar {{ height: 100%; display: flex; align-items: center; justify-content: flex-end;
  border-radius: 0 3px 3px 0; }}
.part .pt {{ font-size: 11.5px; white-space: nowrap; padding: 0 5px; font-variant-numeric: tabular-nums; }}
.part.in .pt {{ color: #fff; padding-right: 6px; }}
.part .tip {{ display: none; position: absolute; z-index: 5; left: 132px; top: 24px; max-width: 80%;
  background: #fff; border: 1px solid {RULE}; border-radius: 6px; padding: 6px 8px; font-size: 12px;
  line-height: 1.45; box-shadow: 0 2px 8px rgba(0, 0, 0, 0.12); }}
.part:hover .tip, .part:focus .tip {{ display: block; }}
.part:hover .pl, .part:focus .pl {{ font-weight: 650; }}
"""


BUDGET_CSS = BASE + LINES_CSS + CHART_CSS + f"""
.big {{ font-size: 22px; font-weight: 700; font-variant-numeric: tabular-nums; letter-spacing: -0.2px; }}
.n {{ line-height: 1.25; }}
.nf {{ font-size: 12px; margin: 2px 0 6px 0; }}
.note {{ font-size: 11.5px; margin-top: 6px; line-height: 1.35; }}
.captions {{ margin: 4px 0 0 0; padding-left: 18px; font-size: 12.5px; line-height: 1.45; }}
.captions li {{ margin: 1px 0; }}
"""


STATUS_CSS = BASE + f"""
.status {{ font-size: 12.5px; min-height: 19px; line-height: 1.45; }}
.status .n {{ color: {T2}; font-weight: 600; }}
"""


# the training card (app/cards/train/view.py and the exported page)
TRAIN_CSS = BASE + CHART_CSS + f"""
.mem .track {{ position: relative; margin-right: 2px; }}
.mem .pl b {{ display: block; font-weight: 600; font-variant-numeric: tabular-nums; }}
.mem .bar {{ flex: 0 0 auto; border-radius: 0; }}
.mem .bar + .bar {{ box-shadow: inset 1px 0 0 #fff; }}
.mem .cap {{ position: absolute; top: -3px; bottom: -3px; border-left: 2px dashed {T2}; }}
.head {{ font-size: 14px; line-height: 1.5; overflow-wrap: anywhere; }}
.head b {{ font-variant-numeric: tabular-nums; }}
.fits {{ color: #2f9e44; font-weight: 650; }}
.nofit {{ color: {T2}; font-weight: 650; }}
.legend {{ font-size: 11.5px; display: flex; flex-wrap: wrap; gap: 2px 12px; margin: 6px 0 0 0; }}
.legend .key {{ white-space: nowrap; }}
.legend i {{ display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; }}
.legend i.line {{ width: 14px; height: 0; border-top: 2px dashed {T2}; vertical-align: 3px; }}
.note {{ font-size: 11.5px; line-height: 1.4; margin-top: 4px; }}
.warn {{ color: {T2}; font-size: 12.5px; }}
.chart-title {{ font-size: 12.5px; font-weight: 650; }}
table.lines {{ border-collapse: collapse; font-size: 12.5px; width: 100%; }}
table.lines th {{ text-align: left; font-size: 13px; padding: 8px 0 2px 0; border-bottom: 1px solid {RULE}; }}
table.lines td {{ padding: 2px 10px 2px 0; vertical-align: top; border-bottom: 1px solid #f3f4f6;
  overflow-wrap: anywhere; }}
table.lines td.f {{ font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, monospace; font-size: 11.5px; color: #374151; }}
table.lines td.v {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; font-weight: 600; }}
table.lines tr.sub td {{ font-size: 11.5px; color: {MUTED}; font-weight: 400; border: 0; padding-top: 0; }}
@media (max-width: 640px) {{  /* a phone: each figure's formula under its label, the value beside them */
  table.lines tr {{ display: grid; grid-template-columns: minmax(0, 1fr) auto; border-bottom: 1px solid #f3f4f6; }}
  table.lines td {{ border-bottom: 0; }}
  table.lines td.f {{ grid-row: 2; grid-column: 1 / 3; padding-top: 0; }}
  table.lines td.v {{ grid-row: 1; grid-column: 2; }}
  table.lines th, table.lines tr.sub td {{ grid-column: 1 / 3; }}
}}
"""
