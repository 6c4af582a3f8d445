"""The training card's markup: its headline, every figure by section, the memory chart and its legend, from a
`model.training.Plan` (pure: no Panel, so the exported page runs these functions compiled, app/export/compiled.py).
"""
from __future__ import annotations

import html

from model import Config, units
from model.train_report import SECTIONS, human
from model.training import CHINCHILLA_TOKENS_PER_PARAM, FITS, REFERENCES, Line, Plan

from ...templates import TEMPLATES, fill_html
from ...words import HEADLINE, HEADLINE_FITS, HEADLINE_N, HEADLINE_PAST, HEADLINE_RULE, PARTS, ROWS, TRAIN_NOTES


def by_key(p: Plan) -> dict[str, Line]:
    """The plan's lines by key."""
    return {x.key: x for x in p.lines}


def memory_bars(p: Plan) -> list[dict]:
    """The memory chart's bars, top to bottom: training per GPU (weights, grads, states, saved activations, and what
    else is alive at the step's peak), then serving the whole model (weights, KV cache). Each bar's parts in the
    order of words.PARTS, those of 0 bytes left out, with their text (units.nbytes) and width: its share of the
    widest bar or the GPU's memory, whichever is more, in % to 4 places (bytes as floats, summed in order: the
    exported page's arithmetic exactly); each bar's total."""
    m = p.memory
    train = {"weights": m.weights, "grads": m.grads, "optimizer": m.optimizer, "activations": m.activations,
             "transient": m.peak - m.total}
    serve = {"weights": p.serve_weights_bytes, "kv": p.kv_cache_bytes}
    floats = [(key, row, {k: float(v) for k, v in parts.items()})
              for key, row, parts in (("training", ROWS[1], train), ("serving", ROWS[0], serve))]
    bars = [(key, row, parts, sum(parts.values())) for key, row, parts in floats]
    top = max(float(m.capacity), *(bar[3] for bar in bars))
    return [{"key": key, "row": row, "total": units.nbytes(total),
             "parts": [{"key": k, "label": label, "colour": colour, "text": units.nbytes(parts[k]),
                        "width": f"{100 * parts[k] / top:.4f}"} for k, label, colour in PARTS if parts.get(k)],
             "capacity": f"{100 * float(m.capacity) / top:.4f}"}  # the GPU's memory: a dashed line on each track
            for key, row, parts, total in bars]


def capacity_label(p: Plan) -> str:
    """The GPU's memory, as the chart's legend names its dashed line."""
    return TEMPLATES["capacity"].format(device=p.setup.device.label, capacity=units.nbytes(p.memory.capacity))


def chart_html(p: Plan) -> str:
    """The memory chart (TEMPLATES["memory_chart"]): the bars of `memory_bars`, stacked."""
    return fill_html(TEMPLATES["memory_chart"], {"bars": memory_bars(p)})


def legend_html(p: Plan) -> str:
    """The chart's legend (HTML, so it wraps on a phone): the parts' colours and the GPU's memory line."""
    return fill_html(TEMPLATES["train_legend"], {"parts": [{"label": lab, "colour": c} for _, lab, c in PARTS],
                                                 "capacity": capacity_label(p)})


def note_html(cfg: Config) -> str:
    """The card's note on MFU, peaks, memory and activations, at N or a mixture of experts' N_active."""
    return f"<p class='note muted'>{html.escape(TRAIN_NOTES[cfg.ffn_kind])}</p>"


def headline_html(p: Plan) -> str:
    """The run in three sentences: tokens and compute, time and cost, memory and whether it fits (the templates
    `HEADLINE`, `HEADLINE_RULE`, `HEADLINE_FITS`, `HEADLINE_PAST`, `HEADLINE_N` of app/words.py, which the exported
    page fills the same way)."""
    m = p.memory
    v = {**{x.key: html.escape(human(x)) for x in p.lines}, "T": f"{p.cfg.T:,}", "gpus": f"{p.setup.gpus:,}",
         "device": html.escape(p.setup.device.label), "phase": html.escape(m.peak_phase),
         "past": HEADLINE_PAST["window" if "sliding" in p.cfg.attn_kinds else "full"],
         "chinchilla": f"{CHINCHILLA_TOKENS_PER_PARAM:,}",
         **HEADLINE_N[p.cfg.ffn_kind]}
    v["rule"] = HEADLINE_RULE["rule" if p.setup.D is None else "given"].format_map(v)
    v["fits"] = HEADLINE_FITS["fits" if m.fits else "some" if m.max_B else "none"].format_map(v)
    return HEADLINE.format_map(v)


def panes(p: Plan) -> dict[str, str]:
    """The card's markup by pane (the exported page's widgets by these names): the headline, every figure, the memory
    chart and its legend."""
    return {"train_head": headline_html(p), "train_lines": lines_html(p), "train_chart": chart_html(p),
            "train_legend": legend_html(p)}


def lines_html(p: Plan) -> str:
    """Every figure by section: label, its formula in the lesson's notation, its value."""
    notes = {"chinchilla": FITS[p.setup.fit].note}
    return fill_html(TEMPLATES["train_lines"], {"sections": [
        {"title": title, "note": notes.get(prefix, ""),
         "lines": [{"label": x.label, "formula": x.formula, "human": human(x)} for x in (*p.lines, *REFERENCES)
                   if x.key.split("/")[0] == prefix]} for prefix, title in SECTIONS.items()]})
