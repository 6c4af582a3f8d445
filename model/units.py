"""Readable numbers for people: 124,439,808 · 124.4 M · 248.9 MFLOP · 1.50 GiB. Pure string formatting."""
from __future__ import annotations

_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
_BINARY = ((2**50, "PiB"), (2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def grouped(n: int | float) -> str:
    """Thousands separators: 124439808 -> "124,439,808"."""
    return f"{round(n):,}"


def si(x: float, unit: str = "", digits: int = 4) -> str:
    """SI prefix with `digits` significant figures: si(124439808) -> "124.4 M"; si(2.49e8, "FLOP") -> "248.9 MFLOP"."""
    x = float(f"{x:.{digits}g}")  # round first, so 999,999 reads "1 M", not "1000 k"
    for scale, prefix in _SI:
        if abs(x) >= scale:
            return f"{_sig(x / scale, digits)} {prefix}{unit}"
    return f"{_sig(x, digits)} {unit}".rstrip()


def nbytes(n: int | float) -> str:
    """Binary units: 1610612736 -> "1.50 GiB"; below 1 KiB, whole bytes."""
    for scale, unit in _BINARY:
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return f"{int(n)} B"


def shape(dims: tuple[int, ...]) -> str:
    """(8, 12, 1024, 1024) -> "(8, 12, 1024, 1024)"; () -> "()"."""
    return "(" + ", ".join(str(n) for n in dims) + ")"


def _sig(x: float, digits: int) -> str:
    if x == int(x) and abs(x) < 10**digits:
        return str(int(x))
    text = f"{x:.{digits}g}"
    return text if "e" not in text else f"{x:.0f}"
