"""Tables of a trace and a budget for people and course pages: text, Markdown, CSV and JSON.

Records (`Trace` rows, `budget_lines`) -> formatting, in that order; nothing here computes a figure.
Collapsed block rows are listed once under a "× L" group header; `expand=True` lists all L blocks.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass

from . import units
from .budgeting import Budget, budget
from .config import Config
from .tracing import Row, Trace, trace


@dataclass(frozen=True)
class BudgetLine:
    """One figure of the budget: slash-separated key, what it is, its formula, its value and kind."""

    key: str
    label: str
    formula: str
    value: int | float
    kind: str  # "params", "flops" (per token), "share" or "tokens"


def budget_lines(cfg: Config, b: Budget) -> list[BudgetLine]:
    """The budget as labelled lines in the lesson's notation, in reading order."""
    L = cfg.L
    head = ("head (separate)", "V·d") if not cfg.tie else ("head (tied to W_te)", "0")
    return [
        BudgetLine("params/emb", "embeddings W_te + W_pe", "(V + T_max)·d", b.params_emb, "params"),
        BudgetLine("params/attn_block", "attention, per block", "4d² + 4d", b.params_attn_block, "params"),
        BudgetLine("params/mlp_block", "MLP, per block", "8d² + 5d", b.params_mlp_block, "params"),
        BudgetLine("params/blocks", f"attention + MLP, × L = {L}", "L·(12d² + 9d)",
                   b.params_blocks, "params"),
        BudgetLine("params/norms", "LayerNorms", "(2L + 1)·2d", b.params_norms, "params"),
        BudgetLine("params/head", *head, b.params_head, "params"),
        BudgetLine("params/exact", "N, exact (the module's own count)", "sum of the above", b.params_exact, "params"),
        BudgetLine("params/approx", "N, approximately", "12Ld² + (V + T_max)d", b.params_approx, "params"),
        BudgetLine("flops/forward", "forward FLOPs per token", "2N", b.flops_fwd_per_token, "flops"),
        BudgetLine("flops/train", "training FLOPs per token", "6N", b.flops_train_per_token, "flops"),
        BudgetLine("flops/forward_measured", "forward FLOPs per token, measured", "L·(24d² + 4Td) + 2Vd",
                   b.flops_fwd_measured_per_token, "flops"),
        BudgetLine("flops/attention", "of which attention scores and mixing", "4LTd", b.flops_attn_per_token, "flops"),
        BudgetLine("flops/attention_share", "attention share of the measured forward", "4LTd / measured",
                   b.attn_share, "share"),
        BudgetLine("flops/T_attention_equals_dense", "T where attention FLOPs equal the blocks' dense ones", "6d",
                   b.T_attn_equals_dense, "tokens"),
    ]


def describe(cfg: Config) -> str:
    """One line naming the configuration in the lesson's notation."""
    head = "head tied to W_te" if cfg.tie else "separate head"
    return (f"B={cfg.B:,} T={cfg.T:,} d={cfg.d:,} h={cfg.h:,} (d_head={cfg.d_head:,}) L={cfg.L:,} "
            f"V={cfg.V:,} T_max={cfg.T_max:,}, {head}")


def _human(line: BudgetLine) -> str:
    if line.kind == "flops":
        return units.flops(line.value)
    if line.kind == "share":
        return units.percent(line.value)
    return units.thousands(line.value)


def _display_rows(tr: Trace, expand: bool) -> list[Row | str]:
    """Rows to print, with a group header before the block rows (one header per block when expanded)."""
    rows = tr.expanded() if expand else tr.rows
    out: list[Row | str] = []
    for row in rows:
        first_of_block = row.block is not None and (not out or isinstance(out[-1], str)
                                                    or out[-1].block != row.block)
        if first_of_block:
            L = tr.cfg.L
            if expand or L == 1:
                out.append(f"block {row.block}")
            else:
                out.append(f"blocks 0 … {L - 1}: × L = {L} identical blocks, each with these shapes")
        out.append(row)
    return out


def _cells(row: Row, expand: bool) -> list[str]:
    name = row.name if row.block is None else "  " + (row.name if expand else row.local)
    return [name, row.symbolic, units.shape(row.shape), units.thousands(row.numel), units.nbytes(row.nbytes), row.label]


SHAPE_HEADER = ["tensor", "shape", "concrete", "elements", "memory", "what"]


def text(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "all") -> str:
    """A readable plain-text report: the shapes table and/or the budget."""
    tr, b = trace(cfg, dtype), budget(cfg)
    parts = [f"GPT  {describe(cfg)}"]
    if table in ("shapes", "all"):
        display = _display_rows(tr, expand)
        cells = [SHAPE_HEADER] + [_cells(r, expand) for r in display if isinstance(r, Row)]
        widths = [max(len(c[i]) for c in cells) for i in range(len(SHAPE_HEADER))]
        right = {3, 4}

        def fmt(c: list[str], indent: str) -> str:
            return indent + "  ".join(s.rjust(w) if i in right else s.ljust(w)
                                      for i, (s, w) in enumerate(zip(c, widths))).rstrip()

        lines = ["", f"One forward pass, shape by shape (activations at {dtype}):", fmt(SHAPE_HEADER, "  ")]
        for r in display:
            lines.append(f"  -- {r} --" if isinstance(r, str) else fmt(_cells(r, expand), "  "))
        lines.append(f"  activation memory, L = {cfg.L} blocks, no reuse: {units.nbytes(tr.activation_bytes)}")
        parts += lines
    if table in ("budget", "all"):
        blines = budget_lines(cfg, b)
        w_label = max(len(x.label) for x in blines)
        w_formula = max(len(x.formula) for x in blines)
        parts += ["", "Budget (FLOPs, not MACs; per token = per forward pass / (B·T)):"]
        parts += [f"  {x.label.ljust(w_label)}  {x.formula.ljust(w_formula)}  {_human(x).rjust(15)}" for x in blines]
    return "\n".join(parts) + "\n"


def markdown(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "all") -> str:
    """GitHub-flavoured Markdown tables, for course pages."""
    tr, b = trace(cfg, dtype), budget(cfg)
    out = [f"**GPT** {describe(cfg)}", ""]
    if table in ("shapes", "all"):
        out += [f"| {' | '.join(SHAPE_HEADER)} |", "|" + "---|" * 3 + "---:|" * 2 + "---|"]
        for r in _display_rows(tr, expand):
            if isinstance(r, str):
                out.append(f"| **{r}** | | | | | |")
            else:
                c = _cells(r, expand)
                c[0], c[1] = f"`{c[0].strip()}`", f"`{c[1]}`"
                out.append(f"| {' | '.join(c)} |")
        out += ["", f"Activation memory at {dtype}, L = {cfg.L} blocks, no reuse: **{units.nbytes(tr.activation_bytes)}**", ""]
    if table in ("budget", "all"):
        out += ["| quantity | formula | value |", "|---|---|---:|"]
        out += [f"| {x.label} | `{x.formula}` | {_human(x)} |" for x in budget_lines(cfg, b)]
        out.append("")
    return "\n".join(out)


def csv_text(cfg: Config, dtype: str = "fp32", expand: bool = False, table: str = "shapes") -> str:
    """One CSV table: `table="shapes"` (one line per tensor) or `table="budget"` (one line per figure)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    if table == "budget":
        w.writerow(["key", "label", "formula", "value"])
        w.writerows([x.key, x.label, x.formula, x.value] for x in budget_lines(cfg, budget(cfg)))
    else:
        tr = trace(cfg, dtype)
        w.writerow(["name", "symbolic", "shape", "numel", "nbytes", "block", "repeat", "label"])
        for r in (tr.expanded() if expand else tr.rows):
            w.writerow([r.name, r.symbolic, "x".join(map(str, r.shape)), r.numel, r.nbytes,
                        "" if r.block is None else r.block, r.repeat, r.label])
    return buf.getvalue()


def as_json(cfg: Config, dtype: str = "fp32", expand: bool = False) -> str:
    """Everything as one JSON document: config, rows, activation bytes and the budget."""
    tr, b = trace(cfg, dtype), budget(cfg)
    doc = {
        "config": {**asdict(cfg), "d_head": cfg.d_head},
        "dtype": dtype,
        "rows": [{**asdict(r), "shape": list(r.shape)} for r in (tr.expanded() if expand else tr.rows)],
        "activation_bytes": tr.activation_bytes,
        "budget": b.as_dict(),
    }
    return json.dumps(doc, indent=2) + "\n"
