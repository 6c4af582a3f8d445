"""`python -m model`: the trace and budget of a preset or an explicit configuration, as a table.

    python -m model --preset gpt2-small
    python -m model --d 1024 --h 16 --L 24 --T 512 --markdown
    python -m model --preset gpt3-175b --table budget --json
    python -m model --preset gpt3-175b --table train --gpu h100-sxm --gpus 1024 --zero 3 --recompute full --B 1
    python -m model --preset llama3-8b --table kv --dtype bf16
    python -m model --hf-config path/to/config.json --table budget
    python -m model --hf-model Qwen/Qwen3-8B --table kv --dtype bf16
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

from . import changes_report, hf, hub, infer_report, report, train_report, values_report
from .config import ALL_PRESETS, DEFAULT_PRESET, PRESETS, WRITTEN, Config, read_hf
from .changes import DEFAULT_GPU
from .fields import FAMILIES, Field
from .layout import terminal_width
from .passes import DTYPES
from .rules import did_you_mean
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


OPTIONS = WRITTEN  # every field in the order of its option: the lesson's, the recipe's (switches, sizes, QK-norm),
# the mixture of experts', the window's, latent attention's, then the families' extras (`model.fields.written`)


def _grouped(group: str) -> list[Field]:
    """A group's fields in the order of their options."""
    return [f for f in OPTIONS if f.group == group]
TITLES = {"moe": "mixture of experts (the MLP's other choice)", "window": "sliding windows",
          "latent": "multi-head latent attention (DeepSeek-V2/V3)",
          "linear": "Gated DeltaNet blocks (Qwen3-Next), Mamba 2 blocks (Granite 4.0-H), Kimi delta attention blocks "
                    "(Kimi Linear)"}  # the groups' titles in --help
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


def _block_list(text: str) -> tuple[int, ...]:
    """--dense-layers, --full-layers: block indices such as "0,1,2" (or "none")."""
    if text.strip().lower() in ("", "none"):
        return ()
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid block list {text!r}: write indices such as 0,1,2") from None


def _flags(f: Field) -> list[str]:
    """A field's option and, for a global dim whose option is not its symbol, the symbol too: --T-max and --T_max."""
    return list(dict.fromkeys([f.flag, *(["--" + f.key] if f.group == "lesson" else [])]))


def _help(f: Field) -> str:
    """An option's help: the field's doc (`Field.about`); a whole number's bounds, ", or none" where it is optional,
    and the symbol it sets where its option does not spell it ("--d-ff": "sets d_ff"); a value's "(or none)"."""
    if f.kind == "real":
        return f"{f.about} (or none)"
    if f.kind != "whole":
        return f.about
    lo, hi = f.bounds
    sets = f"; sets {f.symbol}" if f.symbol and "--" + f.symbol not in _flags(f) else ""
    return f"{f.about} ({lo:,} to {hi:,}{', or none' if f.optional else ''}{sets})"


def add_option(p: argparse._ActionsContainer, f: Field) -> None:
    """One option for a field on a parser or one of its groups, by the field's kind: a whole number ("N", or none
    where optional), a value ("X", or none), a list of blocks ("I,J,…", or none), a switch's choices, or a flag and its
    --no- twin (None where not given)."""
    options = {"whole": dict(type=_whole_or_none if f.optional else int, metavar="N"),
               "real": dict(type=_number_or_none, metavar="X"), "blocks": dict(type=_block_list, metavar="I,J,…"),
               "choice": dict(choices=f.choices, default=None),
               "flag": dict(action=argparse.BooleanOptionalAction, default=None)}[f.kind]
    p.add_argument(*_flags(f), dest=f.name, help=_help(f), **options)


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--preset, one option per global dim, --untied or --tied and --dtype (shared with `python -m app export`)."""
    p.add_argument("--preset", type=preset_name, default=None, metavar="NAME",
                   help=f"start from a preset: {', '.join(ALL_PRESETS)} (default {DEFAULT_PRESET}); the fields below override it")
    for f in _grouped("lesson"):
        if f.kind == "whole":
            add_option(p, f)
    head = p.add_mutually_exclusive_group()
    head.add_argument("--untied", action="store_true", help="a separate output head instead of one tied to W_te")
    head.add_argument("--tied", action="store_true", help="an output head tied to W_te (a preset with a separate head)")
    p.add_argument("--dtype", choices=list(DTYPES), default="fp32", help="activation dtype for memory (default fp32)")


def add_recipe_arguments(p: argparse.ArgumentParser) -> None:
    """--hf-config and one option per recipe field: --norm, --positions, --mlp, --bias, --attention, --d-ff, --h-kv,
    --d-head, --qk-norm (the model's CLI and the exported page's)."""
    p.add_argument("--hf-config", metavar="PATH", default=None,
                   help="start from a Hugging Face config.json (model type "
                        f"{', '.join(hf.MODEL_TYPES)}; read from disk, nothing fetched) instead of a preset; the "
                        "options below override it")
    p.add_argument("--hf-model", metavar="ID", default=None,
                   help="start from a Hugging Face model id's config.json (Qwen/Qwen3-8B): the local hub cache "
                        "(HF_HUB_CACHE), else huggingface.co where the machine is online (never with HF_HUB_OFFLINE)")
    for f in _grouped("recipe"):
        add_option(p, f)


def add_moe_arguments(p: argparse.ArgumentParser) -> None:
    """A mixture of experts: --experts (E), --top-k (k), --d-expert, --shared-experts, --d-shared, --shared-gate,
    and which blocks: --moe-step, --dense-first, --dense-layers."""
    g = p.add_argument_group(TITLES["moe"])
    for f in _grouped("moe"):
        add_option(g, f)


def add_attention_arguments(p: argparse.ArgumentParser) -> None:
    """Attention that shapes the cache, and the families' extras: --W and --full-layers (sliding windows), --d-c,
    --d-cq, --d-R, --d-nope, --d-v (multi-head latent attention), Gemma's (--post-norms, --embed-scale,
    --query-scale, --attn-softcap, --final-softcap) and gpt-oss's (--sinks, --expert-bias, --swiglu-limit,
    --swiglu-alpha), and Gated DeltaNet's (--linear-layers, --h-lk, --h-lv, --d-lk, --d-lv, --d-conv). A switch has
    its --no- twin; an optional number takes "none"."""
    for group in ("window", "latent", "linear"):
        g = p.add_argument_group(TITLES[group])
        for f in _grouped(group):
            add_option(g, f)
    for family, name in FAMILIES.items():
        g = p.add_argument_group(f"{name}'s extras")
        for f in _grouped("extras"):
            if f.family == family:
                add_option(g, f)


DEFAULT_MODEL = ALL_PRESETS[DEFAULT_PRESET]  # what the options change where no --preset is given
NAMED = ("window", "latent", "linear", "extras")  # what a preset's name stands for in `model_options`


def extras_preset(cfg: Config) -> str | None:
    """The preset whose window, families' extras and latent attention (`NAMED`) `cfg` has, or None (none, or no
    preset's)."""
    named = [f for f in OPTIONS if f.group in NAMED]
    if all(getattr(cfg, f.name) == f.default for f in named):
        return None
    for name, p in PRESETS.items():
        if all(getattr(p, f.name) == getattr(cfg, f.name) for f in named):
            return name
    return None


def _flag_value(v: object) -> str:
    """A field's value as its option takes it: a list joined by commas, "none" for an empty one or None."""
    return ",".join(str(x) for x in v) or NONE if isinstance(v, (tuple, list)) else NONE if v is None else str(v)


def _option(f: Field, v: object) -> str:
    """A field's option at value `v`: "--d 768", "--W none", "--qk-norm" or "--no-qk-norm"; the head's "--tied" or
    "--untied"."""
    if f.name == "tie":
        return "--tied" if v else "--untied"
    if f.kind == "flag":
        return f.flag if v else f"--no-{f.flag[2:]}"
    return f"{f.flag} {_flag_value(v)}"


def model_options(cfg: Config) -> str:
    """The command line's options that give `cfg` (python -m model's and python -m app export's; the tests read them
    back), in `OPTIONS`' order with the mixture of experts' last: the preset whose window, latent attention and
    families' extras it has (`extras_preset`), every size, then each field that differs from that preset's (or the
    default preset's); a mixture of experts' each field that differs from its declared default."""
    base = extras_preset(cfg)
    start = PRESETS[base] if base is not None else DEFAULT_MODEL
    out = [f"--preset {base}"] if base is not None else []
    for moe in (False, True):
        for f in OPTIONS:
            if (f.group == "moe") != moe:
                continue
            v = getattr(cfg, f.name)
            if (f.group == "lesson" and f.kind == "whole") or v != (f.default if moe else getattr(start, f.name)):
                out.append(_option(f, v))
    return " ".join(out)


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
    names = [f.name for f in OPTIONS if f.name != "tie"]  # the head: --untied, --tied
    fields = {k: None if v is CLEARED else v for k in names if (v := getattr(args, k, None)) is not None}
    if args.untied or args.tied:
        fields["tie"] = args.tied
    path, model_id = getattr(args, "hf_config", None), getattr(args, "hf_model", None)
    named = [flag for flag, v in (("--preset", args.preset), ("--hf-config", path), ("--hf-model", model_id)) if v]
    if len(named) > 1:
        raise ValueError(f"{' and '.join(named)} each name a model: give one")
    base = (read_hf_config(path) if path is not None else read_hf_model(model_id) if model_id is not None
            else ALL_PRESETS[args.preset] if args.preset else DEFAULT_MODEL)
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
    return _noted(data, path)


def read_hf_model(model_id: str) -> Config:
    """The `Config` of a Hugging Face model id's config.json (`model.hub`: the local cache, else the Hub where the
    machine is online), its notes on stderr; ValueError in one line if it cannot be."""
    try:
        data, source = hub.config_json(model_id)
    except hub.HubError as e:
        raise ValueError(f"--hf-model {e}, or give --hf-config PATH") from None
    return _noted(data, f"{model_id} ({source})")


def _noted(data: bytes, where: str) -> Config:
    """The `Config` of config.json bytes, each note of the reading on stderr after `where`."""
    read = read_hf(hf.parse(data))
    for note in read.notes:
        print(f"note: {where}: {note}", file=sys.stderr)
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
