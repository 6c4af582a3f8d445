"""The "what each change buys" card's markup, from `model.changes` (pure; no Panel, so the export can use it).

`changes_groups` turns a `model.changes.Changes` into the dicts the page shows (labels, formulas and formatted
values, each group under its title); `changes_html` lays them out. The exported page makes the same dicts in
JavaScript (`changesGroups`, `changesHtml`) and tests compare the markup of the two.
"""
from __future__ import annotations

from model import Config
from model import units as fmt
from model.changes import ORDER_NOTE, Changes
from model.cli import model_options
from model.families import recipe_of
from model.parts import latent as latent_part
from model.parts import moe as moe_part

from ...templates import TEMPLATES, fill_html

TITLE = "What each change buys"
SAME = "This is GPT-2's recipe, the lesson's 2019 block: switch on a change of the modern recipe to see what it buys."
# the exported page's notice where it carries a model's changes at the dtype it was written at only (its own model's at
# both): {page_dtype} that dtype, {dtype} the one picked, {command} the export command of this model at {dtype}
OTHER_DTYPE = ("This page carries what each change buys at {page_dtype}, the dtype it was written at, for every model "
               "but its own; pick {page_dtype}, or write a page at {dtype}: {command}")
# the exported page's notice where it does not carry a model at all, by what the model has; {command} its export
# command, {what} "this recipe" (a custom one) or "this model"
UNCOVERED = {
    "mla": ("This page carries latent attention only as it was exported for one, its mixture of experts and the "
            "queries' latent d_cq (or none) included; for this model, export a page: {command}"),
    "moe": ("This page carries a mixture of experts only where it was exported for one, at that model's h_kv; for "
            "this model, export a page: {command}"),
    "modern": ("This page carries the modern recipe of its presets and of the model it was exported for (with h_kv = "
               "h, a group or 1); for {what} at these sizes, export a page: {command}"),
}


def export_command(cfg: Config) -> str:
    """The command that writes an exported page of `cfg` (`model.cli.model_options`)."""
    return f"python -m app export lesson.html {model_options(cfg)}"


def uncovered_text(cfg: Config) -> str:
    """The exported page's notice where it does not carry `cfg`: what it carries, and the command of a page that does."""
    kind = "mla" if latent_part.present(cfg) else "moe" if moe_part.present(cfg) else "modern"
    what = "this recipe" if recipe_of(cfg) == "custom" else "this model"
    return UNCOVERED[kind].format(command=export_command(cfg), what=what)


def changes_groups(c: Changes) -> list[dict]:
    """Each group's key and title, and its lines as the page shows them."""
    return [{"key": g.key, "title": g.title,
             "lines": [{"key": x.key, "label": x.label, "formula": x.formula, "value": fmt.value(x.value, x.unit),
                        "short": fmt.short(x.value, x.unit)} for x in g.lines]} for g in c.groups]


def changes_html(groups: list[dict], dtype: str, note: str = ORDER_NOTE) -> str:
    """The card's body: one table, each change a titled group of lines (its short key as the row class), and
    the note on the order of the changes (`Changes.note`: a mixture of experts' adds its place); GPT-2's
    recipe gets a sentence instead (the templates "changes" and "same" of app/templates.py)."""
    if len(groups) == 1:
        return fill_html(TEMPLATES["same"], {"same": SAME})
    return fill_html(TEMPLATES["changes"], {"dtype": dtype, "note": note, "groups": groups})


def notice_html(text: str) -> str:
    """A notice in the card's place (no GPT-2 twin, or a recipe the exported page does not carry): the template
    "notice"."""
    return fill_html(TEMPLATES["notice"], {"text": text})
