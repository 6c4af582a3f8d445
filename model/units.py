"""Readable numbers for the page and the command line: thousands separators, parameter counts, FLOPs, bytes.

Pure functions of numbers the model returns; nothing here computes a budget.

    >>> thousands(124_439_808), params(124_439_808), flops(248_879_616), nbytes(402_653_184)
    ('124,439,808', '124.4 million', '249 MFLOP', '384 MiB')

No unit reads as a lesson symbol: billions and trillions are words (never "174.6 B" or "13.2 T", which a learner
reads as batch size and sequence length), and small byte counts say "bytes". The exported page runs these functions
compiled to JavaScript (app/export/pyjs.py); tests run both on the same values in Chromium.
"""
from __future__ import annotations

from collections.abc import Callable

from .figures import UNITS

_COUNT_UNITS = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "k"))  # 124.4 million, 174.6 billion
_SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))  # FLOPs: 249 MFLOP
_BINARY = ((2**50, "PiB"), (2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def thousands(n: int | float) -> str:
    """Whole number with thousands separators: 124439808 -> "124,439,808"."""
    return f"{round(n):,}"


def sig3(x: float) -> str:
    """Three significant digits (at most two decimals), no trailing zeros: 248.88 -> "249", 1.0496 -> "1.05"."""
    if x == 0:
        return "0"
    digits = max(0, 3 - len(str(int(abs(x)))))
    text = f"{x:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _scaled(n: float, units: tuple[tuple[float, str], ...], fmt) -> str | None:
    """`fmt(n / scale, unit)` for the largest unit not above n; one unit up when rounding reaches the next one."""
    for i, (scale, unit) in enumerate(units):
        if abs(n) >= scale:
            text = fmt(n / scale, unit)
            if i > 0 and abs(float(text.split()[0])) >= units[i - 1][0] / scale:  # 999.96 million -> 1.0 billion
                bigger, unit = units[i - 1]
                text = fmt(n / bigger, unit)
            return text
    return None


def params(n: int | float) -> str:
    """A count with one decimal and a unit: 124439808 -> "124.4 million", 174.6e9 -> "174.6 billion", 768 -> "768"."""
    return _scaled(n, _COUNT_UNITS, lambda v, unit: f"{v:.1f} {unit}") or thousands(n)


def flops(n: int | float) -> str:
    """FLOPs in SI units, three significant digits: 248879616 -> "249 MFLOP", 3.5e11 -> "350 GFLOP"."""
    return _scaled(n, _SI, lambda v, unit: f"{sig3(v)} {unit}FLOP") or f"{sig3(n)} FLOP"


def nbytes(n: int | float) -> str:
    """Bytes in binary units, three significant digits: 402653184 -> "384 MiB", 1536 -> "1.5 KiB", 8 -> "8 bytes"."""
    return _scaled(n, _BINARY, lambda v, unit: f"{sig3(v)} {unit}") or f"{thousands(n)} bytes"


def percent(x: float) -> str:
    """A share with one decimal, never rounded up to 100: 0.1523 -> "15.2 %", 0.99996 -> "99.9 %"."""
    p = 100 * x
    if p == 0:
        return "0 %"
    if p < 0.1:
        return "< 0.1 %"
    if 99.9 < p < 100:
        return "99.9 %"
    return f"{p:.1f} %"


def shape(dims: tuple[int, ...]) -> str:
    """A concrete shape as the lesson writes it: (8, 12, 1024, 1024); a scalar is ()."""
    return "(" + ", ".join(str(n) for n in dims) + ")"


_SUPER = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def scientific(x: float) -> str:
    """Three significant digits times a power of ten: 3.1428e23 -> "3.14 × 10²³"; 0 -> "0"."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPER)}"


def plain(x: float) -> str:
    """A count or ratio: thousands separators from 1,000, three significant digits below, powers of ten beyond."""
    if x != 0 and not 0.01 <= abs(x) < 1e15:
        return scientific(x)
    if abs(x) >= 1000:
        return thousands(x)
    return sig3(x) if abs(x) >= 1 else f"{x:.3g}"


DURATIONS = ((1, "days"), (1 / 24, "hours"), (1 / 1440, "minutes"))  # (days, unit); below a minute, seconds


def duration(days: float) -> str:
    """Wall-clock time: "34.2 days", "5.3 hours", "9.8 minutes", "41 seconds"."""
    for scale, unit in DURATIONS:
        if days >= scale:
            return f"{plain(days / scale)} {unit}"
    return f"{plain(days * 86_400)} seconds"


def seconds(x: float) -> str:
    """A short time: "38.2 ms", "1.24 s", "2.1 minutes" (`duration` beyond an hour)."""
    if x >= 3600:
        return duration(x / 86_400)
    if x >= 60:
        return f"{plain(x / 60)} minutes"
    if x >= 1:
        return f"{plain(x)} s"
    if x >= 1e-3:
        return f"{plain(x * 1e3)} ms"
    return f"{plain(x * 1e6)} µs"


def dollars(x: float) -> str:
    """"$3.26", "$4,603,211"."""
    return f"${x:,.2f}" if x < 100 else f"${x:,.0f}"


def _ratio(x: float) -> str:
    return f"{sig3(x)}×"


_EXACT = {"params": thousands, "tokens": thousands, "FLOP": flops, "share": percent, "bytes": nbytes, "ratio": _ratio}
# Each unit in words (`value(..., exact=False)`): a formatter of FORMATS and the words after it. Data, so that the
# exported page's one generic formatter (page.js human, FORMATS) reads the same table (app/export/spec.py).
WORDS: dict[str, tuple[str, str]] = {
    "params": ("params", " parameters"),
    "tokens": ("params", " tokens"),
    "count": ("plain", ""),
    "FLOP": ("scientific", " FLOPs"),
    "share": ("percent", ""),
    "ratio": ("plain", ""),
    "bytes": ("nbytes", ""),
    "bool": ("yes_no", ""),
    "flop_per_s": ("flops", "/s"),
    "flop_per_byte": ("plain", " FLOP/byte"),
    "tokens_per_s": ("params", " tokens/s"),
    "pf_days": ("plain", " PF-days"),
    "seconds": ("seconds", ""),
    "days": ("duration", ""),
    "gpu_hours": ("plain", " GPU-hours"),
    "usd": ("dollars", ""),
    "loss": ("fixed3", " nats/token"),
}


def yes_no(v: object) -> str:
    return "yes" if v else "no"


def fixed3(v: float) -> str:
    return f"{v:.3f}"


FORMATS: dict[str, Callable[[float], str]] = {
    "params": params, "plain": plain, "scientific": scientific, "percent": percent, "nbytes": nbytes,
    "yes_no": yes_no, "flops": flops, "seconds": seconds, "duration": duration, "dollars": dollars, "fixed3": fixed3,
}
if set(WORDS) != set(UNITS):
    raise RuntimeError(f"model.units: no words for {sorted(set(UNITS) - set(WORDS))}")


def value(x: int | float, unit: str, exact: bool = True) -> str:
    """A `model.figures.Line` value, by its unit (one of `model.figures.UNITS`).

    `exact` (the budget, shapes and changes tables): counts and token lengths whole with separators, FLOPs in SI
    units, shares in percent, bytes in binary units, ratios as "4×", a negative value with a "−" sign; a unit with
    no exact form is written in words. In words (the training and inference tables): "124.4 million parameters",
    "3.14 × 10²³ FLOPs", "41.4 days", "$4,603,211"."""
    if unit not in UNITS:
        raise ValueError(f"unknown unit {unit!r}")
    if exact and unit in _EXACT:
        return "−" + value(-x, unit) if x < 0 else _EXACT[unit](x)
    name, words = WORDS[unit]
    return FORMATS[name](x) + words


def short(x: int | float, unit: str) -> str:
    """A rounded companion for an exact figure: "124.4 million" beside 124,439,808; "" where `value` is short. A
    negative value gets the "−" sign of `value` ("−43.9 k" beside "−43,904")."""
    if x < 0:
        rounded = short(-x, unit)
        return "−" + rounded if rounded else ""
    if unit == "params":
        return params(x)
    if unit == "bytes" and abs(x) >= 1024:
        return f"{thousands(x)} bytes"
    return ""
