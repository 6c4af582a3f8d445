"""`python -m model --table infer`: the prefill, a decode step and the roofline of a configuration on a GPU, as
text, Markdown, CSV or JSON. Records (`model.inference.infer(...)`) -> formatting; nothing here computes a figure."""
from __future__ import annotations

import argparse
import csv
import io
import json

from .config import Config, config_dict
from .inference import CUSTOM_GPU, KV, LEAVES_OUT, WEIGHTS, InferSetup, Inference, by_batch, by_context, infer
from .layout import paragraph, row_lines
from .report import footer, header, markdown_header
from .train_report import human
from .training import GPUS

SECTIONS = {  # the lines' keys, in display order, under their headings
    "Serving memory": ("infer/n_q", "infer/s_q", "infer/weights", "infer/kv_cache", "infer/memory", "infer/fits"),
    "Prefill: B sequences of T tokens": ("infer/prefill_flops", "infer/prefill_bytes", "infer/ttft"),
    "Decode: one new token for each of B sequences after T cached tokens": (
        "infer/decode_flops", "infer/decode_attn_flops", "infer/decode_weights_read", "infer/decode_cache_read",
        "infer/decode_cache_write", "infer/decode_activations", "infer/decode_bytes"),
    "The roofline": ("infer/intensity", "infer/ridge", "infer/step", "infer/tokens_per_s", "infer/tokens_per_s_seq",
                     "infer/at_efficiency", "infer/knee_B"),
}
ROWS_TITLE = "The decode step's tensors (block 0 of L, and the head), from its real pass:"


def describe_setup(r: Inference) -> str:
    s = r.setup
    return (f"{s.device.label}: weights {s.weights}, KV cache {s.kv_dtype}, efficiency {s.efficiency:g} (shown beside "
            f"the bound); B = {r.cfg.B:,} (sequences), T = {r.cfg.T:,} (tokens of context)")


def _sections(r: Inference) -> list[tuple[str, list]]:
    have = {x.key: x for x in r.lines}
    return [(title, [have[k] for k in keys if k in have]) for title, keys in SECTIONS.items()]


def text(cfg: Config, setup: InferSetup, width: int | None = None) -> str:
    """The inference table in plain text, its rows and its lines, fitted to `width` (None: never wrapped)."""
    r = infer(cfg, setup)
    out = [*header(cfg, width), *paragraph(describe_setup(r), width, "Serve  ", "       "), "", ROWS_TITLE]
    out += [line for lines in row_lines([["tensor", "shape", "concrete", "what"]] + [
        [x.name, x.symbolic, str(x.shape), x.label] for x in r.rows], wrap=(3,), width=width, below=3)
        for line in lines]
    sections = _sections(r)
    rows = iter(row_lines([[x.label, x.formula, human(x)] for _, lines in sections for x in lines], wrap=(1, 0),
                          width=width, above=0))
    for title, lines in sections:
        out += ["", *paragraph(f"{title}:", width)] + [line for _ in lines for line in next(rows)]
    out += ["", *paragraph(LEAVES_OUT, width)]
    return "\n".join([*out, "", *footer(cfg, width)]) + "\n"


def markdown(cfg: Config, setup: InferSetup) -> str:
    r = infer(cfg, setup)
    out = [markdown_header(cfg), "", describe_setup(r), "", "| tensor | shape | concrete | what |", "|---|---|---|---|"]
    out += [f"| `{x.name}` | `{x.symbolic}` | {x.shape} | {x.label} |" for x in r.rows]
    for title, lines in _sections(r):
        out += ["", f"**{title}**", "", "| quantity | formula | value |", "|---|---|---:|"]
        out += [f"| {x.label} | {'`' + x.formula + '`' if x.formula else ''} | {human(x)} |" for x in lines]
    return "\n".join([*out, "", LEAVES_OUT, ""])


def csv_text(cfg: Config, setup: InferSetup) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["key", "label", "formula", "value", "unit"])
    w.writerows([x.key, x.label, x.formula, x.value, x.unit] for x in infer(cfg, setup).lines)
    return buf.getvalue()


def as_json(cfg: Config, setup: InferSetup) -> str:
    """{"config": ..., "infer": {prefill_flops, decode_flops, decode_bytes, decode_tokens_per_s, ttft_s, ...,
    "by_B": the decode points at B = 1 … 1,024, "by_T": at T = 128 … T_max}}."""
    doc = {**infer(cfg, setup).as_dict(), "by_B": list(by_batch(cfg, setup)), "by_T": list(by_context(cfg, setup))}
    return json.dumps({"config": config_dict(cfg), "infer": doc}, indent=2) + "\n"


# --- command line ------------------------------------------------------------------------------------------------
INFER_OPTIONS = ("weights", "kv_dtype", "group", "efficiency", "gpu_bandwidth")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Serving options of `python -m model --table infer` (with --gpu, --gpu-peak and --gpu-memory); None = default."""
    g = p.add_argument_group("inference (with --table infer; --gpu, --gpu-peak and --gpu-memory too)")
    d = InferSetup()
    g.add_argument("--weights", choices=list(WEIGHTS), help=f"the blocks' matrices' format (default {d.weights})")
    g.add_argument("--kv-dtype", dest="kv_dtype", choices=list(KV), help=f"the KV cache's format (default {d.kv_dtype})")
    g.add_argument("--group", type=int, metavar="N", help=f"weights per scale for int8 and int4 (default {d.group})")
    g.add_argument("--efficiency", type=float, help=f"shown beside the bound, 0 to 1 (default {d.efficiency})")
    g.add_argument("--gpu-bandwidth", dest="gpu_bandwidth", type=float, metavar="TBS",
                   help="custom GPU: memory bandwidth in TB/s (10¹² bytes/s)")


def given_infer_options(args: argparse.Namespace) -> list[str]:
    return ["--" + k.replace("_", "-") for k in INFER_OPTIONS if getattr(args, k) is not None]


def setup_from_args(args: argparse.Namespace) -> InferSetup:
    """A validated InferSetup from the options given (ValueError names the problem and the fix, by flag)."""
    names = {"gpu_peak": "peak_tflops", "gpu_memory": "memory_gib", "gpu_bandwidth": "bandwidth_tbs"}
    given = {names.get(k, k): getattr(args, k) for k in ("gpu", "gpu_peak", "gpu_memory", *INFER_OPTIONS)
             if getattr(args, k, None) is not None}
    if {"peak_tflops", "memory_gib", "bandwidth_tbs"} & set(given) and "gpu" not in given:
        given["gpu"] = CUSTOM_GPU
    if given.get("gpu") not in (None, CUSTOM_GPU, *GPUS):
        raise ValueError(f"--gpu {given['gpu']} is not one of {', '.join([*GPUS, CUSTOM_GPU])}")
    try:
        return InferSetup(**given)
    except ValueError as e:
        message = str(e)
        for field, option in (("weights=", "--weights "), ("kv_dtype=", "--kv-dtype "), ("group=", "--group "),
                              ("efficiency=", "--efficiency "), ("peak_tflops", "--gpu-peak"),
                              ("memory_gib", "--gpu-memory"), ("bandwidth_tbs", "--gpu-bandwidth"),
                              ("gpu=custom", "--gpu custom")):
            message = message.replace(field, option)
        raise ValueError(message) from None


def render(cfg: Config, args: argparse.Namespace, width: int | None = None) -> str:
    """The infer table in the format the flags ask for (plain text fitted to `width`)."""
    setup = setup_from_args(args)
    if args.json:
        return as_json(cfg, setup)
    if args.csv:
        return csv_text(cfg, setup)
    if args.markdown:
        return markdown(cfg, setup)
    return text(cfg, setup, width)
