"""Everything the exported page's JavaScript needs, taken from `model` and the live app's definitions.

Nothing here is written for the page alone: the fields, bounds, presets and their labels, the rules and their
messages (`model.rules`), the budget and memory lines with their formulas (compiled to JavaScript by
`model.formula.to_js`), the shape rows of every pass structure (`model.memory.Structure`), the chart's parts and
colours, and the words of the live page. The JavaScript evaluates what differs between configurations.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import json

from model import BOUNDS, DTYPES, FIELD_DOCS, PRESETS, Config, budget, trace
from model import units
from model.budgeting import CHART, CHART_NOTE, GROUPS
from model.config import FIELDS, INT_FIELDS
from model.formula import LESSON_SYMBOLS, is_exact, to_js
from model.memory import KORTHIKANTI_NOTE, ONES, Structure, probes, structure_key
from model.rules import CUSTOM, MESSAGES, PRESET_MODEL, PRESET_SETS, preset_labels
from model.tracing import BLOCK_PREFIX

from ..styles import PART_COLOURS
from ..words import CAPTIONS, MAX_LISTED_BLOCKS, QUADRATIC, RULES_LINE, SHORT, SOFT, STEP_PREFIX, SUM_KEYS

DTYPE_CLASS = {"fp32": "fp32", "bf16": "bf16", "fp16": "bf16"}  # fp16 passes equal bf16's (tests check it)


def _line(line) -> dict:
    """A line without its value, and the JavaScript that computes the value from the symbols `s`."""
    exact = is_exact(line.formula, LESSON_SYMBOLS)
    return {"key": line.key, "label": line.label, "formula": line.formula, "unit": line.unit, "exact": exact,
            "js": to_js(line.formula, LESSON_SYMBOLS, exact)}


def _budget_lines() -> dict[str, list[dict]]:
    """Budget lines for a tied and an untied head (their formulas depend on nothing else)."""
    probe = Config(B=2, T=3, d=4, h=2, L=2, V=5, T_max=3)
    return {("tied" if tie else "untied"): [_line(x) for x in budget(dataclasses.replace(probe, tie=tie)).lines]
            for tie in (True, False)}


def _structures() -> list[Structure]:
    out = []
    for tie, dtype in itertools.product((True, False), sorted(set(DTYPE_CLASS.values()))):
        for ones in itertools.product((False, True), repeat=len(ONES)):
            one = dict(zip(ONES, ones))
            if not (one["T"] and one["T-1"]):
                out.append(Structure(tie=tie, dtype=dtype, ones=ones))
    return out


def _structure(s: Structure) -> dict:
    """Rows (without sizes) and memory lines of one structure, from a probe pass."""
    tr = trace(probes(s)[0], s.dtype)
    rows = [{"name": r.name, "local": r.local, "label": r.label, "symbolic": r.symbolic, "block": r.block is not None,
             "elem": r.nbytes // r.numel, "view": r.view, "saved": r.saved} for r in tr.rows]
    return {"rows": rows, "lines": [_line(x) for x in tr.lines]}


@functools.cache
def static_spec() -> dict:
    """The part of the spec that is the same for every exported page."""
    presets = {name: {f: getattr(p, f) for f in FIELDS} for name, p in PRESETS.items()}
    return {
        "fields": list(FIELDS), "int_fields": list(INT_FIELDS), "bounds": {f: list(BOUNDS[f]) for f in INT_FIELDS},
        "docs": {f: FIELD_DOCS[f] for f in INT_FIELDS}, "short": SHORT, "soft": {k: list(v) for k, v in SOFT.items()},
        "dtypes": dict(DTYPES), "dtype_class": DTYPE_CLASS, "presets": presets, "custom": CUSTOM,
        "preset_labels": preset_labels(), "preset_model": list(PRESET_MODEL), "preset_sets": list(PRESET_SETS),
        "messages": MESSAGES, "rules_line": RULES_LINE, "ones": list(ONES), "block_prefix": BLOCK_PREFIX,
        "budget": _budget_lines(), "structures": {structure_key(s): _structure(s) for s in _structures()},
        "groups": GROUPS, "sum_keys": list(SUM_KEYS), "step_prefix": STEP_PREFIX, "captions": list(CAPTIONS),
        "chart": [{"key": k, "label": label + ("*" if in_sum else ""), "in_sum": in_sum, "colour": PART_COLOURS[k]}
                  for k, label, in_sum in CHART],
        "chart_note": CHART_NOTE, "korthikanti_note": KORTHIKANTI_NOTE, "quadratic": QUADRATIC,
        "max_listed_blocks": MAX_LISTED_BLOCKS,
        "units": {"count": [list(u) for u in units._COUNT_UNITS], "si": [list(u) for u in units._SI],
                  "binary": [list(u) for u in units._BINARY]},
    }


def page_spec(cfg: Config, dtype: str) -> dict:
    """The whole spec of a page starting at `cfg` and `dtype`."""
    return {**static_spec(), "initial": {**{f: getattr(cfg, f) for f in FIELDS}, "dtype": dtype}}


def lines_js() -> str:
    """Every line's value function as JavaScript, keyed like the spec: `LINE_FNS["tied"][i](s)`."""
    spec = static_spec()
    budget_fns = {k: [f"(s) => {x['js']}" for x in v] for k, v in spec["budget"].items()}
    memory_fns = {k: [f"(s) => {x['js']}" for x in v["lines"]] for k, v in spec["structures"].items()}

    def obj(d: dict[str, list[str]]) -> str:
        return "{" + ", ".join(f"{json.dumps(k)}: [{', '.join(v)}]" for k, v in d.items()) + "}"

    return f"const BUDGET_FNS = {obj(budget_fns)};\nconst MEMORY_FNS = {obj(memory_fns)};\n"
