"""Formulas in the lesson's notation, as text that evaluates: "(V + T_max)·d", "L·(12d² + 13d) + 2d", "4LTd".

One grammar, three uses: `evaluate` (exact, for tests that check every printed formula against its value),
`to_js` (the exported page computes the same strings in the browser) and `polynomial` (formulas generated from
data, such as the activation bytes of a trace).

Grammar (whitespace is ignored):
- numbers: whole (`12`) or decimal (`0.02`);
- symbols: the names in the mapping passed in (the lesson's B, T, d, h, d_head, L, V, T_max, the recipe's h_kv
  and d_ff, and any extra such as N or D), longest name first, so `T_max` is one symbol and `Td` is T times d;
- `·` or `×` multiply, and so does juxtaposition (`4LTd` = 4·L·T·d, `2(V + T_max)d`);
- `²`, `³` (any superscript digits) are whole powers; `^` followed by a number is a power too (`N^0.34`);
- `+`, `−` (or `-`), `/`, parentheses, and a leading sign.
Powers bind tightest (`12d²` = 12·d²); multiplication, juxtaposition and `/` share a level, left to right.
Whole-number arithmetic stays exact (ints, and `fractions.Fraction` where a division leaves a remainder); a fractional
power makes the result a float.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from .notation import SYMBOLS as LESSON_SYMBOLS  # the lesson's symbols and the recipe's h_kv, d_ff
from .notation import dims

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SUPER = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_OPS = {"·": "*", "×": "*", "*": "*", "/": "/", "+": "+", "−": "-", "-": "-", "(": "(", ")": ")", "^": "^"}

Number = int | Fraction | float


@dataclass(frozen=True)
class Token:
    kind: str  # "num", "sym", "pow" (a superscript exponent), or an operator: * / + - ( ) ^
    text: str


def tokenize(formula: str, names: tuple[str, ...]) -> list[Token]:
    """The tokens of `formula`; symbol names are matched longest first. ValueError names what is not understood."""
    by_length = sorted(names, key=len, reverse=True)
    out: list[Token] = []
    i = 0
    while i < len(formula):
        c = formula[i]
        if c.isspace():
            i += 1
            continue
        if m := _NUMBER.match(formula, i):
            out.append(Token("num", m.group()))
            i = m.end()
            continue
        if m := _SUPER.match(formula, i):
            out.append(Token("pow", m.group().translate(SUPERSCRIPTS)))
            i = m.end()
            continue
        if c in _OPS:
            out.append(Token(_OPS[c], c))
            i += 1
            continue
        name = next((n for n in by_length if formula.startswith(n, i)), None)
        if name is None:
            raise ValueError(f"formula {formula!r}: cannot read {formula[i:i + 12]!r} at position {i}; "
                             f"known symbols: {', '.join(names)}")
        out.append(Token("sym", name))
        i += len(name)
    return out


class _Parser:
    """Recursive descent over the tokens; `atom`, `binop` and `power` build the result (a value or JS text)."""

    def __init__(self, formula: str, tokens: list[Token], atom, binop, power, negate) -> None:
        self.formula, self.tokens, self.i = formula, tokens, 0
        self.atom, self.binop, self.power, self.negate = atom, binop, power, negate

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> Token:
        token = self.peek()
        if token is None:
            raise ValueError(f"formula {self.formula!r} ends too early")
        self.i += 1
        return token

    def parse(self):
        value = self.sum()
        if self.peek() is not None:
            raise ValueError(f"formula {self.formula!r}: unexpected {self.peek().text!r}")
        return value

    def sum(self):
        value = self.product()
        while (t := self.peek()) and t.kind in "+-":
            self.take()
            value = self.binop(t.kind, value, self.product())
        return value

    def product(self):
        value = self.signed()
        while (t := self.peek()) and (t.kind in "*/" or t.kind in ("num", "sym", "(")):
            if t.kind in ("*", "/"):
                self.take()
                value = self.binop(t.kind, value, self.signed())
            else:  # juxtaposition: 4LTd, 2(V + T_max)d
                if t.kind == "num" and self.tokens[self.i - 1].kind == "num":
                    raise ValueError(f"formula {self.formula!r}: two numbers in a row")
                value = self.binop("*", value, self.factor())
        return value

    def signed(self):
        t = self.peek()
        if t is not None and t.kind in "+-":
            self.take()
            value = self.signed()
            return self.negate(value) if t.kind == "-" else value
        return self.factor()

    def factor(self):
        t = self.take()
        if t.kind == "(":
            value = self.sum()
            if self.take().kind != ")":
                raise ValueError(f"formula {self.formula!r}: missing ')'")
        elif t.kind in ("num", "sym"):
            value = self.atom(t)
        else:
            raise ValueError(f"formula {self.formula!r}: unexpected {t.text!r}")
        while (p := self.peek()) and p.kind in ("pow", "^"):
            self.take()
            if p.kind == "pow":
                value = self.power(value, p.text)
            else:
                exponent = self.take()
                if exponent.kind != "num":
                    raise ValueError(f"formula {self.formula!r}: '^' needs a number after it")
                value = self.power(value, exponent.text)
        return value


def _names(symbols: Mapping[str, object]) -> tuple[str, ...]:
    return tuple(symbols)


def evaluate(formula: str, symbols: Mapping[str, int | float | Fraction]) -> Number:
    """The value of `formula` with `symbols` substituted: exact (an int, or a Fraction where a division leaves a
    remainder) unless a power is fractional.

    A formula is read once per set of symbol names (`_compiled`); a plan's memory search evaluates the same few
    formulas hundreds of times per move.

    >>> evaluate("L·(12d² + 13d) + 2d", {"L": 12, "d": 768})
    85056000
    """
    return _compiled(formula, _names(symbols))(symbols)


@functools.lru_cache(maxsize=4096)
def _compiled(formula: str, names: tuple[str, ...]) -> Callable[[Mapping], Number]:
    """`formula` as a function of the symbols' values (see `evaluate`); ValueError names what is not understood."""
    def atom(t: Token) -> Callable[[Mapping], Number]:
        if t.kind == "num":
            exact = Fraction(t.text)
            constant = int(exact) if exact.denominator == 1 else exact  # ints keep the arithmetic fast
            return lambda s: constant
        name = t.text
        return lambda s: s[name]  # an int, a float or a Fraction, as given

    def binop(op: str, a, b) -> Callable[[Mapping], Number]:
        if op == "+":
            return lambda s: a(s) + b(s)
        if op == "-":
            return lambda s: a(s) - b(s)
        if op == "*":
            return lambda s: a(s) * b(s)

        def divide(s: Mapping) -> Number:
            denominator = b(s)
            if denominator == 0:
                raise ZeroDivisionError(f"formula {formula!r} divides by zero")
            numerator = a(s)
            if isinstance(numerator, float) or isinstance(denominator, float):
                return numerator / denominator
            q = Fraction(numerator, denominator) if isinstance(numerator, int) and isinstance(denominator, int) \
                else Fraction(numerator) / denominator  # exact
            return int(q) if q.denominator == 1 else q
        return divide

    def power(a, exponent: str) -> Callable[[Mapping], Number]:
        e = Fraction(exponent)
        if e.denominator == 1:
            k = int(e)
            return (lambda s: a(s) ** k) if k >= 0 else (lambda s: Fraction(a(s)) ** k)  # an int's 1/x stays exact
        f = float(e)
        return lambda s: float(a(s)) ** f

    return _Parser(formula, tokenize(formula, names), atom, binop, power, lambda v: lambda s: -v(s)).parse()


def matches(formula: str, symbols: Mapping[str, int | float | Fraction], value: int | float) -> bool:
    """Whether `formula` evaluates to `value`: exactly for whole numbers, to 1e-12 relative for floats."""
    got = evaluate(formula, symbols)
    if isinstance(value, int) and not isinstance(got, float):
        return got == value
    return abs(float(got) - float(value)) <= 1e-12 * max(1.0, abs(float(value)))


def evaluate_shape(symbolic: str, values: Mapping[str, int]) -> tuple[int, ...]:
    """The concrete shape of a symbolic one (`model.notation.dims`):
    evaluate_shape("(B, T, 3d)", {"B": 8, "T": 4, "d": 768}) == (8, 4, 2304)."""
    out = []
    for part in dims(symbolic):
        n = evaluate(part, values)
        if n != int(n):
            raise ValueError(f"dimension {part!r} of {symbolic!r} is not a whole number at {values}")
        out.append(int(n))
    return tuple(out)


def to_js(formula: str, names: tuple[str, ...], exact: bool) -> str:
    """`formula` as a JavaScript expression over the object `s` of symbol values.

    `exact=True` gives BigInt arithmetic (whole numbers only: `s.d` must be a BigInt, no `/`, decimals or `^`);
    `exact=False` gives Number arithmetic (`s.d` a Number).
    """
    def atom(t: Token) -> str:
        if t.kind == "sym":
            return f"s.{t.text}"
        if exact and "." in t.text:
            raise ValueError(f"formula {formula!r}: a decimal cannot be computed with BigInt")
        return f"{t.text}n" if exact else t.text

    def binop(op: str, a: str, b: str) -> str:
        if exact and op == "/":
            raise ValueError(f"formula {formula!r}: '/' cannot be computed exactly with BigInt")
        return f"({a} {op} {b})"

    def power(a: str, exponent: str) -> str:
        if exact and not exponent.isdigit():
            raise ValueError(f"formula {formula!r}: a fractional power cannot be computed with BigInt")
        return f"({a} ** {exponent}n)" if exact else f"Math.pow({a}, {exponent})"

    return _Parser(formula, tokenize(formula, names), atom, binop, power, lambda v: f"(-{v})").parse()


def is_exact(formula: str, names: tuple[str, ...]) -> bool:
    """Whether `formula` is whole-number arithmetic (no `/`, decimal or `^`): computable exactly with BigInt."""
    return all(t.kind not in ("/", "^") and "." not in t.text for t in tokenize(formula, names))


# --- formulas from data: a sum of monomials, printed in the lesson's way -------------------------------------
_SUPER_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
MONOMIAL_ORDER = ("B", "h", "h_kv", "h_lk", "h_lv", "h_ssm", "h_kda", "n_c", "T", "T_pad", "T_r", "k", "E", "E_shared",
                  "d", "d_head", "d_rot", "d_ff", "d_expert", "d_shared", "d_c", "d_cq", "d_R", "d_nope", "d_v", "h_I",
                  "d_I", "T_k", "T_s", "d_lk", "d_lv", "d_ssm", "d_state", "g_ssm", "Q", "d_kda", "d_inner", "d_s", "r_dt", "d_conv", "L", "L_moe",
                  "L_nope", "L_lin", "L_ssm", "L_kda", "L_mb", "L_W", "T_W", "W", "V", "T_max")  # "BhT²", "BTd", "BTk·d_expert":
# the lesson's way


def monomial(powers: Mapping[str, int], order: tuple[str, ...] = MONOMIAL_ORDER) -> str:
    """{"B": 1, "h": 1, "T": 2} -> "BhT²", symbols in `order`; a multi-letter symbol is set off by "·" ("Bd·T_max")."""
    unknown = [name for name, k in powers.items() if k and name not in order]
    if unknown:
        raise ValueError(f"monomial {dict(powers)}: {', '.join(unknown)} not in the symbols' order")
    text, previous = "", ""
    for name in order:
        k = powers.get(name, 0)
        if not k:
            continue
        if text and (len(name) > 1 or len(previous) > 1):
            text += "·"
        text += name + (str(k).translate(_SUPER_DIGITS) if k > 1 else "")
        previous = name
    return text


def polynomial(terms: Mapping[tuple[tuple[str, int], ...], int], order: tuple[str, ...] = MONOMIAL_ORDER) -> str:
    """A sum of monomials as text: {(("B",1),("T",1),("d",1)): 19, (): 1} -> "19BTd + 1"; largest degree first. A
    negative power divides its term (a Laurent polynomial, `to_poly`): {(("T",-1),("d",1)): 2} -> "2d/T", and a
    denominator of several symbols is bracketed: "h·d_ssm·T_pad²/(Q²T)"."""
    items = [(dict(k), c) for k, c in terms.items() if c]
    if not items:
        return "0"
    items.sort(key=lambda kc: (-sum(kc[0].values()), [-kc[0].get(n, 0) for n in order]))
    text = ""
    for powers, coeff in items:
        body = monomial({s: k for s, k in powers.items() if k > 0}, order)
        below = {s: -k for s, k in powers.items() if k < 0}
        magnitude = abs(coeff)
        if not body:
            term = str(magnitude)
        elif magnitude == 1:
            term = body
        else:
            term = f"{magnitude}{'·' if body[0].isdigit() else ''}{body}"
        if below:
            den = monomial(below, order)
            term += f"/{den}" if len(below) == 1 and below[next(iter(below))] == 1 else f"/({den})"
        if not text:
            text = term if coeff > 0 else f"−{term}"
        else:
            text += f" + {term}" if coeff > 0 else f" − {term}"
    return text


# --- polynomials: exact sums of monomials, for formulas generated from shapes ---------------------------------
Monomial = tuple[tuple[str, int], ...]  # sorted (symbol, power) pairs; () is the constant 1
Poly = dict[Monomial, int]


def poly_mul(a: Poly, b: Poly) -> Poly:
    """The product of two polynomials."""
    out: Poly = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            powers = dict(ma)
            for sym, k in mb:
                powers[sym] = powers.get(sym, 0) + k
            key = tuple(sorted(powers.items()))
            out[key] = out.get(key, 0) + ca * cb
    return {k: c for k, c in out.items() if c}


def poly_add(a: Poly, b: Poly, scale: int = 1) -> Poly:
    """a + scale·b."""
    out = dict(a)
    for m, c in b.items():
        out[m] = out.get(m, 0) + scale * c
    return {k: c for k, c in out.items() if c}


def poly_sum(terms: Iterable[tuple[Poly, int]]) -> Poly:
    """Σ count·poly over (poly, count) pairs, in one dictionary (`poly_add` in a loop copies the sum every time)."""
    out: Poly = {}
    for poly, count in terms:
        for m, c in poly.items():
            out[m] = out.get(m, 0) + count * c
    return {k: c for k, c in out.items() if c}


def poly_symbol(name: str, coeff: int = 1) -> Poly:
    return {((name, 1),): coeff}


def poly_const(c: int) -> Poly:
    return {(): c} if c else {}


def signed_sum(terms: list[str]) -> str:
    """Terms as one sum, a term written with a leading minus subtracted: ["a", "−2b"] -> "a − 2b"."""
    out = terms[0]
    for term in terms[1:]:
        out += f" − {term[1:]}" if term.startswith("−") else f" + {term}"
    return out


def grouped(groups: Mapping[int, tuple[Mapping[str, Poly], Poly]]) -> str:
    """Bytes as text: {4: ({"L": per block}, outside)} -> "4·(L·(19BTd + 3BhT²) + BTV + 1)", one group per element
    size; blocks of several kinds each under their count ({"(L − L_moe)": dense, "L_moe": MoE})."""
    parts = []
    for size, (blocks, outside) in sorted(groups.items(), key=lambda kv: -kv[0]):
        inner = []
        for count, block in blocks.items():
            if not block:
                continue
            body = polynomial(block)
            inner.append(count if body == "1" else f"{body}{count}" if body.isdigit() else f"{count}·({body})"
                         if len(block) > 1 or body[0].isdigit() else f"{count}·{body}")
        if outside:
            inner.append(polynomial(outside))
        if not inner:
            continue
        text = signed_sum(inner)
        single = len(inner) == 1 and (sum(1 for b in blocks.values() if b) == 1 and not outside or
                                      len(outside) == 1 and not any(blocks.values()))
        parts.append(text if size == 1 else (f"{size}{text}" if single and not text[0].isdigit() else f"{size}·({text})"))
    return " + ".join(parts) if parts else "0"


def _cancelled(poly: Poly) -> Poly:
    """`poly` with the powers a division cancelled dropped (T·T⁻¹ = 1), like terms added."""
    out: Poly = {}
    for mono, c in poly.items():
        key = tuple((s, k) for s, k in mono if k)
        out[key] = out.get(key, 0) + c
    return {k: c for k, c in out.items() if c}


def to_poly(formula: str, names: tuple[str, ...] = LESSON_SYMBOLS, divide: bool = False) -> Poly:
    """A formula of sums, products and whole powers as a polynomial: "(h + 2h_kv)·d_head" -> h·d_head + 2h_kv·d_head.
    `divide`: a division by a product of symbols too, as negative powers (a Laurent polynomial: a stateful block's
    FLOPs per token, "(T + d_conv − 1)/T" -> 1 + d_conv·T⁻¹ − T⁻¹, "T_pad·d_lk/T"); any other '/' is refused."""
    def atom(t: Token) -> Poly:
        if t.kind == "num":
            if "." in t.text:
                raise ValueError(f"formula {formula!r}: a decimal is no polynomial coefficient")
            return poly_const(int(t.text))
        return poly_symbol(t.text)

    def binop(op: str, a: Poly, b: Poly) -> Poly:
        if op == "/":
            if not divide or len(b) != 1 or next(iter(b.values())) != 1:
                raise ValueError(f"formula {formula!r}: '/' makes no polynomial" + (
                    " (only a division by a product of symbols is taken)" if divide else ""))
            (mono,) = b
            return _cancelled(poly_mul(a, {tuple((s, -k) for s, k in mono): 1}))
        if op == "*":
            return _cancelled(poly_mul(a, b)) if divide else poly_mul(a, b)
        return poly_add(a, b, 1 if op == "+" else -1)

    def power(a: Poly, exponent: str) -> Poly:
        out = poly_const(1)
        for _ in range(int(exponent)):
            out = _cancelled(poly_mul(out, a)) if divide else poly_mul(out, a)
        return out

    return _Parser(formula, tokenize(formula, names), atom, binop, power, lambda v: poly_add({}, v, -1)).parse()
