"""One grammar for every number a person types: a box on the live or the exported page, a link's value, an option.

    >>> whole("300e9") == whole("3e11") == whole("300,000,000,000") == whole("300 billion") == 300 * 10**9
    True
    >>> whole("1.4 trillion"), whole("70 million"), whole("1_024"), real("0.4"), real("2.5e-1")
    (1400000000000, 70000000, 1024, 0.4, 0.25)
    >>> whole("1.5"), whole("3009 tokens"), whole("1,0000"), whole("١٢")
    (None, None, None, None)

A number is an optional sign, digits (grouped by commas in threes, or by underscores anywhere, or neither), an
optional fraction, an optional exponent (e or E and at most three digits), and an optional scale word, thousand,
million, billion or trillion (any case), with spaces or tabs around. Digits are ASCII 0–9 only. Nothing else: no
unit letters (B and T are the lesson's batch size and sequence length, never billion and trillion), no "k".

Values are exact: the text is read as m × 10^e with whole m, so "1.4 trillion" is 1,400,000,000,000 exactly and a
whole number is whole whatever its notation. The exported page reads the same `PATTERN` (generated into its data,
read with the same flags: case-insensitive, ASCII only) and `SCALES`; tests run both on the same texts in Chromium.
"""
from __future__ import annotations

import re

SCALES: dict[str, int] = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}  # word -> power of ten
# Groups: 1 sign, 2 whole part, 3 fraction, 4 exponent, 5 scale word. Written in the syntax Python's `re` and
# JavaScript's RegExp share (no named groups, no \d or \s: both mean more than ASCII in Python).
PATTERN = (r"^[ \t]*([+-]?)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+(?:_[0-9]+)*)?(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]{1,3}))?"
           r"(?:[ \t]*(" + "|".join(SCALES) + r"))?[ \t]*$")
_NUMBER = re.compile(PATTERN, re.IGNORECASE | re.ASCII)
EXAMPLES = "4096, 4,096, 4e3 or 4 thousand"  # for messages: how a box's number may be written
LARGE_EXAMPLES = "300e9, 3e11, 300,000,000,000 or 300 billion"  # the same, for a token count
MAX_CHARS = 40  # longer text is not read as a number (no bound needs as many characters)
HUGE = 10**21  # a value this large is quoted as typed in messages, not written out digit by digit


def decimal(text: str) -> tuple[int, int] | None:
    """`text` as (m, e) with value m × 10^e and m whole (its sign included), or None if it is not a number here."""
    match = _NUMBER.fullmatch(text) if isinstance(text, str) else None  # not match: its $ passes a last "\\n"
    if match is None:
        return None
    sign, whole_part, fraction, exponent, scale = match.groups()
    whole_part, fraction = (whole_part or "").replace(",", "").replace("_", ""), fraction or ""
    if not (whole_part or fraction):
        return None
    m = int(whole_part + fraction) * (-1 if sign == "-" else 1)
    return m, int(exponent or 0) + SCALES.get((scale or "").lower(), 0) - len(fraction)


def whole(text: str) -> int | None:
    """`text` as a whole number (exactly), or None: not a number, or not whole ("1.5", "1e-3")."""
    read = decimal(text)
    if read is None:
        return None
    m, e = read
    if e >= 0:
        return m * 10**e
    q, r = divmod(m, 10**-e)
    return q if r == 0 else None


def real(text: str) -> float | None:
    """`text` as the nearest float, or None if it is not a number here."""
    read = decimal(text)
    return None if read is None else float(f"{read[0]}e{read[1]}")


def show(value: int | float, text: str) -> str:
    """A value for a message: with thousands separators, or as typed when it is HUGE."""
    if abs(value) >= HUGE:
        return text.strip(" \t")
    return f"{int(value):,}" if value == int(value) else f"{value:,}"
