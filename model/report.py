"""Tables of a trace and a budget for people and course pages: text, Markdown, CSV and JSON.

Records (`Trace` rows and lines, `Budget.lines`) -> formatting, in that order; nothing here computes a figure,
writes a label or a formula: every figure is a `model.figures.Line`.
Collapsed block rows are listed once per kind of block under its group header (`Trace.groups`: "× L" for a dense
model, "blocks 3 … 60: MoE, × 58" for a mixture of experts in some blocks); `expand=True` lists all L blocks.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict

from . import units
from . import stack
from .budgeting import Budget, budget, chart, chart_note
from .layout import paragraph, row_lines
from .config import Config, config_dict, kind_label, typed_blocks
from .figures import Line
from .memory import kv_cache_lines
from .recipe_rows import MARK, NONE, RecipeRows, recipe_rows
from .parts import each, mlp, moe, says, window
from .tracing import Row, Trace, block_groups, trace
from .training import REFERENCES, TrainSetup, plan


def describe(cfg: Config) -> str:
    """One line naming the configuration in the lesson's notation: the global dims with each part's sizes (`describe`
    of a part: h_kv and d_head, latent attention's widths, d_ff, a mixture of experts' E, k, …), and the recipe in
    words where it is not GPT-2's (`recipe_text`)."""
    head = "head tied to W_te" if cfg.tie else "separate head"
    if cfg.gpt2_recipe:
        return (f"B={cfg.B:,} T={cfg.T:,} d={cfg.d:,} h={cfg.h:,} (d_head={cfg.d_head:,}) L={cfg.L:,} "
                f"V={cfg.V:,} T_max={cfg.T_max:,}, {head}")
    sizes = [stack.mixer(cfg).describe(cfg), mlp.describe(cfg), f"L={cfg.L:,}", moe.describe(cfg)]
    return (f"B={cfg.B:,} T={cfg.T:,} d={cfg.d:,} h={cfg.h:,} {' '.join(s for s in sizes if s)} V={cfg.V:,} "
            f"T_max={cfg.T_max:,}, {head}; {recipe_text(cfg)}")


def recipe_text(cfg: Config) -> str:
    """The recipe in words, each part's (`words`) in `model.parts.PARTS`' order: "RMSNorm, RoPE, SwiGLU, grouped-query
    attention (h/h_kv = 4), no biases, fused attention"; and T past the trained context."""
    parts = [w for words in each("words", cfg) for w in words]
    parts += [f"T beyond the trained context T_max={cfg.T_max:,}"] if cfg.beyond_context else []
    return ", ".join(parts)


def _counts(cfg: Config) -> str:
    """N, and what the parts add beside it (`headline`: a mixture of experts' N_active): "N = 124,439,808", "N =
    46,702,792,704 · N_active = 12,879,925,248"."""
    b = budget(cfg)
    return f"N = {b.params_exact:,}" + "".join(each("headline", cfg, b))


def header(cfg: Config, width: int | None = None) -> list[str]:
    """The first line of every plain-text table: N (and N_active), then the configuration (`describe`), fitted to
    `width`."""
    return paragraph(f"{_counts(cfg)} · {describe(cfg)}", width, "GPT  ", "     ")


def markdown_header(cfg: Config) -> str:
    """`header` in Markdown: "**GPT** N = 124,439,808 · B=8 …"."""
    return f"**GPT** {_counts(cfg)} · {describe(cfg)}"


def footer(cfg: Config, width: int | None = None) -> list[str]:
    """The last line of a plain-text report, as torchinfo's "Total params": N, exact and rounded, and what the parts
    add (`footer`: a mixture of experts' N_active, the parameters one token uses; latent attention's MTP note)."""
    b = budget(cfg)
    n = b.params_exact
    return paragraph(f"Total parameters: N = {n:,} ({units.params(n)}), every weight, bias and norm gain of the "
                     f"module{''.join(each('footer', cfg, b))}", width)


def _human(line: Line) -> str:
    return units.value(line.value, line.unit)


def _memory(row: Row) -> str:
    """A row's memory cell: its bytes, or "view" for a tensor that shares an earlier one's storage."""
    return "view" if row.view else units.nbytes(row.nbytes)


def line_rows(lines: tuple[Line, ...], indent: str = "  ", width: int | None = None) -> list[list[str]]:
    """Label, formula and value of each line (and its rounded companion), in aligned columns; where wider than
    `width`, the label and formula columns wrap. The lines of each figure apart (`model.layout.row_lines`)."""
    cells = [[x.label, x.formula, _human(x), units.short(x.value, x.unit)] for x in lines]
    return row_lines(cells, right={2}, wrap=(1, 0), width=width, indent=indent, above=0)


def line_table(lines: tuple[Line, ...], indent: str = "  ", width: int | None = None) -> list[str]:
    """`line_rows`'s lines, one after the other."""
    return [line for rows in line_rows(lines, indent, width) for line in rows]


def _display_rows(tr: Trace, expand: bool) -> list[Row | str]:
    """Rows to print, with a group header before the block rows (one header per block when expanded)."""
    rows = tr.expanded() if expand else tr.rows
    titles = {g.blocks[0]: g.title for g in tr.groups}
    several = len(titles) > 1
    out: list[Row | str] = []
    for row in rows:
        first_of_block = row.block is not None and (not out or isinstance(out[-1], str)
                                                    or out[-1].block != row.block)
        if first_of_block:
            if expand:
                out.append(f"block {row.block}: {kind_label(tr.cfg, row.kind)}" if several else f"block {row.block}")
            else:
                out.append(titles[row.block])
        out.append(row)
    return out


def _notes(cfg: Config) -> tuple[str, ...]:
    """The notes under the shapes table: what memory and saved mean, and the parts' (a mixture of experts' routing)."""
    return (MEMORY_NOTE, *(note for notes in each("notes", cfg) for note in notes))


def _cells(row: Row, expand: bool, marks: RecipeRows = NONE) -> list[str]:
    """A row's cells; its name carries `MARK` where the row exists only in this recipe (`model.recipe_rows`)."""
    name = row.name if row.block is None else "  " + (row.name if expand else row.local)
    name += f" {MARK}" if marks.marked(row.local) else ""
    return [name, row.symbolic, units.shape(row.shape), units.thousands(row.numel), _memory(row),
            "yes" if row.saved else "", row.label]


RECIPE_ONLY = "recipe_only"  # CSV column and JSON field of the modern recipe: the row is not in the GPT-2 twin's pass
SHAPE_HEADER = ["tensor", "shape", "concrete", "elements", "memory", "saved", "what"]
SHAPES_TITLE = "One forward pass, shape by shape (activations at {dtype}):"
MEMORY_TITLE = "Activation memory at {dtype}, L = {L} blocks (bytes):"
BUDGET_TITLE = "Budget (FLOPs, not MACs; per token = per forward pass / (B·T)):"
KV_TITLE = ("KV cache at {dtype} (inference keeps {kept} of every block for every token so far{window}; the modern "
            "recipe's tables list it under activation memory too):")
KV_WINDOW = ", a windowed block for its last W − 1"  # KV_TITLE's words for a sliding window
KV_LINEAR = ("KV cache at {dtype} (inference keeps {kept} of every attention block for every token so far, and each "
             "{name} block's fixed state whatever T; the modern recipe's tables list it under activation memory "
             "too):")


def kv_title(cfg: Config, dtype: str) -> str:
    """The KV-cache table's title at `dtype` (`KV_TITLE`), naming what the mixer keeps (`KEPT` of its part) and a
    window's cap."""
    part, kept = stack.stateful(cfg), says(cfg, "kv/kept", stack.mixer(cfg).KEPT)
    if part is not None:
        return KV_LINEAR.format(dtype=dtype, name=part.NAME, kept=kept)
    return KV_TITLE.format(dtype=dtype, window=KV_WINDOW if window.present(cfg) else "", kept=kept)
MEMORY_NOTE = ("memory: new memory of each tensor (\"view\": shares an earlier tensor's storage, no new memory); "
               "saved: autograd keeps it for the backward pass")


def text(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "all", width: int | None = None) -> str:
    """A readable plain-text report: the shapes table and/or the budget (`table="kv"`: the KV cache only), N in
    its first line and its last. Where wider than `width` (None: never), the descriptions and formulas wrap."""
    tr, b, marks = trace(cfg, dtype), budget(cfg), recipe_rows(cfg)
    parts = header(cfg, width)
    if table in ("shapes", "all"):
        display = _display_rows(tr, expand)
        tensors = [r for r in display if isinstance(r, Row)]
        cells = [SHAPE_HEADER] + [_cells(r, expand, marks) for r in tensors]
        head, *rows = row_lines(cells, right={3, 4, 5}, wrap=(6, 1, 2), width=width, below=6)
        lines = ["", SHAPES_TITLE.format(dtype=dtype), *head]
        by_row = iter(rows)
        for r in display:
            lines += paragraph(f"-- {r} --", width, "  ", "     ") if isinstance(r, str) else next(by_row)
        for x in (*marks.legend, *_notes(cfg)):
            lines += paragraph(x, width, "  ")
        lines += ["", MEMORY_TITLE.format(dtype=dtype, L=cfg.L)] + line_table(tr.lines, width=width)
        parts += lines
    if table in ("budget", "all"):
        parts += ["", *paragraph(BUDGET_TITLE, width)] + line_table(b.lines, width=width)
    if table == "kv":
        parts += ["", *paragraph(kv_title(cfg, dtype), width)]
        parts += line_table(tuple(kv_cache_lines(cfg, dtype)), width=width)
    return "\n".join([*parts, "", *footer(cfg, width)]) + "\n"


def markdown(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "all") -> str:
    """GitHub-flavoured Markdown tables, for course pages."""
    tr, b, marks = trace(cfg, dtype), budget(cfg), recipe_rows(cfg)
    out = [markdown_header(cfg), ""]
    if table in ("shapes", "all"):
        out += [f"| {' | '.join(SHAPE_HEADER)} |", "|" + "---|" * 3 + "---:|" * 2 + ":---:|---|"]
        for r in _display_rows(tr, expand):
            if isinstance(r, str):
                out.append(f"| **{r}** | | | | | | |")
            else:
                c = _cells(r, expand, marks)
                name, _, mark = c[0].strip().partition(" ")  # the name, then its MARK if any
                c[0], c[1] = f"`{name}`" + (f" {mark}" if mark else ""), f"`{c[1]}`"
                out.append(f"| {' | '.join(c)} |")
        out += ["", *(f"{x}.  " for x in marks.legend), *(f"{x[0].upper() + x[1:]}.  " for x in _notes(cfg))]
        out[-1] = out[-1].rstrip()
        out.append("")
        out += markdown_lines(tr.lines)
    if table in ("budget", "all"):
        out += markdown_lines(b.lines)
    if table == "kv":
        out += [kv_title(cfg, dtype), ""] + markdown_lines(tuple(kv_cache_lines(cfg, dtype)))
    return "\n".join(out)


def markdown_lines(lines: tuple[Line, ...]) -> list[str]:
    """The lines as a Markdown table of quantity, formula and value, and a blank line after it."""
    return ["| quantity | formula | value |", "|---|---|---:|", *(f"| {x.label} | `{x.formula}` | {_human(x)} |"
                                                             for x in lines), ""]


def csv_text(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "shapes") -> str:
    """One CSV table: `table="shapes"` (one line per tensor), `"budget"` or `"kv"` (one line per figure)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if table in ("budget", "kv"):
        w.writerow(["key", "label", "formula", "value", "unit"])
        lines = budget(cfg).lines if table == "budget" else kv_cache_lines(cfg, dtype)
        w.writerows([x.key, x.label, x.formula, x.value, x.unit] for x in lines)
    else:
        tr, marks = trace(cfg, dtype), recipe_rows(cfg)
        w.writerow(["name", "symbolic", "shape", "numel", "nbytes", "view", "saved", "block", "repeat", "label",
                    *([] if cfg.gpt2_recipe else [RECIPE_ONLY]), *(["kind"] if typed_blocks(cfg) else [])])
        for r in (tr.expanded() if expand else tr.rows):
            w.writerow([r.name, r.symbolic, "x".join(map(str, r.shape)), r.numel, r.nbytes, int(r.view), int(r.saved),
                        "" if r.block is None else r.block, r.repeat, r.label,
                        *map(int, _recipe_field(cfg, marks, r).values()), *([r.kind or ""] if typed_blocks(cfg) else [])])
    return buf.getvalue()


def _recipe_field(cfg: Config, marks: RecipeRows, row: Row) -> dict[str, bool]:
    """{RECIPE_ONLY: is the row only in this recipe} for the modern recipe; {} for GPT-2's (the lesson's columns)."""
    return {} if cfg.gpt2_recipe else {RECIPE_ONLY: marks.marked(row.local)}


def _row_dict(cfg: Config, row: Row, marks: RecipeRows) -> dict:
    """A row for JSON: its fields (its kind where a mixture of experts makes blocks of two kinds)."""
    out = {**asdict(row), "shape": list(row.shape), **_recipe_field(cfg, marks, row)}
    if not typed_blocks(cfg):
        del out["kind"]
    return out


JSON_TABLES = ("all", "shapes", "budget", "kv")  # --table T --json: these here; train and changes have their own


def as_json(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "all",
            setup: TrainSetup | None = None) -> str:
    """One JSON document: the config and dtype, then `table`'s part: "shapes" the rows (their groups of blocks for
    a mixture of experts), their activation and saved bytes and the memory lines; "budget" the budget, its chart
    (a mixture of experts) and its lines; "kv" the KV cache's lines; "all" (the whole report) every one of them and
    the training plan at `setup` (default TrainSetup()) with its references."""
    doc: dict = {"config": config_dict(cfg), "dtype": dtype}
    if table in ("shapes", "all"):
        tr, marks = trace(cfg, dtype), recipe_rows(cfg)
        doc |= {
            "rows": [_row_dict(cfg, r, marks) for r in (tr.expanded() if expand else tr.rows)],
            **({"groups": [{"kind": g.kind, "blocks": list(g.blocks), "title": g.title} for g in tr.groups]}
               if typed_blocks(cfg) else {}),
            **({} if cfg.gpt2_recipe else {"recipe_rows": {
                "legend": list(marks.legend), "gone": [{"name": n, "label": x} for n, x in marks.gone],
                "eager_only": [{"name": n, "label": x} for n, x in marks.eager_only]}}),
            "activation_bytes": tr.activation_bytes,
            "saved_bytes": tr.saved_bytes,
            "memory": [asdict(x) for x in tr.lines],
        }
    if table in ("budget", "all"):
        b = budget(cfg)
        doc |= {"budget": b.as_dict(), **({"chart": _chart_dict(b)} if stack.typed(cfg) else {}),
                "lines": [asdict(x) for x in b.lines]}
    if table in ("kv", "all"):
        doc["kv"] = [asdict(x) for x in kv_cache_lines(cfg, dtype)]
    if table == "all":
        doc |= {"train": plan(cfg, setup or TrainSetup()).as_dict(), "references": [asdict(x) for x in REFERENCES]}
    return json.dumps(doc, indent=2) + "\n"


def _chart_dict(b: Budget) -> dict:
    """A mixture of experts' parameter chart (`model.budgeting.chart`): its bars with their counts, and its note."""
    return {"bars": [{"key": key, "label": label, "value": b.line(key).value, "adds_to_N": in_sum}
                     for key, label, in_sum in chart(b)], "note": chart_note(b)}
