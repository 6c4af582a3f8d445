"""`python -m model`: the trace and budget of a preset or an explicit configuration, as a table.

    python -m model --preset gpt2-small
    python -m model --d 1024 --h 16 --L 24 --T 512 --markdown
    python -m model --preset gpt3-175b --table budget --json
    python -m model --preset gpt3-175b --table train --gpu h100-sxm --gpus 1024 --zero 3 --recompute full --B 1
    python -m model --preset llama3-8b --table kv --dtype bf16
    python -m model --hf-config path/to/config.json --table budget
    python -m model --d 512 --h 8 --L 8 --V 32000 --norm rmsnorm --positions rope --mlp swiglu --h-kv 2
    python -m model --preset llama3-8b --attention eager --table train --gpus 8 --zero 3
    python -m model --preset llama3-8b --table changes --gpu h200
    python -m model --preset mixtral-8x7b --table budget
    python -m model --preset llama3-8b --experts 8 --top-k 2 --d-expert 14336 --dense-first 1

Bad arguments (and a config.json that cannot be read) print one clear line on stderr and exit with status 2; a
mistyped preset gets the nearest name. Plain text fits the terminal: `COLUMNS`, else the terminal's width (a file
or a pipe gets full lines); the descriptions and formulas wrap. N is in the first line and the last.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from . import changes_report, hf, infer_report, report, train_report, values_report
from .config import (BOUNDS, CHOICES, DEFAULT_PRESET, FIELD_DOCS, GEMMA_DOCS, INT_FIELDS, MLA_DOCS, MLA_SYMBOLS,
                     MODEL_CHOICES, MOE_DOCS, MOE_SYMBOLS, OPTIONAL_SYMBOLS, OSS_DOCS, RECIPE_DOCS, WINDOW_DOCS, Config,
                     read_hf)
from .config import ALL_PRESETS, MOE_DEFAULTS, MOE_FIELDS, PRESETS
from .changes import DEFAULT_GPU
from .layout import terminal_width
from .passes import DTYPES
from .rules import EXTRA_FIELDS, did_you_mean
from .training import CUSTOM_GPU, GPUS

INFER_GPU_OPTIONS = ("--gpu", "--gpu-peak", "--gpu-memory")  # the training run's options that serving shares

class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr, not usage + line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def preset_name(text: str) -> str:
    """--preset: a name of ALL_PRESETS (the pages' and the tables' only); a mistyped one gets the nearest name ("did
    you mean gpt2-small?")."""
    if text in ALL_PRESETS:
        return text
    raise argparse.ArgumentTypeError(f"unknown preset {text!r}{did_you_mean(text, ALL_PRESETS)}; presets: "
                                     f"{', '.join(ALL_PRESETS)}")


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--preset, one option per Config field, --untied or --tied and --dtype (shared with `python -m app export`)."""
    p.add_argument("--preset", type=preset_name, default=None, metavar="NAME",
                   help=f"start from a preset: {', '.join(ALL_PRESETS)} (default {DEFAULT_PRESET}); the fields below override it")
    for name in INT_FIELDS:
        lo, hi = BOUNDS[name]
        flags = ["--T-max", "--T_max"] if name == "T_max" else [f"--{name}"]
        p.add_argument(*flags, dest=name, type=int, metavar="N", help=f"{FIELD_DOCS[name]} ({lo:,} to {hi:,})")
    head = p.add_mutually_exclusive_group()
    head.add_argument("--untied", action="store_true", help="a separate output head instead of one tied to W_te")
    head.add_argument("--tied", action="store_true", help="an output head tied to W_te (a preset with a separate head)")
    p.add_argument("--dtype", choices=list(DTYPES), default="fp32", help="activation dtype for memory (default fp32)")


NONE = "none"  # how an optional field is cleared: --W none (full attention), --d-cq none (q projected directly)
CLEARED = type("Cleared", (), {"__repr__": lambda self: "none"})()  # what argparse holds for "none"


def _or_none(kind: type, example: str):
    """An argparse type for an optional field: `kind`'s text ("512", "30.0"), or "none" to clear the field."""
    def read(text: str) -> int | float | object:
        if text.strip().lower() == NONE:
            return CLEARED
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid number {text!r}: write {example}, or none") from None
    return read


_whole_or_none = _or_none(int, "a whole number")
_number_or_none = _or_none(float, "a number such as 30.0")


def add_recipe_arguments(p: argparse.ArgumentParser) -> None:
    """--hf-config and one option per recipe field: --norm, --positions, --mlp, --bias, --attention, --d-ff, --h-kv,
    --d-head, --qk-norm (the model's CLI and the exported page's)."""
    p.add_argument("--hf-config", metavar="PATH", default=None,
                   help="start from a Hugging Face config.json (model type "
                        f"{', '.join(hf.MODEL_TYPES)}; read from disk, nothing fetched) instead of a preset; the "
                        "options below override it")
    for name, choices in MODEL_CHOICES.items():
        p.add_argument(f"--{name}", choices=choices, default=None, help=RECIPE_DOCS[name])
    for name, symbol in OPTIONAL_SYMBOLS.items():
        lo, hi = BOUNDS[symbol]
        p.add_argument(f"--{symbol.replace('_', '-')}", dest=name, type=_whole_or_none, metavar="N",
                       help=f"{FIELD_DOCS[symbol]} ({lo:,} to {hi:,}, or none; sets {symbol})")
    p.add_argument("--qk-norm", dest="qk_norm", action=argparse.BooleanOptionalAction, default=None, help=RECIPE_DOCS["qk_norm"])


def _block_list(text: str) -> tuple[int, ...]:
    """--dense-layers: block indices such as "0,1,2" (or "none")."""
    if text.strip().lower() in ("", "none"):
        return ()
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid block list {text!r}: write indices such as 0,1,2") from None


def moe_flag(name: str) -> str:
    """The command line's flag of a mixture of experts' field: "experts" -> "--experts", "expert_dim" -> "--d-expert"."""
    symbol = MOE_SYMBOLS.get(name)
    if name in ("experts", "top_k", "shared_experts") or symbol is None:
        return f"--{name.replace('_', '-')}"
    return f"--{symbol.replace('_', '-')}"


def add_moe_arguments(p: argparse.ArgumentParser) -> None:
    """A mixture of experts: --experts (E), --top-k (k), --d-expert, --shared-experts, --d-shared, --shared-gate,
    and which blocks: --moe-step, --dense-first, --dense-layers."""
    g = p.add_argument_group("mixture of experts (the MLP's other choice)")
    for name, symbol in MOE_SYMBOLS.items():
        lo, hi = BOUNDS[symbol]
        flag = moe_flag(name)
        optional = name != "shared_experts"  # experts none: the dense MLP
        g.add_argument(flag, dest=name, type=_whole_or_none if optional else int, metavar="N",
                       help=f"{MOE_DOCS[name]} ({lo:,} to {hi:,}{', or none' if optional else ''}; sets {symbol})")
    g.add_argument("--shared-gate", dest="shared_gate", action=argparse.BooleanOptionalAction, default=None, help=MOE_DOCS["shared_gate"])
    for name in ("moe_step", "dense_first"):
        g.add_argument(moe_flag(name), dest=name, type=int, metavar="N", help=MOE_DOCS[name])
    g.add_argument("--dense-layers", dest="dense_layers", type=_block_list, metavar="I,J,…", help=MOE_DOCS["dense_layers"])


def attention_flag(name: str) -> str:
    """The command line's flag of a window's, latent attention's or a family's extra field: "window" -> "--W",
    "full_layers" -> "--full-layers", "latent_dim" -> "--d-c" (latent attention's by their symbols), "post_norms" ->
    "--post-norms" (a switch's off is "--no-" and the flag's name)."""
    if name == "window":
        return "--W"
    return f"--{MLA_SYMBOLS.get(name, name).replace('_', '-')}"


DEFAULT_MODEL = ALL_PRESETS[DEFAULT_PRESET]  # what the options change where no --preset is given
# the window's, the families' and latent attention's fields at Config's defaults (`model_options`)
EXTRA_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Config) if f.name in EXTRA_FIELDS}


def extras_preset(cfg: Config) -> str | None:
    """The preset whose window, families' extras and latent attention `cfg` has, or None (none, or no preset's)."""
    if all(getattr(cfg, f) == EXTRA_DEFAULTS[f] for f in EXTRA_FIELDS):
        return None
    for name, p in PRESETS.items():
        if all(getattr(p, f) == getattr(cfg, f) for f in EXTRA_FIELDS):
            return name
    return None


def _flag_value(v: object) -> str:
    """A field's value as its option takes it: a list joined by commas, "none" for an empty one or None."""
    return ",".join(str(x) for x in v) or NONE if isinstance(v, (tuple, list)) else NONE if v is None else str(v)


def model_options(cfg: Config) -> str:
    """The command line's options that give `cfg` (python -m model's and python -m app export's; the tests read them
    back): the preset whose extras it has (they have no options of their own), every size, then each switch of the
    recipe, d_ff, h_kv and d_head, qk-norm and the head that differs from that preset's (or the default preset's),
    then each extra and each field of a mixture of experts that differs from none."""
    base = extras_preset(cfg)
    start = PRESETS[base] if base is not None else DEFAULT_MODEL
    out = [f"--preset {base}"] if base is not None else []
    out += [f"--T-max {cfg.T_max}" if f == "T_max" else f"--{f} {getattr(cfg, f)}" for f in INT_FIELDS]
    out += [] if cfg.tie == start.tie else ["--tied" if cfg.tie else "--untied"]
    out += [f"--{f} {getattr(cfg, f)}" for f in MODEL_CHOICES if getattr(cfg, f) != getattr(start, f)]
    out += [f"--{sym.replace('_', '-')} {_flag_value(getattr(cfg, f))}" for f, sym in OPTIONAL_SYMBOLS.items()
            if getattr(cfg, f) != getattr(start, f)]
    out += [] if cfg.qk_norm == start.qk_norm else ["--qk-norm" if cfg.qk_norm else "--no-qk-norm"]
    for f in EXTRA_FIELDS if base is None else ():
        v, flag = getattr(cfg, f), attention_flag(f)
        if v != EXTRA_DEFAULTS[f]:
            out.append((flag if v else f"--no-{flag[2:]}") if isinstance(v, bool) else f"{flag} {_flag_value(v)}")
    for f in MOE_FIELDS:
        v = getattr(cfg, f)
        if v != MOE_DEFAULTS[f]:
            out.append(moe_flag(f) if f == "shared_gate" else f"{moe_flag(f)} {_flag_value(v)}")
    return " ".join(out)


def add_attention_arguments(p: argparse.ArgumentParser) -> None:
    """Attention that shapes the cache, and the families' extras: --W and --full-layers (sliding windows), --d-c,
    --d-cq, --d-R, --d-nope, --d-v (multi-head latent attention), Gemma's (--post-norms, --embed-scale,
    --query-scale, --attn-softcap, --final-softcap) and gpt-oss's (--sinks, --expert-bias, --swiglu-limit,
    --swiglu-alpha). A switch has its --no- twin; an optional number takes "none"."""
    g = p.add_argument_group("sliding windows")
    g.add_argument(attention_flag("window"), dest="window", type=_whole_or_none, metavar="N",
                   help=f"{WINDOW_DOCS['window']} ({BOUNDS['W'][0]:,} to {BOUNDS['W'][1]:,}, or none)")
    g.add_argument(attention_flag("full_layers"), dest="full_layers", type=_block_list, metavar="I,J,…",
                   help=WINDOW_DOCS["full_layers"])
    g = p.add_argument_group("multi-head latent attention (DeepSeek-V2/V3)")
    for name, symbol in MLA_SYMBOLS.items():
        lo, hi = BOUNDS[symbol]
        g.add_argument(attention_flag(name), dest=name, type=_whole_or_none, metavar="N",
                       help=f"{MLA_DOCS[name]} ({lo:,} to {hi:,}, or none; sets {symbol})")
    for title, docs in (("Gemma's extras", GEMMA_DOCS), ("gpt-oss's extras", OSS_DOCS)):
        g = p.add_argument_group(title)
        for name, doc in docs.items():
            flag = attention_flag(name)
            if isinstance(getattr(Config, name), bool):  # a switch: on, or --no- off
                g.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=doc)
            else:
                kind = _whole_or_none if name == "query_scale" else _number_or_none
                g.add_argument(flag, dest=name, type=kind, metavar="N" if name == "query_scale" else "X",
                               help=f"{doc} (or none)")


ATTENTION_NAMES = ("window", "full_layers", *MLA_SYMBOLS, *GEMMA_DOCS, *OSS_DOCS)  # add_attention_arguments' fields


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m model", description="Tensor shapes and parameter/FLOP budget of the lesson's GPT "
                      "and of today's open models (RMSNorm, RoPE, SwiGLU, grouped-query attention, QK-norm, fused "
                      "attention, mixture of experts).")
    add_config_arguments(p)
    add_recipe_arguments(p)
    add_moe_arguments(p)
    add_attention_arguments(p)
    p.add_argument("--expand", action="store_true", help="list all L blocks instead of collapsing them into one × L group")
    p.add_argument("--table", choices=["all", "shapes", "budget", "kv", "train", "changes", "infer"], default=None,
                   help="what to print, in any format (default all, whose --json also holds the training plan at the "
                        "training options; CSV holds one table, shapes by default; kv: the KV cache of "
                        "inference at --dtype; train: the training run; changes: what each change of the modern "
                        "recipe buys against the GPT-2 twin, fused attention's eager wall against --gpu; infer: the prefill, a "
                        "decode step and the roofline on --gpu, weights and cache at --weights and --kv-dtype)")
    p.set_defaults(dtype=None)  # --table train: None follows the optimizer (bf16 for adam-mixed); else fp32
    train_report.add_arguments(p)
    infer_report.add_arguments(p)
    fmt = p.add_mutually_exclusive_group()
    for flag in ("json", "markdown", "csv"):
        fmt.add_argument(f"--{flag}", action="store_true", help=f"print {flag.upper() if flag != 'markdown' else 'Markdown'}")
    values_report.add_arguments(p)
    return p


def config_from_args(args: argparse.Namespace) -> Config:
    """The preset, the config.json (--hf-config) or the default preset, with every field given on the command line
    replaced; validated. ValueError names a bad field or a config.json that cannot be read."""
    names = [*INT_FIELDS, *CHOICES, *OPTIONAL_SYMBOLS, "qk_norm", *MOE_SYMBOLS, "shared_gate", "moe_step", "dense_first",
             "dense_layers", *ATTENTION_NAMES]
    fields = {k: None if v is CLEARED else v for k in names if (v := getattr(args, k, None)) is not None}
    if args.untied or args.tied:
        fields["tie"] = args.tied
    path = getattr(args, "hf_config", None)
    if path is not None and args.preset is not None:
        raise ValueError("--preset and --hf-config both name a model: give one")
    base = read_hf_config(path) if path is not None else ALL_PRESETS[args.preset] if args.preset else DEFAULT_MODEL
    if "window" in fields and fields["window"] is None and "full_layers" not in fields:  # --W none: full everywhere
        fields["full_layers"] = ()
    if "T_max" in fields and "T" not in fields and base.positions == "learned":  # a smaller table takes T down
        fields["T"] = min(base.T, fields["T_max"])
    return dataclasses.replace(base, **fields)


def read_hf_config(path: str) -> Config:
    """The `Config` of the config.json at `path` (`model.hf.parse`, then `model.config.read_hf`), its notes on
    stderr (the defaults taken, the keys ignored, T below the context); ValueError in one line if it cannot be."""
    try:
        with open(path, "rb") as f:
            data = f.read(hf.MAX_BYTES + 1)
    except OSError as e:
        raise ValueError(f"cannot read --hf-config {path}: {e.strerror or e}") from None
    read = read_hf(hf.parse(data))
    for note in read.notes:
        print(f"note: {path}: {note}", file=sys.stderr)
    return read.config


def format_of(args: argparse.Namespace) -> str:
    """The output format the flags ask for: "json", "csv", "markdown" or plain "text"."""
    return "json" if args.json else "csv" if args.csv else "markdown" if args.markdown else "text"


def render_setup_table(module, cfg: Config, args: argparse.Namespace, width: int | None) -> str:
    """`--table train` or `--table infer`: the report module's (`train_report`, `infer_report`) table of cfg on the
    setup its flags give, in the format they ask for (plain text fitted to `width`)."""
    setup = module.setup_from_args(args)
    fmt = format_of(args)
    if fmt == "text":
        return module.text(cfg, setup, width)
    return {"json": module.as_json, "csv": module.csv_text, "markdown": module.markdown}[fmt](cfg, setup)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = config_from_args(args)
    except ValueError as e:
        parser.error(str(e))
    width = terminal_width()  # COLUMNS, or the terminal's; None for a file or a pipe
    if given := infer_report.given_infer_options(args) if args.table != "infer" else []:
        parser.error(f"{', '.join(given)} describe serving: add --table infer")
    if args.table == "infer":
        if given := [g for g in train_report.given_train_options(args) if g not in INFER_GPU_OPTIONS]:
            parser.error(f"{', '.join(given)} describe a training run: use --table train")
    if args.table in ("infer", "train"):
        try:
            out = render_setup_table(infer_report if args.table == "infer" else train_report, cfg, args, width)
        except ValueError as e:
            parser.error(str(e))
        return _write(out)
    changes = args.table == "changes" and not args.values
    whole = args.json and args.table in (None, "all") and not args.values  # its JSON holds the training plan too
    if not whole and (given := [g for g in train_report.given_train_options(args) if not (changes and g == "--gpu")]):
        parser.error(f"{', '.join(given)} describe a training run: add --table train (or --json for the whole report)")
    if whole:
        try:
            setup = train_report.setup_from_args(args)  # its dtype, unless given, follows the optimizer
        except ValueError as e:
            parser.error(str(e))
    args.dtype = args.dtype or "fp32"
    if changes:
        fmt = format_of(args)
        if args.gpu == CUSTOM_GPU:
            parser.error("--table changes measures fused attention's eager wall against a named GPU: choose one of "
                         + ", ".join(GPUS))
        try:
            return _write(changes_report.render(cfg, args.dtype, fmt, args.gpu or DEFAULT_GPU, width))
        except ValueError as e:
            parser.error(str(e))
    if args.csv and args.table == "all":
        parser.error("a CSV file holds one table: use --table shapes, budget or kv")
    if args.values:
        try:
            out = values_report.cli_output(args, cfg, width)
        except ValueError as e:
            parser.error(str(e))
    elif args.json:
        out = report.as_json(cfg, args.dtype, args.expand, args.table or "all", setup if whole else None)
    elif args.csv:
        out = report.csv_text(cfg, args.dtype, args.expand, args.table or "shapes")
    elif args.markdown:
        out = report.markdown(cfg, args.dtype, args.expand, args.table or "all")
    else:
        out = report.text(cfg, args.dtype, args.expand, args.table or "all", width)
    return _write(out)


def _write(out: str) -> int:
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m model | head`
        sys.stderr.close()
    return 0
