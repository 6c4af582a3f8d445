"""Every intermediate tensor of one real forward pass, as data: `trace(cfg)` -> `Trace` of `Row`s.

The forward pass runs on the meta device (shapes without memory, at any size) with a forward hook on every
named leaf module of `GPT`, under `FlopCounterMode`. Each row's lesson-notation shape is evaluated and
compared with the concrete shape on every trace: notation and code cannot drift apart.

Only block 0 is built and run. A block maps (B, T, d) to (B, T, d), checked on every trace, and all L blocks
are built from the same `Config`, so blocks 1 ... L-1 see the same input shape and repeat block 0's shapes
and FLOPs exactly; their rows carry `repeat = L`, and `Trace.expanded()` lists all L blocks.
Cost is therefore independent of L. Records -> totals (`Trace`) -> formatting (`model.report`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import torch
from torch.utils.flop_counter import FlopCounterMode

from .config import Config
from .gpt import GPT, Block
from .notation import evaluate

# Local module path (block prefix removed) -> (lesson-notation shape, what the tensor is). Execution order.
NOTATION: dict[str, tuple[str, str]] = {
    "idx": ("(B, T)", "token ids (int64 input)"),
    "wte": ("(B, T, d)", "tok = W_te[idx]"),
    "wpe": ("(T, d)", "pos = W_pe[0:T], broadcast over B"),
    "embed": ("(B, T, d)", "x = tok + pos"),
    "ln_1": ("(B, T, d)", "LayerNorm before attention"),
    "attn.qkv": ("(B, T, 3d)", "fused q, k, v projection"),
    "attn.q": ("(B, h, T, d_head)", "q split into h heads"),
    "attn.k": ("(B, h, T, d_head)", "k split into h heads"),
    "attn.v": ("(B, h, T, d_head)", "v split into h heads"),
    "attn.scores": ("(B, h, T, T)", "scores = q kᵀ / √d_head"),
    "attn.masked": ("(B, h, T, T)", "causal mask: −inf above the diagonal"),
    "attn.attn": ("(B, h, T, T)", "softmax over keys"),
    "attn.attn_v": ("(B, h, T, d_head)", "attn @ v"),
    "attn.merged": ("(B, T, d)", "heads merged back"),
    "attn.proj": ("(B, T, d)", "output projection"),
    "resid_1": ("(B, T, d)", "x + attention"),
    "ln_2": ("(B, T, d)", "LayerNorm before the MLP"),
    "mlp.fc": ("(B, T, 4d)", "MLP hidden, d → 4d"),
    "mlp.gelu": ("(B, T, 4d)", "GELU"),
    "mlp.proj": ("(B, T, d)", "MLP out, 4d → d"),
    "resid_2": ("(B, T, d)", "x + MLP"),
    "ln_f": ("(B, T, d)", "final LayerNorm"),
    "head": ("(B, T, V)", "logits (head tied to W_te)"),
    "loss": ("()", "cross-entropy of logits[:, :-1] vs idx[:, 1:]"),
}

DTYPES: dict[str, int] = {"fp32": 4, "bf16": 2, "fp16": 2}  # bytes per floating-point element
BLOCK_PREFIX = "blocks.0."


@dataclass(frozen=True)
class Row:
    """One intermediate tensor. `repeat` is L for block rows (blocks 1 ... L-1 have block 0's shape), else 1."""

    name: str  # dotted module path, e.g. "blocks.0.attn.scores"
    label: str  # what the tensor is, in the lesson's words
    symbolic: str  # lesson notation, e.g. "(B, h, T, T)"
    shape: tuple[int, ...]  # concrete shape at this Config
    numel: int
    nbytes: int  # at the trace's dtype; token ids are int64 (8 bytes)
    block: int | None  # block index, None outside the blocks
    repeat: int

    @property
    def local(self) -> str:
        """The name without its block prefix: "attn.scores"."""
        return self.name.split(".", 2)[2] if self.block is not None else self.name


@dataclass(frozen=True)
class Trace:
    """The rows of one forward pass at `cfg`, with block rows collapsed (see `expanded`)."""

    cfg: Config
    dtype: str
    rows: tuple[Row, ...]

    @property
    def activation_bytes(self) -> int:
        """Bytes of all intermediate tensors of the pass (each block row counted L times), no reuse assumed."""
        return sum(r.nbytes * r.repeat for r in self.rows)

    def expanded(self) -> tuple[Row, ...]:
        """The full listing: block 0's rows once per block, named blocks.0 ... blocks.{L-1}."""
        out: list[Row] = []
        for i, row in enumerate(self.rows):
            if row.block is None:
                out.append(row)
            elif i == 0 or self.rows[i - 1].block is None:  # first row of the block group: emit all L blocks
                group = [r for r in self.rows if r.block is not None]
                for b in range(self.cfg.L):
                    out += [replace(r, name=f"blocks.{b}.{r.local}", block=b, repeat=1) for r in group]
        return tuple(out)


@dataclass(frozen=True)
class _Pass:
    """What one meta-device forward pass records: tensors, FLOPs and parameter counts of its parts."""

    tensors: tuple[tuple[str, tuple[int, ...], bool], ...]  # (name, shape, is_float)
    flops_block: int  # forward FLOPs of one block over B*T tokens
    flops_attn_block: int  # the part of them in q kᵀ and attn @ v (batched matmuls)
    flops_head: int  # forward FLOPs of the head over B*T tokens
    params_embed: int
    params_block: int
    params_attn: int
    params_mlp: int
    params_ln_f: int
    params_head: int  # 0 when tied: the head's weight is W_te


def _bmm_flops(counter: FlopCounterMode) -> int:
    return sum(n for op, n in counter.get_flop_counts().get("Global", {}).items() if "bmm" in str(op))


def _numel(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@functools.lru_cache(maxsize=256)
def run_pass(cfg: Config) -> _Pass:
    """One forward pass of `GPT(cfg)` (block 0 only, see the module docstring) on the meta device."""
    with torch.device("meta"):
        model = GPT(cfg, depth=1)
    tensors: list[tuple[str, tuple[int, ...], bool]] = []

    def hook(name: str):
        def record(_module, _inputs, output) -> None:
            tensors.append((name, tuple(output.shape), output.is_floating_point()))
        return record

    handles = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if n and not list(m.children())]
    try:
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            idx = torch.zeros(cfg.B, cfg.T, dtype=torch.long, device="meta")
            tensors.append(("idx", tuple(idx.shape), False))
            x = model.embed_tokens(idx)
            before = counter.get_total_flops()
            y = model.blocks[0](x)
            if y.shape != x.shape:
                raise RuntimeError(f"a block must map {tuple(x.shape)} to itself, got {tuple(y.shape)}: "
                                   "blocks cannot be collapsed")
            flops_block, flops_attn = counter.get_total_flops() - before, _bmm_flops(counter)
            before = counter.get_total_flops()
            model.logits_and_loss(y, idx)
            flops_head = counter.get_total_flops() - before
    finally:
        for handle in handles:
            handle.remove()
    block: Block = model.blocks[0]
    return _Pass(
        tensors=tuple(tensors),
        flops_block=flops_block,
        flops_attn_block=flops_attn,
        flops_head=flops_head,
        params_embed=_numel(model.wte) + _numel(model.wpe),
        params_block=_numel(block),
        params_attn=_numel(block.attn),
        params_mlp=_numel(block.mlp),
        params_ln_f=_numel(model.ln_f),
        params_head=0 if cfg.tie else _numel(model.head),
    )


def trace(cfg: Config, dtype: str = "fp32") -> Trace:
    """Every intermediate tensor of one forward pass at exactly `cfg`, in execution order (cached per cfg, dtype).

    `dtype` ("fp32", "bf16" or "fp16") sets the bytes per floating-point element; token ids stay int64.
    Raises RuntimeError if a tensor's concrete shape differs from its lesson-notation shape.
    """
    if not isinstance(cfg, Config):
        raise TypeError(f"trace needs a model.Config, got {type(cfg).__name__}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return _trace(cfg, dtype)


def clear_caches() -> None:
    """Forget every cached pass, trace and budget (for benchmarks that must measure uncached calls)."""
    from .budgeting import budget

    for cached in (run_pass, _trace, budget):
        cached.cache_clear()


@functools.lru_cache(maxsize=512)
def _trace(cfg: Config, dtype: str) -> Trace:
    values = cfg.symbols()
    rows = []
    for name, shape, is_float in run_pass(cfg).tensors:
        in_block = name.startswith(BLOCK_PREFIX)
        local = name[len(BLOCK_PREFIX):] if in_block else name
        if local not in NOTATION:
            raise RuntimeError(f"tensor {name} has no lesson notation: add it to model.tracing.NOTATION")
        symbolic, label = NOTATION[local]
        if evaluate(symbolic, values) != shape:
            raise RuntimeError(f"{name}: notation {symbolic} gives {evaluate(symbolic, values)}, the pass gave {shape}")
        if local == "head" and not cfg.tie:
            label = "logits (separate head)"
        numel = 1
        for n in shape:
            numel *= n
        rows.append(Row(name=name, label=label, symbolic=symbolic, shape=shape, numel=numel,
                        nbytes=numel * (DTYPES[dtype] if is_float else 8),
                        block=0 if in_block else None, repeat=cfg.L if in_block else 1))
    return Trace(cfg=cfg, dtype=dtype, rows=tuple(rows))
