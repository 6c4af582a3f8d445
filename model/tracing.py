"""Every intermediate tensor of one real forward pass, as data: `trace(cfg, dtype)` -> `Trace` of `Row`s.

The pass is `model.passes.run_pass`: training mode, meta device (shapes without memory, at any size), block 0
only. Each row's lesson-notation shape is evaluated and compared with the concrete shape on every trace:
notation and code cannot drift apart. Blocks 1 ... L-1 repeat block 0's shapes exactly; their rows carry
`repeat = L`, and `Trace.expanded()` lists all L blocks. Cost is independent of L.

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
from dataclasses import dataclass, replace

from .config import Config
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
LSE_SHAPE = RECIPE_NOTATION["attn.lse"][0]
FUSED_ATTN_V = ("(B, h, T, d_head)",
                "fused attention: softmax(q kᵀ / √d_head, causal) @ v in one kernel, no (T, T) scores")
_RMS_ROWS = {"ln_1", "ln_2", "ln_f"}  # their RECIPE_NOTATION label names RMSNorm


def notation(cfg: Config) -> dict[str, tuple[str, str]]:
    """Shape and label of every tensor at this configuration's recipe: `NOTATION` for GPT-2's, else with the
    recipe's rows and forms (k and v at h_kv heads, d_ff, h·d_head where d_head is set apart)."""
    if cfg.gpt2_recipe:
        return NOTATION
    out = {**NOTATION, **{k: v for k, v in RECIPE_NOTATION.items() if k not in _RMS_ROWS or cfg.norm == "rmsnorm"}}
    if cfg.attention == "fused":
        out["attn.attn_v"] = FUSED_ATTN_V
    if cfg.head_dim is not None:  # d_head set apart: the heads' width h·d_head need not be d
        out["attn.qkv"] = ("(B, T, (h + 2h_kv)·d_head)", out["attn.qkv"][1])
        out["attn.merged"] = ("(B, T, h·d_head)", "heads merged back")
        out["attn.proj"] = ("(B, T, d)", "output projection, h·d_head → d")
    return out


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
    view: bool = False  # shares an earlier tensor's storage (q, k, v are views of qkv): no new memory
    saved: bool = False  # autograd keeps its storage for the backward pass

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
    saved_bytes: int  # what autograd keeps for the backward pass: distinct storages, parameters excluded, block × L

    @property
    def activation_bytes(self) -> int:
        """New memory of all intermediate tensors of the pass (views excluded; each block row counted L times)."""
        return sum(r.nbytes * r.repeat for r in self.rows if not r.view)

    @property
    def lines(self) -> tuple[Line, ...]:
        """The memory figures as `Line`s: new memory, saved for backward, and Korthikanti's estimate at 16 bits."""
        return memory_lines(self)

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


@functools.lru_cache(maxsize=512)
def _trace(cfg: Config, dtype: str) -> Trace:
    values = cfg.symbols()
    recorded = run_pass(cfg, dtype)
    shapes = notation(cfg)
    rows = []
    for t in recorded.tensors:
        in_block = t.phase == "block"
        local = t.name[len(BLOCK_PREFIX):] if t.name.startswith(BLOCK_PREFIX) else t.name
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
        rows.append(Row(name=t.name, label=label, symbolic=symbolic, shape=t.shape, numel=numel,
                        nbytes=numel * t.element_bytes, block=0 if in_block else None,
                        repeat=cfg.L if in_block else 1, view=t.view, saved=t.saved))
    saved = sum(s.nbytes * (cfg.L if s.phase == "block" else 1) for s in recorded.saved)
    return Trace(cfg=cfg, dtype=dtype, rows=tuple(rows), saved_bytes=saved)


@functools.lru_cache(maxsize=512)
def memory_lines(tr: Trace) -> tuple[Line, ...]:
    """New memory and saved-for-backward bytes with their formulas (checked), plus Korthikanti's 16-bit estimate
    (GPT-2's recipe: the block it was written for); the modern recipe adds its KV cache (`kv_cache_lines`), fused
    attention what eager attention would hold in its place (`eager_lines`)."""
    cfg = tr.cfg
    lines = [
        Line("memory/activations", "activations: new memory of the pass (views not counted)",
             new_memory_formula(tr.rows, cfg.head_dim is not None), tr.activation_bytes, "bytes"),
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
    apart = cfg.head_dim is not None

    def names(rs: list[Row]) -> str:
        return ", ".join(r.local for r in rs)

    return [
        Line("memory/eager_scores", f"eager attention would make here: {names(rows)}, {SCORES} each, in all L blocks",
             new_memory_formula(rows, apart), sum(r.nbytes * r.repeat for r in rows), "bytes"),
        Line("memory/eager_scores_saved", f"of them kept for backward by eager attention: {names(kept)} (fused: a "
             f"{LSE_SHAPE} log-sum-exp)",
             new_memory_formula(kept, apart), sum(r.nbytes * r.repeat for r in kept), "bytes"),
    ]
