"""Everything the exported page's JavaScript needs, taken from `model` and the live app's definitions.

Nothing here is written for the page alone: the fields, bounds, presets and their labels, the rules and their
messages (`model.rules`), the budget and memory lines with their formulas (compiled to JavaScript by
`model.formula.to_js`), the shape rows of every pass structure (`model.memory.Structure`), the training card's line templates per discrete choice (`model.training.plan` on a probe), and the
words of the live page. The JavaScript evaluates what differs between configurations.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import json

from model import DTYPES, PRESETS, Config, budget, trace
from model.changes import TITLES, changes, title_key
from model.config import LINKED, MODEL_CHOICES as CHOICES, ODD_D_HEAD, SINKS_FUSED, WRITTEN, names, snap_heads
from model.parts import moe
from model.families import EXTRAS_FIELDS, KV_GROUP, extras_line, PAGE_PRESETS, preset_labels
from model.formula import LESSON_SYMBOLS, is_exact, to_js
from model.memory import KORTHIKANTI_NOTE, ONES, Structure, probes, structure, structure_key
from model.parts import window as window_part
from model.parts.window import WINDOW_VALUES, window_labels
from model.notation import dims
from model.recipe_rows import recipe_rows
from model.peak import PHASE_LABELS, PHASE_SYMBOLS, candidates
from model.parts import latent
from model.rules import CUSTOM, NOTE_ABOUT, NOTE_FIELD, PRESET_ASKS, preset_of
from model.training import (CHINCHILLA_TOKENS_PER_PARAM, CUSTOM_GPU, FITS, GPUS, OPTIMIZERS, OTHER_BLOCKS, PEAK_LINE, PHASE_LINE,
                            RECOMPUTE, Line, Memory, TrainSetup, plan)

from model.inference import CUSTOM_GPU as CUSTOM_SERVING_GPU
from model.inference import KV, WEIGHTS, InferSetup, serving
from model.infer_report import CONTROLS as INFER_CONTROLS
from model.infer_report import ELSEWHERE, GPU_CHOICES, KV_CHOICES, WEIGHT_CHOICES, chart_data

from ..cards.infer.markup import LINES_FRAME, headline_html, knee_html, line_rows
from ..cards.recipe.markup import OTHER_DTYPE
from ..cards.train.settings import SETUP_FIELD, CUSTOM_START, DEFAULT, TRAIN_CHOICES, TRAIN_KEYS
from .cache import cached
from .keys import DTYPE_CLASS, budget_key, changes_key, train_variant

from ..templates import TEMPLATES
from ..words import (FIT_LABELS, GPU_LABELS, OPTIMIZER_LABELS, RECOMPUTE_LABELS, SHORT_WHEN, TRAIN_MOE, ZERO_LABELS,
                     shapes_title_html)



ALL_FIELDS = tuple(f.name for f in LINKED)  # a page's configuration: every field (the MoE's, the window's, latent
# attention's and the families' extras come with a preset or config.json)
SLIDERS = [f for f in LINKED if f.group == "lesson" and f.kind == "whole"]  # B, T, d, h, L, V, T_max
# A mixture of experts' page has the MLP's switch (dense or MoE) and boxes for these fields, by their symbols; its
# shared experts and which blocks are MoE stay the exported model's (their pass structures are the page's size).
PAGE_MOE_SIZES = {f.name: f.key for f in LINKED if f.name in ("experts", "top_k", "expert_dim")}
# The page's boxes: the recipe's sizes, a mixture of experts' (`PAGE_MOE_SIZES`), latent attention's widths (no
# window's: a windowed model's page keeps its window).
BOXES = [f for f in LINKED if f.kind == "whole" and f.control  # the live page's boxes (not d_rot: a file or a link sets it)
         and (f.group in ("recipe", "latent") or f.name in PAGE_MOE_SIZES)]
PARTS = {"experts": "moe", "latent_dim": "mla"}  # page.js's condition of a box whose part (`Field.needs`) is present


# Where a box shows (app/cards/controls/view.py sizes_view hides the others): d_ff where some block is dense, h_kv and
# d_head but with latent attention (`model.parts.latent.WITHOUT`), a mixture of experts' sizes and latent attention's
# widths where the model has them.
BOX_WHEN = {"ff_dim": "dense", **{n: "not_mla" for n in latent.WITHOUT if n in {f.name for f in BOXES}},
            **{f.name: PARTS[f.needs] for f in BOXES if f.needs}}


# The fields a change of these controls sets (app/state.py): a preset every one (`PRESET_ASKS` and what they
# decide), the recipe its fields (GPT-2's leaves latent attention), the MLP's switch the mixture of experts'; the
# dtype and the listing none (None: the model is as it was).
CHANGES = {"preset": list(ALL_FIELDS), "recipe": [*names("recipe"), *names("latent")], "moe": list(names("moe")),
           "dtype": None, "expanded": None}


def widget_table() -> dict[str, dict]:
    """The page's controls by their widgets' names (app/export/page.py names them), as page.js main reads and
    pushControls writes them: each one's kind, the property that holds its value, the field it sets, the symbol a
    box reads by, where it shows (`BOX_WHEN`) and, for a field's slider and box, the element page.js names for screen
    readers ("aria"). Kinds: "slider" (h's walks the divisors of d), "box" (text in `model.numbers`' grammar within
    its symbol's bounds; "latent": d_cq, or none), "label" (a field's name), "set" (a switch's choice, a checkbox),
    "preset", "recipe", "moe" (the MLP's switch), "dtype" and "expanded" (no field); and the fields a change sets
    (`CHANGES`, else its own field: app/state.py ExplorerState's), as `model.rules.news` weighs them."""
    def control(kind: str, prop: str = "value", field: str | None = None, symbol: str | None = None) -> dict:
        changes = CHANGES.get(kind, [field])
        return {"kind": kind, "prop": prop, "field": field, "symbol": symbol, "when": BOX_WHEN.get(field),
                "changes": changes}

    sets = [f for f in WRITTEN if f.controlled and f.kind in ("choice", "flag")]  # tie, the switches, QK-norm
    return {**{f.key: {**control("slider", field=f.name), "aria": ".noUi-handle"} for f in SLIDERS},
            **{f"{f.key}_input": {**control("box", field=f.name, symbol=f.key), "aria": "input"} for f in SLIDERS},
            **{f"{f}_label": control("label", "text", f) for f in SHORT_WHEN},  # the recipe renames h and T_max
            **{k: control(k) for k in ("preset", "recipe", "moe")},
            **{f.key: control("set", "active" if f.kind == "flag" else "value", f.name) for f in sets},
            **{f"opt_{f.name}": control("latent" if f.name == "q_latent_dim" else "box", field=f.name, symbol=f.key)
               for f in BOXES},
            "dtype": control("dtype", "active"), "expanded": control("expanded", "active")}


def _fields(cfg: Config) -> dict:
    """A configuration as the page holds it: every field of `ALL_FIELDS`."""
    return {f: getattr(cfg, f) for f in ALL_FIELDS}


def _line(line) -> dict:
    """A line without its value, and the JavaScript that computes the value from the symbols `s`."""
    exact = is_exact(line.formula, LESSON_SYMBOLS)
    return {"key": line.key, "label": line.label, "formula": line.formula, "unit": line.unit, "exact": exact,
            "js": to_js(line.formula, LESSON_SYMBOLS, exact)}


def _budget_lines() -> dict[str, list[dict]]:
    """GPT-2's budget lines for a tied and an untied head (their formulas depend on nothing else)."""
    probe = Config(B=2, T=3, d=4, h=2, L=2, V=5, T_max=3)
    return {budget_key(c): [_line(x) for x in budget(c).lines]
            for c in (dataclasses.replace(probe, tie=tie) for tie in (True, False))}


def covered(cfg: Config) -> list[Config]:
    """The models beyond GPT-2's recipe whose shapes, memory and changes an exported page carries (each pass
    structure costs real passes, so not all 288 recipes × 48 structures), each with either attention (eager, fused:
    the switch flips on the page): every modern preset, `cfg`, `cfg` with h_kv = h, a group, and 1 where it is
    modern (GQA flipped back and forth), and GPT-2's recipe with fused attention (every GPT-2 and GPT-3 preset, and
    `cfg`). Other recipes show a notice naming the export command. A mixture of experts' structures are the largest, and
    every MoE preset on every page would outgrow the page's size (tests/test_export.py): it is carried where it is
    the page's own model (`cfg` at its h_kv), and another one's notice names its export command."""
    base = [p for p in PAGE_PRESETS.values() if not p.gpt2_recipe]
    if not cfg.gpt2_recipe and not moe.present(cfg) and not latent.present(cfg):  # latent attention: h_kv = h
        base += [dataclasses.replace(cfg, kv_heads=kv) for kv in (cfg.h_kv, cfg.h, snap_heads(cfg.h, cfg.h // KV_GROUP or 1), 1)]
    base += [cfg, *(p for p in PAGE_PRESETS.values() if p.gpt2_recipe)]
    base += [dataclasses.replace(c, full_layers=()) for c in base if c.window is not None and c.L_W < c.L]  # at an L
    # below its first full block, a hybrid model's blocks are all windowed: its formulas say so (every_part)
    both = (dataclasses.replace(c, attention=a) for c in base for a in CHOICES["attention"]
            if not ((c.sinks or c.mla) and a == "fused"))  # Config refuses sinks (SINKS_FUSED) and latent attention
    # (its q and k are d_nope + d_R wide, v d_v) with fused attention
    return [c for c in both if not c.gpt2_recipe]  # GPT-2's own recipe: every page carries it (static_spec)


def _modern(cfg: Config, dtype: str) -> dict:
    """Budget lines, pass structures (both dtype classes and, for a dense model's training card, B = 1), changes
    tables (at `dtype`; the page's own model's at both dtype classes) of the covered models."""
    budgets, structures, tables = {}, {}, {}
    for c in covered(cfg):
        if budget_key(c) not in budgets:
            budgets[budget_key(c)] = cached("budget", budget_key(c), lambda: [_line(x) for x in budget(c).lines])
        micro = {c.B} if c.moe else {c.B, 1}  # B = 1: the training card's largest micro-batch (a dense model's)
        for cls, B in itertools.product(sorted(set(DTYPE_CLASS.values())), micro):
            s = structure(dataclasses.replace(c, B=B), cls)
            if structure_key(s) not in structures:
                structures[structure_key(s)] = _cached_structure(s, dataclasses.replace(c, B=B))
        own = dataclasses.replace(c, attention=cfg.attention) == cfg  # the page's own model: its card at either dtype
        for dt in dict.fromkeys((dtype, *(sorted(set(DTYPE_CLASS.values())) if own else ()))):
            key = changes_key(c, dt)
            if key not in tables:
                try:
                    tables[key] = cached("changes", f"{key} {dt}", lambda: _changes(changes(c, dt)))
                except ValueError:  # no GPT-2 twin (T beyond T_max): the page says why (changes.no_twin)
                    pass
    return {"budget": budgets, "structures": structures, "changes": tables}


def _changes(c) -> dict:
    """A changes table without values: each group's title template and its line templates."""
    window = {"changes/window/cache_ratio": window_part.change_label(PLACEHOLDERS, c.cfg.chunked)}  # values: the page
    return {"groups": [{"key": g.key, "title": title_key(g.key, c.cfg),
                        "lines": [{**_line(x), "label": window.get(x.key, x.label)} for x in g.lines]}
                       for g in c.groups]}


def _structures() -> list[Structure]:
    out = []
    for tie, dtype in itertools.product((True, False), sorted(set(DTYPE_CLASS.values()))):
        for ones in itertools.product((False, True), repeat=len(ONES)):
            one = dict(zip(ONES, ones))
            if not (one["T"] and one["T-1"]):
                out.append(Structure(tie=tie, dtype=dtype, ones=ones))
    return out


def _structure(s: Structure, cfg: Config | None = None) -> dict:
    """Rows (without sizes) and memory lines of one structure, from a pass at `cfg` (default: a probe). The modern
    rows carry each dimension as JavaScript (the modern recipe's shapes add and multiply symbols), and the modern
    recipe's rows whether the GPT-2 twin's pass lacks them ("only", with the structure's "legend": `model.recipe_rows`); a label's dtype is
    "{dtype}", filled by the page (fp16 passes are bf16's)."""
    tr = trace(cfg if cfg is not None else probes(s)[0], s.dtype)
    rows = [{"name": r.name, "local": r.local, "label": r.label, "symbolic": r.symbolic, "block": r.block is not None,
             "elem": r.nbytes // r.numel, "view": r.view, "saved": r.saved,
             **({"kind": r.kind} if (s.moe is not None or s.nope or s.lin) and r.block is not None else {})}
            for r in tr.rows]  # a block's kind where there are several, or one other than "dense" (all Falcon-H1's)
    def memory(t) -> list[dict]:  # a label's dtype and a window's numbers as the page fills them
        templates = window_templates(t.cfg, s.dtype) if s.window else {}
        return [{**_line(x), "label": templates.get(x.label, x.label).replace(f"at {s.dtype}", "at {dtype}")}
                for x in t.lines]

    lines = memory(tr)
    # each candidate of the step's peak, with the blocks the pass does not run where it is in a block ("{each}" in its
    # formula, S_other in its value: a model of one kind of block, model.training.other_blocks and OTHER_BLOCKS, by
    # recompute in "other"); model.training.step_phases picks the largest per phase. Gated DeltaNet blocks: none (their
    # chunks make a different step for each n_c; the card says so, `model.training.no_peak`)
    found = () if s.lin else candidates(s)
    formulas = [c.formula + (OTHER_BLOCKS.format(each="{each}") if c.scaled else "") for c in found]
    peak = [{"phase": c.phase, "moment": c.moment, "formula": f,
             "js": to_js(f.replace("{each}", "S_other"), (*LESSON_SYMBOLS, "S_other"), True)}
            for c, f in zip(found, formulas)]
    other = {"none": "S_block", "full": f"{DTYPES[s.dtype]}BTd"}
    other = {r: {"formula": f, "js": to_js(f, (*LESSON_SYMBOLS, "S_block"), True)} for r, f in other.items()}
    out = {"rows": rows, "lines": lines, "peak": peak, "other": other}
    if s.window and tr.cfg.L_W < tr.cfg.L:  # at an L where every block is windowed, the KV lines say so (page.js)
        out["lines_all"] = memory(trace(dataclasses.replace(tr.cfg, full_layers=()), s.dtype))
    out["dims"] = [[to_js(d, LESSON_SYMBOLS, True) for d in dims(r.symbolic)] for r in tr.rows]
    if s.recipe is not None:
        marks = recipe_rows(tr.cfg)
        out["legend"], out["only"] = list(marks.legend), sorted(marks.only)
    return out


PLACEHOLDERS = {k: "{" + k + "}" for k in WINDOW_VALUES}  # the page fills them: page.js windowValues, WINDOW_FNS


def window_templates(cfg: Config, dtype: str) -> dict[str, str]:
    """A windowed model's KV-cache labels at `cfg` -> the same labels naming `PLACEHOLDERS` (`model.parts.window.window_labels`)."""
    return dict(zip(window_labels(cfg, dtype).values(), window_labels(cfg, dtype, PLACEHOLDERS).values()))


def _cached_structure(s: Structure, cfg: Config | None = None) -> dict:
    """`_structure`, from the disk cache where the same code computed it before (`app.export.cache`)."""
    return cached("structure", structure_key(s), lambda: _structure(s, cfg))


TRAIN_SYMBOLS = (*LESSON_SYMBOLS, "N", "D", "C", "P", "MFU", "n", "price", "G", "S_rest", "S_block",
                 *PHASE_SYMBOLS.values(), "M_top")  # model.training's; M_top: the largest phase's (page.js trainPlan)


def _serving_lines(probe: Config) -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    """GPT-2's serving lines (the KV cache of `model.memory.kv_cache_lines` in the lesson's words, at d's width) ->
    the modern recipe's label and formula (at h_kv heads of d_head, "recipe") and a windowed one's ("window": some
    blocks windowed, its label's numbers as `PLACEHOLDERS`), per optimizer, keyed by GPT-2's (label, formula): the
    training templates are made at a GPT-2 probe."""
    modern = dataclasses.replace(probe, **MODERN_PROBE)
    windowed = dataclasses.replace(modern, window=2, full_layers=(probe.L - 1,))  # L − L_W = 1 full block
    every = dataclasses.replace(windowed, full_layers=())  # every block windowed: "window_all"
    latent = dataclasses.replace(modern, kv_heads=None, attention="eager", **MLA_PROBE)  # "mla": the latent's cache
    out: dict = {}
    for opt in OPTIMIZERS:
        setup = TrainSetup(optimizer=opt)
        gpt2, recipe, window, all_, mla = (plan(c, setup).lines for c in (probe, modern, windowed, every, latent))
        named = {**window_templates(windowed, setup.act_dtype), **window_templates(every, setup.act_dtype)}
        for a, b, w, e, m in zip(gpt2, recipe, window, all_, mla):
            if a.key.startswith("serve/") and a.key == b.key == w.key == m.key and (a.label, a.formula) != (b.label, b.formula):
                out[a.label, a.formula] = {"recipe": {"label": b.label, "formula": b.formula},
                                           "window": {"label": named.get(w.label, w.label), "formula": w.formula},
                                           "window_all": {"label": named.get(e.label, e.label), "formula": e.formula},
                                           "mla": {"label": m.label, "formula": m.formula}}
    return out


MODERN_PROBE = dict(norm="rmsnorm", positions="rope", mlp="swiglu", bias="none", kv_heads=1)
MLA_PROBE = dict(latent_dim=6, q_latent_dim=8, rope_dim=2, nope_dim=4, value_dim=4)  # latent attention's widths


def _train_template(x: Line, formulas: dict[str, str], recompute: str) -> dict:
    """A line of `model.training.plan` at the probe as page.js fills it: its label and formula with the slots page.js
    fills ({saved}: the structure's saved formula, the activations' with recompute "none"; a phase's {moment} and
    {formula}: the largest of the structure's `peak` candidates in that phase, as `model.training.step_phases`; the
    peak's {phase} and {top}, its symbol), and "js", the formula of its value (None: capacity, fits and max_B, which
    page.js puts in the symbols, s.capacity and so on)."""
    held = formulas["memory/peak"].rsplit(" + ", 1)[0]  # weights + gradients + optimizer states
    label, formula, js, phase = x.label, x.formula, x.formula, None
    if x.key.startswith("memory/peak_"):
        phase = x.key.removeprefix("memory/peak_")
        label = PHASE_LINE.format(symbol=PHASE_SYMBOLS[phase], label=PHASE_LABELS[phase], moment="{moment}")
        formula, js = "{formula}", PHASE_SYMBOLS[phase]
    elif x.key == "memory/peak":
        label, formula, js = PEAK_LINE, held + " + {top}", held + " + M_top"
    elif x.key == "memory/activations" and recompute == "none":  # model.training.activation_bytes
        formula, js = "{saved}", formulas["memory/total"].removeprefix(held + " + ")
    return {"key": x.key, "label": label, "formula": formula, "unit": x.unit, "phase": phase, "js": js}


def _training() -> dict:
    """The training card's line templates per combination of discrete choices, and its words and constants.

    Labels and formulas of `model.training.plan` depend only on these choices (numbers come in as symbols), so a
    probe plan per combination gives them all (`_train_template`).
    """
    probe = Config(B=2, T=3, d=4, h=2, L=2, V=5, T_max=3)
    templates: list[dict] = []
    index: dict[tuple, int] = {}
    variants: dict[str, list[int]] = {}
    for given, opt, zero, rec, fit in itertools.product((False, True), OPTIMIZERS, (0, 1, 2, 3), RECOMPUTE, FITS):
        setup = TrainSetup(D=1000 if given else None, optimizer=opt, zero=zero, gpus=8, recompute=rec, fit=fit)
        ids, lines = [], plan(probe, setup).lines
        for x in lines:
            t = _train_template(x, {y.key: y.formula for y in lines}, rec)
            if tuple(t.values()) not in index:
                index[tuple(t.values())] = len(templates)
                templates.append({**t, "js": to_js(t["js"], TRAIN_SYMBOLS, False) if t["js"] else f"s.{t['key'][7:]}"})
            ids.append(index[tuple(t.values())])
        variants[train_variant(setup)] = ids
    measured = budget(probe).line("flops/forward_measured").formula  # GPT-2's; page.js puts in the recipe's
    serving = _serving_lines(probe)
    for t in templates:
        if (t["label"], t["formula"]) in serving:  # at h_kv heads of d_head: true for GPT-2 too (h_kv·d_head = d)
            t.update(serving[t["label"], t["formula"]])
            t["js"] = to_js(t["recipe"]["formula"], TRAIN_SYMBOLS, False)
            t["window_js"] = to_js(t["window"]["formula"], TRAIN_SYMBOLS, False)  # page.js: TRAIN_WINDOW_FNS
            t["mla_js"] = to_js(t["mla"]["formula"], TRAIN_SYMBOLS, False)  # page.js: TRAIN_MLA_FNS
        if measured in t["formula"]:
            t["js"] = to_js(t["formula"].replace(measured, "M"), (*TRAIN_SYMBOLS, "M"), False)
            t["formula"] = t["formula"].replace(measured, "{M}")
    return {
        "templates": templates, "variants": variants, "custom_gpu": CUSTOM_GPU,
        "custom_start": {"label": CUSTOM_START.label, "peak_tflops": CUSTOM_START.peak_tflops,
                         "memory_gib": CUSTOM_START.memory_gib},
        "chinchilla": CHINCHILLA_TOKENS_PER_PARAM,
        "labels": {"gpu": [[v, k] for k, v in GPU_LABELS.items()], "optimizer": [[v, k] for k, v in OPTIMIZER_LABELS.items()],
                   "zero": [[v, k] for k, v in ZERO_LABELS.items()],
                   "recompute": [[v, k] for k, v in RECOMPUTE_LABELS.items()], "fit": [[v, k] for k, v in FIT_LABELS.items()]},
        "keys": list(TRAIN_KEYS), "default": {k: getattr(DEFAULT, k) for k in DEFAULT.__dataclass_fields__},
        "choices": {k: list(v) for k, v in TRAIN_CHOICES.items()}, "field": SETUP_FIELD,  # page.js's inputs
        "moe": TRAIN_MOE, "phase_symbols": PHASE_SYMBOLS,
        # the fields of training.Memory that are lines of the plan (page.js trainPlan's memory)
        "memory": [f for f in Memory.__dataclass_fields__ if f"memory/{f}" in {x.key for x in plan(probe).lines}],
    }


@functools.cache
def static_spec() -> dict:
    """The part of the spec that is the same for every exported page (from the disk cache where it was built)."""
    return cached("static", "spec", _static_spec)


def _static_spec() -> dict:
    return {
        "bounds": {f.key: list(f.bounds) for f in (*SLIDERS, *BOXES)},
        "all_fields": list(ALL_FIELDS),
        "extras_lines": {n: extras_line(p) for n, p in PRESETS.items() if extras_line(p)},  # Gemma's, gpt-oss's
        "sinks_fused": SINKS_FUSED, "odd_d_head": ODD_D_HEAD, "widgets": widget_table(),
        "field_defaults": {f.name: f.default for f in LINKED if f.group != "lesson"},  # where a page's asked has none
        "changes": {"titles": TITLES, "other_dtype": OTHER_DTYPE},
        "docs": {f.key: f.doc for f in SLIDERS},
        "dtypes": dict(DTYPES), "preset_labels": preset_labels(moe=True), "preset_asks": list(PRESET_ASKS),
        "note_about": NOTE_ABOUT, "note_field": NOTE_FIELD,
        "budget": _budget_lines(), "structures": {structure_key(s): _structure(s) for s in _structures()},
        "korthikanti_note": KORTHIKANTI_NOTE,
        "html": TEMPLATES,  # app/templates.py: the markup the compiled templates.fill_html fills
        "shapes_titles": {a: shapes_title_html(a) for a in CHOICES["attention"]}, "train": _training(),
    }


def infer_key(gpu: str, weights: str, kv_dtype: str) -> str:
    """The key of one of the inference card's tables (page.js inferKey)."""
    return ",".join((gpu, weights, kv_dtype))


def _inference(cfg: Config, setup: InferSetup) -> dict:
    """The inference card's figures for `cfg` (its B and T), as data: the headline, lines and knee as markup and the
    charts' columns (`model.inference.serving`, `model.infer_report`), for every GPU preset (and `setup`'s custom
    GPU) × weights × KV cache format, at `setup`'s group and efficiency. page.js picks the table its menus name; on
    another configuration it says which command writes a page for that one (`ELSEWHERE`). A configuration the
    model refuses carries its one line."""
    gpus = [*GPUS, *([CUSTOM_SERVING_GPU] if setup.gpu == CUSTOM_SERVING_GPU else [])]
    was = f"{preset_of(cfg)}, " if preset_of(cfg) != CUSTOM else ""
    was += f"B = {cfg.B:,}, T = {cfg.T:,}"
    out: dict = {"cfg": _fields(cfg), "elsewhere": ELSEWHERE.replace("{was}", was),
                 "initial": {"gpu": setup.gpu, "weights": setup.weights, "kv_dtype": setup.kv_dtype},
                 "fixed": f"{INFER_CONTROLS['group']}: {setup.group:,} · {INFER_CONTROLS['efficiency']}: "
                          f"{setup.efficiency:g}",
                 "menus": {"gpu": [[k, label] for label, k in GPU_CHOICES.items() if k in gpus],
                           "weights": [[k, label] for label, k in WEIGHT_CHOICES.items()],
                           "kv_dtype": [[k, label] for label, k in KV_CHOICES.items()]},
                 "labels": {k: INFER_CONTROLS[k] for k in ("infer_gpu", "weights", "kv_dtype")}, "tables": {}}
    try:
        serving(cfg, setup)
    except ValueError as e:
        return {**out, "refused": str(e)}
    pool: dict[str, int] = {}  # each distinct piece of markup once (the lines' rows, headlines, knee captions): most
    # are the same in many tables
    for gpu, weights, kv in itertools.product(gpus, WEIGHTS, KV):
        custom = {} if gpu == CUSTOM_SERVING_GPU else {"peak_tflops": None, "memory_gib": None, "bandwidth_tbs": None}
        s = serving(cfg, dataclasses.replace(setup, gpu=gpu, weights=weights, kv_dtype=kv, **custom))
        charts = {k: {c: [_plotted(x) for x in v] for c, v in cols.items()} for k, cols in chart_data(s).items()}
        out["tables"][infer_key(gpu, weights, kv)] = {
            "head": pool.setdefault(headline_html(s), len(pool)),
            "lines": [pool.setdefault(r, len(pool)) for r in line_rows(s)],
            "knee": pool.setdefault(knee_html(s), len(pool)), "charts": charts}
    return {**out, "rows": list(pool), "frame": list(LINES_FRAME), "refused": None}


def _plotted(x: object) -> object:
    """A chart's number to 6 significant digits (a point's place; its printed figure is in the text columns)."""
    return float(f"{x:.6g}") if isinstance(x, float) else x


def page_spec(cfg: Config, dtype: str, setup: TrainSetup | None = None, infer: InferSetup | None = None) -> dict:
    """The whole spec of a page starting at `cfg`, `dtype`, the training `setup` (default `TrainSetup()`) and the
    inference card's `infer` (default `InferSetup()`).

    The training card's activations follow the optimizer (as on the live page): a setup with its own dtype is
    refused, since the card's line templates are built for the optimizer's."""
    setup = setup or TrainSetup()
    if setup.dtype is not None:
        raise ValueError("the exported training card takes its activation dtype from the optimizer: leave dtype None")
    spec = static_spec()
    modern = _modern(cfg, dtype)
    return {**spec, "budget": {**spec["budget"], **modern["budget"]},
            "structures": {**spec["structures"], **modern["structures"]},
            "changes": {**spec["changes"], "tables": modern["changes"]},
            "initial": {**_fields(cfg), "dtype": dtype},
            "own_extras": {"fields": {n: getattr(cfg, n) for n in EXTRAS_FIELDS}, "line": extras_line(cfg) or ""},
            "initial_train": {k: getattr(setup, k) for k in setup.__dataclass_fields__},
            "infer": _inference(cfg, infer or InferSetup())}


def lines_js(spec: dict) -> str:
    """Every line's value function as JavaScript, keyed like the spec: `BUDGET_FNS["tied"][i](s)`, and the
    rows' dimensions `DIM_FNS[structure][row][k](s)` and changes tables `CHANGES_FNS[key][group][i](s)`."""
    budget_fns = {k: [f"(s) => {x['js']}" for x in v] for k, v in spec["budget"].items()}
    memory_fns = {k: [f"(s) => {x['js']}" for x in v["lines"]] for k, v in spec["structures"].items()}
    dim_fns = {k: "[" + ", ".join("[" + ", ".join(f"(s) => {d}" for d in row) + "]" for row in v["dims"]) + "]"
               for k, v in spec["structures"].items()}
    changes_fns = {k: "[" + ", ".join("[" + ", ".join(f"(s) => {x['js']}" for x in g["lines"]) + "]"
                                      for g in v["groups"]) + "]" for k, v in spec["changes"]["tables"].items()}

    def obj(d: dict[str, list[str]]) -> str:
        return "{" + ", ".join(f"{json.dumps(k)}: [{', '.join(v)}]" for k, v in d.items()) + "}"

    def raw(d: dict[str, str]) -> str:
        return "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in d.items()) + "}"

    peak_fns = {k: [f"(s) => {x['js']}" for x in v["peak"]] for k, v in spec["structures"].items()}
    other_fns = {k: "{" + ", ".join(f"{r}: (s) => {x['js']}" for r, x in v["other"].items()) + "}"
                 for k, v in spec["structures"].items()}
    all_fns = {k: [f"(s) => {x['js']}" for x in v["lines_all"]] for k, v in spec["structures"].items() if "lines_all" in v}
    train_fns = ", ".join(f"(s) => {t['js']}" if t["js"] else "null" for t in spec["train"]["templates"])
    window_fns, mla_fns = (", ".join(f"{i}: (s) => {t[k]}" for i, t in enumerate(spec["train"]["templates"]) if k in t)
                           for k in ("window_js", "mla_js"))
    label_fns = ", ".join(f"{json.dumps(k)}: (s) => {to_js(f, LESSON_SYMBOLS, True)}" for k, f in WINDOW_VALUES.items())
    return (f"const BUDGET_FNS = {obj(budget_fns)};\nconst MEMORY_FNS = {obj(memory_fns)};\n"
            f"const PEAK_FNS = {obj(peak_fns)};\nconst TRAIN_FNS = [{train_fns}];\nconst DIM_FNS = {raw(dim_fns)};\n"
            f"const CHANGES_FNS = {raw(changes_fns)};\nconst TRAIN_WINDOW_FNS = {{{window_fns}}};\n"
            f"const WINDOW_FNS = {{{label_fns}}};\nconst MEMORY_ALL_FNS = {obj(all_fns)};\n"
            f"const TRAIN_MLA_FNS = {{{mla_fns}}};\nconst OTHER_FNS = {raw(other_fns)};\n")
