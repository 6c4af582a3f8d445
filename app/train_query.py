"""The training run's settings in the URL and from the widgets, both ways, as pure functions (no Panel).

    >>> setup, notes = settle_train({"gpu": "a100-80gb", "gpus": "1", "zero": "3"})
    >>> setup.zero, notes[0]
    (0, 'zero=3 needs 2 or more GPUs to shard over, and gpus=1; showing ZeRO 0')
    >>> train_items(setup)
    [('gpu', 'a100-80gb'), ('gpus', '1')]

Keys (each optional; absent means `TrainSetup`'s default): D (training tokens; absent = Chinchilla's 20·N),
gpu, gpu_peak and gpu_memory (a custom GPU's TFLOP/s and GiB), mfu (0 to 1), gpus, price (dollars per
GPU-hour), optimizer, zero (0 to 3), recompute (none, full), fit (hoffmann, besiroglu). Hostile input never
raises: every problem becomes a notice naming it and what is shown instead, like the configuration's keys.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

from model.training import CUSTOM_GPU, FITS, GPUS, OPTIMIZERS, RECOMPUTE, SETUP_BOUNDS, TrainSetup

TRAIN_KEYS = ("D", "gpu", "gpu_peak", "gpu_memory", "mfu", "gpus", "price", "optimizer", "zero", "recompute", "fit")
DEFAULT = TrainSetup()
CUSTOM_START = GPUS[DEFAULT.gpu]  # a custom GPU starts from the default GPU's peak and memory
MAX_VALUE_CHARS = 40
_FIELD = {"gpu_peak": "peak_tflops", "gpu_memory": "memory_gib"}
_CHOICES = {"gpu": (*GPUS, CUSTOM_GPU), "optimizer": tuple(OPTIMIZERS), "recompute": RECOMPUTE, "fit": tuple(FITS),
            "zero": ("0", "1", "2", "3")}
_BOUNDS = {"D": SETUP_BOUNDS["D"], "gpus": SETUP_BOUNDS["gpus"], "mfu": SETUP_BOUNDS["mfu"],
           "price": SETUP_BOUNDS["price"], "gpu_peak": SETUP_BOUNDS["peak_tflops"],
           "gpu_memory": SETUP_BOUNDS["memory_gib"]}
_WHOLE = ("D", "gpus")


def _show(text: str, limit: int = 24) -> str:
    text = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fmt(x: float) -> str:
    return f"{int(x):,}" if x == int(x) else f"{x:,}"


def _number(key: str, raw: object) -> tuple[float | int | None, str | None]:
    """(value, None) or (None, why not): whole numbers may be written 300e9 or 1,000."""
    lo, hi = _BOUNDS[key]
    kind = "whole number" if key in _WHOLE else "number"
    if isinstance(raw, bool):
        return None, f"{key}={raw!r} is not a {kind} from {_fmt(lo)} to {_fmt(hi)}"
    if isinstance(raw, (int, float)):
        value = raw
    else:
        text = str(raw).strip()
        try:
            if len(text) > MAX_VALUE_CHARS:
                raise ValueError
            value = float(text.replace(",", "").replace("_", ""))
        except ValueError:
            return None, f'{key}="{_show(text)}" is not a {kind} from {_fmt(lo)} to {_fmt(hi)}'
    if not math.isfinite(value) or (key in _WHOLE and value != int(value)):
        return None, f"{key}={_show(str(raw))} is not a {kind} from {_fmt(lo)} to {_fmt(hi)}"
    if not lo <= value <= hi:
        hint = " (write 0.4 for 40 %)" if key == "mfu" and 1 < value <= 100 else ""
        return None, f"{key}={_fmt(value)} is out of range: {key} must be from {_fmt(lo)} to {_fmt(hi)}{hint}"
    return (int(value) if key in _WHOLE else float(value)), None


def settle_train(asked: Mapping[str, object]) -> tuple[TrainSetup, list[str]]:
    """A valid TrainSetup as close as possible to `asked` (raw text or values per TRAIN_KEYS), and the notices.

    Rules: a bad value keeps the default (or, for D, Chinchilla's rule); ZeRO needs 2 or more GPUs; a custom GPU
    without a peak or memory starts from the default GPU's; a custom peak or memory with a named GPU is ignored.
    """
    notes: list[str] = []
    fields: dict[str, object] = {}
    for key in TRAIN_KEYS:
        raw = asked.get(key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        if key in _CHOICES:
            text = str(raw).strip().lower()
            if text not in _CHOICES[key]:
                default = "custom GPU" if key == "gpu" else getattr(DEFAULT, key)
                notes.append(f'{key}="{_show(str(raw))}" is not one of {", ".join(_CHOICES[key])}; using {default}')
                continue
            fields[key] = int(text) if key == "zero" else text
        else:
            value, why = _number(key, raw)
            if why:
                if key == "D":
                    kept = "Chinchilla's D = 20·N"
                elif key in _FIELD:
                    kept = f"the {CUSTOM_START.label}'s"
                else:
                    kept = f"{key}={_fmt(getattr(DEFAULT, key))}"
                notes.append(f"{why}; using {kept}")
                continue
            fields[_FIELD.get(key, key)] = value
    gpu = fields.get("gpu", DEFAULT.gpu)
    if gpu == CUSTOM_GPU:
        fields.setdefault("peak_tflops", CUSTOM_START.peak_tflops)
        fields.setdefault("memory_gib", CUSTOM_START.memory_gib)
    elif "peak_tflops" in fields or "memory_gib" in fields:
        notes.append(f"gpu_peak and gpu_memory describe a custom GPU; ignored with gpu={gpu} (add gpu=custom)")
        fields.pop("peak_tflops", None)
        fields.pop("memory_gib", None)
    zero, gpus = fields.get("zero", DEFAULT.zero), fields.get("gpus", DEFAULT.gpus)
    if zero and gpus == 1:
        notes.append(f"zero={zero} needs 2 or more GPUs to shard over, and gpus=1; showing ZeRO 0")
        fields["zero"] = 0
    return TrainSetup(**fields), notes


def train_items(setup: TrainSetup) -> list[tuple[str, str]]:
    """The URL items that reproduce `setup`: only the keys that differ from the default, in TRAIN_KEYS order."""
    items = []
    for key in TRAIN_KEYS:
        value = getattr(setup, _FIELD.get(key, key))
        if value is None or value == getattr(DEFAULT, _FIELD.get(key, key)):
            continue
        items.append((key, _fmt(value).replace(",", "") if isinstance(value, (int, float)) else str(value)))
    return items
