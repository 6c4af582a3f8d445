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
PART_COLOURS = {  # the budget chart's bars, by line key (model.budgeting.CHART)
    "params/emb": "#64748b",
    "params/attn_block": "#e8590c",
    "params/mlp_block": "#2f9e44",
    "params/blocks": "#5b4fd6",
    "params/norms": "#a3b1c2",
    "params/head": "#1098ad",
}
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
               "padding": "12px 14px", "box-sizing": "border-box"}
