"""The training step's true peak: what is alive at each moment of one step, measured on the meta device.

The sum of the parts (weights + gradients + optimizer states + what autograd saves) misses what a step holds
without saving it: the logits (B, T, V) and their copies in the loss, the gradients flowing back, the scores
attention keeps in local variables, the optimizer's temporaries. Here one whole step of the real module runs on
the meta device (shapes, no memory) under a dispatch mode that sees every storage an operator makes and, by a
weak reference, the moment it is freed:

    forward (embedding, block 0) -> loss (head, logits, cross-entropy) -> backward -> optimizer (torch's Adam)

Conventions:
- The step is the benchmark's (benchmarks/bench_train_memory.py): gradients stay allocated between steps
  (`zero_grad(set_to_none=False)`, as frameworks with gradient buffers do), so backward adds each new gradient
  into its buffer; the caller keeps the loss and drops the logits; `torch.optim.Adam(foreach=False)` updates one
  parameter tensor at a time. Weights, gradients and Adam's states are the plan's parts (`model.training`); this
  module measures everything else, in bytes beyond them, the batch's token ids (B, T) included.
- The optimizer phase runs on fp32 parameters whatever the activations' dtype (Adam's m and v, and the master
  weights of mixed precision, are fp32); its temporaries depend on the parameters' shapes only.
- Fused attention runs the CPU's flash kernel and its backward through torch's meta functions
  (`model.parts.attention.fused_attention`): the step holds what those ops allocate through the dispatcher (output, log-sum-exp,
  the gradients of q, k and v at their h and h_kv heads), never a (B, h, T, T) tensor. A kernel's own scratch
  buffers, which it allocates inside its C++ code (per thread on the CPU; on-chip memory on a GPU), are not seen and
  not counted. Tests check the step against real CPU steps of the fused module, measured the same way.
- Only one block of each kind is built (as `model.passes`; a dense model's block 0). A moment of a block's forward
  or backward is the same moment of the last block of its kind in the whole model, with every block before that one
  alive; a moment of the head or the loss has all L blocks alive. Each such moment is "scaled" (`Candidate.block`:
  which of the pass's blocks, or after them all) and adds what the blocks the pass does not run keep: (L − 1)·K for
  a dense model, K = S_block (each other block's saved bytes) or, with full recomputation, each other block's input,
  BTd elements (`model.training.step_phases`; tests check both against full-depth meta steps, of mixtures of experts
  too; with recomputation this is exact in the backward pass and an upper bound in the forward pass, where a
  checkpointed block saves nothing).
- Each moment's bytes are a polynomial in the lesson's symbols: every storage's size is matched across the
  probe passes of `model.memory.probes` (same structure, different sizes) like the saved bytes are.
  Moments whose live storages are a subset of another's, or whose polynomial is below another's for every size,
  are dropped; what remains per phase are `Candidate`s, and a phase's peak is its largest candidate at a config.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import math
import weakref
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .config import KIND_LABELS, Config, one_of_each
from .formula import Poly, poly_add, poly_const, poly_mul, poly_sum, poly_symbol, polynomial
from .gpt import GPT, Tap, meta_gpt
from .memory import BLOCK_COUNTS, ONES, Structure, fit_monomial, monomials, probes
from .passes import TORCH_DTYPES, MetaShapes


PHASES = ("forward", "loss", "backward", "optimizer")
PHASE_SYMBOLS = {"forward": "M_fwd", "loss": "M_loss", "backward": "M_bwd", "optimizer": "M_opt"}  # bytes at the peak
PHASE_LABELS = {
    "forward": "alive at the forward pass's peak",
    "loss": "alive at the loss's peak",
    "backward": "alive at the backward pass's peak",
    "optimizer": "alive at the Adam step's peak (fp32, a tensor at a time)",
}  # each: besides weights, gradients and optimizer states
# What a phase's worst moment is doing, in the lesson's words, by the part of the model it ran in (`place`). A
# moment of block 0 stands for the same moment of the last block, with every other block's saved tensors alive.
MOMENTS = {
    ("forward", ""): "as the embeddings are summed, tok + pos",
    ("forward", "rope"): "as RoPE's angles, cos and sin are made",
    ("forward", "block"): "at a residual add of the last block (x + attention, x + MLP)",
    ("forward", "norm"): "in a norm of the last block",
    ("forward", "attn"): "in the last block's attention",
    ("forward", "mlp"): "in the last block's MLP",
    ("forward", "moe"): "in the last block's mixture of experts",
    ("forward", "lin"): "in the last block's Gated DeltaNet (its chunks of 64)",
    ("forward", "ssm"): "in the last block's Mamba 2 (its chunks of Q)",
    ("forward", "kda"): "in the last block's Kimi delta attention (its chunks of 64)",
    ("forward", "mb"): "in the last block's Mamba (its scan's states, all T of them)",
    ("loss", "ln_f"): "at the final norm, before the logits",
    ("loss", "head"): "as the head makes the logits (B, T, V)",
    ("loss", ""): "while the logits (B, T, V) and their log-softmax are alive, in the cross-entropy",
    ("backward", ""): "as the loss's gradient flows back through the log-softmax to the logits (B, T, V)",
    ("backward", "head"): "as the gradient flows back through the head, from the logits (B, T, V)",
    ("backward", "ln_f"): "as the gradient flows back through the final norm",
    ("backward", "block"): "as the gradient flows back through a residual add of the last block",
    ("backward", "norm"): "as the gradient flows back through a norm of the last block",
    ("backward", "attn"): "as the gradient flows back through the last block's attention",
    ("backward", "mlp"): "as the gradient flows back through the last block's MLP",
    ("backward", "moe"): "as the gradient flows back through the last block's mixture of experts",
    ("backward", "lin"): "as the gradient flows back through the last block's Gated DeltaNet",
    ("backward", "ssm"): "as the gradient flows back through the last block's Mamba 2",
    ("backward", "kda"): "as the gradient flows back through the last block's Kimi delta attention",
    ("backward", "mb"): "as the gradient flows back through the last block's Mamba",
    ("backward", "rope"): "as the gradient flows back through RoPE",
    ("backward", "embeddings"): "at the embeddings, as W_te's gradient is accumulated",
    ("optimizer", ""): "as Adam updates its largest parameter tensor",
}
_PLACES = {"": "", "wte": "embeddings", "wpe": "embeddings", "rope": "rope", "ln_f": "ln_f", "head": "head",
           "attn": "attn", "mlp": "mlp", "moe": "moe", "lin": "lin", "ssm": "ssm", "kda": "kda", "mb": "mb",
           "ln_1": "norm", "ln_2": "norm", "post_ln_1": "norm",
           "post_ln_2": "norm", "scaled": "embeddings", "window_mask": "embeddings",
           "capped": "head"}  # a module's name -> its place


def place(where: str) -> str:
    """The part of the model a module belongs to: "blocks.0.attn.qkv" -> "attn", "blocks.0" -> "block", "wte" ->
    "embeddings" (a key of MOMENTS with the phase)."""
    if where.startswith("blocks."):
        parts = where.split(".")
        return "block" if len(parts) == 2 else _PLACES[parts[2]]
    return _PLACES[where.split(".")[0]]


def moment_words(phase: str, where: str, kinds: tuple[str, ...] = ()) -> str:
    """A phase's worst moment in the lesson's words (MOMENTS); tests check every structure's moments have some.

    `kinds`: the kinds of the pass's blocks (`model.config.distinct_kinds`); where there are several, a moment of
    pass block i is one of the last block of its kind: "the last MoE block's attention"."""
    words = MOMENTS[phase, place(where)]
    if len(kinds) > 1 and where.startswith("blocks."):
        words = words.replace("the last block", f"the last {KIND_LABELS[kinds[int(where.split('.')[1])]]} block")
    return words


@dataclass(frozen=True)
class Moment:
    """The storages alive just after one allocation of a probe step (beyond weights, gradients and states)."""

    phase: str
    block: int | None  # in which of the pass's blocks (len(blocks): the head or the loss), None outside them
    op: str  # the operator whose output was just allocated ("nll_loss_forward")
    alive: frozenset[int]  # allocation numbers
    where: str = ""  # the module running (forward) or whose gradient is flowing back (backward): "blocks.0.attn"


@dataclass(frozen=True)
class Candidate:
    """A moment that can be a phase's peak at some config: its bytes as a polynomial in the lesson's symbols."""

    phase: str
    block: int | None  # as `Moment.block`
    op: str
    poly: Poly  # bytes, the other blocks' (L − 1)·K not included
    where: str = ""  # Moment.where

    @property
    def scaled(self) -> bool:
        """A moment in a block, the head or the loss: the blocks the pass does not run add theirs."""
        return self.block is not None

    @property
    def formula(self) -> str:
        """Its bytes in lesson notation, the other blocks' (L − 1)·K not included."""
        return polynomial(self.poly)

    @property
    def moment(self) -> str:
        """What the step is doing at this moment, in the lesson's words (`moment_words`)."""
        return moment_words(self.phase, self.where)

    def bytes(self, symbols: dict[str, int]) -> int:
        """Its bytes at `symbols` (the other blocks' (L − 1)·K not included)."""
        return _value(self.poly, symbols)


def _value(poly: Poly, symbols: dict[str, int]) -> int:
    return sum(c * math.prod(symbols[s] ** k for s, k in mono) for mono, c in poly.items())


class _Live(TorchDispatchMode):
    """Records every new storage an operator outputs (alloc) and, by weak reference, when it is freed."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: dict[int, weakref.ref] = {}  # id(storage) -> weak reference (ids are reused once freed)
        self.sizes: list[int] = []  # bytes per allocation
        self.alive: set[int] = set()
        self.moments: list[Moment] = []
        self.phase, self.block = PHASES[0], None
        self.where = ""

    def known(self, tensors) -> None:
        """Storages that exist before the step (weights, gradients, states, token ids): not the step's."""
        for t in tensors:
            st = t.untyped_storage()
            self.refs[id(st)] = weakref.ref(st)

    def _free(self, n: int) -> Callable:
        return lambda _ref: self.alive.discard(n)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):  # aten ops return a tensor or a flat tuple
            if not isinstance(t, torch.Tensor):
                continue
            st = t.untyped_storage()
            ref = self.refs.get(id(st))
            if (ref is not None and ref() is st) or st.nbytes() == 0:
                continue
            n = len(self.sizes)
            self.sizes.append(st.nbytes())
            self.refs[id(st)] = weakref.ref(st, self._free(n))
            self.alive.add(n)
            self.moments.append(Moment(self.phase, self.block, func.__name__.split(".")[0], frozenset(self.alive),
                                       self.where))
        return out


def _meta_module(cfg: Config, dtype: str) -> GPT:
    """A fresh `GPT` of one block of each kind on the meta device with allocated gradients (its own: nothing shared
    is touched)."""
    model = meta_gpt(one_of_each(cfg)).to(TORCH_DTYPES[dtype])
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    return model


def _pass(cfg: Config, dtype: str) -> _Live:
    """Forward, loss and backward of one block of each kind at cfg's B and T, phases and blocks marked."""
    live = _Live()
    model = _meta_module(cfg, dtype)
    live.known([*model.parameters(), *(p.grad for p in model.parameters())])
    n = len(model.blocks)

    def entering(block: int | None) -> Callable:  # a block's output has its gradient: that block's backward follows
        return lambda _grad: setattr(live, "block", block)

    with torch.enable_grad(), MetaShapes(), live, _where(model, live):  # sizes seen before: no meta kernel again
        idx = torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta")  # the batch's token ids: alive all step
        edges = [model.embed_tokens(idx)]  # the embedding's output, then each block's
        for i in range(n):
            live.block = i
            edges.append(model.block(i, edges[-1]))
        model.end_blocks()  # as GPT.forward after its blocks: RoPE's angles and the band live on where autograd saved them
        live.phase, live.block = "loss", n
        loss = model.logits_and_loss(edges[-1], idx)[1]  # the logits are dropped, as by model(idx)[1]
        if loss is not None:  # T = 1: no next token, no loss, no backward
            for j in range(n + 1):  # block j's output (j = 0: the embedding's): block j − 1's backward follows
                edges[j].register_hook(entering(j - 1 if j else None))
        del edges  # only autograd keeps them now, as in model(idx)[1] (no loop variable holds one)
        if loss is not None:
            live.phase = "backward"
            loss.backward()
        live.moments.append(Moment("after", None, "", frozenset(live.alive)))  # the loss, alive in the update
    return live


@contextlib.contextmanager
def _where(model: torch.nn.Module, live: _Live) -> Iterator[None]:
    """Keep `live.where` naming the module that runs (forward: the innermost one; outside any module, its parent
    scope "") and, once backward starts, the module whose output's gradient arrived last (its backward runs next).
    Hooks only observe: nothing is allocated; every hook is removed on the way out."""
    stack: list[str] = []
    handles = []

    def enter(name: str) -> Callable:
        def hook(_module, _inputs) -> None:
            stack.append(name)
            live.where = name
        return hook

    def leave(name: str) -> Callable:
        def arrived(_grad) -> None:
            live.where = name

        def hook(_module, _inputs, output) -> None:
            stack.pop()
            live.where = stack[-1] if stack else ""
            if isinstance(output, torch.Tensor) and output.requires_grad:
                output.register_hook(arrived)
        return hook

    for name, module in model.named_modules():
        if name and not isinstance(module, Tap):
            handles += [module.register_forward_pre_hook(enter(name)), module.register_forward_hook(leave(name))]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _update(cfg: Config, _dtype: str) -> _Live:
    """One Adam step over fp32 parameters of cfg's shapes, whatever the activations' dtype (its states made by an
    untracked first step)."""
    live = _Live()
    model = _meta_module(cfg, "fp32")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    opt.step()
    states = [t for s in opt.state.values() for t in s.values() if torch.is_tensor(t)]
    live.known([*model.parameters(), *(p.grad for p in model.parameters()), *states])
    live.phase = "optimizer"
    with MetaShapes(), live:
        opt.step()
    return live


def _shift_T(poly: Poly) -> Poly:
    """poly with T = U + 1 (U = T − 1 ≥ 0), U kept under the name T: nonnegative coefficients then mean ≥ 0."""
    out: Poly = {}
    for mono, c in poly.items():
        powers = dict(mono)
        k = powers.pop("T", 0)
        for j in range(k + 1):
            key = tuple(sorted({**powers, **({"T": j} if j else {})}.items()))
            out = poly_add(out, {key: c * math.comb(k, j)})
    return out


def _at_least(a: Poly, b: Poly) -> bool:
    """a ≥ b at every size (all symbols ≥ 1), `a` and `b` given with T = U + 1 (`_shift_T`, which is linear): a
    sufficient test, the difference's coefficients."""
    return all(c >= b.get(m, 0) for m, c in a.items()) and all(m in a or c <= 0 for m, c in b.items())


def _prune(candidates: list[Candidate], blocks: int) -> list[Candidate]:
    """Drop each candidate another of its phase covers at every size: an unscaled one by any, a scaled one by one
    that adds the same for the other blocks (any scaled one where the pass has one block, whose every scaled moment
    adds (L − 1)·K)."""
    polys = [c.poly for c in candidates]
    if all(set(poly) <= {()} for poly in polys):  # numbers (one B and T, `measured_candidates`): the first largest
        return _prune_numbers(candidates, blocks)

    def adds_as_much(d: Candidate, c: Candidate) -> bool:
        return not c.scaled or d.scaled and (blocks == 1 or d.block == c.block)

    shifted = [_shift_T(poly) for poly in polys]  # once each, not once per pair
    keep = []
    for i, c in enumerate(candidates):
        covered = any(j != i and d.phase == c.phase and adds_as_much(d, c) and (polys[j] != polys[i] or j < i)
                      and _at_least(shifted[j], shifted[i]) for j, d in enumerate(candidates))
        if not covered:
            keep.append(c)
    return keep


def _prune_numbers(candidates: list[Candidate], blocks: int) -> list[Candidate]:
    """`_prune` where every candidate's bytes are a number, in one pass: an unscaled candidate stays where it is the
    first largest of its phase, a scaled one where it is the first largest of its phase's scaled ones (of its block,
    with more than one block)."""
    value = [c.poly.get((), 0) for c in candidates]
    first: dict[tuple, int] = {}  # group -> index of its first largest
    for i, c in enumerate(candidates):
        groups = [(c.phase,)] + ([(c.phase, "scaled", c.block if blocks > 1 else None)] if c.scaled else [])
        for g in groups:
            if g not in first or value[i] > value[first[g]]:
                first[g] = i
    return [c for i, c in enumerate(candidates)
            if first[(c.phase, "scaled", c.block if blocks > 1 else None) if c.scaled else (c.phase,)] == i]


@functools.lru_cache(maxsize=4096)
def _fit_bytes(nbytes: tuple[int, ...], configs: tuple[Config, ...]) -> Poly:
    """The polynomial that gives a storage's bytes at every probe: one monomial (`model.memory.fit_monomial`), else
    the sum of two (a fused tensor such as q, k and v at h and h_kv heads: BT·h·d_head + 2BT·h_kv·d_head), lowest
    degree first. Bytes, not elements, are fitted: RoPE's halves hold d_head/2 elements per head. Once per sizes and
    probes (an export's structures share most of theirs); the polynomial returned is shared, never to be changed."""
    try:
        return fit_monomial(nbytes, configs)
    except RuntimeError:
        pass
    factors = tuple(k for k in (*configs[0].symbols(), "T-1") if k not in BLOCK_COUNTS)  # numbers of blocks: the
    # blocks' own
    by_degree = [[(f, a) for f, a in degree if all(0 < x <= n for x, n in zip(a, nbytes))]
                 for degree in monomials(tuple(configs), factors)]  # those not above the bytes at any probe
    for (fa, a), (fb, b) in _pairs_by_degree(by_degree, nbytes):  # the first: the lowest degree
        ca, cb = _coefficients(a, b, nbytes)
        return poly_add(_monomial(ca, fa), _monomial(cb, fb))
    raise RuntimeError(f"bytes {nbytes} at the probes fit no monomial and no sum of two")


def _pairs_by_degree(by_degree: list[list], nbytes: tuple[int, ...]) -> Iterator[tuple]:
    """Every pair of distinct monomials, lowest total degree first, that sums to `nbytes` at every probe with whole
    coefficients of at least 1 (`_solvable`, which tests a block of pairs at a time)."""
    for total in range(2 * len(by_degree) - 1):
        for da in range(max(0, total - len(by_degree) + 1), total // 2 + 1):
            db = total - da
            a, b = by_degree[da], by_degree[db]
            for i, j in _solvable(a, b, nbytes, same=da == db):
                yield a[i], b[j]


def _solvable(a: list, b: list, nbytes: tuple[int, ...], same: bool) -> list[tuple[int, int]]:
    """The pairs (i, j) of monomials a[i], b[j] (i < j where a and b are one list) for which c_a·a + c_b·b = nbytes
    at every probe, c_a and c_b whole and at least 1 (Cramer's rule at the first two probes, then the others), in
    the order of the pairs: a block of pairs at once in int64 where no product can overflow it, else one by one (on
    a solution c_a ≤ n₀ and a ≤ n at each probe, so every product is at most n₀ times the largest n)."""
    if not a or not b:
        return []
    if nbytes[0] * max(nbytes) >= 2 ** 61:  # a product could overflow int64
        pairs = itertools.combinations(range(len(a)), 2) if same else itertools.product(range(len(a)), range(len(b)))
        return [(i, j) for i, j in pairs if _coefficients(a[i][1], b[j][1], nbytes) is not None]
    n0, n1 = nbytes[0], nbytes[1]
    av = torch.tensor([x[1] for x in a], dtype=torch.int64).T[:, :, None]  # (probe, i, 1)
    bv = torch.tensor([x[1] for x in b], dtype=torch.int64).T[:, None, :]  # (probe, 1, j)
    det = av[0] * bv[1] - av[1] * bv[0]
    ok = det != 0
    if same:
        ok &= torch.ones_like(ok).triu(1)
    safe = torch.where(ok, det, torch.ones_like(det))
    num_a, num_b = n0 * bv[1] - n1 * bv[0], av[0] * n1 - av[1] * n0
    ok &= (num_a % safe == 0) & (num_b % safe == 0)
    ca, cb = torch.div(num_a, safe, rounding_mode="floor"), torch.div(num_b, safe, rounding_mode="floor")
    ok &= (ca >= 1) & (cb >= 1)
    for p in range(2, len(nbytes)):
        ok &= ca * av[p] + cb * bv[p] == nbytes[p]  # (where ok is False already, a product may wrap: no matter)
    return [tuple(ij) for ij in ok.nonzero().tolist()]


def _coefficients(a: list[int], b: list[int], nbytes: tuple[int, ...]) -> tuple[int, int] | None:
    """Whole c_a, c_b ≥ 1 with c_a·a + c_b·b = nbytes at every probe (Cramer's rule at the first two), else None."""
    det = a[0] * b[1] - a[1] * b[0]
    if det == 0:
        return None
    ca, ra = divmod(nbytes[0] * b[1] - nbytes[1] * b[0], det)
    cb, rb = divmod(a[0] * nbytes[1] - a[1] * nbytes[0], det)
    if ra or rb or ca < 1 or cb < 1 or any(ca * x + cb * y != n for x, y, n in zip(a, b, nbytes)):
        return None
    return ca, cb


def _monomial(c: int, factors: tuple[str, ...]) -> Poly:
    poly = poly_const(c)
    for f in factors:
        poly = poly_mul(poly, poly_add(poly_symbol("T"), poly_const(1), -1) if f == "T-1" else poly_symbol(f))
    return poly


def _fit(s: Structure, record: Callable[[Config, str], _Live]) -> list[Candidate]:
    """The maximal moments of `record` at the probes of `s`, with their bytes as polynomials."""
    return _maximal(probes(s), s.dtype, record)


ATTEMPTS = 3  # probe steps measured again where they disagree (`_agreeing_runs`)
LOG = logging.getLogger(__name__)


def _difference(runs: list[_Live]) -> str | None:
    """Where probe steps' moments first differ, in words (None where they all agree)."""
    first = runs[0]
    for k, r in enumerate(runs[1:], 2):
        if len(r.moments) != len(first.moments):
            return f"probe 1 has {len(first.moments)} moments, probe {k} {len(r.moments)}"
        for i, (a, b) in enumerate(zip(first.moments, r.moments)):
            if a.alive != b.alive:
                return (f"moment {i} ({a.phase}, {a.where or 'outside the blocks'}, {a.op}): allocations "
                        f"{sorted(a.alive ^ b.alive)} alive in one of probes 1 and {k} only")
    return None


def _agreeing_runs(configs: list[Config], dtype: str, record: Callable[[Config, str], _Live]) -> list[_Live]:
    """`record` at each config, measured again (up to ATTEMPTS times, each logged) where their moments disagree:
    a storage freed at another moment in one probe by something outside the step, on another thread (torch's
    FlopCounterMode, whose global module hooks reach every thread's modules: nothing here uses it, `passes.Flops`
    counts instead). A garbage collection, by any thread, changes no moment (tests collect all the while)."""
    for attempt in range(1, ATTEMPTS + 1):
        runs = [record(cfg, dtype) for cfg in configs]
        differs = _difference(runs)
        if differs is None:
            return runs
        LOG.warning("probe steps of one structure allocated differently (attempt %d of %d): %s", attempt, ATTEMPTS,
                    differs)
    raise RuntimeError(f"probe steps of one structure allocated differently {ATTEMPTS} times ({differs}): the peak "
                       "cannot be written as formulas")


def _maximal(configs: list[Config], dtype: str, record: Callable[[Config, str], _Live]) -> list[Candidate]:
    """The maximal moments of `record` at `configs`, their bytes fitted across them (one config: its numbers)."""
    runs = _agreeing_runs(configs, dtype, record)
    first = runs[0]
    kinds: dict[tuple[int, ...], int] = {}  # many storages share their sizes: fit each size once
    kind = [kinds.setdefault(tuple(r.sizes[n] for r in runs), len(kinds)) for n in range(len(first.sizes))]
    fitted = [_fit_bytes(nbytes, tuple(configs)) if len(configs) > 1 else poly_const(nbytes[0]) for nbytes in kinds]
    moments = first.moments
    out = []
    for i, m in enumerate(moments):
        after = moments[i + 1] if i + 1 < len(moments) else None
        if after and m.alive <= after.alive and (after.phase, after.block) == (m.phase, m.block):
            continue  # the next allocation adds to this moment
        poly = poly_sum((fitted[k], count) for k, count in Counter(kind[n] for n in sorted(m.alive)).items())
        out.append(Candidate(m.phase, m.block, m.op, poly, m.where))
    return out


@functools.lru_cache(maxsize=64)
def _update_candidates(s: Structure) -> list[Candidate]:
    """The optimizer's candidates: they depend on the parameters' shapes only (recipe, tie, and h = 1 at probes)."""
    return _prune(_fit(s, _update), 1)


@functools.lru_cache(maxsize=256)
def candidates(s: Structure) -> tuple[Candidate, ...]:
    """The moments of a step that can be its phases' peaks, for every config of structure `s`, in step order."""
    shapes = replace(s, dtype="fp32", ones=tuple(k == "h" and one for k, one in zip(ONES, s.ones)))
    *passing, after = _fit(s, _pass)
    blocks = 1 if s.moe is None else len(s.moe[0])
    return (*_prune(passing, blocks), *(_plus(c, after) for c in _update_candidates(shapes)))


@functools.lru_cache(maxsize=64)
def measured_candidates(cfg: Config, dtype: str) -> tuple[Candidate, ...]:
    """`candidates` of a model with Gated DeltaNet blocks, whose storages (its chunked rule's, of T_pad and chunks of
    64) no probe fits: the moments of cfg's own step at its B and T, their bytes as numbers."""
    *passing, after = _maximal([cfg], dtype, _pass)
    update = _prune(_maximal([cfg], "fp32", _update), 1)
    return (*_prune(passing, len(dict.fromkeys(cfg.block_kinds))), *(_plus(c, after) for c in update))


def _plus(c: Candidate, more: Candidate) -> Candidate:
    """`c` with more storages alive (the loss during the optimizer step)."""
    return Candidate(c.phase, c.block, c.op, poly_add(c.poly, more.poly), c.where)


def step_peaks(model: torch.nn.Module, idx: torch.Tensor, optimizer: torch.optim.Optimizer) -> dict[str, int]:
    """The largest bytes alive beyond weights, gradients and states in one whole step of `model` (any depth, any
    device, gradients already allocated), the token ids `idx` included, per phase: "forward" (up to the loss,
    included), "backward", "optimizer". Measured with the same dispatch mode: the reference the formulas are
    tested against."""
    live = _Live()
    states = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t)]
    live.known([idx, *model.parameters(), *(p.grad for p in model.parameters()), *states])
    with torch.enable_grad(), live:
        optimizer.zero_grad(set_to_none=False)
        loss = model(idx)[1]
        live.phase = "backward"
        if loss is not None:  # T = 1: no loss, no backward
            loss.backward()
        live.phase = "optimizer"
        optimizer.step()
    peaks: dict[str, int] = {}
    for m in live.moments:
        alive = idx.untyped_storage().nbytes() + sum(live.sizes[n] for n in m.alive)
        peaks[m.phase] = max(peaks.get(m.phase, 0), alive)
    return peaks
