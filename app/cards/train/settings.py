"""The training run's settings in the URL and from the widgets, both ways, as pure functions (no Panel).

    >>> setup, notes = settle_train({"gpu": "a100-80gb", "gpus": "1", "D": "300 billion", "mfu": "0.5"})
    >>> setup.D, notes
    (300000000000, [])
    >>> train_items(setup)
    [('D', '300000000000'), ('gpu', 'a100-80gb'), ('mfu', '0.5'), ('gpus', '1')]

Keys (each optional; absent means `TrainSetup`'s default): D (training tokens; absent = Chinchilla's 20·N),
gpu, gpu_peak and gpu_memory (a custom GPU's TFLOP/s and GiB), mfu (0 to 1), gpus, price (dollars per
GPU-hour), optimizer, zero (0 to 3), recompute (none, full), fit (hoffmann, besiroglu). Numbers are read by
`model.numbers`' grammar, the one of every box: 300e9, 3e11, 300,000,000,000, 300 billion, 0.4. Hostile input
never raises: every problem becomes a notice naming it and what is shown instead, like the configuration's keys.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from model import numbers
from model.rules import quote
from model.training import CUSTOM_GPU, FITS, GPUS, OPTIMIZERS, RECOMPUTE, SETUP_BOUNDS, TrainSetup

TRAIN_KEYS = ("D", "gpu", "gpu_peak", "gpu_memory", "mfu", "gpus", "price", "optimizer", "zero", "recompute", "fit")
DEFAULT = TrainSetup()
CUSTOM_START = GPUS[DEFAULT.gpu]  # a custom GPU starts from the default GPU's peak and memory
MAX_VALUE_CHARS = 40
SETUP_FIELD = {"gpu_peak": "peak_tflops", "gpu_memory": "memory_gib"}  # a URL key -> its TrainSetup field, where they differ
# the URL keys' choices and bounds (the exported page reads them too, app.export.spec); WHOLE_KEYS take whole numbers
TRAIN_CHOICES = {"gpu": (*GPUS, CUSTOM_GPU), "optimizer": tuple(OPTIMIZERS), "recompute": RECOMPUTE,
                 "fit": tuple(FITS), "zero": ("0", "1", "2", "3")}
TRAIN_BOUNDS = {"D": SETUP_BOUNDS["D"], "gpus": SETUP_BOUNDS["gpus"], "mfu": SETUP_BOUNDS["mfu"],
                "price": SETUP_BOUNDS["price"], "gpu_peak": SETUP_BOUNDS["peak_tflops"],
                "gpu_memory": SETUP_BOUNDS["memory_gib"]}
WHOLE_KEYS = ("D", "gpus")
ONE_GPU_ZERO = "ZeRO {zero} shards over the n GPUs, and n = 1: each part is divided by 1, so it saves nothing here"
# The notices of `number` and `settle_train` as templates (str.format): the exported page fills the same ones
# (app/export/spec.py, page.js setupNumber and settleTrain)
NOTICES = {
    "not_number": "{key}={text} is not a {kind} {bounds}",
    "not_text": '{key}="{text}" is not a {kind} {bounds}{write}',
    "write": " (write {examples})",  # D's examples of model.numbers' grammar
    "range": "{key}={value} is out of range: {key} must be {bounds}{hint}",
    "percent": " (write 0.4 for 40 %)",  # a share written in percent
    "bounds": "from {lo} to {hi}",
    "choice": '{key}="{text}" is not one of {choices}; using {default}',
    "using": "{why}; using {using}",
    "kept": "{key}={was}",
    "rule": "Chinchilla's D = 20·N",
    "start": "the {label}'s",
    "custom": "custom GPU",
    "ignored": "gpu_peak and gpu_memory describe a custom GPU; ignored with gpu={gpu} (add gpu=custom)",
}


def link_number(x: float) -> str:
    """A link's number as a notice shows it: 4096 -> "4,096", 0.5 -> "0.5"."""
    return f"{int(x):,}" if x == int(x) else f"{x:,}"


def number_words(lo: float, hi: float, whole: bool) -> dict[str, str]:
    """The words of `number`'s notices on a number from `lo` to `hi`: its kind and its bounds."""
    return {"kind": "whole number" if whole else "number",
            "bounds": NOTICES["bounds"].format(lo=link_number(lo), hi=link_number(hi))}


def number(key: str, raw: object, bounds: tuple[float, float] | None = None,
           whole: bool | None = None) -> tuple[float | int | None, str | None]:
    """(value, None) or (None, why not): a number, or text in `model.numbers`' grammar (300e9, 300 billion, 0.4),
    within `bounds` (default TRAIN_BOUNDS[key]), a whole number where `whole` (default: key in WHOLE_KEYS)."""
    lo, hi = bounds or TRAIN_BOUNDS[key]
    whole = key in WHOLE_KEYS if whole is None else whole
    say = {"key": key, **number_words(lo, hi, whole)}
    if isinstance(raw, (int, float)):  # a bool too: its repr
        value, text = raw, repr(raw)
        if isinstance(raw, bool) or not math.isfinite(value) or (whole and value != int(value)):
            return None, NOTICES["not_number"].format(**say, text=quote(text))
    else:
        text = str(raw).strip(" \t")
        value = (numbers.whole if whole else numbers.real)(text) if len(text) <= MAX_VALUE_CHARS else None
        if value is None:
            write = NOTICES["write"].format(examples=numbers.LARGE_EXAMPLES) if key == "D" else ""
            return None, NOTICES["not_text"].format(**say, text=quote(text), write=write)
    if not lo <= value <= hi:
        hint = NOTICES["percent"] if key in ("mfu", "efficiency") and 1 < value <= 100 else ""
        return None, NOTICES["range"].format(**say, value=numbers.show(value, text), hint=hint)
    return (int(value) if whole else float(value)), None


def settle_train(asked: Mapping[str, object], kept: TrainSetup = DEFAULT) -> tuple[TrainSetup, list[str]]:
    """A valid TrainSetup as close as possible to `asked` (raw text or values per TRAIN_KEYS), and the notices.

    Rules: a bad number keeps `kept`'s (a link: the default, or for D Chinchilla's rule; a page's box: the value
    in use), and a bad choice the default; a custom GPU without a peak or memory
    starts from the default GPU's; a custom peak or memory with a named GPU is ignored. ZeRO on one GPU is kept
    (it divides by n = 1), with a note that it saves nothing there.
    """
    notes: list[str] = []
    fields: dict[str, object] = {}
    for key in TRAIN_KEYS:
        raw = asked.get(key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        if key in TRAIN_CHOICES:
            text = str(raw).strip().lower()
            if text not in TRAIN_CHOICES[key]:
                default = NOTICES["custom"] if key == "gpu" else getattr(DEFAULT, key)
                notes.append(NOTICES["choice"].format(key=key, text=quote(str(raw)),
                                                      choices=", ".join(TRAIN_CHOICES[key]), default=default))
                continue
            fields[key] = int(text) if key == "zero" else text
        else:
            value, why = number(key, raw)
            if why:
                was = getattr(kept, SETUP_FIELD.get(key, key))
                if key == "D" and was is None:
                    using = NOTICES["rule"]
                elif key in SETUP_FIELD and was is None:
                    using = NOTICES["start"].format(label=CUSTOM_START.label)
                else:
                    using = NOTICES["kept"].format(key=key, was=link_number(was))
                    fields[SETUP_FIELD.get(key, key)] = was
                notes.append(NOTICES["using"].format(why=why, using=using))
                continue
            fields[SETUP_FIELD.get(key, key)] = value
    gpu = fields.get("gpu", DEFAULT.gpu)
    if gpu == CUSTOM_GPU:
        fields.setdefault("peak_tflops", CUSTOM_START.peak_tflops)
        fields.setdefault("memory_gib", CUSTOM_START.memory_gib)
    elif "peak_tflops" in fields or "memory_gib" in fields:
        notes.append(NOTICES["ignored"].format(gpu=gpu))
        fields.pop("peak_tflops", None)
        fields.pop("memory_gib", None)
    zero, gpus = fields.get("zero", DEFAULT.zero), fields.get("gpus", DEFAULT.gpus)
    if zero and gpus == 1:
        notes.append(ONE_GPU_ZERO.format(zero=zero))
    return TrainSetup(**fields), notes


def news(notes: list[str], before: list[str], key: str) -> list[str]:
    """The notes a change of `key` brings: those not given before it, and those about `key` itself (a box's text
    refused again is said again); ZeRO's note on one GPU is about zero and gpus."""
    about = {"zero": "ZeRO ", "gpus": "ZeRO "}.get(key, "\0")
    return [n for n in notes if n not in before or n.startswith((f"{key}=", about))]


def setup_items(setup: object, keys: tuple[str, ...], default: object,
                field: Mapping[str, str]) -> list[tuple[str, str]]:
    """The URL items that reproduce a setup dataclass: only the `keys` whose field (`field`, else the key's own
    name) differs from `default`'s, in `keys`' order; numbers without thousands' commas."""
    items = []
    for key in keys:
        value = getattr(setup, field.get(key, key))
        if value is None or value == getattr(default, field.get(key, key)):
            continue
        items.append((key, link_number(value).replace(",", "") if isinstance(value, (int, float)) else str(value)))
    return items


def train_items(setup: TrainSetup) -> list[tuple[str, str]]:
    """The URL items that reproduce `setup`: only the keys that differ from the default, in TRAIN_KEYS order."""
    return setup_items(setup, TRAIN_KEYS, DEFAULT, SETUP_FIELD)
