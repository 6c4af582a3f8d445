"""The one configuration of the lesson's GPT: a frozen, validated `Config`, its presets and head helpers.

Notation (the lesson's): B batch size, T sequence length, d model width, h heads, d_head = d / h,
L blocks, V vocabulary size, T_max rows of the learned position table. `tie` ties the output head to
the token table W_te (GPT-2's choice).
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

# Inclusive bounds per field: large enough for GPT-3 175B (d = 12,288, L = 96, T = 2,048), small enough that
# no accident (d = 10**9) slips through. The meta device makes even the largest allowed config free to trace.
BOUNDS: dict[str, tuple[int, int]] = {
    "B": (1, 4_096),
    "T": (1, 32_768),
    "d": (1, 32_768),
    "h": (1, 32_768),
    "L": (1, 1_024),
    "V": (1, 262_144),
    "T_max": (1, 32_768),
}

FIELD_DOCS: dict[str, str] = {
    "B": "batch size (sequences per forward pass)",
    "T": "sequence length (tokens per sequence)",
    "d": "model width (residual stream size)",
    "h": "attention heads (must divide d)",
    "L": "number of Transformer blocks",
    "V": "vocabulary size (rows of W_te)",
    "T_max": "rows of the learned position table W_pe",
}


def divisors(n: int) -> list[int]:
    """All positive divisors of n, ascending: `divisors(12) == [1, 2, 3, 4, 6, 12]`."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"divisors needs a positive integer, got {n!r}")
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i != n // i:
                large.append(n // i)
        i += 1
    return small + large[::-1]


def snap_heads(d: int, h: int) -> int:
    """The divisor of d nearest h (ties go to the smaller): `snap_heads(770, 12) == 11`."""
    return min(divisors(d), key=lambda k: (abs(k - h), k))


def _neighbours(d: int, h: int) -> list[int]:
    """The divisors of d just below and just above h (one of them when h is beyond the range)."""
    divs = divisors(d)
    below = [k for k in divs if k < h][-1:]
    above = [k for k in divs if k > h][:1]
    return below + above


def check_field(name: str, value: object) -> int:
    """`value` as an int if it is a whole number within BOUNDS[name], else ValueError naming the bounds."""
    lo, hi = BOUNDS[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number from {lo:,} to {hi:,}, got {value!r}")
    value = int(value)
    if not lo <= value <= hi:
        raise ValueError(f"{name}={value:,} is out of range: {name} ({FIELD_DOCS[name]}) must be from {lo:,} to {hi:,}")
    return value


@dataclass(frozen=True)
class Config:
    """A GPT-2-style decoder at one batch shape, in the lesson's notation; validated at construction.

    Raises `ValueError` with a message that names the problem and the fix: a field that is not a whole
    number in its bounds, h that does not divide d, or T beyond T_max.
    """

    B: int
    T: int
    d: int
    h: int
    L: int
    V: int
    T_max: int = 1024
    tie: bool = True

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name != "tie":
                object.__setattr__(self, f.name, check_field(f.name, getattr(self, f.name)))
        if not isinstance(self.tie, bool):
            raise ValueError(f"tie must be True or False, got {self.tie!r}")
        if self.d % self.h:
            near = ", ".join(str(k) for k in _neighbours(self.d, self.h))
            raise ValueError(
                f"d={self.d} is not divisible by h={self.h}; each head gets d/h features, so h must divide d "
                f"(nearest divisors of {self.d}: {near})"
            )
        if self.T > self.T_max:
            raise ValueError(
                f"T={self.T:,} exceeds T_max={self.T_max:,}: the learned position table W_pe has only T_max rows "
                f"and cannot extrapolate to later positions; lower T to at most {self.T_max:,} or raise T_max"
            )

    @property
    def d_head(self) -> int:
        """Features per head, d / h."""
        return self.d // self.h

    def symbols(self) -> dict[str, int]:
        """The lesson's symbols and their values, for evaluating symbolic shapes."""
        return {"B": self.B, "T": self.T, "d": self.d, "h": self.h, "d_head": self.d_head,
                "L": self.L, "V": self.V, "T_max": self.T_max}


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Config))  # B, T, d, h, L, V, T_max, tie: the one list
INT_FIELDS: tuple[str, ...] = tuple(f for f in FIELDS if f != "tie")  # the whole-number fields, with BOUNDS

GPT2_V = 50_257  # GPT-2's BPE vocabulary: 50,256 merges' tokens + <|endoftext|>


def _preset(L: int, d: int, h: int, T_max: int) -> Config:
    return Config(B=8, T=T_max, d=d, h=h, L=L, V=GPT2_V, T_max=T_max)


DEFAULT_PRESET = "gpt2-small"  # what the CLI, the export and the app start from

# Presets at B = 8, T = T_max; change the batch shape with dataclasses.replace(cfg, B=..., T=...).
PRESETS: dict[str, Config] = {
    "gpt2-small": _preset(12, 768, 12, 1024),
    "gpt2-medium": _preset(24, 1024, 16, 1024),
    "gpt2-large": _preset(36, 1280, 20, 1024),
    "gpt2-xl": _preset(48, 1600, 25, 1024),
    # GPT-3 paper (Brown et al. 2020), table 2.1, where two rows do not multiply out (h * d_head != d):
    # 1.3B prints h = 24 with d = 2,048 and d_head = 128, so we keep d and d_head and use h = 2,048 / 128 = 16;
    # 13B prints d = 5,140 with h = 40 and d_head = 128, so we use d = 40 * 128 = 5,120.
    "gpt3-125m": _preset(12, 768, 12, 2048),
    "gpt3-350m": _preset(24, 1024, 16, 2048),
    "gpt3-760m": _preset(24, 1536, 16, 2048),
    "gpt3-1.3b": _preset(24, 2048, 16, 2048),
    "gpt3-2.7b": _preset(32, 2560, 32, 2048),
    "gpt3-6.7b": _preset(32, 4096, 32, 2048),
    "gpt3-13b": _preset(40, 5120, 40, 2048),
    "gpt3-175b": _preset(96, 12288, 96, 2048),
}
