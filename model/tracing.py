"""Every intermediate tensor of one real forward pass, as data: `trace(cfg, dtype)` -> `Trace` of `Row`s.

The pass is `model.passes.run_pass`: training mode, meta device (shapes without memory, at any size), one block of
each kind (dense; a mixture of experts). Each row's lesson-notation shape is evaluated and compared with the concrete
shape on every trace: notation and code cannot drift apart. Every block of a kind repeats that block's shapes
exactly; its rows are named after the kind's first block (blocks.0 for a dense model, blocks.3 for DeepSeek's first
MoE block), carry `repeat` = the kind's number of blocks (L for a dense model) and their `kind`; `Trace.groups` says
which blocks each kind is ("blocks 0 … 2: dense, × 3"), and `Trace.expanded()` lists all L blocks. Cost is
independent of L.

A mixture of experts' rows (`model.tensor_notation.MOE_NOTATION`): the router's logits and probabilities (B, T, E), the top-k weights and
experts (B, T, k), and the B·T·k (token, expert) pairs dispatched to the experts, (B·T·k, d) in all. Routing is
data-dependent; the pass never drops or pads a token, so every tensor's shape is exact whatever the routing, and an
expert's share of the B·T·k rows is a slice (`ROUTING_NOTE`): B·T·k/E rows when routing is balanced, the real
counts of a real pass in `model.values`.

Memory, honestly: a row is a *view* when it shares an earlier tensor's storage (q, k, v of qkv; k and v
expanded to h heads when h_kv = 1): no new memory.
`activation_bytes` counts new memory only; `saved_bytes` is what autograd keeps for the backward pass
(measured). Records -> totals (`Trace`, `Trace.lines`) -> formatting (`model.report`, the app).

Shapes and labels come from `model.tensor_notation`: `NOTATION` (GPT-2's recipe, as the lesson draws it) and
`notation(cfg)` for any recipe (RoPE's angles, RMSNorm's statistics, k and v at h_kv heads, SwiGLU's gate and up,
fused attention's log-sum-exp, ...).

Fused attention (`Config.attention`): the meta pass runs the CPU's flash kernel through torch's meta function of
it (`model.parts.attention.fused_attention`), so its rows are the kernel's output and its (B, h, T) log-sum-exp, and no
(B, h, T, T) row; `eager_lines` says what eager attention would make in their place (from a real eager pass).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from .config import Config, distinct_kinds, kind_blocks, kind_label
from .fields import blocks_text
from .figures import Line, check_lines, html_repr
from .memory import KORTHIKANTI, kv_cache_lines, new_memory_formula, saved_formula, structure
from . import stack
from .parts import says
from .parts import window as window_part
from .parts.window import window_values
from .formula import evaluate_shape
from .passes import DTYPES, run_pass
from .tensor_notation import LSE_SHAPE, local_name, notation


@dataclass(frozen=True)
class Row:
    """One intermediate tensor. `repeat` is its kind's number of blocks for block rows (every block of a kind has the
    same shapes; L for a dense model), else 1."""

    name: str  # dotted module path, e.g. "blocks.0.attn.scores"
    label: str  # what the tensor is, in the lesson's words
    symbolic: str  # lesson notation, e.g. "(B, h, T, T)"
    shape: tuple[int, ...]  # concrete shape at this Config
    numel: int
    nbytes: int  # at the trace's dtype; token ids are int64 (8 bytes)
    block: int | None  # block index, None outside the blocks
    repeat: int
    view: bool = False  # shares an earlier tensor's storage (q, k, v are views of qkv): no new memory
    saved: bool = False  # autograd keeps its storage for the backward pass
    kind: str | None = None  # a block row's kind of block ("dense" or "moe"), None outside the blocks

    @property
    def local(self) -> str:
        """The name without its block prefix: "attn.scores"."""
        return self.name.split(".", 2)[2] if self.block is not None else self.name


@dataclass(frozen=True)
class Trace:
    """The rows of one forward pass at `cfg`, with block rows collapsed (see `expanded`), and its memory."""

    cfg: Config
    dtype: str
    rows: tuple[Row, ...]
    saved_bytes: int  # what autograd keeps for the backward pass: distinct storages, parameters excluded, all blocks

    @property
    def activation_bytes(self) -> int:
        """New memory of all intermediate tensors of the pass (views excluded; each block row once per block of its
        kind)."""
        return sum(r.nbytes * r.repeat for r in self.rows if not r.view)

    @property
    def groups(self) -> tuple[BlockGroup, ...]:
        """The kinds of blocks, each with its blocks, in the order of their first blocks (the shapes table's group
        headers)."""
        return block_groups(self.cfg)

    @property
    def lines(self) -> tuple[Line, ...]:
        """The memory figures as `Line`s: new memory, saved for backward, and Korthikanti's estimate at 16 bits."""
        return memory_lines(self)

    def expanded(self) -> tuple[Row, ...]:
        """The full listing: each block's kind's rows, named blocks.0 ... blocks.{L-1} (`expanded_rows`)."""
        return expanded_rows(self.cfg, self.rows)

    def _repr_html_(self) -> str:
        """The shapes table in a Jupyter cell (`model.notebook`)."""
        return html_repr(self)


def expanded_rows(cfg: Config, rows: tuple[Row, ...]) -> tuple[Row, ...]:
    """A trace's `rows` with each block's kind's rows in every block, named blocks.0 ... blocks.{L-1}."""
    out: list[Row] = []
    by_kind: dict[str, list[Row]] = {}
    for r in rows:
        if r.block is not None:
            by_kind.setdefault(r.kind, []).append(r)
    for i, row in enumerate(rows):
        if row.block is None:
            out.append(row)
        elif i == 0 or rows[i - 1].block is None:  # first row of the blocks: emit all L blocks
            for b, kind in enumerate(cfg.block_kinds):
                out += [replace(r, name=f"blocks.{b}.{r.local}", block=b, repeat=1) for r in by_kind[kind]]
    return tuple(out)


def trace(cfg: Config, dtype: str = "fp32") -> Trace:
    """Every intermediate tensor of one forward pass at exactly `cfg`, in execution order (cached per cfg, dtype).

    `dtype` ("fp32", "bf16" or "fp16") is the floating-point type of the pass; token ids stay int64.
    Raises RuntimeError if a tensor's concrete shape differs from its lesson-notation shape.
    """
    if not isinstance(cfg, Config):
        raise TypeError(f"trace needs a model.Config, got {type(cfg).__name__}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    return _trace(cfg, dtype)


@dataclass(frozen=True)
class BlockGroup:
    """One kind of block and its blocks, by index: a group of the shapes table."""

    kind: str  # "dense" or "moe"
    blocks: tuple[int, ...]
    title: str  # "blocks 3 … 60: MoE, × 58"


ONE_KIND = "blocks 0 … {last}: × L = {L} identical {what}blocks, each with these shapes"
SOME_BLOCKS = "blocks {blocks}: {kind}, × {n}"
ONE_BLOCK = "block {block}: {kind}"


def window_text(cfg: Config, values: dict[str, str] | None = None) -> str | None:
    """Which blocks attend through the window and which keep full attention, and that the rows are a windowed block's
    (`Config.attn_kinds`; a window changes no shape): "22 sliding-window blocks (W = 512) and 4 full-attention blocks
    (5, 11, 17, 23) with the same shapes; the rows show a windowed one, whose KV cache keeps min(T, W − 1) = 511
    tokens", or None without a window. It names `values` (default `model.parts.window.window_values(cfg)` and the full
    blocks as "full"; the exported page passes "{W}" and the like, and fills them itself)."""
    if not window_part.present(cfg):
        return None
    full = tuple(i for i, k in enumerate(cfg.attn_kinds) if k == "full")
    v = {**window_values(cfg), "full": blocks_text(full)} if values is None else values
    s = "s" if cfg.L_W > 1 else ""
    sliding = (f"{v['L_W']} chunked-attention block{s} (chunks of W = {v['W']})" if cfg.chunked else
               f"{v['L_W']} sliding-window block{s} (W = {v['W']})")
    full_part = f" and {v['L_full']} full-attention block{'s' if len(full) > 1 else ''} ({v['full']})" if full else ""
    same = " with the same shapes" if full else ""
    return (f"{sliding}{full_part}{same}; the rows show a windowed one, whose KV cache keeps min(T, W − 1) = "
            f"{v['T_W']} tokens")


def _span_text(blocks: tuple[int, ...], L: int) -> str:
    """Blocks as a group's title names them: `blocks_text`, or all L but the others where that is shorter ("0 … 35
    but 3, 7, …, 35" for the 27 blocks with RoPE beside SmolLM3's NoPE blocks)."""
    listed = blocks_text(blocks)
    others = [i for i in range(L) if i not in blocks]
    but = f"0 … {L - 1} but {blocks_text(tuple(others))}"
    return but if len(but) < len(listed) else listed


def block_groups(cfg: Config) -> tuple[BlockGroup, ...]:
    """The kinds of cfg's blocks with their blocks and titles: one kind "blocks 0 … 11: × L = 12 identical blocks,
    each with these shapes" (an MoE model's: "… identical MoE blocks …"), several "blocks 0 … 2: dense, × 3",
    "blocks 3 … 60: MoE, × 58" (a kind of one block: "block 0: dense")."""
    groups = kind_blocks(cfg)
    out = []
    for kind, blocks in groups.items():
        if len(groups) == 1:
            what = f"{kind_label(cfg, kind)} " if kind != "dense" else ""
            title = ONE_KIND.format(last=cfg.L - 1, L=cfg.L, what=what) if cfg.L > 1 else "block 0"
        elif len(blocks) == 1:
            title = ONE_BLOCK.format(block=blocks[0], kind=kind_label(cfg, kind))
        else:
            title = SOME_BLOCKS.format(blocks=_span_text(blocks, cfg.L), kind=kind_label(cfg, kind), n=len(blocks))
        out.append(BlockGroup(kind, blocks, title))
    return tuple(out)


@functools.lru_cache(maxsize=512)
def _trace(cfg: Config, dtype: str) -> Trace:
    values = cfg.symbols()
    recorded = run_pass(cfg, dtype)
    shapes = notation(cfg)
    blocks = kind_blocks(cfg)
    kinds = [b.kind for b in recorded.blocks]  # the pass's blocks, one per kind
    rows = []
    for t in recorded.tensors:
        in_block = t.phase == "block"
        local = local_name(t.name)
        kind = kinds[t.block] if in_block else None
        if local not in shapes:
            raise RuntimeError(f"tensor {t.name} has no lesson notation: add it to model.tensor_notation")
        symbolic, label = shapes[local]
        if evaluate_shape(symbolic, values) != t.shape:
            raise RuntimeError(f"{t.name}: notation {symbolic} gives {evaluate_shape(symbolic, values)}, the pass gave {t.shape}")
        if local == "head" and not cfg.tie:
            label = "logits (separate head)"
        numel = 1
        for n in t.shape:
            numel *= n
        first = blocks[kind][0] if in_block else None
        rows.append(Row(name=f"blocks.{first}.{local}" if in_block else t.name, label=label, symbolic=symbolic,
                        shape=t.shape, numel=numel, nbytes=numel * t.element_bytes, block=first,
                        repeat=len(blocks[kind]) if in_block else 1, view=t.view, saved=t.saved, kind=kind))
    saved = sum(s.nbytes * (len(blocks[kinds[s.block]]) if s.phase == "block" else 1) for s in recorded.saved)
    return Trace(cfg=cfg, dtype=dtype, rows=tuple(rows), saved_bytes=saved)


@functools.lru_cache(maxsize=512)
def memory_lines(tr: Trace) -> tuple[Line, ...]:
    """New memory and saved-for-backward bytes with their formulas (checked), plus Korthikanti's 16-bit estimate
    (GPT-2's recipe: the block it was written for); the modern recipe adds its KV cache (`kv_cache_lines`), fused
    attention what eager attention would hold in its place (`eager_lines`)."""
    cfg = tr.cfg
    kinds = distinct_kinds(cfg)
    experts = says(cfg, "memory/rows")
    lines = [
        Line("memory/activations", f"activations: new memory of the pass (views not counted{experts})",
             new_memory_formula(tr.rows, cfg.head_apart, kinds), tr.activation_bytes, "bytes"),
        Line("memory/saved", "kept for the backward pass (measured with autograd's saved-tensor hooks)"
             + says(cfg, "memory/saved"), saved_formula(structure(cfg, tr.dtype)),
             tr.saved_bytes, "bytes"),
    ]
    if DTYPES[tr.dtype] == 2 and cfg.gpt2_recipe:
        estimate = cfg.L * (34 * cfg.B * cfg.T * cfg.d + 5 * cfg.B * cfg.h * cfg.T**2)
        lines.append(Line("memory/korthikanti", "Korthikanti et al. (2022) estimate, 16-bit, with dropout",
                          KORTHIKANTI, estimate, "bytes"))
    if not cfg.gpt2_recipe:
        lines += kv_cache_lines(cfg, tr.dtype)
    if cfg.attention == "fused":
        lines += eager_lines(cfg, tr.dtype)
    check_lines(lines, cfg.symbols())
    return tuple(lines)


SCORES = "(B, h, T, T)"  # the shape of eager attention's scores, masked scores and softmax


def eager_lines(cfg: Config, dtype: str) -> list[Line]:
    """With fused attention, the contrast: the (B, h, T, T) tensors that eager attention would make at exactly this
    configuration (new memory, every block) and those of them it would keep for the backward pass, read off the
    rows of the real eager pass (`trace` of `cfg` with attention="eager"), with their formulas."""
    rows = [r for r in trace(replace(cfg, attention="eager"), dtype).rows if r.symbolic == SCORES and not r.view]
    kept = [r for r in rows if r.saved]
    apart, kinds = cfg.head_apart, distinct_kinds(cfg)

    def names(rs: list[Row]) -> str:  # each once: every kind of block makes them
        return ", ".join(dict.fromkeys(r.local for r in rs))

    return [
        Line("memory/eager_scores", f"eager attention would make here: {names(rows)}, {SCORES} each, in all "
             + (f"L − {stack.stateful(cfg).COUNT} attention blocks" if stack.stateful(cfg) and not stack.beside(cfg)
                else "L blocks"),
             new_memory_formula(rows, apart, kinds), sum(r.nbytes * r.repeat for r in rows), "bytes"),
        Line("memory/eager_scores_saved", f"of them kept for backward by eager attention: {names(kept)} (fused: a "
             f"{LSE_SHAPE} log-sum-exp)",
             new_memory_formula(kept, apart, kinds), sum(r.nbytes * r.repeat for r in kept), "bytes"),
    ]
