"""Parameter and FLOP budget of a `Config`, as plain data: `budget(cfg)` -> `Budget`.

Conventions (as in the lesson, Kaplan et al. 2020 and nanoGPT's transformer_sizing):
- FLOPs, not MACs: a (m, k) @ (k, n) matmul costs 2mkn FLOPs.
- Parameters include biases and LayerNorm gains/biases. With a tied head (GPT-2) the head's weight is W_te:
  it adds no parameters, but its matmul still costs 2dV FLOPs per token.
- The token and position lookups are indexing, not matmuls: 0 FLOPs. LayerNorm, GELU, softmax, bias adds
  and the loss are not counted by the 2N rule nor by torch's FlopCounterMode (matmuls only).
- The measured forward FLOPs count the full (T, T) score matrix, as the code computes it; a causal kernel
  could skip the masked half (torch's flop_counter makes the same note).
- 2N counts every parameter once as a multiply-add; `Budget.lines` lists the terms that take 2N exactly to the
  measured count (lookups are no matmul, the head's matmul, attention's 4LTd, biases and LayerNorms).

Every figure is also a `Line` (key, label, formula, value, unit) whose formula evaluates to its value.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, replace

from .config import Config
from .figures import Line, check_lines
from .passes import run_pass


def params_emb(cfg: Config) -> int:
    """Token table W_te (V, d) + position table W_pe (T_max, d)."""
    return (cfg.V + cfg.T_max) * cfg.d


def params_attn_block(cfg: Config) -> int:
    """One block's attention: W_qkv (d, 3d) + W_o (d, d) = 4d², plus biases 3d + d."""
    return 4 * cfg.d**2 + 4 * cfg.d


def params_mlp_block(cfg: Config) -> int:
    """One block's MLP: (d, 4d) + (4d, d) = 8d², plus biases 4d + d."""
    return 8 * cfg.d**2 + 5 * cfg.d


def params_norms(cfg: Config) -> int:
    """Gain and bias of 2 LayerNorms per block plus the final one: (2L + 1) * 2d."""
    return (2 * cfg.L + 1) * 2 * cfg.d


def params_head(cfg: Config) -> int:
    """0 when tied to W_te; a separate bias-free head is (d, V)."""
    return 0 if cfg.tie else cfg.V * cfg.d


def params_approx(cfg: Config) -> int:
    """The lesson's approximation 12Ld² + (V + T_max)d (+ Vd for an untied head): no biases or norms."""
    return 12 * cfg.L * cfg.d**2 + params_emb(cfg) + params_head(cfg)


@dataclass(frozen=True)
class Budget:
    """Parameters and FLOPs of one `Config`. Per-token FLOPs are forward FLOPs / (B * T)."""

    params_emb: int
    params_attn_block: int
    params_mlp_block: int
    params_blocks: int  # L * (attention + MLP of one block); the blocks' LayerNorms are in params_norms
    params_norms: int
    params_head: int
    params_approx: int
    params_exact: int  # N: unique parameters of the real module
    flops_fwd_per_token: int  # 2N
    flops_train_per_token: int  # 6N: forward 2N + backward 4N
    flops_fwd_measured_per_token: int  # FlopCounterMode on the real forward pass (includes attention)
    flops_attn_per_token: int  # the measured part in q kᵀ and attn @ v: 4LTd
    attn_share: float  # flops_attn_per_token / flops_fwd_measured_per_token
    T_attn_equals_dense: int  # T where attention's 4LTd equals the blocks' dense 24Ld² (= 6d)
    lines: tuple[Line, ...] = ()  # every figure above (and the 2N -> measured steps) as a Line, in display order

    def as_dict(self) -> dict[str, int | float]:
        """The figures by name (without the lines)."""
        return {k: v for k, v in asdict(self).items() if k != "lines"}

    def line(self, key: str) -> Line:
        """The line with this key: `budget(cfg).line("params/exact").formula`."""
        return next(x for x in self.lines if x.key == key)

    def _repr_html_(self) -> str:
        """Every budget line in a Jupyter cell (`model.notebook`)."""
        from .notebook import budget_html
        return budget_html(self)


@functools.lru_cache(maxsize=512)
def budget(cfg: Config) -> Budget:
    """Parameters (analytic parts, exact total from the real module) and FLOPs (2N, 6N and measured).

    Raises RuntimeError if the analytic parts do not add up to the real module's parameter count.
    """
    p = run_pass(cfg, "fp32")
    exact = p.params_embed + cfg.L * p.params_block + p.params_ln_f + p.params_head
    parts = (params_emb(cfg), cfg.L * (params_attn_block(cfg) + params_mlp_block(cfg)), params_norms(cfg), params_head(cfg))
    if sum(parts) != exact:
        raise RuntimeError(f"analytic parameter parts {parts} sum to {sum(parts):,}, the module has {exact:,}")
    tokens = cfg.B * cfg.T
    if (cfg.L * p.flops_block + p.flops_head) % tokens or p.flops_attn_block % tokens:
        raise RuntimeError("measured FLOPs are not a whole number per token")
    measured = (cfg.L * p.flops_block + p.flops_head) // tokens
    attn = cfg.L * p.flops_attn_block // tokens
    dense_block = (p.flops_block - p.flops_attn_block) / tokens  # 24d² per token per block
    attn_per_T = p.flops_attn_block / tokens / cfg.T  # 4d per token per block per position
    b = Budget(
        params_emb=parts[0],
        params_attn_block=params_attn_block(cfg),
        params_mlp_block=params_mlp_block(cfg),
        params_blocks=parts[1],
        params_norms=parts[2],
        params_head=parts[3],
        params_approx=params_approx(cfg),
        params_exact=exact,
        flops_fwd_per_token=2 * exact,
        flops_train_per_token=6 * exact,
        flops_fwd_measured_per_token=measured,
        flops_attn_per_token=attn,
        attn_share=attn / measured,
        T_attn_equals_dense=round(dense_block / attn_per_T),
    )
    lines = budget_lines(cfg, b)
    check_lines(lines, cfg.symbols())
    return replace(b, lines=lines)


def _N(cfg: Config) -> str:
    """N exact in lesson notation: "(V + T_max)·d + L·(12d² + 13d) + 2d", plus "V·d" for an untied head."""
    return "(V + T_max)·d + L·(12d² + 13d) + 2d" + ("" if cfg.tie else " + V·d")


def budget_lines(cfg: Config, b: Budget) -> tuple[Line, ...]:
    """The budget as `Line`s in reading order: parameters, then FLOPs from 2N to the measured count.

    The steps from 2N to the measured forward FLOPs add up exactly (a test checks it): 2N counts every
    parameter as one multiply-add, but token and position lookups are indexing, the head's matmul uses W_te
    again when tied, attention's q kᵀ and attn @ v multiply activations by activations (no parameters), and
    biases and LayerNorm gains are no matmul weights.
    """
    N = _N(cfg)
    head = (Line("params/head", "head: tied to W_te, no parameters of its own", "0", 0, "params") if cfg.tie else
            Line("params/head", "head: a separate (d, V) matrix", "V·d", b.params_head, "params"))
    lookups, head_mm = -2 * b.params_emb, 2 * cfg.V * cfg.d
    attention, no_matmul = b.flops_attn_per_token, -2 * (13 * cfg.L * cfg.d + 2 * cfg.d)
    if cfg.tie:
        head_step = Line("flops/steps/head", "+ the head's matmul: the tied W_te, counted once in N as a lookup table",
                         "2Vd", head_mm, "FLOP")
    else:
        head_step = Line("flops/steps/head", "+ the head's matmul: already in 2N (the untied head's V·d parameters)",
                         "0", 0, "FLOP")
    measured = b.flops_fwd_measured_per_token
    if 2 * b.params_exact + lookups + head_step.value + attention + no_matmul != measured:
        raise RuntimeError("the steps from 2N do not reach the measured forward FLOPs")
    return (
        Line("params/emb", "embeddings: token table W_te and position table W_pe", "(V + T_max)·d", b.params_emb,
             "params"),
        Line("params/attn_block", "attention, one block: W_qkv (d, 3d), W_o (d, d) and their biases", "4d² + 4d",
             b.params_attn_block, "params"),
        Line("params/mlp_block", "MLP, one block: (d, 4d), (4d, d) and their biases", "8d² + 5d",
             b.params_mlp_block, "params"),
        Line("params/blocks", "attention + MLP of all L blocks", "L·(12d² + 9d)", b.params_blocks, "params"),
        Line("params/norms", "LayerNorms: a gain and a bias, 2 per block and a final one", "(2L + 1)·2d",
             b.params_norms, "params"),
        head,
        Line("params/exact", "N: every parameter, as the module counts it", N, b.params_exact, "params"),
        Line("params/approx", "N, the lesson's approximation (no biases, no LayerNorms)",
             "12Ld² + (V + T_max)·d" + ("" if cfg.tie else " + V·d"), b.params_approx, "params"),
        Line("params/mlp_share", "the MLP's share of one block's parameters", "(8d² + 5d) / (12d² + 9d)",
             b.params_mlp_block / (b.params_attn_block + b.params_mlp_block), "share"),
        Line("flops/forward", "forward FLOPs per token, 2N", f"2·({N})", b.flops_fwd_per_token, "FLOP"),
        Line("flops/train", "training FLOPs per token, 6N (forward 2N + backward 4N)", f"6·({N})",
             b.flops_train_per_token, "FLOP"),
        Line("flops/steps/lookups", "− token and position lookups: indexing, no matmul", "−2(V + T_max)·d", lookups,
             "FLOP"),
        head_step,
        Line("flops/steps/attention", "+ attention's q kᵀ and attn @ v over the full (T, T) matrix (a causal kernel "
             "skips about half)", "4LTd", attention, "FLOP"),
        Line("flops/steps/no_matmul", "− biases and LayerNorm parameters: no matmul weights", "−2(13Ld + 2d)",
             no_matmul, "FLOP"),
        Line("flops/forward_measured", "= forward FLOPs per token as the code runs (torch's flop counter)",
             "L·(24d² + 4Td) + 2Vd", measured, "FLOP"),
        Line("flops/attention_share", "attention's share of the measured forward FLOPs",
             "4LTd / (L·(24d² + 4Td) + 2Vd)", b.attn_share, "share"),
        Line("flops/T_attention_equals_dense", "T at which attention's 4LTd equals the blocks' dense 24Ld²", "6d",
             b.T_attn_equals_dense, "tokens"),
    )


# The parameter chart: (line key, bar label, adds up to N); the page marks the bars that add up to N with *.
CHART: tuple[tuple[str, str, bool], ...] = (
    ("params/emb", "embeddings", True),
    ("params/blocks", "blocks × L", True),
    ("params/attn_block", "attention, 1 block", False),
    ("params/mlp_block", "MLP, 1 block", False),
    ("params/norms", "LayerNorms", True),
    ("params/head", "head", True),
)
CHART_NOTE = "* these bars add up to N; the two per-block bars are the halves of each block in \"blocks × L\"."
GROUPS = {"params": "Parameters", "flops": "FLOPs per token (FLOPs, not MACs)", "memory": "Activation memory"}


def clear_caches() -> None:
    """Forget every cached pass, trace and budget (for benchmarks that must measure uncached calls)."""
    from . import memory, passes, tracing

    for cached in (passes._module, run_pass, tracing._trace, tracing.memory_lines, memory.saved_formula, budget):
        cached.cache_clear()
