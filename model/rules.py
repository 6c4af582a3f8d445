"""The rules that keep a configuration valid while a learner moves sliders, and the words that explain them.

- h must divide d (each head gets d_head = d / h features): h snaps to the nearest divisor (`snap_heads`).
- T must not exceed T_max (the learned position table W_pe has T_max rows and cannot extrapolate): T is clamped.
  With RoPE there is no table: T_max is the context the model was trained for, and T beyond it is kept with a
  notice, not clamped (the module runs and every shape is well defined; only quality past the trained context
  is in question, which no shape or count shows).
- The modern recipe (when `asked` has its fields): h_kv snaps to the divisor of h nearest it; with RoPE, d_head
  must be even, so h snaps to the nearest divisor of d with an even d / h (with d_head set apart, h need not
  divide d at all).
- A field outside `BOUNDS` is rejected and the value in use is kept.
- Choosing a preset sets everything but the batch size B; a configuration "is" a preset when its model matches
  (d, h, L, V, T_max, tie), whatever B and T are.

`settle` takes the values asked for (each already within BOUNDS) and returns a valid `Config` and the notices
that explain any change. The live page, the URL parser and the exported page use these rules and `MESSAGES`
(the exported page's JavaScript fills the same templates; tests run both on the same inputs).
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

from .config import BOUNDS, FIELDS, GPT2_RECIPE_PRESETS, PRESETS, RECIPE_FIELDS, Config, divisors, snap_heads

CUSTOM = "custom"
PRESET_MODEL = ("d", "h", "L", "V", "T_max", "tie")  # what makes a configuration a preset's model
PRESET_SETS = ("T", *PRESET_MODEL)  # what choosing a preset sets; B is kept
MESSAGES = {  # {name} is a field; numbers arrive formatted with thousands separators
    "h": "h snapped {asked} → {h}: {d} is not divisible by {asked}",
    "T": ("T clamped {asked} → {T_max}: T cannot exceed T_max = {T_max}, the rows of the learned position table W_pe "
          "(it cannot extrapolate to later positions)"),
    "range": "{name}={value} is out of range: {name} must be from {lo} to {hi}; kept {name}={kept}",
    "h_kv": "h_kv snapped {asked} → {h_kv}: h = {h} is not divisible by {asked}",
    "h_even": "h snapped {asked} → {h}: RoPE rotates pairs of features, so d_head = d / h must be even",
    "context": ("T = {T} is beyond T_max = {T_max}, the context the model was trained for: RoPE has no table to run "
                "out of, so the shapes are shown, but quality past the trained context needs RoPE scaling"),
}


def message(kind: str, **values: int | str) -> str:
    """MESSAGES[kind] filled in, whole numbers with thousands separators: message("h", asked=12, h=11, d=770)."""
    return MESSAGES[kind].format(**{k: f"{v:,}" if isinstance(v, int) else v for k, v in values.items()})


def settle(asked: Mapping[str, int | bool]) -> tuple[Config, list[str]]:
    """A valid Config as close as possible to `asked` (all of FIELDS, each in bounds), and what was changed.

    >>> cfg, notes = settle(dict(B=8, T=2048, d=770, h=12, L=12, V=50257, T_max=1024, tie=True))
    >>> cfg.h, cfg.T, notes[0]
    (11, 1024, 'h snapped 12 → 11: 770 is not divisible by 12')
    """
    values = {k: asked[k] for k in FIELDS}
    values.update({k: asked[k] for k in RECIPE_FIELDS if k in asked})
    notes = []
    if values.get("head_dim") is None:  # d_head = d / h: h must divide d (and, with RoPE, leave d / h even)
        _settle_heads(values, notes)
    kv = values.get("kv_heads")
    if kv is not None and values["h"] % kv:
        values["kv_heads"] = snap_heads(values["h"], kv)
        notes.append(message("h_kv", asked=kv, h_kv=values["kv_heads"], h=values["h"]))
    if values["T"] > values["T_max"]:
        if values.get("positions", "learned") == "learned":
            notes.append(message("T", asked=values["T"], T_max=values["T_max"]))
            values["T"] = values["T_max"]
        else:
            notes.append(message("context", T=values["T"], T_max=values["T_max"]))
    return Config(**values), notes


def _settle_heads(values: dict, notes: list[str]) -> None:
    d, asked = values["d"], values["h"]
    h = snap_heads(d, asked)
    if h != asked:
        notes.append(message("h", asked=asked, h=h, d=d))
    if values.get("positions") == "rope" and (d // h) % 2:
        even = [k for k in divisors(d) if (d // k) % 2 == 0]
        if not even:
            raise ValueError(f"d={d:,} is odd: RoPE needs an even d_head = d / h, so d must be even (or set d_head)")
        h = min(even, key=lambda k: (abs(k - asked), k))
        notes.append(message("h_even", asked=asked, h=h))
    values["h"] = h


def out_of_range(name: str, value: object, kept: int) -> str | None:
    """The notice for a typed value outside BOUNDS (or not a whole number), None when `value` is fine."""
    lo, hi = BOUNDS[name]
    if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
        return None
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else repr(value)
    return message("range", name=name, value=shown, lo=lo, hi=hi, kept=kept)


def preset_of(config: Config) -> str:
    """The preset with this model (d, h, L, V, T_max, tie and the recipe; any B and T), or "custom"."""
    for name, preset in PRESETS.items():
        if all(getattr(preset, k) == getattr(config, k) for k in PRESET_MODEL) and preset.recipe() == config.recipe():
            return name
    return CUSTOM


@functools.cache
def preset_labels() -> dict[str, str]:
    """Menu label -> preset name, e.g. "GPT-2 small · L 12, d 768" -> "gpt2-small"; plus "custom"."""
    sizes = {"small": "small", "medium": "medium", "large": "large", "xl": "XL"}
    labels = {}
    for name in GPT2_RECIPE_PRESETS:  # the page's menu: the 2019 recipe (the modern presets: issue 15)
        cfg = PRESETS[name]
        family, size = name.split("-", 1)
        title = f"GPT-2 {sizes[size]}" if family == "gpt2" else f"GPT-3 {size.upper()}"
        labels[f"{title} · L {cfg.L}, d {cfg.d:,}"] = name
    return {**labels, "custom (your own values)": CUSTOM}
