"""One training-mode forward pass of `GPT(cfg)` on the meta device, recorded: `run_pass(cfg, dtype)` -> `Pass`.

What it records, in one pass (shapes without memory, at any size):
- every tensor that a named leaf module of `GPT` outputs, and a module marked `traced` (RMSNorm, whose
  statistic is a Tap inside it) (forward hooks; the `Tap`s name those inside attention), whether it is a *view* of an earlier recorded tensor's storage (q, k, v of qkv) or new memory;
- FLOPs of one block and of the head, counted with torch's own per-op formulas (`torch.utils.flop_counter`'s
  registry: matmuls only, FLOPs not MACs) by a small dispatch mode; tests check it equals `FlopCounterMode`
  on the full-depth model, which costs several times more (it decomposes every other op). Fused attention's CPU
  kernel is missing from torch 2.13's registry (pytorch #195460: it counts 0), so `FLASH_CPU` registers torch's
  own SDPA formulas for it: q kᵀ and attn @ v over the full (T, T) matrix, exactly as eager's two matmuls count;
- the storages autograd keeps for the backward pass (`saved_tensors_hooks`), parameters excluded, each with the
  phase that created it (embedding, block, head) so that block storages can be counted L times;
- parameter counts of the parts.

One block of each kind is built and run (`model.config.one_of_each`: a dense model's block 0; a mixture of experts'
dense and MoE blocks in the order of their first blocks): every block maps (B, T, d) to (B, T, d) (checked here), so
every block of a kind repeats that block exactly. Block k's input is block k-1's output, created (and counted) in
block k-1; the first block's input is created by the embedding, the last block's output is saved by the final
LayerNorm: so "embedding + Σ (blocks of a kind) × (its block) + head" equals the full model's count (tests check it
against full-depth passes on real CPU tensors, whose routing is real).
"""
from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry, register_flop_formula, sdpa_backward_flop, sdpa_flop

from . import grouped  # noqa: F401 (registers the experts' grouped matmul and its FLOP formulas)
from . import loops
from .config import Config, one_of_each
from .gpt import GPT, meta_gpt

DTYPES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2}  # bytes per floating-point element
TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
PHASES = ("embed", "block", "head")  # where a tensor is made: once, once per block (× L), once


@dataclass(frozen=True)
class Tensor:
    """A tensor a named module output: its module path, shape, element size, phase, and storage facts."""

    name: str  # "blocks.0.attn.scores"
    shape: tuple[int, ...]
    element_bytes: int
    phase: str
    view: bool  # its storage is an earlier recorded tensor's or a parameter's (no new memory)
    saved: bool  # autograd keeps its storage for the backward pass
    block: int | None = None  # in the "block" phase: which of the pass's blocks (`Pass.blocks`) made it


@dataclass(frozen=True)
class Storage:
    """A storage autograd keeps for the backward pass (parameters excluded)."""

    nbytes: int
    element_bytes: int
    phase: str  # where it was created: "embed", "block" (× its kind's blocks) or "head"
    owner: str | None  # the recorded tensor whose storage it is, if any (else e.g. LayerNorm's mean and rstd)
    block: int | None = None  # in the "block" phase: which of the pass's blocks (`Pass.blocks`)
    lin: bool = False  # first saved while a mixer with a fixed state ran (its part's `saved_parts` writes these)


@dataclass(frozen=True)
class BlockCounts:
    """One block of the pass (one per kind): its kind, forward FLOPs over B*T tokens, and parameters."""

    kind: str  # "dense" or "moe" (`Config.block_kinds`)
    flops: int  # forward FLOPs of the block over B*T tokens
    flops_attn: int  # the part of them in q kᵀ and attn @ v (batched matmuls, or the fused kernel)
    params: int
    params_attn: int
    params_mlp: int  # the dense MLP, or the mixture of experts (router, every expert, shared experts)


@dataclass(frozen=True)
class Pass:
    """What one meta-device forward pass of one block of each kind (plus embedding and head) records."""

    tensors: tuple[Tensor, ...]
    saved: tuple[Storage, ...]  # in the order autograd first saved them
    blocks: tuple[BlockCounts, ...]  # one per kind, in the order of their first blocks
    flops_head: int  # forward FLOPs of the head over B*T tokens
    params_embed: int
    params_ln_f: int  # the norms outside the blocks: the final one (and nanochat's on the token embeddings)
    params_head: int  # 0 when tied: the head's weight is W_te

    def block(self, kind: str) -> BlockCounts:
        """The counts of the block of this kind: `run_pass(cfg).block("moe").flops`."""
        return next(b for b in self.blocks if b.kind == kind)


# The CPU's flash kernel (`model.parts.attention.fused_attention`) and its backward, with torch's own formulas for the CUDA
# kernels (`sdpa_flop`: 2·B·h·T·T·d_head for q kᵀ and as many for attn @ v, h the query heads whatever h_kv;
# torch's "NB: We aren't accounting for causal attention here"). Registered where torch has none, so that
# FlopCounterMode counts them too; torch's formulas are registered already wrapped (shapes in), hence get_raw.
FLASH_CPU = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: sdpa_flop,
             torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: sdpa_backward_flop}
for _op, _formula in FLASH_CPU.items():
    if _op not in flop_registry:
        register_flop_formula(_op, get_raw=True)(_formula)
ATTENTION_OPS = (torch.ops.aten.bmm, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu)  # q kᵀ, attn @ v


class Flops(TorchDispatchMode):
    """Counts FLOPs of the ops in torch's flop registry (mm, addmm, bmm, the flash kernel ...), torch's formulas:
    `total`, and `attn` of them in q kᵀ and attn @ v (`ATTENTION_OPS`). Only the ops of the thread that entered it,
    as every dispatch mode: torch's FlopCounterMode also registers global module hooks (its ModuleTracker), which
    put gradient hooks on the tensors of every thread's modules while it counts, and so change when a training
    step's storages are freed in a pass another thread runs meanwhile (`model.peak`, served)."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.attn = 0  # q kᵀ and attn @ v: batched matmuls (eager) or the fused kernel

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.count(func, args, kwargs, out)
        return out

    def count(self, func, args, kwargs, out) -> None:
        """Add one op's FLOPs (torch's formula for it, where it has one)."""
        formula = flop_registry.get(func._overloadpacket)
        if formula is not None:
            n = formula(*args, **(kwargs or {}), out_val=out)
            self.total += n
            if func._overloadpacket in ATTENTION_OPS:
                self.attn += n


class MetaShapes(TorchDispatchMode):
    """Answers a meta-device op that makes new tensors from the shapes it gave before for the same inputs (their shapes,
    strides and dtypes, and the other arguments): a fresh meta tensor of the same size, without running torch's meta
    kernel again, most of them Python (its elementwise ops' broadcasting). A chunked scan (Gated DeltaNet's, Mamba's)
    repeats the same ops a few hundred times per pass. Ops that write or alias their inputs (views, copy_), and any
    tensor not a plain meta one (the symbolic pass's fake tensors), run as they are. Innermost of the pass's modes:
    what the others see is unchanged (a new storage of the same size, the same FLOPs).

    What an op gives depends on its inputs' sizes, strides and dtypes and its other arguments only, so every pass
    shares one table (`KNOWN_SHAPES`): an export's hundreds of passes at the same probes of B and T (saved bytes, the
    step's peak, each dtype and recipe) run each op's meta kernel once. The table is emptied when it holds
    `KNOWN_MAX` entries, and by `model.clear_caches`."""

    def __init__(self) -> None:
        super().__init__()
        if len(KNOWN_SHAPES) >= KNOWN_MAX:
            KNOWN_SHAPES.clear()
        self.known = KNOWN_SHAPES

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not _makes_new(func):
            return func(*args, **kwargs)
        try:
            key = (func, _shapes(args), tuple((k, _shapes(v)) for k, v in kwargs.items()))
            seen = self.known.get(key)
        except TypeError:  # not a plain meta tensor, or an argument without a hash
            return func(*args, **kwargs)
        if seen is RUNS:
            return func(*args, **kwargs)
        if seen is not None:
            many, outs = seen
            made = tuple(torch.empty_strided(size, stride, dtype=dtype, device="meta") for size, stride, dtype in outs)
            return made if many else made[0]
        out = func(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        made = [_key(t) for t in outs if isinstance(t, torch.Tensor)]
        fresh = all(type(t) is torch.Tensor and t.device.type == "meta" and t.storage_offset() == 0 for t in outs) \
            and len(set(made)) == len(outs) and not set(made) & _storages((args, kwargs))
        # (an op whose schema says nothing may still return a view: _unsafe_view; it runs every time)
        self.known[key] = (isinstance(out, tuple), tuple((tuple(t.shape), t.stride(), t.dtype) for t in outs)) \
            if fresh else RUNS
        return out


KNOWN_SHAPES: dict[tuple, tuple[bool, tuple]] = {}  # an op and its inputs -> (a tuple out?, each output's size, stride,
# dtype), or RUNS
KNOWN_MAX = 50_000  # about 45 MB at most (~900 bytes each; an uncached export of GPT-2 small or DeepSeek-V3.2 leaves
# 9,000 to 12,000)
RUNS = ("runs",)  # `MetaShapes.known` of inputs whose op returned a storage it was given: run it every time


class PassMode(MetaShapes, Flops):
    """A recorded pass's one dispatch mode: `MetaShapes`' answers, and `Flops`' count of what they answer (`total`,
    `attn`). One mode, not two stacked: each op then crosses one Python dispatch, not two."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = MetaShapes.__torch_dispatch__(self, func, types, args, kwargs)
        self.count(func, args, kwargs, out)
        return out


def _storages(x: object) -> set[int]:
    """The storages of the tensors among an op's arguments (in lists and dicts one level down or more)."""
    if isinstance(x, torch.Tensor):
        return {_key(x)}
    if isinstance(x, (list, tuple)):
        return set().union(*(_storages(y) for y in x)) if x else set()
    if isinstance(x, dict):
        return _storages(tuple(x.values()))
    return set()


@functools.cache
def _makes_new(func) -> bool:
    """Whether an op only makes new tensors: it writes none of its inputs and returns none of them, nor a view."""
    schema = func._schema
    return not schema.is_mutable and all(a.alias_info is None for a in (*schema.arguments, *schema.returns))


def _shapes(x: object) -> object:
    """An argument as `MetaShapes` keys it: a tensor by its size, strides and dtype (TypeError unless a plain meta
    tensor), a list by its items, anything else as it is."""
    if isinstance(x, torch.Tensor):
        if type(x) is not torch.Tensor and type(x) is not torch.nn.Parameter or x.device.type != "meta":
            raise TypeError("not a plain meta tensor")
        return tuple(x.shape), x.stride(), x.dtype
    if isinstance(x, (list, tuple)):
        return tuple(_shapes(y) for y in x)
    return x


def _numel(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _key(t: torch.Tensor) -> int:
    """Identity of a tensor's storage (kept alive by the recorder while it runs, so never reused)."""
    return t.untyped_storage()._cdata


class _Recorder:
    """Forward hooks and saved-tensor hooks of one pass; keeps every tensor it sees alive until it is done."""

    def __init__(self) -> None:
        self.phase = PHASES[0]
        self.block: int | None = None  # which block runs, in the "block" phase
        self.lin = False  # a mixer with a fixed state runs (Gated DeltaNet, KDA, Mamba 2, Mamba)
        self.outputs: list[tuple[str, torch.Tensor, str, int | None]] = []  # (name, tensor, phase, block)
        self.saved: dict[object, tuple[torch.Tensor, str, int | None, bool]] = {}  # storage -> (first saved, phase,
        # block, in a mixer with a fixed state)

    def hook(self, name: str):
        def record(_module, _inputs, output) -> None:
            self.outputs.append((name, output, self.phase, self.block))
        return record

    @property
    def pack(self) -> Callable[[torch.Tensor], None]:
        """The saved-tensor hook that notes each tensor autograd saves, holding this recorder weakly.

        Autograd keeps the hook with every tensor it saves, and the recorder keeps those tensors: a strong hook
        made a reference cycle through C++ that Python's collector cannot see, and every pass leaked its ~55
        tensors. What autograd keeps is None, not the tensor (no pass runs backward)."""
        recorder = weakref.ref(self)

        def pack(t: torch.Tensor) -> None:
            if (alive := recorder()) is not None:
                alive.saved.setdefault(_key(t), (t, alive.phase, alive.block, alive.lin))
        return pack


class _Counts:
    """A pass's FLOP counter and recorder as `model.loops.repeat` sees them (`loops.Recording`): an iteration's
    FLOPs added again, and each storage it first saved noted again under a key of its own (the same record)."""

    def __init__(self, recorder: _Recorder, counter: Flops) -> None:
        self.recorder, self.counter = recorder, counter

    def mark(self) -> tuple[int, int, int]:
        return self.counter.total, self.counter.attn, len(self.recorder.saved)

    def repeat_since(self, mark: tuple[int, int, int], times: int) -> None:
        total, attn, n_saved = mark
        self.counter.total += times * (self.counter.total - total)
        self.counter.attn += times * (self.counter.attn - attn)
        saved = self.recorder.saved
        new = list(saved.values())[n_saved:]
        for i in range(times):
            for j, entry in enumerate(new):
                saved[("repeated", len(saved), j)] = entry


def _no_backward(_packed: None) -> torch.Tensor:
    raise RuntimeError("a recorded pass keeps no tensors for a backward pass")


def saved_bytes_of(model: torch.nn.Module, idx: torch.Tensor) -> int:
    """Bytes autograd keeps for the backward pass of `model(idx)`, measured directly (any device, full depth):
    `untyped_storage().nbytes()` over the distinct storages saved tensors keep alive, parameters' own excluded.
    The reference that `Trace.saved_bytes` (block 0 × L, meta device) is tested against."""
    recorder = _Recorder()
    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(recorder.pack, _no_backward):
        model(idx)
    params = {_key(p) for p in model.parameters()}
    return sum(t.untyped_storage().nbytes() for key, (t, *_) in recorder.saved.items() if key not in params)


PASS_LOCK = threading.Lock()  # one pass at a time: passes share the cached modules (the values card runs in a thread)
# `model.symbolic`, when enabled: (evaluated(cfg, dtype) -> a Pass or None, seen(cfg, dtype, recorded)); see run_pass
_SHORTCUT: tuple[Callable[[Config, str], "Pass | None"], Callable[[Config, str, "Pass"], None]] | None = None


def use_shortcut(evaluated: Callable[[Config, str], "Pass | None"] | None,
                 seen: Callable[[Config, str, "Pass"], None] | None = None) -> None:
    """Have `run_pass` ask `evaluated` for a pass first and report each real one to `seen` (`model.symbolic.enable`
    registers its own); None: real passes only."""
    global _SHORTCUT
    _SHORTCUT = None if evaluated is None else (evaluated, seen)


@functools.lru_cache(maxsize=16)
def _module(arch: Config, dtype: str) -> GPT:
    """`GPT(arch)` on the meta device at `dtype`, `arch` one block of each kind at B = T = 1
    (`model.config.one_of_each`). A module depends on d, h, V, T_max, tie, the recipe and which kinds of blocks there
    are only (B, T and L are the input's and the depth's), so moving B, T or L reuses it."""
    return meta_gpt(arch).to(TORCH_DTYPES[dtype])


@functools.lru_cache(maxsize=512)
def run_pass(cfg: Config, dtype: str = "fp32") -> Pass:
    """One training-mode forward pass of `GPT(cfg)` (one block of each kind, see the module docstring) on the meta
    device.

    Where the architecture's symbolic pass exists and its guards hold at this B and T (`model.symbolic`), the
    pass is that one, evaluated at B and T: the same `Pass` (tests check), without running the ops again."""
    shortcut = _SHORTCUT
    if shortcut is not None and (evaluated := shortcut[0](cfg, dtype)) is not None:
        return evaluated
    with PASS_LOCK:
        recorded = real_pass(cfg, dtype)
    if shortcut is not None:
        shortcut[1](cfg, dtype, recorded)
    return recorded


def real_pass(cfg: Config, dtype: str) -> Pass:
    """The pass recorded by running the module (no symbolic shortcut); callers hold PASS_LOCK."""
    model = _module(one_of_each(cfg), dtype)
    return record(model, torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta"), cfg.tie)


def record(model: GPT, idx: torch.Tensor, tie: bool) -> Pass:
    """Run and record `model` (one block of each kind) on the token ids `idx` (see the module docstring). Sizes are
    what `idx` and the module give: whole numbers on the meta device, expressions of B and T in `model.symbolic`'s
    pass."""
    recorder = _Recorder()
    leaves = [(n, m) for n, m in model.named_modules() if n and (not list(m.children()) or getattr(m, "traced", False))]
    handles = [m.register_forward_hook(recorder.hook(n)) for n, m in leaves]
    for block in model.blocks:  # while a mixer with a fixed state runs, what autograd saves is its (`Storage.lin`)
        if not block.attends:
            handles += [block.mixer.register_forward_pre_hook(lambda *_: setattr(recorder, "lin", True)),
                        block.mixer.register_forward_hook(lambda *_: setattr(recorder, "lin", False))]
    try:
        with torch.enable_grad(), PassMode() as counter, \
                torch.autograd.graph.saved_tensors_hooks(recorder.pack, _no_backward), \
                loops.recording(_Counts(recorder, counter)):
            recorder.outputs.append(("idx", idx, "embed", None))
            x = model.embed_tokens(idx)
            recorder.phase, flops = "block", []
            for i in range(len(model.blocks)):
                recorder.block, before, attn_before = i, counter.total, counter.attn
                y = model.block(i, x)
                if y.shape != x.shape:
                    raise RuntimeError(f"a block must map {tuple(x.shape)} to itself, got {tuple(y.shape)}: "
                                       "blocks cannot be collapsed")
                flops.append((counter.total - before, counter.attn - attn_before))
                x = y
            recorder.phase, recorder.block, before = "head", None, counter.total
            model.logits_and_loss(x, idx)
            flops_head = counter.total - before
    finally:
        for handle in handles:
            handle.remove()
    params = {_key(p) for p in model.parameters()}
    saved_keys = set(recorder.saved) - params
    owners: dict[int, tuple[str, str, int | None]] = {}  # storage -> (first tensor recorded on it, phase, block)
    tensors = []
    for name, t, phase, block in recorder.outputs:
        key = _key(t)
        view = key in owners or key in params  # a view of a parameter (the sinks' column) is no new memory either
        owners.setdefault(key, (name, phase, block))
        tensors.append(Tensor(name=name, shape=tuple(t.shape), element_bytes=t.element_size(), phase=phase,
                              view=view, saved=key in saved_keys, block=block))
    saved = tuple(
        Storage(nbytes=t.untyped_storage().nbytes(), element_bytes=t.element_size(),
                phase=owners[key][1] if key in owners else phase, owner=owners.get(key, (None,))[0],
                block=owners[key][2] if key in owners else block, lin=lin)
        for key, (t, phase, block, lin) in recorder.saved.items() if key in saved_keys)
    blocks = tuple(BlockCounts(kind=b.kind, flops=f, flops_attn=a, params=_numel(b), params_attn=_numel(b.mixer),
                               params_mlp=_numel(b.ffn)) for b, (f, a) in zip(model.blocks, flops))
    return Pass(
        tensors=tuple(tensors), saved=saved, blocks=blocks, flops_head=flops_head,
        params_embed=_numel(model.wte) + (_numel(model.wpe) if hasattr(model, "wpe") else 0),
        params_ln_f=_numel(model.ln_f) + (_numel(model.ln_e) if hasattr(model, "ln_e") else 0),
        params_head=sum(p.numel() for n, p in model.head.named_parameters() if not (tie and n == "weight")),
    )
