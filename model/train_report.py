"""`python -m model --table train`: the training run of a configuration as text, Markdown, CSV or JSON.

Records (`model.training.plan(...).lines` and `REFERENCES`) -> formatting, in that order; nothing here computes a
figure. `human(line)` is the one way a line's value is printed (the page uses it too), by its unit.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
from dataclasses import asdict

from . import numbers, units
from .config import BOUNDS, Config, config_dict
from .layout import paragraph, row_lines
from .training import (CUSTOM_GPU, FITS, GPUS, OPTIMIZERS, RECOMPUTE, REFERENCES, Line, Plan, TrainSetup,
                       chinchilla_note, plan)

SECTIONS = {  # key prefix -> heading, in display order
    "compute": "Tokens and compute",
    "chinchilla": "Chinchilla: the compute-optimal split of this C",
    "time": "Time and cost",
    "memory": "Training memory per GPU",
    "serve": "Serving memory",
    "reference": "Reference points",
}
MAX_B_WORDS = {"none": "none: B = 1 does not fit", "top": "{} (the largest B allowed)"}  # the largest micro-batch at
# its ends, in words (the exported page's human reads them too)


def human(line: Line) -> str:
    """A line's value as the training and inference tables print it: `model.units.value` in words, and "none" where
    a count of 0 means there is none."""
    v = line.value
    if line.key == "infer/knee_B" and v == 0:
        return "none"
    if line.key == "memory/max_B" and v == 0:
        return MAX_B_WORDS["none"]
    if line.key == "memory/max_B" and v == BOUNDS["B"][1]:
        return MAX_B_WORDS["top"].format(units.plain(v))
    return units.value(v, line.unit, exact=False)


def describe_setup(p: Plan) -> str:
    """One line naming the setup: GPUs, MFU, optimizer, ZeRO, recomputation, dtype, fit."""
    s = p.setup
    return (f"{s.gpus:,} × {s.device.label} at MFU {units.percent(s.mfu)}, ${s.price:,.2f} per GPU-hour (assumed); "
            f"{s.optimizer}, ZeRO {s.zero}, recompute {s.recompute}, activations {s.act_dtype}; "
            f"micro-batch B = {p.cfg.B:,}, T = {p.cfg.T:,}")


def _sections(p: Plan) -> list[tuple[str, str, list[Line]]]:
    """(heading, note, lines) per section; the note names the Chinchilla fit and its constants."""
    lines = [*p.lines, *REFERENCES]
    notes = {"chinchilla": chinchilla_note(p.cfg, p.setup.fit)}
    return [(title, notes.get(prefix, ""), [x for x in lines if x.key.split("/")[0] == prefix])
            for prefix, title in SECTIONS.items()]


def text(cfg: Config, setup: TrainSetup, width: int | None = None) -> str:
    """The training run as a plain-text table: label, formula, value, in columns aligned across the sections; N in
    its first line and its last. Where wider than `width` (None: never), labels and formulas wrap."""
    from .report import footer, header

    p = plan(cfg, setup)
    sections = _sections(p)
    rows = iter(row_lines([[x.label, x.formula, human(x)] for _, _, lines in sections for x in lines],
                          wrap=(1, 0), width=width))
    out = [*header(cfg, width), *paragraph(describe_setup(p), width, "Run  ", "     ")]
    for title, note, lines in sections:
        out += ["", f"{title}:"] + (paragraph(note, width, "  ") if note else [])
        out += [line for _ in lines for line in next(rows)]
    return "\n".join([*out, "", *footer(cfg, width)]) + "\n"


def markdown(cfg: Config, setup: TrainSetup) -> str:
    """The training run as Markdown tables, one per section."""
    from .report import markdown_header

    p = plan(cfg, setup)
    out = [markdown_header(cfg), "", f"**Run** {describe_setup(p)}", ""]
    for title, note, lines in _sections(p):
        out += [f"**{title}**", ""] + ([note, ""] if note else []) + ["| quantity | formula | value |", "|---|---|---:|"]
        out += [f"| {x.label} | {f'`{x.formula}`' if x.formula else ''} | {human(x)} |" for x in lines]
        out.append("")
    return "\n".join(out)


def csv_text(cfg: Config, setup: TrainSetup) -> str:
    """One line per figure: key, label, formula, value (raw), unit."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["key", "label", "formula", "value", "unit"])
    p = plan(cfg, setup)
    w.writerows([x.key, x.label, x.formula, x.value, x.unit] for x in [*p.lines, *REFERENCES])
    return buf.getvalue()


def as_json(cfg: Config, setup: TrainSetup) -> str:
    """{"config": ..., "train": plan(...).as_dict(), "references": [...]}."""
    doc = {"config": config_dict(cfg), "train": plan(cfg, setup).as_dict(),
           "references": [asdict(x) for x in REFERENCES]}
    return json.dumps(doc, indent=2) + "\n"


# --- command line ------------------------------------------------------------------------------------------------
def _tokens(text: str) -> int:
    """--D: a whole number of tokens in `model.numbers`' grammar: 2488796160, 2,488,796,160, 300e9, 300 billion."""
    value = numbers.whole(text) if len(text) <= numbers.MAX_CHARS else None
    if value is None:
        why = "D must be a whole number of tokens" if numbers.real(text) is not None else "not a number"
        raise argparse.ArgumentTypeError(f"invalid token count {text!r} ({why}): write {numbers.LARGE_EXAMPLES}")
    return value


TRAIN_OPTIONS = ("D", "gpu", "gpu_peak", "gpu_memory", "mfu", "gpus", "price", "optimizer", "zero", "recompute", "fit")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The training-run options of `python -m model --table train`; all default to None (= TrainSetup's)."""
    g = p.add_argument_group("training run (with --table train)")
    d = TrainSetup()
    g.add_argument("--D", type=_tokens, metavar="TOKENS", help="training tokens, e.g. 300e9 or '300 billion' (default "
                   "20·N, Chinchilla's rule)")
    g.add_argument("--gpu", choices=[*GPUS, CUSTOM_GPU], help=f"the GPU (default {d.gpu}); custom needs --gpu-peak and --gpu-memory")
    g.add_argument("--gpu-peak", dest="gpu_peak", type=float, metavar="TFLOPS", help="custom GPU: dense BF16 peak in TFLOP/s")
    g.add_argument("--gpu-memory", dest="gpu_memory", type=float, metavar="GIB", help="custom GPU: memory in GiB")
    g.add_argument("--mfu", type=float, help=f"model FLOPs utilisation, 0 to 1 (default {d.mfu})")
    g.add_argument("--gpus", type=int, metavar="N", help=f"GPU count (default {d.gpus})")
    g.add_argument("--price", type=float, metavar="USD", help=f"assumed dollars per GPU-hour (default {d.price})")
    g.add_argument("--optimizer", choices=list(OPTIMIZERS), help=f"default {d.optimizer}")
    g.add_argument("--zero", type=int, choices=[0, 1, 2, 3], help="ZeRO stage (default 0)")
    g.add_argument("--recompute", choices=list(RECOMPUTE), help="activation recomputation (default none)")
    g.add_argument("--fit", choices=list(FITS), help=f"Chinchilla loss fit (default {d.fit})")


def setup_from_args(args: argparse.Namespace) -> TrainSetup:
    """A validated TrainSetup from the options given (ValueError names the problem and the fix)."""
    names = {"gpu_peak": "peak_tflops", "gpu_memory": "memory_gib"}
    given = {names.get(k, k): getattr(args, k) for k in TRAIN_OPTIONS if getattr(args, k) is not None}
    if args.dtype is not None:
        given["dtype"] = args.dtype
    if ("peak_tflops" in given or "memory_gib" in given) and "gpu" not in given:
        given["gpu"] = CUSTOM_GPU
    try:
        return TrainSetup(**given)
    except ValueError as e:
        message = str(e)
        for option, field in (("--gpu-peak", "peak_tflops"), ("--gpu-memory", "memory_gib")):
            message = message.replace(field, option)
        raise ValueError(message) from None


def given_train_options(args: argparse.Namespace) -> list[str]:
    """The training options given on the command line, as flags: ["--gpu", "--mfu"]."""
    return ["--" + k.replace("_", "-") for k in TRAIN_OPTIONS if getattr(args, k) is not None]
