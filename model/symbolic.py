"""One symbolic pass for every B and T of an architecture: `evaluated(cfg, dtype)`.

`model.passes.run_pass` records a real pass on the meta device for each configuration, about 17 ms at GPT-2
small, most of it torch's Python meta kernels. A learner moving T or B keeps the architecture (d, h, V, T_max,
tie, the recipe, the dtype) and changes only the input's size. So the second (B, T) of an architecture starts,
in a background thread, the same pass once more with B and T symbolic: torch's `FakeTensorMode` with a
`ShapeEnv` (the machinery of torch.export's dynamic shapes) runs the same module through the same hooks and
FLOP counter (`model.passes.record`), and every recorded shape, storage size and FLOP count comes out as an
expression in B and T. The guards torch records on the way (T ≤ T_max where positions are learned, T ≠ 2 where
the loss's slice of the logits changes from a copy to a view, ...) and its rule that a symbolic size is never
0 or 1 say where that pass holds. At a B and T where they hold, `run_pass` gives the symbolic pass evaluated
there (~1 ms): the tensors of one real pass of the module, at exactly this configuration's sizes.

Fused attention traces the same way: its fake tensors are meta tensors, so the module runs the CPU flash kernel's
meta function (`model.parts.attention.fused_attention`) with symbolic B and T.

Checked: the symbolic pass, evaluated at the (B, T) that started it, must equal that configuration's real pass,
or it is dropped (with a log line) and the architecture keeps real passes. Tests compare evaluated and real
passes across recipes, dtypes and sizes.

Off until `enable()`: the served page turns it on (a class moving T shares one symbolic pass per architecture
and process); the CLI, the export and scripts that look at one configuration run real passes only.
"""
from __future__ import annotations

import collections
import logging
import operator
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import sympy  # torch's own dependency: its symbolic sizes are sympy expressions
import torch

from . import stack
from .config import Config, one_of_each
from .gpt import meta_gpt
from .passes import PASS_LOCK, TORCH_DTYPES, real_pass, record, use_shortcut

LOG = logging.getLogger(__name__)
MAX_ARCHITECTURES = 64  # symbolic passes (and first sizes seen) kept per process, the oldest dropped

Key = tuple[Config, str]  # (the architecture: cfg with B = T = 1 and one block of each kind, dtype)


class Size:
    """A size as a function of B and T: a polynomial with whole coefficients, evaluated in Python's exact
    integers (what a pass's sizes are); any other expression through sympy."""

    def __init__(self, expr: sympy.Expr, B: sympy.Symbol, T: sympy.Symbol) -> None:
        self.expr, self.B, self.T = expr, B, T
        self.terms = _terms(expr, B, T)

    def __call__(self, B: int, T: int) -> int:
        if self.terms is not None:
            return sum(c * B**i * T**j for c, i, j in self.terms)
        return int(self.expr.xreplace({self.B: B, self.T: T}))

    def __repr__(self) -> str:
        return str(self.expr)


def _terms(expr: sympy.Expr, B: sympy.Symbol, T: sympy.Symbol) -> tuple[tuple[int, int, int], ...] | None:
    """(coefficient, power of B, power of T) of each term, or None if `expr` is no such polynomial."""
    try:
        poly = sympy.Poly(expr, B, T)
    except sympy.PolynomialError:
        return None
    terms = tuple((c, i, j) for (i, j), c in poly.terms())
    return tuple((int(c), i, j) for c, i, j in terms) if all(c.is_Integer for c, _, _ in terms) else None


_RELATIONS = {sympy.Eq: operator.eq, sympy.Ne: operator.ne, sympy.Lt: operator.lt, sympy.Le: operator.le,
              sympy.Gt: operator.gt, sympy.Ge: operator.ge}


class Guard:
    """A condition torch recorded on B and T, as `lhs − rhs ⋈ 0` (Python integers) where it is a polynomial
    relation, else evaluated through sympy."""

    def __init__(self, expr: sympy.Basic, B: sympy.Symbol, T: sympy.Symbol) -> None:
        self.expr, self.B, self.T = expr, B, T
        relation = _RELATIONS.get(type(expr))
        difference = Size(expr.lhs - expr.rhs, B, T) if relation is not None else None
        self.test = (relation, difference) if difference is not None and difference.terms is not None else None

    def __call__(self, B: int, T: int) -> bool:
        if self.test is not None:
            relation, difference = self.test
            return relation(difference(B, T), 0)
        return bool(self.expr.xreplace({self.B: B, self.T: T}))

    def __repr__(self) -> str:
        return str(self.expr)


@dataclass(frozen=True)
class SymbolicPass:
    """A `Pass` whose sizes that depend on B or T are `Size`s, and where it holds (`guards`, `bounds`)."""

    recorded: object  # model.passes.Pass
    guards: tuple[Guard, ...]  # every one must hold at (B, T)
    bounds: tuple[tuple[int, float], tuple[int, float]]  # (lowest, highest) B and T torch allowed

    def holds(self, B: int, T: int) -> bool:
        """Whether this pass is the real pass at (B, T): both in torch's ranges (never 0 or 1) and every guard true."""
        (b_low, b_high), (t_low, t_high) = self.bounds
        return b_low <= B <= b_high and t_low <= T <= t_high and all(g(B, T) for g in self.guards)

    def at(self, B: int, T: int) -> object:
        """The pass at (B, T): every size evaluated (call `holds` first)."""
        return _with_sizes(self.recorded, lambda v: v if isinstance(v, int) else v(B, T))


def _with_sizes(p, size):
    """The pass `p` (a model.passes.Pass) with `size` applied to each of its sizes that can depend on B and T:
    tensor shapes, saved storages' bytes and the FLOP counts."""
    return _copy(
        p, tensors=tuple(_copy(t, shape=tuple(size(n) for n in t.shape)) for t in p.tensors),
        saved=tuple(_copy(s, nbytes=size(s.nbytes)) for s in p.saved),
        blocks=tuple(_copy(b, flops=size(b.flops), flops_attn=size(b.flops_attn)) for b in p.blocks),
        flops_head=size(p.flops_head))


def _copy(record: object, **changes: object) -> object:
    """`dataclasses.replace(record, **changes)` without a call to `__init__`: a pass's records (`model.passes`) are
    frozen data with no `__post_init__`, and a new T copies some hundred of them."""
    out = object.__new__(type(record))
    out.__dict__.update(record.__dict__, **changes)
    return out


_ENABLED = False
_LOCK = threading.Lock()
_PASSES: collections.OrderedDict[Key, SymbolicPass | None] = collections.OrderedDict()  # None: tried, dropped
_FIRST: collections.OrderedDict[Key, tuple[int, int]] = collections.OrderedDict()  # the first (B, T) seen
_BUILDER: ThreadPoolExecutor | None = None


def enable(on: bool = True) -> None:
    """Use symbolic passes from now on in this process (`run_pass` asks `evaluated` and reports to `seen`)."""
    global _ENABLED
    _ENABLED = on
    use_shortcut(evaluated if on else None, seen)


def _key(cfg: Config, dtype: str) -> Key:
    return one_of_each(cfg), dtype


def _remember(table: collections.OrderedDict, key: Key, value: object) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > MAX_ARCHITECTURES:
        table.popitem(last=False)


def evaluated(cfg: Config, dtype: str):
    """The pass at `cfg` from its architecture's symbolic pass, or None (none yet, or its guards fail here)."""
    if not _ENABLED:
        return None
    found = _PASSES.get(_key(cfg, dtype))
    if found is None or not found.holds(cfg.B, cfg.T):
        return None
    return found.at(cfg.B, cfg.T)


def seen(cfg: Config, dtype: str, recorded) -> None:
    """A real pass of `cfg` was recorded: at its architecture's second (B, T), build the symbolic pass in the
    background (one build at a time per process), checked against `recorded`."""
    if not _ENABLED or stack.stateful(cfg) is not None:  # Gated DeltaNet's chunks loop ⌈T/64⌉ times (Mamba 2's
        # ⌈T/Q⌉): no pass for every T
        return
    key = _key(cfg, dtype)
    global _BUILDER
    with _LOCK:
        first = _FIRST.get(key)
        if first is None:
            _remember(_FIRST, key, (cfg.B, cfg.T))
            return
        if first == (cfg.B, cfg.T) or key in _PASSES or cfg.B < 2 or cfg.T < 3:
            return  # torch fixes a size of 1 (and T = 2 changes which tensors are views): wait for another
        _remember(_PASSES, key, None)  # building; stays None if the build fails or its check does
        if _BUILDER is None:
            _BUILDER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="symbolic-pass")
    _BUILDER.submit(_build, key, cfg, recorded)


def build_now(cfg: Config, dtype: str) -> bool:
    """Build `cfg`'s architecture's symbolic pass in this thread, checked against cfg's real pass, and keep it
    (benchmarks); True if it was kept."""
    key = _key(cfg, dtype)
    with PASS_LOCK:
        recorded = real_pass(cfg, dtype)
    with _LOCK:
        _remember(_PASSES, key, None)
    _build(key, cfg, recorded)
    return _PASSES.get(key) is not None


def wait() -> None:
    """Wait for the builds started so far (tests and benchmarks)."""
    if _BUILDER is not None:
        _BUILDER.submit(lambda: None).result()


def clear() -> None:
    """Forget every symbolic pass and size seen (benchmarks measuring real passes)."""
    with _LOCK:
        _PASSES.clear()
        _FIRST.clear()


def _build(key: Key, cfg: Config, recorded) -> None:
    try:
        built = symbolic_pass(cfg, key[1])
    except Exception as e:  # a recipe torch cannot trace symbolically keeps real passes
        LOG.warning("no symbolic pass for %s: %s: %s", cfg, type(e).__name__, e)
        return
    if not built.holds(cfg.B, cfg.T) or built.at(cfg.B, cfg.T) != recorded:
        LOG.warning("the symbolic pass of %s differs from its real pass at B=%d, T=%d: real passes only",
                    cfg, cfg.B, cfg.T)
        return
    with _LOCK:
        if key in _PASSES:
            _remember(_PASSES, key, built)


def _forget() -> None:
    """Empty the caches torch keeps at class level, FakeTensorMode's dispatch cache and ShapeEnv's cached
    methods: keyed by a pass's shape environment, they kept each one alive, ~0.7 MB per build."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import ShapeEnv

    FakeTensorMode.cache_clear()
    for member in vars(ShapeEnv).values():
        if hasattr(member, "cache_clear"):
            member.cache_clear()


def symbolic_pass(cfg: Config, dtype: str) -> SymbolicPass:
    """`model.passes.record` on `GPT(one_of_each(cfg))` with B and T symbolic (traced at cfg's B and T, both ≥ 2)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    env = ShapeEnv(duck_shape=False)  # B and T stay two symbols even where they are equal
    mode = FakeTensorMode(shape_env=env)
    module = meta_gpt(one_of_each(cfg))
    module = module.to(TORCH_DTYPES[dtype])
    fakes: dict[int, torch.nn.Parameter] = {}  # by identity: a tied head keeps W_te's one parameter
    for sub in module.modules():
        for name, p in sub._parameters.items():
            if p is not None:
                if id(p) not in fakes:
                    fakes[id(p)] = torch.nn.Parameter(mode.from_tensor(p, static_shapes=True), p.requires_grad)
                sub._parameters[name] = fakes[id(p)]
    sizes = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC, DimDynamic.DYNAMIC])
    idx = mode.from_tensor(torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta"), symbolic_context=sizes)
    try:
        with mode:
            p = record(module, idx, cfg.tie)
        return _expressions(p, env, idx)
    finally:
        _forget()


def _expressions(p, env, idx: torch.Tensor) -> SymbolicPass:
    """The recorded pass `p` with its sizes as sympy expressions of idx's symbolic B and T, and its guards."""
    B, T = (env.replace(n.node.expr) for n in idx.shape)
    if not (isinstance(B, sympy.Symbol) and isinstance(T, sympy.Symbol)):
        raise RuntimeError(f"torch fixed B or T while tracing ({B}, {T})")

    sizes: dict[sympy.Expr, Size] = {}  # one per distinct expression

    def expr(v):
        if isinstance(v, torch.SymInt):
            e = env.replace(v.node.expr)
            if not e.free_symbols <= {B, T}:
                raise RuntimeError(f"a size depends on more than B and T: {e}")
            if e.is_number:
                return int(e)
            if e not in sizes:
                sizes[e] = Size(e, B, T)
            return sizes[e]
        return v

    recorded = _with_sizes(p, expr)
    guards = [g.expr for g in env.guards]
    guards += [a.expr for asserts in env.deferred_runtime_asserts.values() for a in asserts]
    ranges = tuple((int(env.var_to_range[s].lower), float(env.var_to_range[s].upper)) for s in (B, T))
    return SymbolicPass(recorded=recorded, guards=tuple(Guard(g, B, T) for g in guards), bounds=ranges)
