"""`python -m app <command>`: the app's command line.

    python -m app export lesson.html --preset gpt2-small --T 256   # one self-contained page, no server

Usage errors print one line on stderr and exit with status 2.
"""
from __future__ import annotations

import sys

from model.cli import OneLineParser

from .export.cli import add_arguments, run


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m app", description="Transformer Shapes: the app's command line.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    export = commands.add_parser("export", help="write the explorer as one self-contained HTML page (no server)",
                                 description="Write the explorer as one self-contained HTML page: sliders, shapes "
                                             "table and budget, computed in the browser; works from file://.")
    add_arguments(export)
    args = parser.parse_args(argv)
    return run(args, export)


if __name__ == "__main__":
    sys.exit(main())
