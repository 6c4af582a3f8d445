"""`python -m model --table changes`: what each change of the modern recipe buys, as text, Markdown, CSV or JSON.

Records (`model.changes.changes(cfg, dtype)`) -> formatting, in that order; nothing here computes a figure or
writes a label or a formula.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict

from .changes import DEFAULT_GPU, Changes, changes
from .config import Config
from .layout import paragraph
from .report import config_dict, footer, header, line_rows, markdown_header, markdown_lines

TITLE = "What each change buys, against the GPT-2 twin (bytes at {dtype})"
SAME = "This is GPT-2's recipe: its twin is itself, and no change is listed."


def text(c: Changes, width: int | None = None) -> str:
    """Each group's title, then its lines in columns aligned across the whole table; N in the first line and the
    last. Where wider than `width` (None: never), labels and formulas wrap."""
    rows = line_rows(c.lines, "    ", width)
    out = [*header(c.cfg, width), "", f"{TITLE.format(dtype=c.dtype)}:",
           *paragraph(c.note if c.steps else SAME, width, "  ")]
    i = 0
    for g in c.groups:
        out += ["", *paragraph(g.title, width, "  ")] + [line for lines in rows[i:i + len(g.lines)] for line in lines]
        i += len(g.lines)
    return "\n".join([*out, "", *footer(c.cfg, width)]) + "\n"


def markdown(c: Changes) -> str:
    """One Markdown table per group, under its title."""
    out = [markdown_header(c.cfg), "", f"**{TITLE.format(dtype=c.dtype)}**. {c.note if c.steps else SAME}", ""]
    for g in c.groups:
        out += [f"*{g.title}*", ""] + markdown_lines(g.lines)
    return "\n".join(out)


def csv_text(c: Changes) -> str:
    """One line per figure: key (changes/<change>/<figure>), label, formula, value, unit."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["key", "label", "formula", "value", "unit"])
    w.writerows([x.key, x.label, x.formula, x.value, x.unit] for x in c.lines)
    return buf.getvalue()


def as_dict(c: Changes) -> dict:
    """The configuration, its twin, the order and every group with its lines."""
    return {"config": config_dict(c.cfg), "twin": config_dict(c.twin), "dtype": c.dtype, "note": c.note,
            "groups": [{"key": g.key, "title": g.title, "lines": [asdict(x) for x in g.lines]} for g in c.groups]}


def render(cfg: Config, dtype: str, fmt: str, gpu: str = DEFAULT_GPU, width: int | None = None) -> str:
    """The table in `fmt` ("text", "markdown", "csv" or "json"; text fitted to `width`), fused attention's wall
    against `gpu`; ValueError when `cfg` has no GPT-2 twin."""
    c = changes(cfg, dtype, gpu)
    if fmt == "json":
        return json.dumps(as_dict(c), indent=2) + "\n"
    if fmt == "text":
        return text(c, width)
    return {"markdown": markdown, "csv": csv_text}[fmt](c)
