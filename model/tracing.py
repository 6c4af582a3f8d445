"""Every intermediate tensor of one real forward pass, as data: `trace(cfg, dtype)` -> `Trace` of `Row`s.

The pass is `model.passes.run_pass`: training mode, meta device (shapes without memory, at any size), one block of
each kind (dense; a mixture of experts). Each row's lesson-notation shape is evaluated and compared with the concrete
shape on every trace: notation and code cannot drift apart. Every block of a kind repeats that block's shapes
exactly; its rows are named after the kind's first block (blocks.0 for a dense model, blocks.3 for DeepSeek's first
MoE block), carry `repeat` = the kind's number of blocks (L for a dense model) and their `kind`; `Trace.groups` says
which blocks each kind is ("blocks 0 … 2: dense, × 3"), and `Trace.expanded()` lists all L blocks. Cost is
independent of L.

A mixture of experts' rows (`MOE_NOTATION`): the router's logits and probabilities (B, T, E), the top-k weights and
experts (B, T, k), and the B·T·k (token, expert) pairs dispatched to the experts, (B·T·k, d) in all. Routing is
data-dependent; the pass never drops or pads a token, so every tensor's shape is exact whatever the routing, and an
expert's share of the B·T·k rows is a slice (`ROUTING_NOTE`): B·T·k/E rows when routing is balanced, the real
counts of a real pass in `model.values`.

Memory, honestly: a row is a *view* when it shares an earlier tensor's storage (q, k, v of qkv; k and v
expanded to h heads when h_kv = 1): no new memory.
`activation_bytes` counts new memory only; `saved_bytes` is what autograd keeps for the backward pass
(measured). Records -> totals (`Trace`, `Trace.lines`) -> formatting (`model.report`, the app).

Shapes and labels: `NOTATION` (GPT-2's recipe, as the lesson draws it) and `notation(cfg)` for any recipe
(`RECIPE_NOTATION`: RoPE's angles, RMSNorm's statistics, k and v at h_kv heads, SwiGLU's gate and up, fused
attention's log-sum-exp, ...).

Fused attention (`Config.attention`): the meta pass runs the CPU's flash kernel through torch's meta function of
it (`model.gpt.fused_attention`), so its rows are the kernel's output and its (B, h, T) log-sum-exp, and no
(B, h, T, T) row; `eager_lines` says what eager attention would make in their place (from a real eager pass).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace

from .config import KIND_LABELS, Config, distinct_kinds, kind_blocks
from .figures import Line, check_lines, html_repr
from .memory import KORTHIKANTI, kv_cache_lines, new_memory_formula, saved_formula, structure
from .formula import evaluate_shape
from .passes import DTYPES, run_pass

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

# The modern recipe's tensors (and its forms of GPT-2's rows), in the same notation; `notation(cfg)` picks.
RECIPE_NOTATION: dict[str, tuple[str, str]] = {
    "rope.angles": ("(T, d_head)", "RoPE angles t·θ_i, θ_i = 10000^(−2i/d_head), each frequency twice"),
    "rope.cos": ("(T, d_head)", "cos of the angles"),
    "rope.sin": ("(T, d_head)", "sin of the angles"),
    "ln_1.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_1": ("(B, T, d)", "RMSNorm before attention"),
    "attn.qkv": ("(B, T, d + 2h_kv·d_head)", "fused q, k, v projection (h heads for q, h_kv for k and v)"),
    "attn.k": ("(B, h_kv, T, d_head)", "k split into h_kv heads"),
    "attn.v": ("(B, h_kv, T, d_head)", "v split into h_kv heads"),
    "attn.q_norm.rstd": ("(B, h, T, 1)", "QK-norm: RMS statistic of q, per head"),
    "attn.q_norm": ("(B, h, T, d_head)", "q after QK-norm (RMSNorm over d_head)"),
    "attn.k_norm.rstd": ("(B, h_kv, T, 1)", "QK-norm: RMS statistic of k, per head"),
    "attn.k_norm": ("(B, h_kv, T, d_head)", "k after QK-norm (RMSNorm over d_head)"),
    "attn.q_rot": ("(B, h, T, d_head)", "q rotated by position (RoPE)"),
    "attn.k_rot": ("(B, h_kv, T, d_head)", "k rotated by position (RoPE)"),
    "attn.k_heads": ("(B, h, T, d_head)", "k expanded from h_kv to h heads (each serves h/h_kv query heads)"),
    "attn.v_heads": ("(B, h, T, d_head)", "v expanded from h_kv to h heads (each serves h/h_kv query heads)"),
    "ln_2.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_2": ("(B, T, d)", "RMSNorm before the MLP"),
    "mlp.fc": ("(B, T, d_ff)", "MLP hidden, d → d_ff"),
    "mlp.gelu": ("(B, T, d_ff)", "GELU"),
    "mlp.gate": ("(B, T, d_ff)", "SwiGLU gate: x W_gate"),
    "mlp.up": ("(B, T, d_ff)", "SwiGLU up: x W_up"),
    "mlp.silu": ("(B, T, d_ff)", "SiLU(gate)"),
    "mlp.gated": ("(B, T, d_ff)", "SiLU(gate) · up"),
    "mlp.proj": ("(B, T, d)", "MLP out, d_ff → d"),
    "ln_f.rstd": ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)"),
    "ln_f": ("(B, T, d)", "final RMSNorm"),
    "attn.lse": ("(B, h, T)", "log-sum-exp of each query's scores, fp32 whatever the dtype: kept for backward"),
}
# A mixture of experts' tensors (`model.gpt.MoE`), in place of the MLP's in its blocks.
MOE_NOTATION: dict[str, tuple[str, str]] = {
    "moe.router": ("(B, T, E)", "router logits x W_router, a score per expert"),
    "moe.probs": ("(B, T, E)", "softmax over the E experts, fp32 whatever the dtype"),
    "moe.top_weights": ("(B, T, k)", "the k largest probabilities of each token (top-k)"),
    "moe.top_experts": ("(B, T, k)", "which k experts each token goes to (int64)"),
    "moe.weights": ("(B, T, k)", "the k weights renormalised to sum to 1"),
    "moe.order": ("(B·T·k)", "the B·T·k (token, expert) pairs sorted by expert (int64)"),
    "moe.counts": ("(E)", "tokens each expert got, its share of the B·T·k rows (int64; B·T·k/E if balanced)"),
    "moe.token": ("(B·T·k)", "the token of each sorted pair (int64)"),
    "moe.dispatched": ("(B·T·k, d)", "tokens dispatched to their experts, sorted by expert: k rows per token"),
    "moe.experts.gate": ("(B·T·k, d_expert)", "each expert's gate x W_gate[e] over its share of the rows"),
    "moe.experts.up": ("(B·T·k, d_expert)", "each expert's up x W_up[e] over its share"),
    "moe.experts.silu": ("(B·T·k, d_expert)", "SiLU(gate)"),
    "moe.experts.gated": ("(B·T·k, d_expert)", "SiLU(gate) · up"),
    "moe.experts.fc": ("(B·T·k, d_expert)", "each expert's hidden x W_fc[e] over its share of the rows"),
    "moe.experts.gelu": ("(B·T·k, d_expert)", "GELU"),
    "moe.experts.down": ("(B·T·k, d)", "each expert's output, d_expert → d (W_down[e])"),
    "moe.sorted_weights": ("(B·T·k, 1)", "each row's routing weight"),
    "moe.weighted": ("(B·T·k, d)", "expert outputs times their weights"),
    "moe.combined": ("(B, T, d)", "the weighted combine: each token's k rows added back"),
    "moe.shared.gate": ("(B, T, E_shared·d_shared)", "shared experts' gate x W_gate (every token)"),
    "moe.shared.up": ("(B, T, E_shared·d_shared)", "shared experts' up x W_up"),
    "moe.shared.silu": ("(B, T, E_shared·d_shared)", "SiLU(gate)"),
    "moe.shared.gated": ("(B, T, E_shared·d_shared)", "SiLU(gate) · up"),
    "moe.shared.fc": ("(B, T, E_shared·d_shared)", "shared experts' hidden (every token)"),
    "moe.shared.gelu": ("(B, T, E_shared·d_shared)", "GELU"),
    "moe.shared.proj": ("(B, T, d)", "shared experts' output"),
    "moe.shared_gate": ("(B, T, 1)", "shared experts' gate logit x W_shared_gate (d, 1)"),
    "moe.shared_scale": ("(B, T, 1)", "sigmoid of the gate logit"),
    "moe.shared_out": ("(B, T, d)", "shared experts' output times their gate"),
    "moe.out": ("(B, T, d)", "routed experts + shared experts"),
}
ROUTING_NOTE = ("routing: the B·T·k (token, expert) rows are exact whatever the routing (no token dropped or padded); "
                "an expert's share of them is a slice, B·T·k/E rows when routing is balanced (a real pass's shares: "
                "python -m model --values)")
LSE_SHAPE = RECIPE_NOTATION["attn.lse"][0]
FUSED_ATTN_V = ("(B, h, T, d_head)",
                "fused attention: softmax(q kᵀ / √d_head, causal) @ v in one kernel, no (T, T) scores")
_RMS_ROWS = {"ln_1", "ln_2", "ln_f"}  # their RECIPE_NOTATION label names RMSNorm
# Gemma's extras (`model.config.GEMMA_FIELDS`).
GEMMA_NOTATION: dict[str, tuple[str, str]] = {
    "scaled": ("(B, T, d)", "tok · √d (Gemma's embedding scale)"),
    "attn.capped": ("(B, h, T, T)", "soft-capped scores c·tanh(scores / c)"),
    "post_ln_1.rstd": RECIPE_NOTATION["ln_1.rstd"],
    "post_ln_1": ("(B, T, d)", "RMSNorm on attention's output (sandwich norm)"),
    "post_ln_2.rstd": RECIPE_NOTATION["ln_2.rstd"],
    "post_ln_2": ("(B, T, d)", "RMSNorm on the MLP's output (sandwich norm)"),
    "capped": ("(B, T, V)", "soft-capped logits c·tanh(logits / c)"),
}
GEGLU_GATED = ("(B, T, d_ff)", "GELU(gate) · up")
# gpt-oss's extras (`model.config.OSS_FIELDS`): the sinks' columns of the softmax, the clamped SwiGLU, the biases.
SINK_NOTATION: dict[str, tuple[str, str]] = {
    "attn.sink": ("(B, h, T, 1)", "each head's sink logit s, one learned per head, a column for every query (a view)"),
    "attn.with_sink": ("(B, h, T, T + 1)", "masked scores and each head's sink logit s (one learned per head), one "
                       "more column"),
    "attn.attn_sink": ("(B, h, T, T + 1)", "softmax over the T keys and the sink: the sink's column takes its share"),
    "attn.attn": ("(B, h, T, T)", "attention weights, the sink's column dropped (a view): rows sum to less than 1"),
}
CLAMPED_GATED = "clamped SwiGLU: gate·σ(α·gate)·(up + 1), gate ≤ limit, −limit ≤ up ≤ limit"
# A sliding window's forms (`Config.window`): the traced block is a windowed one (`model.config.one_of_each`).
WINDOW_MASKED = ("(B, h, T, T)", "window mask: −inf above the diagonal and W or more keys back, a band of W "
                 "(the full (T, T) scores are still computed)")
WINDOW_NOTATION: dict[str, tuple[str, str]] = {
    "window_mask": ("(T, T)", "the band of W keys: 0 where a query sees a key, −inf elsewhere (made once per pass, "
                    "every windowed block's fused kernel takes it and keeps it for backward)"),
}


def notation(cfg: Config) -> dict[str, tuple[str, str]]:
    """Shape and label of every tensor at this configuration's recipe: `NOTATION` for GPT-2's, else with the
    recipe's rows and forms (k and v at h_kv heads, d_ff, h·d_head where d_head is set apart)."""
    if cfg.gpt2_recipe:
        return NOTATION
    out = {**NOTATION, **{k: v for k, v in RECIPE_NOTATION.items() if k not in _RMS_ROWS or cfg.norm == "rmsnorm"}}
    if cfg.moe:
        out.update(MOE_NOTATION)
    if cfg.attention == "fused":
        out["attn.attn_v"] = FUSED_ATTN_V
    if cfg.gemma:
        out.update(GEMMA_NOTATION)
        if cfg.mlp == "geglu":
            out["mlp.gated"] = GEGLU_GATED
    if cfg.sinks:
        out.update(SINK_NOTATION)
    if cfg.swiglu_limit is not None:
        for row in ("mlp.gated", "moe.experts.gated", "moe.shared.gated"):
            out[row] = (out[row][0], CLAMPED_GATED)
    if cfg.expert_bias:
        out["moe.router"] = ("(B, T, E)", "router logits x W_router + b, a score per expert")
    if cfg.window is not None:
        out.update(WINDOW_NOTATION, **{"attn.masked": WINDOW_MASKED})
        if cfg.attention == "fused":
            out["attn.attn_v"] = (FUSED_ATTN_V[0], "fused attention: softmax(q kᵀ / √d_head + the band of W) @ v in "
                                  "one kernel, no (T, T) scores")
    if cfg.head_dim is not None:  # d_head set apart: the heads' width h·d_head need not be d
        out["attn.qkv"] = ("(B, T, (h + 2h_kv)·d_head)", out["attn.qkv"][1])
        out["attn.merged"] = ("(B, T, h·d_head)", "heads merged back")
        out["attn.proj"] = ("(B, T, d)", "output projection, h·d_head → d")
    return out


BLOCK_PREFIX = "blocks.0."  # a dense model's block rows (the exported page's)
_IN_BLOCK = re.compile(r"^blocks\.\d+\.")


def local_name(name: str) -> str:
    """A tensor's name without its block prefix: "blocks.3.moe.router" -> "moe.router"; "ln_f" stays."""
    return _IN_BLOCK.sub("", name)


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
        """The full listing: each block's kind's rows, named blocks.0 ... blocks.{L-1}."""
        out: list[Row] = []
        by_kind: dict[str, list[Row]] = {}
        for r in self.rows:
            if r.block is not None:
                by_kind.setdefault(r.kind, []).append(r)
        for i, row in enumerate(self.rows):
            if row.block is None:
                out.append(row)
            elif i == 0 or self.rows[i - 1].block is None:  # first row of the blocks: emit all L blocks
                for b, kind in enumerate(self.cfg.block_kinds):
                    out += [replace(r, name=f"blocks.{b}.{r.local}", block=b, repeat=1) for r in by_kind[kind]]
        return tuple(out)

    def _repr_html_(self) -> str:
        """The shapes table in a Jupyter cell (`model.notebook`)."""
        return html_repr(self)


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


def blocks_text(blocks: tuple[int, ...]) -> str:
    """Block indices as the tables write them: "0 … 2"; "1, 3, …, 47" (every 2nd); "0, 4 … 9, 12"."""
    if len(blocks) > 2:
        step = blocks[1] - blocks[0]
        if all(b - a == step for a, b in zip(blocks, blocks[1:])):
            return f"{blocks[0]} … {blocks[-1]}" if step == 1 else f"{blocks[0]}, {blocks[1]}, …, {blocks[-1]}"
    runs: list[list[int]] = []
    for b in blocks:
        if runs and b == runs[-1][-1] + 1:
            runs[-1].append(b)
        else:
            runs.append([b])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}, {r[1]}" if len(r) == 2 else f"{r[0]} … {r[-1]}"
                     for r in runs)


def block_groups(cfg: Config) -> tuple[BlockGroup, ...]:
    """The kinds of cfg's blocks with their blocks and titles: one kind "blocks 0 … 11: × L = 12 identical blocks,
    each with these shapes" (an MoE model's: "… identical MoE blocks …"), several "blocks 0 … 2: dense, × 3",
    "blocks 3 … 60: MoE, × 58" (a kind of one block: "block 0: dense")."""
    groups = kind_blocks(cfg)
    out = []
    for kind, blocks in groups.items():
        if len(groups) == 1:
            what = f"{KIND_LABELS[kind]} " if kind != "dense" else ""
            title = ONE_KIND.format(last=cfg.L - 1, L=cfg.L, what=what) if cfg.L > 1 else "block 0"
        elif len(blocks) == 1:
            title = ONE_BLOCK.format(block=blocks[0], kind=KIND_LABELS[kind])
        else:
            title = SOME_BLOCKS.format(blocks=blocks_text(blocks), kind=KIND_LABELS[kind], n=len(blocks))
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
            raise RuntimeError(f"tensor {t.name} has no lesson notation: add it to model.tracing.NOTATION")
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
    experts = ", k experts' worth of rows per token in the MoE blocks" if cfg.moe else ""
    lines = [
        Line("memory/activations", f"activations: new memory of the pass (views not counted{experts})",
             new_memory_formula(tr.rows, cfg.head_dim is not None, kinds), tr.activation_bytes, "bytes"),
        Line("memory/saved", "kept for the backward pass (measured with autograd's saved-tensor hooks)",
             saved_formula(structure(cfg, tr.dtype)), tr.saved_bytes, "bytes"),
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
    apart, kinds = cfg.head_dim is not None, distinct_kinds(cfg)

    def names(rs: list[Row]) -> str:
        return ", ".join(r.local for r in rs)

    return [
        Line("memory/eager_scores", f"eager attention would make here: {names(rows)}, {SCORES} each, in all L blocks",
             new_memory_formula(rows, apart, kinds), sum(r.nbytes * r.repeat for r in rows), "bytes"),
        Line("memory/eager_scores_saved", f"of them kept for backward by eager attention: {names(kept)} (fused: a "
             f"{LSE_SHAPE} log-sum-exp)",
             new_memory_formula(kept, apart, kinds), sum(r.nbytes * r.repeat for r in kept), "bytes"),
    ]
