"""app.export.pyjs: Python functions compiled to JavaScript give what Python gives, in Chromium, on inputs chosen to
hit where the two languages differ (integer division and remainder of negatives, ints past 2**53, truthiness of
empty lists, `and`/`or` returning an operand, tuples compared in order, strings by code point, format specs); what
the subset leaves out is refused when the page is built, naming the construct."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.export.pyjs import compile_modules

PAGE_JS = Path(__file__).resolve().parents[1] / "app" / "export" / "page.js"
SCALE = {"k": 3, "M": 6}
NUMBER = re.compile(r"([0-9]+)(?:\.([0-9]*))?([kM]?)")


def arithmetic(a, b):
    return [a // b, a % b, -a // b, -a % b, divmod(a, b), a * b * 10**9, 2 ** (a % 64), a / b, abs(-a)]


def truth(xs, d):
    return [xs or "empty", d and len(d), not xs, bool({}), [] == [], (1, 2) == (1, 2), 1 == 1.0, None is None,
            "a" in "cat", 2 in xs, "k" in d]


def texts(s):
    return [s[:3], s[-2:], len(s), s.strip(" x"), s.rsplit(" ", 1), s.split(), s.lower(), s.startswith(("a", "x")),
            f"{len(s):,}|{3.14159:.2f}|{1234567.891:,.1f}|{2.5e-7:.3g}|{12345.678:.2e}|{0.5}|{s!r}",
            "{} and {x}".format(s, x=len(s)), "".join(c for c in s if c != " ")]


def choose(xs, target):
    near = min(xs, key=lambda k: (abs(k - target), k))
    return [near, max(xs), sorted(xs, key=lambda k: -k), list(zip(xs, xs[1:])), list(enumerate(xs))[-1:],
            [a * b for a in xs[:2] for b in xs[:2] if a != b], {x: x * x for x in xs if x % 2}, sum(xs),
            any(x > target for x in xs), all(xs), xs[::-1], isinstance(target, int), isinstance(0.5, (int, float))]


def defaults(a, b=2, **rest):
    return [a, b, rest]


def calls(n):
    out = defaults(n, k=1)
    out += defaults(n, b=n, **{"z": 0})
    d = {"a": 1}
    d.setdefault("b", 2)
    d.update(c=3)
    return [out, d.pop("a", None), d.get("a", "gone"), d, SCALE.get("M", 0) + n, _parse("12.5k")]


def _parse(text):
    m = NUMBER.fullmatch(text)
    if m is None:
        return None
    whole, fraction, scale = m.groups()
    return int(whole + (fraction or "")) * 10 ** (SCALE.get(scale, 0) - len(fraction or ""))


def loops(n):
    total, i, seen = 0, 0, []
    while True:
        i += 1
        if i % 3 == 0:
            continue
        if i > n:
            break
        seen.append(i)
        total += i
    for k, v in {"x": 1, "y": 2}.items():
        total += v if k == "y" else 0
    return [total, seen]


def raises(n):
    if n < 0:
        raise ValueError(f"n={n} is negative: give a whole number from 0")
    return n


CASES = [("arithmetic", [7, 2]), ("arithmetic", [-7, 3]), ("arithmetic", [2**40, 3]), ("truth", [[], {}]),
         ("truth", [[2, 0], {"k": 0}]), ("texts", ["  x a b 𝔘 c x "]), ("texts", ["abc"]), ("choose", [[1, 4, 9, 12], 6]),
         ("choose", [[3, 5], 4]), ("calls", [5]), ("loops", [10]), ("raises", [3])]
FUNCTIONS = [arithmetic, truth, texts, choose, defaults, calls, _parse, loops, raises]


def python_side(value):
    """A Python result as JSON carries it: tuples as lists, ints exact as text."""
    if isinstance(value, (tuple, list)):
        return [python_side(v) for v in value]
    if isinstance(value, dict):
        return {str(k): python_side(v) for k, v in value.items()}
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def prelude() -> str:
    """page.js's section "Python's meaning" (the `py` helpers), as the page carries it."""
    text = PAGE_JS.read_text(encoding="utf-8")
    start = text.index("// ---- Python's meaning")
    return text[start:text.index("\n// ---- ", start + 1)]


@pytest.mark.browser
def test_compiled_functions_give_what_python_gives(chromium) -> None:
    page = chromium.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.add_script_tag(content=prelude() + "\n" + compile_modules([("t", FUNCTIONS)])
                            + "\nwindow.t = t; window.py = py;")
        got = page.evaluate("""(cases) => cases.map(([f, args]) => {
            const exact = (v) => (typeof v === "bigint" || Number.isInteger(v) ? String(v) : Array.isArray(v)
              ? v.map(exact) : v !== null && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(
                ([k, x]) => [k, exact(x)])) : v);
            return exact(t[f](...args)); })""", CASES)
        want = [python_side(globals()[f](*args)) for f, args in CASES]
        for (f, args), g, w in zip(CASES, got, want):
            assert g == w, (f, args)
        with pytest.raises(Exception, match="n=-1 is negative: give a whole number from 0"):
            page.evaluate("t.raises(-1)")
    finally:
        page.close()


def _try(x):
    try:
        return int(x)
    except ValueError:
        return None


def _percent(x):
    return "%d%%" % x


def _is(x):
    return x is True


def _star(*xs):
    return xs


def _uncompiled(x):
    return json.dumps(x)


@pytest.mark.parametrize("f, why", [(_try, "the statement Try is not compiled"),
                                    (_percent, "%-formatting is not compiled"),
                                    (_is, "`is` is compiled only against None"),
                                    (_star, "only positional parameters and \\*\\*kw are compiled"),
                                    (_uncompiled, "json.dumps is not compiled")])
def test_what_the_subset_leaves_out_is_refused_by_name(f, why: str) -> None:
    with pytest.raises(ValueError, match=f"app.export.pyjs: {why}"):
        compile_modules([("t", [f])])


def test_the_page_carries_the_compiled_modules() -> None:
    from app.export.compiled import MODULES, compiled_js

    js = compiled_js()
    for name, items in MODULES:
        assert f"const {name} = (() => {{" in js
        for f in items:  # a class: the object of its members' functions; (name, value): a constant
            made = rf"^const {f[0]} = " if isinstance(f, tuple) else rf"^const {f.__name__} = {{" \
                if isinstance(f, type) else rf"^function {f.__name__}\("
            assert re.search(made, js, re.M), f"{name}.{f[0] if isinstance(f, tuple) else f.__name__}"
