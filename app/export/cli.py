"""`python -m app export OUT.html [config, recipe and training options]`: validate, render, write atomically; usage
errors (a config.json that cannot be read included, `--hf-config PATH`) in one line."""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from model import infer_report, train_report
from model.inference import InferSetup
from model.cli import (OneLineParser, add_attention_arguments, add_config_arguments, add_moe_arguments,
                       add_recipe_arguments, config_from_args)
from model.training import TrainSetup

from .page import PAGE_TITLE, render_html

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The export subcommand's arguments: the output file, `python -m model`'s config options, a title."""
    parser.add_argument("out", metavar="OUT.html", help="file to write (created or replaced; not a directory)")
    add_config_arguments(parser)
    add_recipe_arguments(parser)  # --hf-config PATH, --norm, --positions, --mlp, --d-ff, --h-kv, --d-head, --bias, --qk-norm
    add_moe_arguments(parser)  # --experts, --top-k, --d-expert, ... (the page's export command names them)
    add_attention_arguments(parser)  # --W, --full-layers, --d-c, --d-cq, --d-R, --d-nope, --d-v, Gemma's and gpt-oss's
    train_report.add_arguments(parser)
    infer_report.add_arguments(parser)  # the inference card: --weights, --kv-dtype, --group, --efficiency
    parser.add_argument("--title", default=PAGE_TITLE, help=f"page title (default {PAGE_TITLE!r})")


def check_output_path(raw: str) -> Path:
    """`raw` as a Path that can be written as a plain file; else ValueError naming the problem."""
    if raw.strip() == "":
        raise ValueError("the output path is empty: give a file name such as lesson.html")
    path = Path(raw)
    if path.is_dir():
        raise ValueError(f"{path} is a directory: give a file path such as {path / 'lesson.html'}")
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} exists and is not a regular file: choose another output path")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ValueError(f"cannot write {path}: permission denied")
    return path


def write_page(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory (no half-written page)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", prefix=".export-", suffix=".html")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def setup_from_args(args: argparse.Namespace) -> TrainSetup:
    """The training card's starting setup from `python -m model --table train`'s options; --dtype is the shapes
    table's here, and the card's activations follow the optimizer as on the live page. ValueError names the fix."""
    return train_report.setup_from_args(argparse.Namespace(**{**vars(args), "dtype": None}))


def infer_from_args(args: argparse.Namespace) -> InferSetup:
    """The inference card's starting setup from `python -m model --table infer`'s options: --gpu's preset, or with
    --gpu-bandwidth a custom GPU of --gpu-peak, --gpu-memory and that bandwidth (without it, a custom --gpu-peak and
    --gpu-memory are the training card's alone). ValueError names the fix."""
    given = vars(args)
    if args.gpu_bandwidth is None:
        given = {**given, "gpu_peak": None, "gpu_memory": None, "gpu": None if args.gpu == "custom" else args.gpu}
    return infer_report.setup_from_args(argparse.Namespace(**given))


def run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Validate, render and write; bad input ends in `parser.error` (one line, exit status 2)."""
    try:
        cfg = config_from_args(args)
        setup = setup_from_args(args)
        infer = infer_from_args(args)
        path = check_output_path(args.out)
    except ValueError as e:
        parser.error(str(e))
    text = render_html(cfg, args.dtype, args.title, setup, infer)
    try:
        write_page(path, text)
    except OSError as e:
        parser.error(f"cannot write {path}: {e.strerror or e}")
    print(f"wrote {path} ({len(text.encode()):,} bytes): open it in any browser, no server needed")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m app.export OUT.html [options]` (the same as `python -m app export ...`)."""
    parser = OneLineParser(prog="python -m app export", description="Write the explorer as one self-contained page.")
    add_arguments(parser)
    return run(parser.parse_args(argv), parser)
