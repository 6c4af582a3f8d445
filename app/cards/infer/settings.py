"""The inference card's settings in the URL and from the widgets, both ways, as pure functions (no Panel).

    >>> setup, notes = settle_infer({"infer_gpu": "h200", "weights": "int4", "efficiency": "0.6"})
    >>> setup.gpu, setup.weights, setup.efficiency, notes
    ('h200', 'int4', 0.6, [])
    >>> infer_items(setup)
    [('infer_gpu', 'h200'), ('weights', 'int4'), ('efficiency', '0.6')]

Keys (each optional; absent means `model.inference.InferSetup`'s default): infer_gpu (a GPU preset or custom),
infer_peak, infer_memory and infer_bandwidth (a custom GPU's TFLOP/s, GiB and TB/s), weights (bf16, fp16, fp8, int8,
int4), kv_dtype (bf16, fp16, fp8, int8), group (weights per scale, 1 to 4,096) and efficiency (above 0 to 1, shown
beside the bound). The card's own GPU: serving need not run on the GPU the training card trains on. Decode's B and T
are the page's B and T. Numbers read `model.numbers`' grammar, like every box; hostile input never raises: each
problem is one notice naming it and what is shown instead.
"""
from __future__ import annotations

from collections.abc import Mapping

from model.inference import CUSTOM_GPU, KV, WEIGHTS, InferSetup
from model.rules import quote
from model.training import GPUS, SETUP_BOUNDS

from ..train.settings import link_number, number, setup_items

INFER_KEYS = ("infer_gpu", "infer_peak", "infer_memory", "infer_bandwidth", "weights", "kv_dtype", "group",
              "efficiency")
DEFAULT = InferSetup()
CUSTOM_START = GPUS[DEFAULT.gpu]  # a custom GPU starts from the default GPU's peak, memory and bandwidth
FIELD = {"infer_gpu": "gpu", "infer_peak": "peak_tflops", "infer_memory": "memory_gib",
         "infer_bandwidth": "bandwidth_tbs"}  # URL key -> InferSetup field (the rest are the field's own name)
CUSTOM_KEYS = ("infer_peak", "infer_memory", "infer_bandwidth")
INFER_CHOICES = {"infer_gpu": (*GPUS, CUSTOM_GPU), "weights": tuple(WEIGHTS), "kv_dtype": tuple(KV)}
INFER_BOUNDS = {"infer_peak": SETUP_BOUNDS["peak_tflops"], "infer_memory": SETUP_BOUNDS["memory_gib"],
                "infer_bandwidth": (0.001, 1_000.0), "group": (1, 4096), "efficiency": (0.01, 1.0)}


def _custom_start(field: str) -> float:
    return getattr(CUSTOM_START, field)


def settle_infer(asked: Mapping[str, object], kept: InferSetup = DEFAULT) -> tuple[InferSetup, list[str]]:
    """A valid InferSetup as close as possible to `asked` (raw text or values per INFER_KEYS), and the notices.

    A bad number keeps `kept`'s (a link: the default; a box: the value in use), a bad choice the default; a custom
    GPU without a peak, memory or bandwidth starts from the default GPU's; those three with a named GPU are ignored.
    """
    notes: list[str] = []
    fields: dict[str, object] = {}
    for key in INFER_KEYS:
        raw = asked.get(key)
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            continue
        name = FIELD.get(key, key)
        if key in INFER_CHOICES:
            text = str(raw).strip().lower()
            if text not in INFER_CHOICES[key]:
                notes.append(f'{key}="{quote(str(raw))}" is not one of {", ".join(INFER_CHOICES[key])}; '
                             f'using {getattr(DEFAULT, name)}')
                continue
            fields[name] = text
            continue
        value, why = number(key, raw, INFER_BOUNDS[key], whole=key == "group")
        if why:
            was = getattr(kept, name)
            if was is None:
                was = _custom_start(name)
            notes.append(f"{why}; using {key}={link_number(was)}")
            value = was
        fields[name] = value
    custom = [FIELD[k] for k in CUSTOM_KEYS]
    if fields.get("gpu", DEFAULT.gpu) == CUSTOM_GPU:
        for name in custom:
            fields.setdefault(name, getattr(kept, name) if kept.gpu == CUSTOM_GPU else _custom_start(name))
    elif any(name in fields for name in custom):
        notes.append(f"{', '.join(CUSTOM_KEYS)} describe a custom GPU; ignored with infer_gpu="
                     f"{fields.get('gpu', DEFAULT.gpu)} (add infer_gpu=custom)")
        for name in custom:
            fields.pop(name, None)
    return InferSetup(**fields), notes


def infer_items(setup: InferSetup) -> list[tuple[str, str]]:
    """The URL items that reproduce `setup`: only the keys that differ from the default, in INFER_KEYS order."""
    return setup_items(setup, INFER_KEYS, DEFAULT, FIELD)
