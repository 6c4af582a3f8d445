"""Python functions of model/ compiled to JavaScript, so that the exported page runs the one definition Python runs.

    >>> print(compile_modules([("units", [units.sig3])]))   # doctest: +SKIP
    const units = (() => {
    function sig3(x) { ... }
    return {sig3};
    })();

`compile_modules` reads each function's source (`inspect.getsource`, `ast`) and writes it as JavaScript inside one
namespace object per Python module (`units.value(...)`), with the module's constants it reads as JSON data. Names
resolve as Python resolves them: a local, a global of the function's module (a compiled function, a constant, an
imported module whose functions are compiled too) or a builtin, which page.js's `py` object supplies with Python's
meaning (`py.round` ties to even, `py.format` is the format-spec mini-language, `py.eq` compares lists by value).

Values cross as JSON does: None is null, a tuple or list an Array, a dict an Object with string keys, str a string;
int and float are both Number (or BigInt where the page computes exactly: `py` takes either), so a whole float
prints as an int would. Anything outside the subset below raises `ValueError` naming the construct and its line,
when the page is built (tests build one), never in the browser:

- statements: def (nested too; positional parameters with constant defaults, `**kw` as one object), return, if,
  for (over lists, strings, dicts' keys, `.items()`, `range`, `enumerate`, `zip`), while, break, continue, pass,
  assignment (names, tuples of names, subscripts, attributes), augmented assignment, `raise E(message)`;
- expressions: constants, arithmetic (`/` true division, `//` and `%` Python's), comparisons (chained; `in`, `is
  None`), `and`/`or` (their operand, as Python gives it) and `not`, conditional expressions, f-strings with format
  specs and `!r`, lambdas, list, tuple and dict displays (with `*` and `**`), comprehensions, subscripts and slices
  (no step), calls of compiled functions (with keywords), of the builtins and of str, list and dict methods that
  page.js's `py` names, of `html.escape`, a compiled pattern's `sub` and `fullmatch`, a dataclass's constructor and
  `dataclasses.replace` (an Object of its fields);
- types: a parameter annotated with a dataclass (or `X | None`), and its fields by their annotations, so that
  `p.cfg.d_head` of `p: Plan` calls Config's compiled property.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import html
import inspect
import json
import math
import re
import textwrap
import types
import typing
from collections.abc import Callable, Iterable, Mapping

# builtins and the `py` helper each becomes (page.js's section "Python's meaning")
BUILTINS = {"abs": "py.abs", "all": "py.all", "any": "py.any", "bool": "py.bool", "enumerate": "py.enumerate",
            "float": "Number", "int": "py.int", "len": "py.len", "list": "py.list", "max": "py.max", "min": "py.min",
            "range": "py.range", "repr": "py.repr", "round": "py.round", "sorted": "py.sorted", "str": "py.str",
            "sum": "py.sum", "tuple": "py.list", "zip": "py.zip", "map": "py.map", "isinstance": "py.isinstance",
            "getattr": "py.getattr", "divmod": "py.divmod", "set": "py.set"}
TYPES = ("bool", "int", "float", "str", "tuple", "list", "dict")  # isinstance's second argument: their names
# methods of str, list and dict: name -> py helper, called with the object first
METHODS = {"get": "py.get", "items": "Object.entries", "keys": "Object.keys", "values": "Object.values",
           "join": "py.join", "split": "py.split", "rsplit": "py.rsplit", "strip": "py.strip", "rstrip": "py.rstrip",
           "lstrip": "py.lstrip", "lower": "py.lower", "startswith": "py.startswith", "endswith": "py.endswith",
           "replace": "py.replace", "format": "py.fmap", "translate": "py.translate", "update": "Object.assign",
           "append": "py.append", "extend": "py.extend", "fullmatch": "py.fullmatch", "groups": "py.groups",
           "isprintable": "py.isprintable", "setdefault": "py.setdefault", "pop": "py.pop",
           "count": "py.count", "sub": "py.resub", "format_map": "py.fmap"}
ITERABLES = ("Object.entries(", "Object.keys(", "Object.values(", "py.range(", "py.enumerate(", "py.zip(",
             "py.sorted(", "py.list(")  # already Arrays
BOOLEANS = ("py.isinstance(", "py.contains(", "py.eq(", "!py.eq(", "py.any(", "py.all(", "py.startswith(",
            "py.endswith(", "py.isprintable(")  # helpers that give a boolean: no py.bool around them
ERRORS = ("ValueError", "TypeError", "KeyError", "RuntimeError")  # raised as a JavaScript Error with its message
RESERVED = {"arguments", "case", "catch", "const", "default", "delete", "do", "function", "let", "new", "switch",
            "this", "throw", "typeof", "var", "void", "with", "yield", "eval", "null", "true", "false", "undefined"}
COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
# Python's arithmetic: ints exact (Number while safe, else BigInt), + joins strs and lists, / is true division
OPERATORS = {ast.Add: "py.add", ast.Sub: "py.sub", ast.Mult: "py.mul", ast.Pow: "py.pow", ast.Div: "py.div",
             ast.FloorDiv: "py.floordiv", ast.Mod: "py.mod"}


MATH = {html.escape: "py.escape", math.isfinite: "Number.isFinite", math.floor: "Math.floor", math.ceil: "Math.ceil", math.sqrt: "Math.sqrt",
        math.log10: "Math.log10",
        math.isqrt: "((n) => Math.floor(Math.sqrt(n)))"}  # exact below 2^52 (a correctly rounded root never reaches the
# next whole number there): T ≤ 2^24


def compile_modules(modules: Iterable[tuple[str, list]], native: Mapping[object, str] | None = None) -> str:
    """JavaScript defining one `const <name> = {...}` per (name, functions), in order: each module's functions and
    the constants they read. A function may call a function of an earlier module, or of its own, by its Python name.
    A class among the functions (a frozen dataclass) gives each property and method as a function of `self`: where
    a function's parameter is annotated with the class (or is a method's self), `cfg.d_head` compiles to
    `config.Config.d_head(cfg)`, and its fields stay plain attributes of the JavaScript object.
    `native` names what page.js writes by hand for a Python callable (a dataclass's constructor): called with
    keywords, it takes them as one object last, as a compiled `**kw` does."""
    modules = list(modules)
    compiled: dict[int, str] = {id(f): js for f, js in {**MATH, **(native or {})}.items()}  # id -> its JavaScript
    natives = set(compiled)
    classes: dict[int, tuple[str, dict[str, str]]] = {}  # id(class) -> (its module's name, attr -> kind)
    for name, items in modules:
        for f in items:
            if isinstance(f, tuple):  # (name, value): a constant the namespace carries for page.js
                continue
            if isinstance(f, type):
                classes[id(f)] = (name, {attr: kind for attr, (kind, _) in class_members(f).items()})
            else:
                compiled[id(f)] = f"{name}.{f.__name__}"
    out, shared = [], {}
    named = {f.__name__: f for _, items in modules for f in items if isinstance(f, type)}
    for name, items in modules:
        out.append(_Module(name, items, compiled, natives, classes, shared, named).js())
    out.append(f"const COMPILED = {{{', '.join(name for name, _ in modules)}}};  // every namespace, by name")
    return "\n".join(out)


def class_members(cls: type) -> dict[str, tuple[str, Callable]]:
    """A class's compiled members: each property ("property", its getter; a cached property's too, as the page
    computes it each time: a compiled class is immutable) and each plain method ("method")."""
    out = {}
    for attr, value in vars(cls).items():
        if isinstance(value, property):
            out[attr] = ("property", value.fget)
        elif isinstance(value, functools.cached_property):
            out[attr] = ("property", value.func)
        elif inspect.isfunction(value) and not (attr.startswith("__") and attr.endswith("__")):
            out[attr] = ("method", value)
    return out


class _Module:
    """One Python module's functions as a JavaScript namespace object."""

    def __init__(self, name: str, items: list, compiled: dict[int, str], natives: set[int],
                 classes: dict[int, tuple[str, dict[str, str]]], shared: dict[int, str],
                 named: dict[str, type]) -> None:
        self.name, self.items, self.compiled, self.natives, self.classes = name, items, compiled, natives, classes
        self.named = named  # each compiled class by name: an annotation imported only for type checking names one
        self.constants: dict[str, str] = {}  # global name -> its value as JavaScript
        self.shared = shared  # id of a dict, list or tuple constant -> the namespace's name of it that defines it

    def js(self) -> str:
        bodies, names = [], []
        for item in self.items:
            if isinstance(item, tuple):
                self.define_constant(*item)
                continue
            if isinstance(item, type):  # a class: each member a function of self, and an object of them by name
                found = class_members(item)
                bodies += [_Function(self, f, f"{item.__name__}__{attr}", owner=item).js()
                           for attr, (_, f) in found.items()]
                bodies.append(f"const {item.__name__} = {{" + ", ".join(f"{a}: {item.__name__}__{a}" for a in found)
                              + "};")
            else:
                bodies.append(_Function(self, item).js())
            names.append(item.__name__)
        consts = [f"const {k} = {v};" for k, v in self.constants.items()]
        exported = ", ".join([*names, *self.constants])  # constants too: a later namespace's, page.js's
        return "\n".join([f"const {self.name} = (() => {{", *consts, *bodies, f"return {{{exported}}};", "})();"])

    def define_constant(self, name: str, value: object, where: ast.AST | None = None) -> str:
        """The constant `name` of this namespace, or a namespace's that defined the same dict, list or tuple first."""
        ref = self.shared.get(id(value))
        if ref is not None and not ref.startswith(self.name + "."):
            return ref
        if name not in self.constants:
            self.constants[name] = constant(value, where, self.function_ref, self.classes)
            if isinstance(value, (dict, list, tuple)):
                self.shared[id(value)] = f"{self.name}.{name}"
        return name

    def member(self, cls: type, attr: str, where: ast.AST) -> tuple[str, str] | None:
        """(kind, JavaScript) of a compiled class's property or method, None for one of its fields."""
        kind = self.classes[id(cls)][1].get(attr)
        if kind is None:
            if attr in getattr(cls, "__dataclass_fields__", {}):
                return None
            raise _error(where, f"{cls.__name__}.{attr} is neither a field nor a compiled member")
        inside = self.classes[id(cls)][0] == self.name
        return kind, f"{cls.__name__}__{attr}" if inside else f"{self.class_ref(cls)}.{attr}"

    def class_ref(self, cls: type) -> str:
        """The object of a compiled class's members, by name (py.getattr's)."""
        module = self.classes[id(cls)][0]
        return cls.__name__ if module == self.name else f"{module}.{cls.__name__}"

    def resolve(self, name: str, scope: dict, where: ast.AST) -> str:
        """A global name of a function's module as JavaScript."""
        if name not in scope:
            if name in BUILTINS:
                return BUILTINS[name]
            raise _error(where, f"{name!r} is neither a global of its module nor a builtin page.js's py supplies")
        value = scope[name]
        if id(value) in self.compiled:
            ref = self.compiled[id(value)]
            return ref.split(".", 1)[1] if ref.startswith(self.name + ".") else ref
        if isinstance(value, types.ModuleType):
            return "@module:" + value.__name__.rsplit(".", 1)[-1]  # its attributes resolve in `attribute`
        if callable(value):
            raise _error(where, f"{name!r} is a function that is not compiled: list it in compile_modules")
        return self.define_constant(name, value, where)

    def function_ref(self, f: Callable, where: ast.AST | None) -> str:
        """A compiled function held in a constant (a dict of formatters) as JavaScript."""
        if id(f) not in self.compiled:
            raise _error(where, f"the constant holds {getattr(f, '__name__', f)!r}, which is not compiled")
        ref = self.compiled[id(f)]
        return ref.split(".", 1)[1] if ref.startswith(self.name + ".") else ref


def constant(value: object, where: ast.AST | None = None, function_ref=None, classes: Mapping | None = None) -> str:
    """A module constant as a JavaScript literal: tuples and lists as Arrays, dicts as Objects (keys as strings), a
    compiled function by `function_ref`, a dataclass's instance as an Object of its fields and, where its class is
    not compiled (`classes`: by id), of its properties' values too (`FITS["hoffmann"].note`)."""
    if function_ref is not None and callable(value):
        return function_ref(value, where)
    if value is None or isinstance(value, (bool, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value) if abs(value) < 2**53 else f"{value}n"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _error(where, f"the constant {value!r} has no JSON form")
        return repr(value)
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(constant(v, where, function_ref, classes) for v in value) + "]"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        if id(type(value)) not in (classes or {}):
            fields.update({name: getattr(value, name) for name, member in inspect.getmembers(type(value))
                           if isinstance(member, (property, functools.cached_property))})
        return constant(fields, where, function_ref, classes)
    if isinstance(value, re.Pattern):  # fullmatch: the whole text
        flags = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s"}
        if value.flags & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.ASCII | re.UNICODE):
            raise _error(where, f"the pattern {value.pattern!r} has flags page.js's RegExp does not take")
        js_flags = "".join(f for bit, f in flags.items() if value.flags & bit)
        return f"new RegExp({json.dumps('^(?:' + value.pattern + ')$')}, {json.dumps(js_flags)})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k), ensure_ascii=False)}: {constant(v, where, function_ref, classes)}"
                               for k, v in value.items()) + "}"
    raise _error(where, f"a constant of type {type(value).__name__} has no JavaScript form here")


def _error(node: ast.AST | None, why: str) -> ValueError:
    line = getattr(node, "lineno", None)
    return ValueError(f"app.export.pyjs: {why}" + (f" (line {line} of the function)" if line else ""))


def _assigned(body: list[ast.stmt]) -> list[str]:
    """The names a function body binds (its locals, as Python decides them), nested functions' own aside."""
    names: list[str] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.Lambda, ast.ListComp, ast.DictComp, ast.GeneratorExp,
                                  ast.SetComp)):
                if isinstance(child, ast.FunctionDef) and child.name not in names:
                    names.append(child.name)
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store) and child.id not in names:
                names.append(child.id)
            visit(child)
    for stmt in body:
        visit(ast.Module(body=[stmt], type_ignores=[]))
    return names


class _Function:
    """One function (and the functions nested in it) as JavaScript."""

    def __init__(self, module: _Module, f: Callable, js_name: str | None = None, owner: type | None = None) -> None:
        self.module, self.scope, self.owner = module, f.__globals__, owner
        tree = ast.parse(textwrap.dedent(inspect.getsource(f)))
        self.node = tree.body[0]
        if not isinstance(self.node, ast.FunctionDef):
            raise _error(self.node, f"{f.__name__} is not a plain def")
        self.js_name = js_name or f.__name__
        self.locals: list[set[str]] = []
        self.types: list[dict[str, type]] = []  # locals of a compiled class: `self`, a parameter annotated with it

    def js(self) -> str:
        return self.define(self.node, "", self.js_name)

    # --- statements ---------------------------------------------------------------------------------------------
    def define(self, node: ast.FunctionDef, indent: str, name: str | None = None) -> str:
        params = self.params(node.args, node)
        self.locals.append({*self.param_names(node.args), *_assigned(node.body)})
        self.types.append(self.typed(node))
        defs = {s.name for s in node.body if isinstance(s, ast.FunctionDef)}  # declared as functions
        declared = sorted(self.locals[-1] - set(self.param_names(node.args)) - defs)
        inner = indent + " "
        head = [f"{inner}let {', '.join(map(_safe, declared))};"] if declared else []
        body = head + [self.stmt(s, inner) for s in node.body if not _is_docstring(s)]
        self.locals.pop()
        self.types.pop()
        return f"{indent}function {_safe(name or node.name)}({params}) {{\n" + "\n".join(body) + f"\n{indent}}}"

    def typed(self, node: ast.FunctionDef) -> dict[str, type]:
        """The parameters whose class is a dataclass: a method's first, and any annotated with one (`p: Plan`)."""
        out = {}
        for i, a in enumerate(node.args.args):
            if i == 0 and self.owner is not None and not self.types:
                out[a.arg] = self.owner
                continue
            hint = a.annotation
            if isinstance(hint, ast.BinOp) and isinstance(hint.op, ast.BitOr) and isinstance(hint.right, ast.Constant) \
                    and hint.right.value is None:  # `Config | None`: a Config where it is one
                hint = hint.left
            name = hint.id if isinstance(hint, ast.Name) else hint.value if isinstance(hint, ast.Constant) else None
            cls = self.scope.get(name, self.module.named.get(name)) if isinstance(name, str) else None
            if isinstance(cls, type) and dataclasses.is_dataclass(cls):
                out[a.arg] = cls
        return out

    def record_type(self, e: ast.expr) -> type | None:
        """The dataclass of `e`: a typed local (see `typed`), or a field of one whose annotation is a dataclass
        (`p.cfg` of `p: Plan` is a Config)."""
        if isinstance(e, ast.Attribute):
            owner = self.record_type(e.value)
            try:
                hint = typing.get_type_hints(owner).get(e.attr) if owner is not None else None
            except (NameError, TypeError):
                return None
            return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None
        if not isinstance(e, ast.Name):
            return None
        for scope, types_ in zip(reversed(self.locals), reversed(self.types)):
            if e.id in scope:
                return types_.get(e.id)
        return None

    def type_of(self, e: ast.expr) -> type | None:
        """The compiled class of `e`, where the function says it (`record_type`)."""
        cls = self.record_type(e)
        return cls if cls is not None and id(cls) in self.module.classes else None

    @staticmethod
    def param_names(args: ast.arguments) -> list[str]:
        return [a.arg for a in args.args] + ([args.kwarg.arg] if args.kwarg else [])

    def params(self, args: ast.arguments, node: ast.AST) -> str:
        if args.vararg or args.kwonlyargs or args.posonlyargs:
            raise _error(node, "only positional parameters and **kw are compiled")
        first = len(args.args) - len(args.defaults)
        out = [_safe(a.arg) + (f" = {self.expr(args.defaults[i - first])}" if i >= first else "")
               for i, a in enumerate(args.args)]
        return ", ".join(out + ([f"{_safe(args.kwarg.arg)} = {{}}"] if args.kwarg else []))

    def block(self, body: list[ast.stmt], indent: str) -> str:
        return "\n".join(self.stmt(s, indent + " ") for s in body)

    def stmt(self, s: ast.stmt, indent: str) -> str:
        if isinstance(s, ast.Return):
            return f"{indent}return {self.expr(s.value) if s.value else 'null'};"
        if isinstance(s, ast.If):
            text = f"{indent}if ({self.test(s.test)}) {{\n{self.block(s.body, indent)}\n{indent}}}"
            if s.orelse:
                text += f" else {{\n{self.block(s.orelse, indent)}\n{indent}}}"
            return text
        if isinstance(s, ast.For):
            if s.orelse:
                raise _error(s, "for … else is not compiled")
            return (f"{indent}for ({self.target(s.target)} of {self.iterable(s.iter)}) {{\n"
                    f"{self.block(s.body, indent)}\n{indent}}}")
        if isinstance(s, ast.While) and not s.orelse:
            return f"{indent}while ({self.test(s.test)}) {{\n{self.block(s.body, indent)}\n{indent}}}"
        if isinstance(s, ast.Assign):
            value = self.expr(s.value)
            return "\n".join(f"{indent}{self.target(t)} = {value};" for t in s.targets)
        if isinstance(s, ast.AugAssign) and type(s.op) in OPERATORS:
            target = self.target(s.target)
            return f"{indent}{target} = {OPERATORS[type(s.op)]}({target}, {self.expr(s.value)});"
        if isinstance(s, ast.AnnAssign) and s.value is not None:
            return f"{indent}{self.target(s.target)} = {self.expr(s.value)};"
        if isinstance(s, ast.Expr):
            return f"{indent}{self.expr(s.value)};"
        if isinstance(s, ast.Raise) and isinstance(s.exc, ast.Call) and isinstance(s.exc.func, ast.Name) \
                and s.exc.func.id in ERRORS and len(s.exc.args) == 1:
            return f"{indent}throw new Error({self.expr(s.exc.args[0])});"
        if isinstance(s, ast.FunctionDef):
            return self.define(s, indent)
        simple = {ast.Break: "break;", ast.Continue: "continue;", ast.Pass: ";"}
        if type(s) in simple:
            return indent + simple[type(s)]
        raise _error(s, f"the statement {type(s).__name__} is not compiled")

    def target(self, t: ast.expr) -> str:
        if isinstance(t, ast.Name):
            return _safe(t.id)
        if isinstance(t, (ast.Tuple, ast.List)):  # `_` unpacks to a hole: `key, _, _` may repeat it
            return "[" + ", ".join("" if isinstance(x, ast.Name) and x.id == "_" else self.target(x)
                                   for x in t.elts) + "]"
        if isinstance(t, (ast.Subscript, ast.Attribute)):
            return self.expr(t, store=True)
        raise _error(t, f"cannot assign to {type(t).__name__}")

    def iterable(self, e: ast.expr) -> str:
        """What a for loop or comprehension walks, as a JavaScript iterable (py.iter: a dict's keys, a str's chars)."""
        text = self.expr(e)
        return text if text.startswith(ITERABLES) else f"py.iter({text})"

    # --- expressions --------------------------------------------------------------------------------------------
    def test(self, e: ast.expr) -> str:
        """`e` where Python asks for its truth: a comparison as is, anything else through py.bool."""
        if isinstance(e, ast.Compare):
            return self.expr(e)
        if isinstance(e, ast.BoolOp):
            op = " && " if isinstance(e.op, ast.And) else " || "
            return "(" + op.join(self.test(v) for v in e.values) + ")"
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return f"!{self.test(e.operand)}"
        if isinstance(e, ast.Constant) and isinstance(e.value, bool):
            return "true" if e.value else "false"
        text = self.expr(e)
        return text if text.startswith(BOOLEANS) else f"py.bool({text})"

    def expr(self, e: ast.expr, store: bool = False) -> str:  # noqa: C901 (one case per node type)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, (bool, type(None), str, int, float)):
                return constant(e.value, e)
            raise _error(e, f"the constant {e.value!r} is not compiled")
        if isinstance(e, ast.Name):
            if self.is_local(e.id):
                return _safe(e.id)
            ref = self.module.resolve(e.id, self.scope, e)
            if ref.startswith("@module:"):
                raise _error(e, f"the module {e.id} is used only through its compiled functions")
            return ref
        if isinstance(e, ast.Attribute):
            if self.is_module(e.value):
                return self.module_attribute(self.scope[e.value.id], e)
            cls = self.type_of(e.value)
            member = self.module.member(cls, e.attr, e) if cls is not None else None
            if member is not None:
                if member[0] != "property":
                    raise _error(e, f"the method {cls.__name__}.{e.attr} is compiled only where it is called")
                return f"{member[1]}({self.expr(e.value)})"
            return f"{self.expr(e.value)}.{e.attr}"
        if isinstance(e, ast.BinOp):
            a, b = self.expr(e.left), self.expr(e.right)
            if isinstance(e.op, ast.Mod) and isinstance(e.left, (ast.Constant, ast.JoinedStr)):
                raise _error(e, "%-formatting is not compiled: use an f-string")
            if type(e.op) in OPERATORS:
                return f"{OPERATORS[type(e.op)]}({a}, {b})"
            raise _error(e, f"the operator {type(e.op).__name__} is not compiled")
        if isinstance(e, ast.UnaryOp):
            if isinstance(e.op, ast.Not):
                return f"!{self.test(e.operand)}"
            if isinstance(e.op, ast.USub):  # a negative constant as one
                if isinstance(e.operand, ast.Constant) and type(e.operand.value) in (int, float):
                    return constant(-e.operand.value, e)
                return f"py.neg({self.expr(e.operand)})"
            if isinstance(e.op, ast.UAdd):
                return self.expr(e.operand)
            raise _error(e, "~ is not compiled")
        if isinstance(e, ast.BoolOp):  # its operand, as Python gives it: py.and / py.or take the rest lazily
            fn = "py.and" if isinstance(e.op, ast.And) else "py.or"
            out = self.expr(e.values[-1])
            for v in reversed(e.values[:-1]):
                out = f"{fn}({self.expr(v)}, () => {out})"
            return out
        if isinstance(e, ast.Compare):
            return self.compare(e)
        if isinstance(e, ast.IfExp):
            return f"({self.test(e.test)} ? {self.expr(e.body)} : {self.expr(e.orelse)})"
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Subscript):
            value = self.expr(e.value)
            if isinstance(e.slice, ast.Slice):
                if _is_reversal(e.slice) and not store:  # x[::-1]
                    return f"py.list({value}).reverse()"
                if e.slice.step is not None or store:
                    raise _error(e, "a slice with a step, or assigned to, is not compiled")
                lo = self.expr(e.slice.lower) if e.slice.lower else "0"
                return f"py.slice({value}, {lo}, {self.expr(e.slice.upper) if e.slice.upper else 'null'})"
            key = e.slice
            if store or (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return f"{value}[{self.expr(key)}]"
            return f"py.item({value}, {self.expr(key)})"
        if isinstance(e, (ast.List, ast.Tuple)):
            return "[" + ", ".join(f"...{self.expr(x.value)}" if isinstance(x, ast.Starred) else self.expr(x)
                                   for x in e.elts) + "]"
        if isinstance(e, ast.Dict):
            return "({" + ", ".join(f"...{self.expr(v)}" if k is None else f"{self.key(k)}: {self.expr(v)}"
                                    for k, v in zip(e.keys, e.values)) + "})"
        if isinstance(e, (ast.ListComp, ast.GeneratorExp)):
            return self.comprehension(e.generators, lambda: self.expr(e.elt))
        if isinstance(e, ast.SetComp):
            return f"new Set({self.comprehension(e.generators, lambda: self.expr(e.elt))})"
        if isinstance(e, ast.DictComp):
            pairs = self.comprehension(e.generators, lambda: f"[{self.expr(e.key)}, {self.expr(e.value)}]")
            return f"Object.fromEntries({pairs})"
        if isinstance(e, ast.Lambda):
            names = self.param_names(e.args)
            self.locals.append(set(names))
            self.types.append({})
            text = f"(({self.params(e.args, e)}) => {self.expr(e.body)})"
            self.locals.pop()
            self.types.pop()
            return text
        if isinstance(e, ast.JoinedStr):
            return "`" + "".join(self.fstring_part(p) for p in e.values) + "`"
        raise _error(e, f"the expression {type(e).__name__} is not compiled")

    def key(self, k: ast.expr) -> str:
        """A dict display's key: a str constant as it is, anything else computed."""
        return json.dumps(k.value, ensure_ascii=False) if isinstance(k, ast.Constant) and isinstance(k.value, str) \
            else f"[{self.expr(k)}]"

    def module_attribute(self, module: types.ModuleType, e: ast.Attribute) -> str:
        value = getattr(module, e.attr)
        if id(value) in self.module.compiled:
            return self.module.compiled[id(value)]
        if callable(value):
            raise _error(e, f"{module.__name__}.{e.attr} is not compiled: list it in compile_modules")
        alias = f"{module.__name__.rsplit('.', 1)[-1]}_{e.attr}"
        self.module.constants.setdefault(alias, constant(value, e, self.module.function_ref))
        return alias

    def fstring_part(self, p: ast.expr) -> str:
        if isinstance(p, ast.Constant):
            return p.value.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${")
        assert isinstance(p, ast.FormattedValue)
        value = self.expr(p.value)
        if p.conversion == ord("r"):
            value = f"py.repr({value})"
        elif p.conversion not in (-1, ord("s")):
            raise _error(p, "only !r and !s are compiled")
        if p.format_spec is None:
            return f"${{py.str({value})}}"
        return f"${{py.format({value}, {self.expr(p.format_spec)})}}"

    def compare(self, e: ast.Compare) -> str:
        parts, left = [], e.left
        for op, right in zip(e.ops, e.comparators):
            a, b = self.expr(left), self.expr(right)
            if isinstance(op, (ast.Is, ast.IsNot)):
                if not (isinstance(right, ast.Constant) and right.value is None):
                    raise _error(e, "`is` is compiled only against None")
                parts.append(f"({a} {'==' if isinstance(op, ast.Is) else '!='} null)")
            elif isinstance(op, (ast.Eq, ast.NotEq)):
                parts.append(f"{'' if isinstance(op, ast.Eq) else '!'}py.eq({a}, {b})")
            elif isinstance(op, (ast.In, ast.NotIn)):
                parts.append(f"{'' if isinstance(op, ast.In) else '!'}py.contains({b}, {a})")
            else:
                parts.append(f"({a} {COMPARE[type(op)]} {b})")
            left = right
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"

    def comprehension(self, generators: list[ast.comprehension], element: Callable[[], str]) -> str:
        """`[element for t in it if c ...]` as flatMap/filter/map over each generator in turn."""
        g, rest = generators[0], generators[1:]
        if g.is_async:
            raise _error(g.iter, "async comprehensions are not compiled")
        source = self.iterable(g.iter)
        names = {n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        self.locals.append(names)
        self.types.append({})
        target = self.target(g.target)
        out = source if source.startswith(ITERABLES) else f"py.list({source[len('py.iter('):-1]})"
        for c in g.ifs:
            out += f".filter(({target}) => {self.test(c)})"
        inner = self.comprehension(rest, element) if rest else element()
        if inner != target or rest:  # [x for x in xs if …] needs no map
            out += f".{'flatMap' if rest else 'map'}(({target}) => {inner})"
        self.locals.pop()
        self.types.pop()
        return out

    def call(self, e: ast.Call) -> str:
        f = e.func
        cls = self.type_of(f.value) if isinstance(f, ast.Attribute) else None
        member = self.module.member(cls, f.attr, e) if cls is not None else None
        if member is not None and member[0] == "method":  # cfg.symbols(): the method's function, of self
            if e.keywords:
                raise _error(e, f"{cls.__name__}.{f.attr}() is compiled without keywords")
            return f"{member[1]}({', '.join([self.expr(f.value), *self.args(e.args)])})"
        if isinstance(f, ast.Name) and f.id == "dict" and not self.is_local("dict") and len(e.args) <= 1:
            return "({" + ", ".join([*(f"...{a}" for a in self.args(e.args)), *self.keyword_entries(e)]) + "})"
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "dict" \
                and f.attr == "fromkeys" and not self.is_local("dict"):
            return f"py.fromkeys({', '.join(self.args(e.args))})"
        if isinstance(f, ast.Name) and f.id == "getattr" and not self.is_local("getattr") and e.args \
                and self.type_of(e.args[0]) is not None:  # a property by name too
            return f"py.getattr({', '.join(self.args(e.args))}, {self.module.class_ref(self.type_of(e.args[0]))})"
        if isinstance(f, ast.Attribute) and not self.is_module(f.value):  # a method of a str, list or dict
            if f.attr not in METHODS:
                raise _error(e, f"the method {f.attr} is not compiled")
            owner = self.expr(f.value)
            if f.attr == "format":  # str.format: positional {} and named {x}
                return f"py.fmap({owner}, {self.kwargs(e)}, [{', '.join(self.args(e.args))}])"
            if f.attr == "update" and e.keywords and not e.args:  # d.update(x=1)
                return f"Object.assign({owner}, {self.kwargs(e)})"
            if e.keywords:
                raise _error(e, f"{f.attr}() is compiled without keywords")
            return f"{METHODS[f.attr]}({', '.join([owner, *self.args(e.args)])})"
        if self.global_value(f) is dataclasses.replace:
            return "({" + ", ".join([f"...{self.expr(e.args[0])}", *self.keyword_entries(e)]) + "})"  # a copy
        made = self.dataclass_of(f)
        if made is not None:  # a record's constructor: an Object of its fields
            return self.record(made, e)
        name = self.expr(f)
        target = self.function_of(f)
        if target is not None and id(target) in self.module.natives:
            return f"{name}({', '.join([*self.args(e.args), *([self.kwargs(e)] if e.keywords else [])])})"
        if target is not None:
            return f"{name}({', '.join(self.bound_args(target, e))})"
        if e.keywords and name in ("py.min", "py.max", "py.sorted") and [k.arg for k in e.keywords] == ["key"]:
            return f"{name}({', '.join(self.args(e.args))}, {{key: {self.expr(e.keywords[0].value)}}})"
        if name == "py.isinstance":
            return f"py.isinstance({self.expr(e.args[0])}, {json.dumps(self.type_names(e.args[1]))})"
        if e.keywords and isinstance(f, ast.Name) and self.is_local(f.id):  # a local def(kind, **kw): one object
            return f"{name}({', '.join([*self.args(e.args), self.kwargs(e)])})"
        if e.keywords:
            raise _error(e, "keywords are compiled for compiled functions, locals and min/max/sorted's key only")
        return f"{name}({', '.join(self.args(e.args))})"

    def type_names(self, e: ast.expr) -> list[str]:
        """isinstance's types, by name (py.isinstance: a whole Number is an int, True is an int too)."""
        names = [x.id if isinstance(x, ast.Name) else None for x in (e.elts if isinstance(e, ast.Tuple) else [e])]
        if not all(n in TYPES for n in names):
            raise _error(e, f"isinstance is compiled for the types {', '.join(TYPES)}")
        return names

    def is_local(self, name: str) -> bool:
        return any(name in scope for scope in self.locals)

    def is_module(self, e: ast.expr) -> bool:
        """Whether `e` names an imported module (not shadowed by a local)."""
        return isinstance(e, ast.Name) and not self.is_local(e.id) and isinstance(self.scope.get(e.id), types.ModuleType)

    def function_of(self, f: ast.expr) -> Callable | None:
        """The compiled Python function a call names (a global or a module's attribute), else None (a local)."""
        value = self.global_value(f)
        return value if value is not None and id(value) in self.module.compiled else None

    def global_value(self, f: ast.expr) -> object:
        """What a name (not a local) or an imported module's attribute is, else None."""
        if isinstance(f, ast.Name) and not self.is_local(f.id):
            return self.scope.get(f.id)
        if isinstance(f, ast.Attribute) and self.is_module(f.value):
            return getattr(self.scope[f.value.id], f.attr, None)
        return None

    def dataclass_of(self, f: ast.expr) -> type | None:
        """The dataclass (not a compiled class, nor a native) a call names, else None."""
        value = self.global_value(f)
        if isinstance(value, type) and dataclasses.is_dataclass(value) and id(value) not in self.module.classes \
                and id(value) not in self.module.natives:
            return value
        return None

    def record(self, cls: type, e: ast.Call) -> str:
        """`Row(kind, name=…)`: an Object of every field, in their order, the ones not given at their defaults."""
        fields = [f for f in dataclasses.fields(cls) if f.init]
        given = dict(zip((f.name for f in fields), e.args))
        given.update({k.arg: k.value for k in e.keywords})
        if len(e.args) > len(fields) or None in given or set(given) - {f.name for f in fields}:
            raise _error(e, f"{cls.__name__}(...) is compiled with its fields by position or name only")
        entries = []
        for f in fields:
            if f.name in given:
                entries.append(f"{json.dumps(f.name)}: {self.expr(given[f.name])}")
            elif f.default is not dataclasses.MISSING:
                entries.append(f"{json.dumps(f.name)}: {constant(f.default, e)}")
            else:
                raise _error(e, f"{cls.__name__}(...) lacks its field {f.name}")
        return "({" + ", ".join(entries) + "})"

    def args(self, args: list[ast.expr]) -> list[str]:
        return [f"...{self.expr(a.value)}" if isinstance(a, ast.Starred) else self.expr(a) for a in args]

    def kwargs(self, e: ast.Call) -> str:
        """The call's keywords as one object (`**d` spread into it)."""
        return "({" + ", ".join(self.keyword_entries(e)) + "})"

    def keyword_entries(self, e: ast.Call) -> list[str]:
        """Each keyword as an object literal's entry: `"x": value`, or `...d` for `**d`."""
        return [f"...{self.expr(k.value)}" if k.arg is None else f"{json.dumps(k.arg)}: {self.expr(k.value)}"
                for k in e.keywords]

    def bound_args(self, target: Callable, e: ast.Call) -> list[str]:
        """A call of a compiled function: keywords placed by its signature, the rest of them into its **kw."""
        params = list(inspect.signature(target).parameters.values())
        positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        kw = next((p for p in params if p.kind is p.VAR_KEYWORD), None)
        out = self.args(e.args)
        named = {k.arg: self.expr(k.value) for k in e.keywords if k.arg is not None}
        for p in positional[len(e.args):]:
            if p.name in named:
                out.append(named.pop(p.name))
            elif any(q.name in named for q in positional[positional.index(p):]):
                out.append("undefined")  # its default
        if kw is not None and (named or any(k.arg is None for k in e.keywords)):
            rest = [f"...{self.expr(k.value)}" for k in e.keywords if k.arg is None]
            out += ["undefined"] * (len(positional) - len(out))
            out.append("({" + ", ".join([*(f"{json.dumps(k)}: {v}" for k, v in named.items()), *rest]) + "})")
        elif named:
            raise _error(e, f"{target.__name__} takes no keyword {sorted(named)[0]!r}")
        return out


def _safe(name: str) -> str:
    return name + "_" if name in RESERVED else name


def _is_reversal(s: ast.Slice) -> bool:
    return s.lower is None and s.upper is None and isinstance(s.step, ast.UnaryOp) and isinstance(s.step.op, ast.USub) \
        and isinstance(s.step.operand, ast.Constant) and s.step.operand.value == 1


def _is_docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
