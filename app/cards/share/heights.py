"""How tall an embedded view is: the iframe height the share card writes and static/course_example.html uses.

The parts' heights are measured in Chromium at 700 px wide, the narrow end of a course page's column (there the
panels stack; at 820 and 900 px every part is at most as tall, so nothing is cut and little is left over). A panel
whose height follows its content is estimated from the records it shows: the shapes table from each row's words
(how many lines its name, description and lesson shape wrap to), the changes card from the changes the recipe
makes. tests/test_browser_embed.py opens views in Chromium and checks that each fits its height.
"""
from __future__ import annotations

import math
import textwrap

from model import Config, trace
from model.changes import change_keys
from model.config import FIELDS, LINKED
from model.families import extras_line
from model.recipe_rows import recipe_rows

from ...query import CONTROLS, PANELS, ViewOptions
from ...state import bar_scale
from ...words import status_rules
from ..controls.view import sizes_view
from ..shapes.markup import ShapeRow, shape_rows

PX = {  # heights in px at 700 px wide
    "page": 8, "gap": 14,  # the embedded page's padding, and the gap between cards
    "card": 24, "status line": 18, "fields": 63, "preset": 37, "recipe": 37, "switches": 62, "advanced": 43,
    "shapes": 190, "memory line": 57, "legend line": 34, "heading": 28, "line": 13, "row": 9, "least row": 35,
    "shape line": 14.4,
    "budget, dense": 1180, "budget, moe": 1900, "tokens": 330, "values": 2070, "closed": 60, "training": 2840, "training, modern": 3070, "inference, dense": 2480, "inference, moe": 2960,
    "changes": 650, "per change": 225, "changes, GPT-2": 200,
}
PER_LINE = {"status": 100, "fields": 4, "switches": 5, "name": 15, "label": 21, "shape": 10}  # what one line holds:
# characters of the status line, fields and switches of the controls, characters of a row's name, description and
# lesson shape (a row in a block is indented by three of them)
SWITCH_KEYS = tuple(k for k in CONTROLS if k not in ("preset", "recipe", *FIELDS))  # the recipe's switches and
# boxes, the window's, latent attention's and the MLP's switch and boxes too
MLP_ROW = ("moe", *(f.key for f in LINKED if f.group == "moe" and f.controlled))  # the MLP's switch and its boxes


def _lines(text: str, width: int) -> int:
    return max(1, len(textwrap.wrap(text, width, break_long_words=False)))


def row_height(r: ShapeRow) -> float:
    """One row of the shapes table: its name over its description, or its lesson shape, whichever is taller."""
    if r.kind == "group":
        return PX["heading"]
    indent = 3 if r.in_block else 0
    name = r.name + (" ◆" if r.only else "") + (" ●" if r.saved else "")
    stack = PX["row"] + PX["line"] * (_lines(name, PER_LINE["name"] - indent) + _lines(r.label, PER_LINE["label"] - indent))
    return max(PX["least row"], stack, 8 + PX["shape line"] * _lines(r.symbolic, PER_LINE["shape"]))


def shapes_height(cfg: Config) -> int:
    """The shapes card: its head, every row, the recipe's legend, the memory lines."""
    tr = trace(cfg, "fp32")
    rows = sum(row_height(r) for r in shape_rows(tr, bar_scale(tr)))
    return math.ceil(PX["shapes"] + rows + PX["memory line"] * len(tr.lines)
                     + PX["legend line"] * len(recipe_rows(cfg).legend))


def controls_height(options: ViewOptions, cfg: Config) -> int:
    """The controls card: the preset row, rows of fields, the recipe and its switches, the fold, the line of Gemma's
    or gpt-oss's extras, the status line."""
    shown = options.controls
    if not shown:
        return 0
    fields = [c for c in shown if c not in ("preset", "T_max", "tie", *SWITCH_KEYS, "recipe")]
    hidden = [c for c, value in sizes_view(cfg).items() if value is None]  # a dense model's MoE boxes, …
    switches = [c for c in shown if c in SWITCH_KEYS and c not in hidden]
    rows = [[c for c in switches if c not in MLP_ROW], [c for c in switches if c in MLP_ROW]]  # the recipe's,
    # then the MLP's choice with its boxes
    status = math.ceil(len(status_rules(cfg)) / PER_LINE["status"])
    status += math.ceil(len(extras_line(cfg) or "") / PER_LINE["status"])
    return (PX["card"] + PX["status line"] * status + PX["preset"] * ("preset" in shown)
            + PX["fields"] * math.ceil(len(fields) / PER_LINE["fields"]) + PX["recipe"] * ("recipe" in shown)
            + PX["switches"] * sum(math.ceil(len(row) / PER_LINE["switches"]) for row in rows)
            + PX["advanced"] * any(c in shown for c in ("T_max", "tie")))


def panel_height(panel: str, options: ViewOptions, cfg: Config) -> int:
    """One panel, open or closed as the page starts it (app.page: values and a GPT-2 changes card start closed
    among all the panels)."""
    every = options.panels == PANELS
    if panel == "shapes":
        return shapes_height(cfg)
    if panel == "values":
        return PX["closed"] if every else PX["values"]
    if panel == "changes":
        if cfg.gpt2_recipe:
            return PX["closed"] if every else PX["changes, GPT-2"]
        return PX["changes"] + PX["per change"] * len(change_keys(cfg))
    if panel == "budget":  # a mixture of experts adds N_active, a bar and its lines (Qwen3 30B-A3B: 1,880 px)
        return PX[f"budget, {cfg.ffn_kind}"]
    if panel == "training":
        return PX["training" if cfg.gpt2_recipe else "training, modern"]
    if panel == "inference":  # a mixture of experts adds its experts' lines (N_e, S_e, an expert's bytes, E_B)
        return PX[f"inference, {cfg.ffn_kind}"]
    return PX[panel]  # tokens


def embed_height(options: ViewOptions, cfg: Config) -> int:
    """The iframe height of an embedded view of `cfg` with these controls and panels, its cards stacked."""
    cards = [h for h in (controls_height(options, cfg), *(panel_height(p, options, cfg) for p in options.panels)) if h]
    return PX["page"] + sum(cards) + PX["gap"] * (len(cards) - 1)
