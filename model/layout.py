"""Plain-text tables that fit a terminal: aligned columns, the long ones wrapped (`columns`), and paragraphs.

    >>> columns([["C = 6·N·D, training FLOPs", "6·N·D", "1.9 × 10¹⁸"]], right={2}, wrap=(0,), width=40)
    ['  C = 6·N·D, training  6·N·D  1.9 × 10¹⁸', '  FLOPs']

`width` None (a file or a pipe) keeps every line as long as its cells. The CLI takes the width from `COLUMNS`, else
the terminal's when stdout is one (`terminal_width`). A wrapped cell breaks at spaces only, its continuation lines in
its own column, which never narrows below its longest word (a line wider than `width` stays so only where even
that cannot fit). Only formatting: nothing here knows what the cells mean.
"""
from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Collection, Sequence

MIN_WRAPPED = 12  # a wrapped column keeps at least this many characters
MIN_BESIDE = 28  # a description column narrower than this goes under its row (`row_lines`)


def terminal_width() -> int | None:
    """The width to fit: `COLUMNS` (a whole number > 0) if set, else the terminal's when stdout is a terminal, else
    None (output to a file or a pipe is not wrapped)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isascii() and columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def paragraph(text: str, width: int | None, indent: str = "", more: str | None = None) -> list[str]:
    """`text` as lines of at most `width` characters, the first after `indent`, the others after `more` (default
    `indent`); one line when `width` is None."""
    if width is None:
        return [indent + text]
    more = indent if more is None else more
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=more, break_on_hyphens=False,
                         break_long_words=False) or [indent]


def _wrap(text: str, width: int) -> list[str]:
    """A cell's lines: broken at spaces only (a formula cut inside "2h_kv·d_head" would read "d + 2")."""
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False) or [""]


def columns(rows: Sequence[Sequence[str]], right: Collection[int] = (), wrap: Sequence[int] = (),
            width: int | None = None, indent: str = "  ", gap: str = "  ") -> list[str]:
    """`rows` of cells in aligned columns (those in `right` right-aligned). Where the lines would be wider than
    `width`, the columns in `wrap` narrow, the widest first, down to MIN_WRAPPED, and their cells wrap."""
    return [line for lines in row_lines(rows, right, wrap, width, indent, gap) for line in lines]


def row_lines(rows: Sequence[Sequence[str]], right: Collection[int] = (), wrap: Sequence[int] = (),
              width: int | None = None, indent: str = "  ", gap: str = "  ", below: int | None = None,
              under: str = "      ", above: int | None = None) -> list[list[str]]:
    """`columns`, the lines of each row apart (a wrapped row has several), so that a caller can put headings
    between rows. Column `below` (the last, a description), where the other columns leave it fewer than
    MIN_BESIDE characters, goes under its row instead, after `under`, as a paragraph; the first row (a heading)
    then leaves it out. Column `above` (the first, a label) likewise goes over its row, after `indent`, the rest
    of the row two spaces further in."""
    n = max((len(r) for r in rows), default=0)
    rows = [list(r) + [""] * (n - len(r)) for r in rows]
    widths = [max((len(r[i]) for r in rows), default=0) for i in range(n)]
    used = [i for i in range(n) if widths[i]]  # empty columns take no gap

    def wide(cols: list[int]) -> int:
        return len(indent) + sum(widths[i] for i in cols) + len(gap) * (len(cols) - 1)

    for apart in (below, above):
        if width is None or apart is None or wide(used) <= width:
            continue
        rest = [i for i in used if i != apart]
        if width - wide(rest) - len(gap) < MIN_BESIDE:
            cut = [[c for i, c in enumerate(r) if i != apart] for r in rows]
            keep = [i - (i > apart) for i in right if i != apart], [i - (i > apart) for i in wrap if i != apart]
            if apart == above:
                out = row_lines(cut, *keep, width, indent + "  ", gap)
                return [paragraph(r[apart], width, indent) + lines for lines, r in zip(out, rows)]
            out = row_lines(cut, *keep, width, indent, gap)
            return [lines + (paragraph(r[apart], width, under) if k and r[apart] else [])
                    for k, (lines, r) in enumerate(zip(out, rows))]
    if width is not None:
        excess = wide(used) - width
        least = {i: max([MIN_WRAPPED] + [len(w) for r in rows for w in r[i].split()]) for i in wrap if i < n}
        while excess > 0:
            narrowable = [i for i in least if widths[i] > least[i]]
            if not narrowable:
                break
            widths[max(narrowable, key=lambda i: widths[i])] -= 1
            excess -= 1
    out = []
    for r in rows:
        cells = [_wrap(r[i], widths[i]) if i in wrap and len(r[i]) > widths[i]
                 else [r[i]] for i in range(n)]
        lines = []
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            line = gap.join(parts[i].rjust(widths[i]) if i in right else parts[i].ljust(widths[i]) for i in used)
            lines.append((indent + line).rstrip())
        out.append(lines)
    return out
