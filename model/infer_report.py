"""`python -m model --table infer`: the prefill, a decode step and the roofline of a configuration on a GPU, as
text, Markdown, CSV or JSON. Records (`model.inference.infer(...)`) -> formatting; nothing here computes a figure."""
from __future__ import annotations

import argparse
import csv
import io
import json

from .config import Config, config_dict
from .inference import (CUSTOM_GPU, KV, LEAVES_OUT, SERIES_B, WEIGHTS, InferSetup, Inference, Serving, by_batch,
                        by_context, infer)
from .layout import paragraph, row_lines
from .report import footer, header, markdown_header
from . import units
from .train_report import human
from .training import GPUS

SECTIONS = {  # the lines' keys, in display order, under their headings
    "Serving memory": ("infer/n_q", "infer/s_q", "infer/weights", "infer/kv_cache", "infer/memory", "infer/fits"),
    "Prefill: B sequences of T tokens": ("infer/prefill_flops", "infer/prefill_bytes", "infer/ttft"),
    "Decode: one new token for each of B sequences after T cached tokens": (
        "infer/decode_flops", "infer/decode_attn_flops", "infer/decode_sparse_flops", "infer/n_e", "infer/s_e", "infer/expert_bytes",
        "infer/experts_touched", "infer/decode_weights_read", "infer/decode_cache_read",
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
    out = [*header(cfg, width), *paragraph(describe_setup(r), width, "Serve  ", "       ")]
    out += [*paragraph(r.note, width, "Note   ", "       ")] if r.note else []
    out += ["", ROWS_TITLE]
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
    out = [markdown_header(cfg), "", describe_setup(r), *(["", f"*{r.note}*"] if r.note else []), "", "| tensor | shape | concrete | what |", "|---|---|---|---|"]
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


# --- the page's inference card: its words, headline and charts (app/cards/infer/ and the exported page lay them out) -
CARD_TITLE = "From a forward pass to serving: how fast it answers"
CARD_INTRO = ("The prefill reads B prompts of T tokens at once; then each decode step makes one new token for each of "
              "the B sequences over its KV cache of T tokens. Both are bounded by the GPU's peak FLOP/s and its memory "
              "bandwidth, whichever binds. B and T are the page's sliders (B sequences served together, T tokens of "
              "context); the charts sweep each.")
CONTROLS = {  # the card's controls by URL key (app.cards.infer.settings.INFER_KEYS)
    "infer_gpu": "GPU", "infer_peak": "peak, TFLOP/s", "infer_memory": "memory, GiB",
    "infer_bandwidth": "bandwidth, TB/s", "weights": "weights (the blocks' matrices)", "kv_dtype": "KV cache",
    "group": "weights per scale", "efficiency": "efficiency, 0 to 1",
}
GPU_CHOICES = {**{f"{g.label} · {g.peak_tflops:,.0f} TFLOP/s · {g.bandwidth_tbs:g} TB/s": k for k, g in GPUS.items()},
               "custom: your own peak, memory and bandwidth": CUSTOM_GPU}  # label -> key
WEIGHT_CHOICES = {f"{k}: {f.bytes:g} byte{'s' if f.bytes > 1 else ''}": k for k, f in WEIGHTS.items()}
KV_CHOICES = {f"{k}: {f.bytes:g} byte{'s' if f.bytes > 1 else ''}": k for k, f in KV.items()}
CHART_B = {
    "title": "Decode tokens per second against B, at this T (the bound)",
    "x": "B, sequences decoding together", "y": "tokens/s", "all": "all B sequences together",
    "seq": "each sequence", "knee_legend": "the knee: compute-bound from here",
    "knee": "knee, B = {B}: compute-bound from here",
    "far_knee": "the knee is at B = {B}, beyond the chart's {top}: every step here is memory-bound",
    "no_knee": "no knee: at this T each sequence's cache and activations take longer to move than its token's "
               "FLOPs take, so no B makes a step compute-bound",
    "here": "this page's B",
}
ELSEWHERE = ("This page carries the inference card of the configuration it was written for ({was}); for this one, "
             "write a page with: {command}")  # the exported page, on another configuration
CHART_T = {
    "title": "Decode step time against context T, at this B (the bound)",
    "x": "T, tokens of context (the KV cache)", "y": "step time, ms", "step": "one decode step",
    "here": "this page's T", "twin": "all-attention twin (a cache growing in every block)",  # short: a phone's legend
}


def headline(r: Inference) -> list[list[tuple[str, bool]]]:
    """The card's four sentences, each as pieces (text, whether it is a figure to stand out): time to first token,
    decode tokens per second with the efficiency beside the bound, whether a step is memory- or compute-bound, and
    the serving memory against the GPU's; before them the note of a context taken at T_max − 1 (`r.note`); after
    them, for a mixture of experts, the routed experts a step reads (E_B)."""
    x = {k: human(r.line(f"infer/{k}")) for k in ("ttft", "prefill_flops", "tokens_per_s", "tokens_per_s_seq",
                                                  "at_efficiency", "step", "intensity", "ridge", "memory", "weights",
                                                  "kv_cache")}
    bound = "compute-bound" if r.line("infer/intensity").value >= r.line("infer/ridge").value else "memory-bound"
    knee = r.knee_B
    fits = r.line("infer/fits").value
    return [*([[(r.note, False)]] if r.note else []),
        [("Time to first token: ", False), (x["ttft"], True), (f" (the prefill of {r.cfg.B:,} × {r.cfg.T:,} tokens, "
         f"{x['prefill_flops']}).", False)],
        [("Decode: ", False), (x["tokens_per_s"], True), (f" for all B = {r.cfg.B:,} sequences, ", False),
         (x["tokens_per_s_seq"], True), (" each, one step every ", False), (x["step"], True),
         (f" (the bound); at an efficiency of {r.setup.efficiency:g}, ", False), (x["at_efficiency"], True), (".", False)],
        [(f"A step is {bound}: ", False), (x["intensity"], True), (" against the ridge point's ", False),
         (x["ridge"], True), ("; " + (f"it turns compute-bound from B = {knee:,} at this T." if knee else
                                     "no B makes it compute-bound at this T."), False)],
        [("Serving memory: ", False), (x["memory"], True), (f" (weights {x['weights']}, KV cache {x['kv_cache']}), ",
         False), (("fits" if fits else "does not fit") + f" in one {r.setup.device.label}.", True)],
        *([[("A step reads ", False), (human(r.line("infer/experts_touched")), True),
            (f" of each MoE block's {r.cfg.E:,} routed experts: those the B = {r.cfg.B:,} new tokens' top-{r.cfg.k:,} "
             "choices touch, expected with uniform routing (every expert is in memory).", False)]]
          if r.cfg.ffn_kind == "moe" else []),
    ]


def chart_data(s: Serving) -> dict[str, dict[str, list]]:
    """The card's charts' columns: tokens per second against B (all sequences, each, as printed), step time against
    T in ms, and the marks: the page's B and T, and the knee (`Inference.knee_B`; x = [] where it is beyond the
    chart's B or there is none)."""
    r, bb, bt = s.result, s.by_B, s.by_T
    show = lambda v: units.value(v, "tokens_per_s", exact=False)  # noqa: E731
    knee = r.knee_B if r.knee_B and r.knee_B <= SERIES_B[-1] else None
    return {
        "by_B": {"B": [p["B"] for p in bb], "all": [p["tokens_per_s"] for p in bb],
                 "seq": [p["tokens_per_s_seq"] for p in bb], "all_text": [show(p["tokens_per_s"]) for p in bb],
                 "seq_text": [show(p["tokens_per_s_seq"]) for p in bb], "step_text": [units.seconds(p["step_s"]) for p in bb],
                 "bound": ["compute-bound" if p["compute_bound"] else "memory-bound" for p in bb]},
        "by_T": {"T": [p["T"] for p in bt], "step_ms": [1e3 * p["step_s"] for p in bt],
                 "step_text": [units.seconds(p["step_s"]) for p in bt], "rate_text": [show(p["tokens_per_s"]) for p in bt]},
        "here_B": {"B": [r.cfg.B], "all": [r.decode_tokens_per_s], "text": [show(r.decode_tokens_per_s)]},
        "here_T": {"T": [r.cfg.T], "step_ms": [1e3 * r.decode_step_s], "text": [units.seconds(r.decode_step_s)]},
        "twin_T": {"T": [p["T"] for p in s.twin_T], "step_ms": [1e3 * p["step_s"] for p in s.twin_T],
                   "step_text": [units.seconds(p["step_s"]) for p in s.twin_T]},
        "knee": {"B": [knee] if knee else [], "label": [CHART_B["knee_legend"]] if knee else []},
    }


def knee_note(s: Serving) -> str:
    """The tokens-per-second chart's caption: where its knee is (`Inference.knee_B`), beyond the chart, or none."""
    knee, top = s.result.knee_B, SERIES_B[-1]
    if knee is None:
        return CHART_B["no_knee"]
    return CHART_B["knee" if knee <= top else "far_knee"].format(B=f"{knee:,}", top=f"{top:,}")
