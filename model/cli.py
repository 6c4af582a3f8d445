"""`python -m model`: the trace and budget of a preset or an explicit configuration, as a table.

    python -m model --preset gpt2-small
    python -m model --d 1024 --h 16 --L 24 --T 512 --markdown
    python -m model --preset gpt3-175b --table budget --json
    python -m model --preset gpt3-175b --table train --gpu h100-sxm --gpus 1024 --zero 3 --recompute full --B 1

Bad arguments print one clear line on stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from . import changes_report, report, train_report, values_report
from .config import BOUNDS, DEFAULT_PRESET, FIELD_DOCS, INT_FIELDS, PRESETS, Config
from .passes import DTYPES





class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr, not usage + line (exit status 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """--preset, one option per Config field, --untied and --dtype (shared with `python -m app export`)."""
    p.add_argument("--preset", choices=list(PRESETS), default=None, metavar="NAME",
                   help=f"start from a preset: {', '.join(PRESETS)} (default {DEFAULT_PRESET}); the fields below override it")
    for name in INT_FIELDS:
        lo, hi = BOUNDS[name]
        flags = ["--T-max", "--T_max"] if name == "T_max" else [f"--{name}"]
        p.add_argument(*flags, dest=name, type=int, metavar="N", help=f"{FIELD_DOCS[name]} ({lo:,} to {hi:,})")
    p.add_argument("--untied", action="store_true", help="a separate output head instead of one tied to W_te")
    p.add_argument("--dtype", choices=list(DTYPES), default="fp32", help="activation dtype for memory (default fp32)")


def build_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="python -m model", description="Tensor shapes and parameter/FLOP budget of the lesson's GPT.")
    add_config_arguments(p)
    p.add_argument("--expand", action="store_true", help="list all L blocks instead of collapsing them into one × L group")
    p.add_argument("--table", choices=["all", "shapes", "budget", "train", "changes"], default=None,
                   help="what to print (default all; CSV holds one table, shapes by default; train: the training run; "
                        "changes: what each change of the modern recipe buys against the GPT-2 twin)")
    p.set_defaults(dtype=None)  # --table train: None follows the optimizer (bf16 for adam-mixed); else fp32
    train_report.add_arguments(p)
    fmt = p.add_mutually_exclusive_group()
    for flag in ("json", "markdown", "csv"):
        fmt.add_argument(f"--{flag}", action="store_true", help=f"print {flag.upper() if flag != 'markdown' else 'Markdown'}")
    values_report.add_arguments(p)
    return p


def config_from_args(args: argparse.Namespace) -> Config:
    """The preset (or the default one) with every field given on the command line replaced; validated."""
    fields = {k: getattr(args, k) for k in INT_FIELDS if getattr(args, k) is not None}
    if args.untied:
        fields["tie"] = False
    base = PRESETS[args.preset or DEFAULT_PRESET]
    if "T_max" in fields and "T" not in fields:  # a smaller position table takes T down with it
        fields["T"] = min(base.T, fields["T_max"])
    return dataclasses.replace(base, **fields)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = config_from_args(args)
    except ValueError as e:
        parser.error(str(e))
    if args.table == "train":
        try:
            out = train_report.render(cfg, args)
        except ValueError as e:
            parser.error(str(e))
        return _write(out)
    if given := train_report.given_train_options(args):
        parser.error(f"{', '.join(given)} describe a training run: add --table train")
    args.dtype = args.dtype or "fp32"
    if args.table == "changes" and not args.values:
        fmt = "json" if args.json else "csv" if args.csv else "markdown" if args.markdown else "text"
        try:
            return _write(changes_report.render(cfg, args.dtype, fmt))
        except ValueError as e:
            parser.error(str(e))
    if args.json and args.table and not args.values:
        parser.error("--json always holds the whole report; drop --table")
    if args.csv and args.table == "all":
        parser.error("a CSV file holds one table: use --table shapes or --table budget")
    if args.values:
        try:
            out = values_report.cli_output(args, cfg)
        except ValueError as e:
            parser.error(str(e))
    elif args.json:
        out = report.as_json(cfg, args.dtype, args.expand)
    elif args.csv:
        out = report.csv_text(cfg, args.dtype, args.expand, args.table or "shapes")
    elif args.markdown:
        out = report.markdown(cfg, args.dtype, args.expand, args.table or "all")
    else:
        out = report.text(cfg, args.dtype, args.expand, args.table or "all")
    return _write(out)


def _write(out: str) -> int:
    try:
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m model | head`
        sys.stderr.close()
    return 0
