"""A figure's formula as one expression: `E("L·({attn} + {mlp})", attn=..., mlp=...)` -> `Expr`.

A formula is written once, in the lesson's notation, as a template whose `{holes}` take other expressions (never
their text). The result is a tree that keeps the notation as written (juxtaposition or "·", the parentheses, the
order of the terms) and gives everything else from that one tree:

- `value(symbols)`: exact whole-number arithmetic (`fractions.Fraction`; a fractional power or a float symbol makes a
  float), the figure itself;
- `text`: the formula in lesson notation, as written ("12Ld² + (V + T_max)·d");
- `subs(T=E("T + 1"))`: the same formula with a symbol replaced by an expression (a decode step's T + 1 keys; a
  quantized cache's bytes per element), parenthesised where the notation needs it;
- `poly()`: the polynomial it is (`model.formula.Poly`), for the algebra of formulas fitted from data.

The grammar is `model.formula`'s (numbers, symbols of `VOCABULARY` matched longest first, `·` or juxtaposition,
superscript or `^` powers, `+`, `−`, `/`, parentheses). A template is read once per text (`_template`).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from .formula import Poly, poly_add, poly_const, poly_mul, poly_symbol
from .notation import SYMBOLS, dims

Number = Fraction | float
# Every symbol a formula may name: the lesson's and each part's (model.notation), the symbols the budget, the
# training plan and serving add (N, D, C, P, ...), longest first when a formula is read.
VOCABULARY: tuple[str, ...] = (
    *SYMBOLS, "N_active", "N_q", "S_q", "N_e", "S_e", "E_B", "N", "D", "C", "P", "BW", "MFU", "n", "price", "G",
    "S_rest", "S_block", "S_dense", "S_moe", "M_fwd", "M_loss", "M_bwd", "M_opt",
)
_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_TO_SUPER = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SUPERS = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_HOLE = re.compile(r"\{(\w+)\}")
MINUS = "−"


class Expr:
    """A formula as a tree (see the module docstring). Immutable; build one with `E`."""

    def value(self, s: Mapping[str, int | float | Fraction]) -> Number:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError

    @functools.cached_property
    def text(self) -> str:
        """The formula in lesson notation."""
        return self._text()

    def subs(self, **by: Expr | int) -> Expr:
        """The formula with each symbol named replaced by an expression (or a whole number)."""
        return self._subs({k: _expr(v) for k, v in by.items()})

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return self

    def poly(self) -> Poly:
        """The polynomial this formula is (ValueError for a quotient, a decimal or a fractional power)."""
        raise ValueError(f"formula {self.text!r} is no polynomial")

    def symbols(self) -> frozenset[str]:
        """The symbols it names."""
        return frozenset()

    def __repr__(self) -> str:
        return f"E({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and type(self) is type(other) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


@dataclass(frozen=True, eq=False, repr=False)
class Num(Expr):
    """A number as written: "12", "0.34"."""

    written: str

    def value(self, s: Mapping) -> Number:
        return self._exact

    @functools.cached_property
    def _exact(self) -> Number:
        """The number written, exact: an int where it is whole (ints keep the arithmetic fast), else a Fraction."""
        x = Fraction(self.written)
        return int(x) if x.denominator == 1 else x

    def _text(self) -> str:
        return self.written

    def poly(self) -> Poly:
        if "." in self.written:
            raise ValueError(f"formula {self.written!r}: a decimal is no polynomial coefficient")
        return poly_const(int(self.written))


@dataclass(frozen=True, eq=False, repr=False)
class Sym(Expr):
    """A symbol: "d", "T_max", "h_kv"."""

    name: str

    def value(self, s: Mapping) -> Number:
        return s[self.name]  # an int, a float or a Fraction, as given

    def _text(self) -> str:
        return self.name

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return by.get(self.name, self)

    def poly(self) -> Poly:
        return poly_symbol(self.name)

    def symbols(self) -> frozenset[str]:
        return frozenset((self.name,))


@dataclass(frozen=True, eq=False, repr=False)
class Group(Expr):
    """Parentheses as written: "(V + T_max)"."""

    inner: Expr

    def value(self, s: Mapping) -> Number:
        return self.inner.value(s)

    def _text(self) -> str:
        return self.inner.text if isinstance(self.inner, Sym) else f"({self.inner.text})"  # "L·d", never "L·(d)"

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Group(self.inner._subs(by))

    def poly(self) -> Poly:
        return self.inner.poly()

    def symbols(self) -> frozenset[str]:
        return self.inner.symbols()


@dataclass(frozen=True, eq=False, repr=False)
class Neg(Expr):
    """A leading minus: "−2"."""

    inner: Expr

    def value(self, s: Mapping) -> Number:
        return -self.inner.value(s)

    def _text(self) -> str:
        return MINUS + _operand(self.inner)

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Neg(self.inner._subs(by))

    def poly(self) -> Poly:
        return poly_add({}, self.inner.poly(), -1)

    def symbols(self) -> frozenset[str]:
        return self.inner.symbols()


@dataclass(frozen=True, eq=False, repr=False)
class Sum(Expr):
    """Terms added and subtracted, in the order written: `signs[i]` is +1 or −1 for `terms[i]` (the first +1)."""

    terms: tuple[Expr, ...]
    signs: tuple[int, ...]

    def value(self, s: Mapping) -> Number:
        total: Number = 0
        for sign, t in zip(self.signs, self.terms):
            total = total + t.value(s) if sign > 0 else total - t.value(s)
        return total

    def _text(self) -> str:
        out = ""
        for i, (sign, t) in enumerate(zip(self.signs, self.terms)):
            text = t.text
            if i == 0:
                out = text
            elif sign > 0 and text.startswith(MINUS):  # a term that starts with its own minus: "a − b", not "a + −b"
                out += f" {MINUS} {text[1:]}"
            else:
                out += f" {'+' if sign > 0 else MINUS} {_operand(t) if sign < 0 else text}"
        return out

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Sum(tuple(t._subs(by) for t in self.terms), self.signs)

    def poly(self) -> Poly:
        out: Poly = {}
        for sign, t in zip(self.signs, self.terms):
            out = poly_add(out, t.poly(), sign)
        return out

    def symbols(self) -> frozenset[str]:
        return frozenset().union(*(t.symbols() for t in self.terms))


@dataclass(frozen=True, eq=False, repr=False)
class Prod(Expr):
    """Factors multiplied: `seps[i]` joins factor i to factor i + 1, "" (juxtaposition, "4LTd") or "·"."""

    factors: tuple[Expr, ...]
    seps: tuple[str, ...]

    def value(self, s: Mapping) -> Number:
        out: Number = 1
        for f in self.factors:
            out = out * f.value(s)
        return out

    def _text(self) -> str:
        out = _operand(self.factors[0])
        for sep, f in zip(self.seps, self.factors[1:]):
            text = _operand(f)
            if not sep and out.endswith(")") and text[:1].isalpha():  # "4(T + 1)·d", never "4(T + 1)d"
                sep = "·"
            out += sep + text
        return out

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Prod(tuple(f._subs(by) for f in self.factors), self.seps)

    def poly(self) -> Poly:
        out = poly_const(1)
        for f in self.factors:
            out = poly_mul(out, f.poly())
        return out

    def symbols(self) -> frozenset[str]:
        return frozenset().union(*(f.symbols() for f in self.factors))


@dataclass(frozen=True, eq=False, repr=False)
class Quot(Expr):
    """A quotient: "BTk/E", "(8d² + 5d) / (12d² + 9d)" (`sep` as written)."""

    num: Expr
    den: Expr
    sep: str = "/"

    def value(self, s: Mapping) -> Number:
        d = self.den.value(s)
        if d == 0:
            raise ZeroDivisionError(f"formula {self.text!r} divides by zero")
        n = self.num.value(s)
        if isinstance(n, float) or isinstance(d, float):
            return n / d
        q = Fraction(n, d) if isinstance(n, int) and isinstance(d, int) else Fraction(n) / d  # exact
        return int(q) if q.denominator == 1 else q

    def _text(self) -> str:
        return _operand(self.num) + self.sep + _operand(self.den)

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Quot(self.num._subs(by), self.den._subs(by), self.sep)

    def symbols(self) -> frozenset[str]:
        return self.num.symbols() | self.den.symbols()


@dataclass(frozen=True, eq=False, repr=False)
class Pow(Expr):
    """A power: "d²" (a superscript) or "N^0.34" (`caret`)."""

    base: Expr
    exponent: str  # as digits: "2", "0.34"
    caret: bool = False

    def value(self, s: Mapping) -> Number:
        e = Fraction(self.exponent)
        if e.denominator == 1:
            base = self.base.value(s)
            return base ** int(e) if e >= 0 or isinstance(base, float) else Fraction(base) ** int(e)
        return float(self.base.value(s)) ** float(e)

    def _text(self) -> str:
        base = _operand(self.base)
        return f"{base}^{self.exponent}" if self.caret else base + self.exponent.translate(_TO_SUPER)

    def _subs(self, by: Mapping[str, Expr]) -> Expr:
        return Pow(self.base._subs(by), self.exponent, self.caret)

    def poly(self) -> Poly:
        if not self.exponent.isdigit():
            raise ValueError(f"formula {self.text!r}: a fractional power is no polynomial")
        out = poly_const(1)
        for _ in range(int(self.exponent)):
            out = poly_mul(out, self.base.poly())
        return out

    def symbols(self) -> frozenset[str]:
        return self.base.symbols()


def _operand(e: Expr) -> str:
    """`e`'s text as a factor, operand or base: a sum in parentheses (a template that wrote none, or a
    substitution, gets them where the arithmetic needs them)."""
    return f"({e.text})" if isinstance(e, Sum) else e.text


def _expr(v: Expr | int) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"a formula's part must be an Expr or a whole number, got {v!r}")
    return Num(str(v)) if v >= 0 else Neg(Num(str(-v)))


# --- reading a template ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False, repr=False)
class Hole(Expr):
    """A template's `{name}` before it is filled (see `E`)."""

    name: str

    def _text(self) -> str:
        return "{" + self.name + "}"


_OPS = {"·": "*", "×": "*", "*": "*", "/": "/", "+": "+", "−": "-", "-": "-", "(": "(", ")": ")", "^": "^"}


def _tokens(template: str) -> list[tuple[str, str, str]]:
    """(kind, text, the space before it) of each token: "num", "sym", "hole", "pow" (superscript digits) or an
    operator of `_OPS`."""
    names = sorted(VOCABULARY, key=len, reverse=True)
    out, i, space = [], 0, ""
    while i < len(template):
        c = template[i]
        if c.isspace():
            space += c
            i += 1
            continue
        if m := _HOLE.match(template, i):
            out.append(("hole", m.group(1), space))
        elif m := _NUMBER.match(template, i):
            out.append(("num", m.group(), space))
        elif m := _SUPERS.match(template, i):
            out.append(("pow", m.group().translate(_SUPER), space))
        elif c in _OPS:
            out.append((_OPS[c], c, space))
            i += 1
            space = ""
            continue
        else:
            name = next((n for n in names if template.startswith(n, i)), None)
            if name is None:
                raise ValueError(f"formula {template!r}: cannot read {template[i:i + 12]!r} at position {i}")
            out.append(("sym", name, space))
            i += len(name)
            space = ""
            continue
        i = m.end()
        space = ""
    return out


class _Reader:
    """Recursive descent over a template's tokens, as `model.formula` reads a formula, keeping how it is written."""

    def __init__(self, template: str) -> None:
        self.template, self.tokens, self.i = template, _tokens(template), 0

    def peek(self) -> tuple[str, str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str, str]:
        token = self.peek()
        if token is None:
            raise ValueError(f"formula {self.template!r} ends too early")
        self.i += 1
        return token

    def read(self) -> Expr:
        e = self.sum()
        if self.peek() is not None:
            raise ValueError(f"formula {self.template!r}: unexpected {self.peek()[1]!r}")
        return e

    def sum(self) -> Expr:
        terms, signs = [self.product()], [1]
        while (t := self.peek()) and t[0] in "+-":
            self.take()
            terms.append(self.product())
            signs.append(1 if t[0] == "+" else -1)
        return terms[0] if len(terms) == 1 else Sum(tuple(terms), tuple(signs))

    def product(self) -> Expr:
        e = self.signed()
        while (t := self.peek()) and (t[0] in "*/" or t[0] in ("num", "sym", "hole", "(")):
            if t[0] == "/":
                self.take()
                e = Quot(e, self.signed(), " / " if t[2] else "/")
                continue
            sep = ""
            if t[0] == "*":
                sep = self.take()[1]
                nxt = self.signed()
            else:
                if t[0] == "num" and self.tokens[self.i - 1][0] == "num":
                    raise ValueError(f"formula {self.template!r}: two numbers in a row")
                nxt = self.factor()
            if isinstance(e, Prod):
                e = Prod((*e.factors, nxt), (*e.seps, sep))
            else:
                e = Prod((e, nxt), (sep,))
        return e

    def signed(self) -> Expr:
        t = self.peek()
        if t is not None and t[0] in "+-":
            self.take()
            e = self.signed()
            return Neg(e) if t[0] == "-" else e
        return self.factor()

    def factor(self) -> Expr:
        kind, text, _ = self.take()
        if kind == "(":
            e = Group(self.sum())
            if self.take()[0] != ")":
                raise ValueError(f"formula {self.template!r}: missing ')'")
        elif kind == "num":
            e = Num(text)
        elif kind == "sym":
            e = Sym(text)
        elif kind == "hole":
            e = Hole(text)
        else:
            raise ValueError(f"formula {self.template!r}: unexpected {text!r}")
        while (p := self.peek()) and p[0] in ("pow", "^"):
            self.take()
            if p[0] == "pow":
                e = Pow(e, p[1])
            else:
                exponent = self.take()
                if exponent[0] != "num":
                    raise ValueError(f"formula {self.template!r}: '^' needs a number after it")
                e = Pow(e, exponent[1], caret=True)
        return e


@functools.lru_cache(maxsize=4096)
def _template(template: str) -> Expr:
    return _Reader(template).read()


def _fill(e: Expr, parts: Mapping[str, Expr]) -> Expr:
    """`e` with each Hole replaced by its part."""
    if isinstance(e, Hole):
        if e.name not in parts:
            raise KeyError(f"formula hole {{{e.name}}} has no part")
        return parts[e.name]
    if isinstance(e, (Group, Neg)):
        return type(e)(_fill(e.inner, parts))
    if isinstance(e, Sum):
        return Sum(tuple(_fill(t, parts) for t in e.terms), e.signs)
    if isinstance(e, Prod):
        return Prod(tuple(_fill(f, parts) for f in e.factors), e.seps)
    if isinstance(e, Quot):
        return Quot(_fill(e.num, parts), _fill(e.den, parts), e.sep)
    if isinstance(e, Pow):
        return Pow(_fill(e.base, parts), e.exponent, e.caret)
    return e


def E(template: str, **parts: Expr | int) -> Expr:
    """The formula `template` in lesson notation, its `{holes}` filled with `parts` (expressions, or whole numbers):
    `E("L·({attn} + {mlp})", attn=E("4d² + 4d"), mlp=E("8d² + 5d")).text == "L·(4d² + 4d + 8d² + 5d)"`."""
    if not parts:
        return _template(template)
    return _filled(template, tuple((k, v if isinstance(v, int) else _Same(v)) for k, v in parts.items()))


class _Same:
    """An expression as part of a memo's key: equal to the same object only (not to another of the same text), so
    that a key costs no text."""

    __slots__ = ("e",)

    def __init__(self, e: Expr) -> None:
        self.e = e

    def __hash__(self) -> int:
        return id(self.e)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and self.e is other.e


@functools.lru_cache(maxsize=8192)
def _filled(template: str, parts: tuple[tuple[str, int | _Same], ...]) -> Expr:
    """`E(template, **parts)`, built once for the same parts: the budget's lines at a new T are the same objects, their
    text already written (`Expr.text` is kept on the object)."""
    return _fill(_template(template), {k: _expr(v if isinstance(v, int) else v.e) for k, v in parts})


ZERO = E("0")


def shape_subs(symbolic: str, **by: Expr) -> str:
    """A lesson-notation shape with symbols replaced in each dimension: shape_subs("(B, h_kv, T + 1, d_head)",
    T=E("T_W")) -> "(B, h_kv, T_W + 1, d_head)"."""
    if not by:
        return symbolic
    return "(" + ", ".join(E(d).subs(**by).text for d in dims(symbolic)) + ")"


def num(x: int | float) -> Expr:
    """A number of a formula as written: num(2) -> "2", num(0.5) -> "0.5" (a whole float as a whole number)."""
    return E(f"{x:g}") if x >= 0 else Neg(E(f"{-x:g}"))


def total(*terms: Expr | None) -> Expr:
    """The terms given (None: left out) added in order, "a + b + c"; a single term is itself; none is 0."""
    present = [t for t in terms if t is not None]
    if not present:
        return ZERO
    if len(present) == 1:
        return present[0]
    return Sum(tuple(present), (1,) * len(present))


# --- the lesson's notation of GPT-2's block: h_kv = h, d_head = d / h, d_ff = 4d, like terms collected ---------------
LESSON_ORDER = ("L", "B", "T", "V", "d")  # a monomial's symbols as the lesson writes them: 4LTd, 12Ld², 2LBTd


def _monomial_text(coeff: int, powers: Mapping[str, int], order: tuple[str, ...]) -> str:
    body = "".join(name + (str(powers[name]).translate(_TO_SUPER) if powers[name] > 1 else "")
                   for name in order if powers.get(name))
    if not body:
        return str(abs(coeff))
    return body if abs(coeff) == 1 else f"{abs(coeff)}{body}"


def poly_expr(p: Poly, order: tuple[str, ...] = LESSON_ORDER) -> Expr:
    """A polynomial as an expression, its terms in the order they first appear (no sorting: the lesson writes
    "24d² + 4Td", the order its parts add up in)."""
    items = [(dict(m), c) for m, c in p.items() if c]
    unknown = {n for powers, _ in items for n in powers if n not in order}
    if unknown:
        raise ValueError(f"polynomial names {sorted(unknown)}, which the lesson's notation {order} does not order")
    if not items:
        return ZERO
    text = ""
    for powers, c in items:
        term = _monomial_text(c, powers, order)
        text += (term if c > 0 else MINUS + term) if not text else (f" + {term}" if c > 0 else f" {MINUS} {term}")
    return E(text)


def lesson_poly(e: Expr) -> Poly:
    """`e` in GPT-2's block: h_kv = h and d_ff = 4d substituted, expanded, every h·d_head made d (ValueError where a
    d_head is left over: no formula of the lesson's). Made once per formula text (the budget asks again at every B
    and T)."""
    return dict(_lesson_terms(e.text))


@functools.lru_cache(maxsize=4096)
def _lesson_terms(text: str) -> tuple[tuple[tuple[tuple[str, int], ...], int], ...]:
    """`lesson_poly` of the formula `text`, as its (monomial, coefficient) pairs."""
    e = E(text)
    p = e.subs(h_kv=Sym("h"), d_ff=E("4d")).poly()
    out: Poly = {}
    for m, c in p.items():
        powers = dict(m)
        pairs = min(powers.get("h", 0), powers.get("d_head", 0))
        if pairs:
            for name in ("h", "d_head"):
                powers[name] -= pairs
            powers["d"] = powers.get("d", 0) + pairs
        if powers.get("d_head"):
            raise ValueError(f"formula {e.text!r} keeps d_head without h: no formula of GPT-2's block")
        key = tuple(sorted((n, k) for n, k in powers.items() if k))
        out[key] = out.get(key, 0) + c
    return tuple((k, c) for k, c in out.items() if c)


def lesson(e: Expr) -> Expr:
    """`e` as the lesson writes it for GPT-2's block (`lesson_poly`): "2(h + h_kv)·d_head·d + (h + 2h_kv)·d_head + d"
    -> "4d² + 4d"; "4LT·h·d_head" -> "4LTd"."""
    return _lesson_expr(e.text)


@functools.lru_cache(maxsize=4096)
def _lesson_expr(text: str) -> Expr:
    return poly_expr(dict(_lesson_terms(text)))


def lesson_quotient(num: Expr, den: Expr) -> Expr:
    """num / den as the lesson writes it, where den is one term of GPT-2's block: "(24d²) / (4d)" -> "6d"."""
    (m, c), = lesson_poly(den).items()
    out: Poly = {}
    for mn, cn in lesson_poly(num).items():
        powers = dict(mn)
        for name, k in m:
            powers[name] = powers.get(name, 0) - k
        if any(k < 0 for k in powers.values()) or cn % c:
            raise ValueError(f"({num.text}) / ({den.text}) is no polynomial")
        out[tuple(sorted((n, k) for n, k in powers.items() if k))] = cn // c
    return poly_expr(out)


def times(count: Expr, e: Expr) -> Expr:
    """`count` times `e`, the count written into e's monomial after its coefficient: times(L, "4T·h·d_head") ->
    "4LT·h·d_head"; times(L, "2T·h·(d_nope + d_R + d_v)") -> "2LT·h·(d_nope + d_R + d_v)"."""
    if isinstance(e, Prod) and isinstance(e.factors[0], Num):
        return Prod((e.factors[0], count, *e.factors[1:]), ("", *e.seps))
    return Prod((count, e), ("",))
