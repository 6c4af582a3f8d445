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

- A mixture of experts (`Config.experts`): N counts every expert (what memory holds); N_active the parameters one
  token uses, every expert but the E − k routed ones it is not sent to in each MoE block (the router and the shared
  experts included). 2N_active and 6N_active are its FLOPs per token, and 6N_active is what the training chain uses
  (C = 6·N_active·D, `model.training`); 2N and 6N are what a token would cost if it ran every expert. The router's
  (d, E) matmul and the shared experts' gate (d, 1) are matmuls; the top-k, the renormalisation, the dispatch and the
  weighted combine are not. The experts' grouped matmul counts 2·(B·T·k)·d·d_expert per matrix whatever the
  routing (`model.grouped`).

Every figure is also a `Line` (key, label, formula, value, unit) whose formula evaluates to its value.
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, replace
from fractions import Fraction

from .config import Config, distinct_kinds, kind_counts
from .figures import Line, check_lines, html_repr
from .memory import block_counts
from .passes import run_pass


def params_emb(cfg: Config) -> int:
    """Token table W_te (V, d) + position table W_pe (T_max, d); RoPE has no table: V·d."""
    return (cfg.V + (cfg.T_max if cfg.positions == "learned" else 0)) * cfg.d


def _qkv_width(cfg: Config) -> int:
    """Columns of the fused q, k, v projection: (h + 2h_kv)·d_head (GPT-2: 3d)."""
    return (cfg.h + 2 * cfg.h_kv) * cfg.d_head


def params_attn_weights(cfg: Config) -> int:
    """One block's attention matrices: W_qkv (d, (h + 2h_kv)·d_head) + W_o (h·d_head, d) = 2(h + h_kv)·d_head·d.
    Latent attention's: W_DQ (d, d_cq) and W_UQ (d_cq, h·(d_nope + d_R)), or W_Q (d, h·(d_nope + d_R)); W_DKV
    (d, d_c + d_R), W_UKV (d_c, h·(d_nope + d_v)) and W_o (h·d_v, d)."""
    if cfg.mla:
        q = cfg.h * cfg.d_head * (cfg.d if cfg.d_cq is None else cfg.d_cq) + (cfg.d * cfg.d_cq if cfg.d_cq else 0)
        return (q + cfg.d * (cfg.d_c + cfg.d_R) + cfg.d_c * cfg.h * (cfg.d_nope + cfg.d_v)
                + cfg.h * cfg.d_v * cfg.d)
    return cfg.d * _qkv_width(cfg) + cfg.h * cfg.d_head * cfg.d


def latent_norms(cfg: Config) -> int:
    """Latent attention's RMSNorm gains, one block: the latent's (d_c) and the queries' latent's (d_cq); else 0."""
    return (cfg.d_c + (cfg.d_cq or 0)) if cfg.mla else 0


def attention_formula(cfg: Config, n: str = "", T: str = "T") -> str:
    """Attention's q kᵀ and attn @ v FLOPs per token in lesson notation, over `n` blocks (a prefix such as "L") and
    `T` keys: "4LT·h·d_head" (h query heads, whatever h_kv); latent attention's q and k are d_nope + d_R wide and its
    v d_v, "2LT·h·(d_nope + d_R + d_v)". `T` = "" gives the FLOPs per key ("4h·d_head", "4L·h·d_head")."""
    if cfg.mla:
        return f"2{n}{T}{'·' if n or T else ''}h·(d_nope + d_R + d_v)"
    return f"4{n}{T}{'·' if n or T else ''}h·d_head"


def params_attn_block(cfg: Config) -> int:
    """One block's attention: its matrices, their biases (q, k, v: (h + 2h_kv)·d_head; W_o: d), QK-norm's gains
    (2·d_head) and gpt-oss's sinks (h). GPT-2: W_qkv (d, 3d) + W_o (d, d) = 4d², plus biases 3d + d."""
    biases = (_qkv_width(cfg) if cfg.qkv_bias else 0) + (cfg.d if cfg.proj_bias else 0)
    return (params_attn_weights(cfg) + biases + (2 * cfg.d_head if cfg.qk_norm else 0) + (cfg.h if cfg.sinks else 0)
            + latent_norms(cfg))


def _mlp_matrices(cfg: Config) -> int:
    """GELU has two matrices (d, d_ff) and (d_ff, d); SwiGLU three: W_gate, W_up and W_down."""
    return 3 if cfg.glu else 2


def params_mlp_block(cfg: Config) -> int:
    """One dense block's MLP: 2·d·d_ff (GELU; 8d² in GPT-2) or 3·d·d_ff (SwiGLU), plus biases (d_ff per hidden matrix
    + d). 0 where no block is dense (every MLP a mixture of experts)."""
    if "dense" not in cfg.block_kinds:
        return 0
    k = _mlp_matrices(cfg)
    return k * cfg.d * cfg.d_ff + ((k - 1) * cfg.d_ff + cfg.d if cfg.mlp_bias else 0)


def params_router(cfg: Config, matrices: bool = False) -> int:
    """One MoE block's router W_router (d, E) and gpt-oss's bias (E,): d·E (+ E) (0 for a dense model); `matrices`
    leaves the bias out."""
    if not cfg.moe:
        return 0
    return cfg.d * cfg.E + (cfg.E if cfg.expert_bias and not matrices else 0)


def expert_biases(cfg: Config) -> int:
    """One expert's biases (`expert_bias`, gpt-oss): d_expert per matrix into the expert's width and d out of it,
    2d_expert + d (SwiGLU) or d_expert + d (GELU); 0 without."""
    return (_mlp_matrices(cfg) - 1) * cfg.d_expert + cfg.d if cfg.moe and cfg.expert_bias else 0


def params_experts_block(cfg: Config, experts: int | None = None, matrices: bool = False) -> int:
    """One MoE block's routed experts, each the recipe's MLP of width d_expert, its biases where `expert_bias`:
    3E·d·d_expert (SwiGLU) or 2E·d·d_expert (GELU), + E·(2d_expert + d) with biases; `experts` = k gives those one
    token uses, `matrices` leaves the biases out."""
    n = cfg.E if experts is None else experts
    if not cfg.moe:
        return 0
    return n * (_mlp_matrices(cfg) * cfg.d * cfg.d_expert + (0 if matrices else expert_biases(cfg)))


def params_shared_block(cfg: Config) -> int:
    """One MoE block's shared experts, one MLP of width E_shared·d_shared without biases, and their gate (d, 1)."""
    if not cfg.moe or not cfg.E_shared:
        return 0
    return _mlp_matrices(cfg) * cfg.d * cfg.E_shared * cfg.d_shared + (cfg.d if cfg.shared_gate else 0)


def params_moe_block(cfg: Config, matrices: bool = False) -> int:
    """One MoE block's mixture of experts: router, every routed expert, shared experts (`matrices`: without the
    router's and the experts' biases)."""
    return params_router(cfg, matrices) + params_experts_block(cfg, matrices=matrices) + params_shared_block(cfg)


def params_blocks(cfg: Config) -> int:
    """Attention and MLP of all L blocks: L·attention + (dense blocks)·MLP + L_moe·mixture of experts (norms apart)."""
    return (cfg.L * params_attn_block(cfg) + (cfg.L - cfg.L_moe) * params_mlp_block(cfg)
            + cfg.L_moe * params_moe_block(cfg))


def params_skipped(cfg: Config) -> int:
    """The parameters a token does not use: the E − k routed experts it is not sent to, in every MoE block."""
    return cfg.L_moe * (params_experts_block(cfg) - params_experts_block(cfg, cfg.k)) if cfg.moe else 0


def _norm_params(cfg: Config) -> int:
    """One norm over d: LayerNorm's gain and bias (2d; d without biases), RMSNorm's gain (d)."""
    return 2 * cfg.d if cfg.norm_bias else cfg.d


def norms_per_block(cfg: Config) -> int:
    """Norms over d in each block: 2, or 4 with Gemma's sandwich norms (`post_norms`)."""
    return 4 if cfg.post_norms else 2


def params_norms(cfg: Config) -> int:
    """Norms over d, 2 per block (4 with `post_norms`) plus the final one: (2L + 1) norms (GPT-2: gain and bias,
    (2L + 1)·2d)."""
    return (norms_per_block(cfg) * cfg.L + 1) * _norm_params(cfg)


def params_head(cfg: Config) -> int:
    """0 when tied to W_te; a separate bias-free head is (d, V)."""
    return 0 if cfg.tie else cfg.V * cfg.d


def params_approx(cfg: Config) -> int:
    """The matrices only, no biases, norms or sinks: the lesson's 12Ld² + (V + T_max)d (+ Vd for an untied head) in
    GPT-2; a mixture of experts' router, experts and shared experts (and their gate) are matrices, their biases not."""
    dense = _mlp_matrices(cfg) * cfg.d * cfg.d_ff if "dense" in cfg.block_kinds else 0
    return (cfg.L * params_attn_weights(cfg) + (cfg.L - cfg.L_moe) * dense
            + cfg.L_moe * params_moe_block(cfg, matrices=True) + params_emb(cfg) + params_head(cfg))


@dataclass(frozen=True)
class Budget:
    """Parameters and FLOPs of one `Config`. Per-token FLOPs are forward FLOPs / (B * T)."""

    params_emb: int
    params_attn_block: int
    params_mlp_block: int
    params_blocks: int  # attention + MLP (dense or MoE) of all L blocks; the blocks' LayerNorms are in params_norms
    params_norms: int
    params_head: int
    params_approx: int
    params_exact: int  # N: unique parameters of the real module
    params_active: int  # N_active: those one token uses (N for a dense model; a mixture of experts: k of E experts)
    flops_fwd_per_token: int  # 2N
    flops_train_per_token: int  # 6N: forward 2N + backward 4N
    flops_fwd_active_per_token: int  # 2N_active
    flops_train_active_per_token: int  # 6N_active: what the training chain uses (C = 6·N_active·D)
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
        return html_repr(self)


@functools.lru_cache(maxsize=512)
def budget(cfg: Config) -> Budget:
    """Parameters (analytic parts, exact total from the real module) and FLOPs (2N, 6N and measured).

    Raises RuntimeError if the analytic parts do not add up to the real module's parameter count.
    """
    p = run_pass(cfg, "fp32")
    counts = kind_counts(cfg)
    exact = p.params_embed + sum(counts[b.kind] * b.params for b in p.blocks) + p.params_ln_f + p.params_head
    parts = (params_emb(cfg), params_blocks(cfg), params_norms(cfg), params_head(cfg))
    if sum(parts) != exact:
        raise RuntimeError(f"analytic parameter parts {parts} sum to {sum(parts):,}, the module has {exact:,}")
    tokens = cfg.B * cfg.T
    flops_blocks = sum(counts[b.kind] * b.flops for b in p.blocks)
    flops_attn = sum(counts[b.kind] * b.flops_attn for b in p.blocks)
    if (flops_blocks + p.flops_head) % tokens or flops_attn % tokens:
        raise RuntimeError("measured FLOPs are not a whole number per token")
    measured = (flops_blocks + p.flops_head) // tokens
    attn = flops_attn // tokens
    matmuls = Fraction(flops_blocks - flops_attn, tokens)  # the blocks' other matmuls per token: 24Ld² in GPT-2
    attn_per_T = Fraction(flops_attn, tokens * cfg.T)  # 4Ld (4L·h·d_head) per token per position
    active = exact - params_skipped(cfg)
    b = Budget(
        params_emb=parts[0],
        params_attn_block=params_attn_block(cfg),
        params_mlp_block=params_mlp_block(cfg),
        params_blocks=parts[1],
        params_norms=parts[2],
        params_head=parts[3],
        params_approx=params_approx(cfg),
        params_exact=exact,
        params_active=active,
        flops_fwd_per_token=2 * exact,
        flops_train_per_token=6 * exact,
        flops_fwd_active_per_token=2 * active,
        flops_train_active_per_token=6 * active,
        flops_fwd_measured_per_token=measured,
        flops_attn_per_token=attn,
        attn_share=attn / measured,
        T_attn_equals_dense=round(matmuls / attn_per_T),
    )
    lines = budget_lines(cfg, b) if cfg.gpt2_recipe else recipe_lines(cfg, b, matmuls / attn_per_T)
    if cfg.attention == "fused":
        lines = (*lines, *causal_lines(cfg, b))
    if cfg.window is not None:
        lines = (*lines, *window_lines(cfg, b))
    check_lines(lines, cfg.symbols())
    return replace(b, lines=lines)


def _head_lines(cfg: Config, b: Budget) -> tuple[Line, Line]:
    """The head's parameters and its step from 2N to the measured FLOPs: tied (0, +2Vd) or untied (V·d, 0)."""
    if cfg.tie:
        return (Line("params/head", "head: tied to W_te, no parameters of its own", "0", 0, "params"),
                Line("flops/steps/head", "+ the head's matmul: the tied W_te, counted once in N as a lookup table",
                     "2Vd", 2 * cfg.V * cfg.d, "FLOP"))
    return (Line("params/head", "head: a separate (d, V) matrix", "V·d", b.params_head, "params"),
            Line("flops/steps/head", "+ the head's matmul: already in 2N (the untied head's V·d parameters)",
                 "0", 0, "FLOP"))


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
    head, head_step = _head_lines(cfg, b)
    lookups = -2 * b.params_emb
    attention, no_matmul = b.flops_attn_per_token, -2 * (13 * cfg.L * cfg.d + 2 * cfg.d)
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


def _times(n: str, expr: str) -> str:
    """n times expr in lesson notation, expr in parentheses where it is a sum: "L·3E·d·d_expert", "L·(E·d + E)"."""
    return f"{n}·({expr})" if " + " in expr else f"{n}·{expr}"


def _terms(*terms: str) -> str:
    """The non-empty terms joined with " + "."""
    return " + ".join(t for t in terms if t)


def _recipe_formulas(cfg: Config) -> dict[str, str]:
    """Each parameter part of any recipe in lesson notation (the budget's `recipe_lines`), and the measured FLOPs'
    parts: per kind of block, its matmul FLOPs per token besides attention's ("dense_flops", "moe_flops")."""
    swiglu = cfg.glu  # SwiGLU or GeGLU: three matrices
    m = "3" if swiglu else "2"  # matrices of an MLP (and of an expert)
    norm = "2d" if cfg.norm_bias else "d"
    attn_w, mlp_w = "2(h + h_kv)·d_head·d", f"{m}d·d_ff"
    attn_flops = "4(h + h_kv)·d_head·d"
    if cfg.mla:
        q = "d·h·(d_nope + d_R)" if cfg.d_cq is None else "d·d_cq + d_cq·h·(d_nope + d_R)"
        attn_w = f"{q} + d·(d_c + d_R) + d_c·h·(d_nope + d_v) + h·d_v·d"
        attn_flops = f"2({attn_w})"
    attn_extra = _terms("(h + 2h_kv)·d_head" if cfg.qkv_bias else "", "d" if cfg.proj_bias else "",
                        "2d_head" if cfg.qk_norm else "", "h" if cfg.sinks else "",
                        ("d_c" if cfg.d_cq is None else "d_cq + d_c") if cfg.mla else "")
    mlp_extra = ("2d_ff + d" if swiglu else "d_ff + d") if cfg.mlp_bias else ""
    emb = "(V + T_max)·d" if cfg.positions == "learned" else "V·d"
    head = "" if cfg.tie else "V·d"
    attn, mlp = _terms(attn_w, attn_extra), _terms(mlp_w, mlp_extra)
    n_norms = norms_per_block(cfg)  # per block: 2, or 4 with sandwich norms
    block_norms = f"{n_norms}d" if norm == "d" else f"{2 * n_norms}d"
    two = "6" if swiglu else "4"  # 2 FLOPs per multiply-add, per matrix
    out = {"emb": emb, "attn": attn, "mlp": mlp, "norms": f"({n_norms}L + 1)·{norm}", "head": head or "0",
           "attn_flops": attn_flops, "dense_flops": f"{two}d·d_ff"}
    if not cfg.moe:
        return {**out, "blocks": f"L·({attn} + {mlp})",
                "N": _terms(emb, f"L·({attn} + {mlp} + {block_norms})", norm, head),
                "approx": _terms(f"L·({attn_w} + {mlp_w})", emb, head),
                "no_matmul": f"−2(L·({_terms(attn_extra, mlp_extra, block_norms)}) + {norm})"}
    counts = block_counts(distinct_kinds(cfg))
    n = counts["moe"]  # "L", or "L_moe" beside "(L − L_moe)" dense blocks
    shared = _terms(f"{m}d·E_shared·d_shared" if cfg.E_shared else "", "d" if cfg.shared_gate else "")
    bias = ("2d_expert + d" if swiglu else "d_expert + d") if cfg.expert_bias else ""  # one expert's biases
    experts, used = f"{m}E·d·d_expert", f"{m}k·d·d_expert"
    experts_w, router_w = experts, "E·d"
    if bias:
        experts, used = f"{experts} + E·({bias})", f"{used} + k·({bias})"
    router = _terms("E·d", "E" if cfg.expert_bias else "")
    moe, moe_used = _terms(router, experts, shared), _terms(router, used, shared)
    moe_extra = _terms("E" if cfg.expert_bias else "", f"k·({bias})" if bias else "")  # the biases a token uses
    out.update(experts=experts, experts_used=used, shared=shared, router=router, moe=moe, n=n,
               moe_flops=_terms("2E·d", f"{two}k·d·d_expert", f"{two}d·E_shared·d_shared" if cfg.E_shared else "",
                                "2d" if cfg.shared_gate else ""),
               skipped=f"−2{n}·(E − k)·({m}d·d_expert + {bias})" if bias else f"−{2 * int(m)}{n}·(E − k)·d·d_expert")

    def by_kind(attention: str, dense: str, mixture: str, extra: str = "") -> str:
        """Attention's part of every block, the dense MLP's of the dense blocks and the MoE's of the MoE blocks."""
        if "dense" not in counts:
            return f"L·({_terms(attention, mixture, extra)})"
        return _terms(f"L·({_terms(attention, extra)})", f"(L − L_moe)·({dense})" if dense else "", f"L_moe·({mixture})")

    dense_extra = f"(L − L_moe)·({mlp_extra})" if mlp_extra and "dense" in counts else ""  # experts have no biases
    out.update(
        blocks=by_kind(attn, mlp, moe),
        N=_terms(emb, by_kind(attn, mlp, moe, block_norms), norm, head),
        N_active=_terms(emb, by_kind(attn, mlp, moe_used, block_norms), norm, head),
        approx=_terms(by_kind(attn_w, mlp_w, _terms(router_w, experts_w, shared)), emb, head),
        no_matmul="−2(" + _terms(f"L·({_terms(attn_extra, block_norms)})", dense_extra,
                                 f"{n}·({moe_extra})" if moe_extra else "", norm) + ")",
    )
    return out


def measured_formula(cfg: Config, attention: str | None = None) -> str:
    """The measured forward FLOPs per token in lesson notation, attention's part per block as given (default
    `attention_formula`'s, "4T·h·d_head"; a causal kernel's "2(T + 1)·h·d_head"):
    "L·(4(h + h_kv)·d_head·d + 6d·d_ff + 4T·h·d_head) + 2Vd" for a dense model."""
    f = _recipe_formulas(cfg)
    attention = attention_formula(cfg) if attention is None else attention
    if not cfg.moe:
        return f"L·({f['attn_flops']} + {f['dense_flops']} + {attention}) + 2Vd"
    if "dense" not in cfg.block_kinds:
        return f"L·({f['attn_flops']} + {f['moe_flops']} + {attention}) + 2Vd"
    return f"L·({f['attn_flops']} + {attention}) + (L − L_moe)·{f['dense_flops']} + L_moe·({f['moe_flops']}) + 2Vd"


def _T_equal_formula(cfg: Config) -> str:
    """T at which attention's FLOPs equal the blocks' other matmuls, in lesson notation."""
    f = _recipe_formulas(cfg)
    per_key = attention_formula(cfg, T="")
    if not cfg.moe:
        return f"({f['attn_flops']} + {f['dense_flops']}) / ({per_key})"
    if "dense" not in cfg.block_kinds:
        return f"({f['attn_flops']} + {f['moe_flops']}) / ({per_key})"
    return (f"(L·{f['attn_flops']} + (L − L_moe)·{f['dense_flops']} + L_moe·({f['moe_flops']})) / "
            f"({attention_formula(cfg, 'L', '')})")


def recipe_lines(cfg: Config, b: Budget, T_equal: Fraction) -> tuple[Line, ...]:
    """The budget of any recipe but GPT-2's as `Line`s, in `budget_lines`' order and keys, with its formulas.

    The steps from 2N to the measured count are GPT-2's: lookups are indexing (RoPE has no table), the tied
    head's matmul, attention's q kᵀ and attn @ v (4T·h·d_head per block: h query heads, whatever h_kv), and the
    parameters that are no matmul weight (biases, norm gains and biases, QK-norm gains). SwiGLU's product and
    RoPE's rotations are elementwise: no matmul FLOPs. A mixture of experts adds its parts (`moe_lines`) and a
    first step, the experts a token skips (2N -> 2N_active).
    """
    f = _recipe_formulas(cfg)
    N, measured = f["N"], b.flops_fwd_measured_per_token
    norm = "RMSNorms: a gain" if cfg.norm == "rmsnorm" else (
        "LayerNorms: a gain and a bias" if cfg.norm_bias else "LayerNorms: a gain (no bias)")
    glu = {"swiglu": "SwiGLU", "geglu": "GeGLU"}.get(cfg.mlp)
    mlp = (f"{glu} MLP, one block: W_gate, W_up (d, d_ff) and W_down (d_ff, d)" if glu else
           "MLP, one block: (d, d_ff) and (d_ff, d)") + (" and their biases" if cfg.mlp_bias else "")
    attn = ("attention, one block: W_qkv (d, (h + 2h_kv)·d_head), W_o (h·d_head, d)"
            + (" and their biases" if cfg.proj_bias else " and q, k, v biases" if cfg.qkv_bias else "")
            + (", QK-norm gains" if cfg.qk_norm else ""))
    if cfg.mla:
        attn = ("latent attention, one block: " + ("W_Q (d, h·(d_nope + d_R))" if cfg.d_cq is None else
                "W_DQ (d, d_cq), W_UQ (d_cq, h·(d_nope + d_R))") + ", W_DKV (d, d_c + d_R), W_UKV (d_c, h·(d_nope + "
                "d_v)), W_o (h·d_v, d) and the latents' RMSNorm gains")
    attention = attention_formula(cfg, "L")
    head, head_step = _head_lines(cfg, b)
    lookups = -2 * b.params_emb
    skipped = -2 * (b.params_exact - b.params_active)
    # the biases, norms and sinks a token uses (the skipped experts' biases left 2N with them)
    no_matmul = -2 * (b.params_exact - b.params_approx - cfg.L_moe * (cfg.E - cfg.k) * expert_biases(cfg)
                      if cfg.moe else b.params_exact - b.params_approx)
    if 2 * b.params_exact + skipped + lookups + head_step.value + b.flops_attn_per_token + no_matmul != measured:
        raise RuntimeError("the steps from 2N do not reach the measured forward FLOPs")
    emb_label = ("embeddings: token table W_te and position table W_pe" if cfg.positions == "learned" else
                 "embeddings: token table W_te (RoPE has no position table)")
    measured_text = measured_formula(cfg)
    moe = moe_lines(cfg, b, f) if cfg.moe else {}
    mlp_line = Line("params/mlp_block", mlp.replace("one block", "one dense block") if cfg.moe else mlp, f["mlp"],
                    b.params_mlp_block, "params")
    if cfg.moe:
        share = Line("params/mlp_share", "the mixture of experts' share of one MoE block's parameters",
                     f"({f['moe']}) / ({f['attn']} + {f['moe']})",
                     params_moe_block(cfg) / (b.params_attn_block + params_moe_block(cfg)), "share")
    else:
        share = Line("params/mlp_share", "the MLP's share of one block's parameters",
                     f"({f['mlp']}) / ({f['attn']} + {f['mlp']})",
                     b.params_mlp_block / (b.params_attn_block + b.params_mlp_block), "share")
    every = " (every expert: what memory holds)" if cfg.moe else ""
    every += f"; {MTP_NOTE}" if cfg.mla else ""
    return (
        Line("params/emb", emb_label, f["emb"], b.params_emb, "params"),
        Line("params/attn_block", attn, f["attn"], b.params_attn_block, "params"),
        *([mlp_line] if "dense" in cfg.block_kinds else []),
        *moe.get("block", ()),
        Line("params/blocks", "attention + MLP of all L blocks" + (" (dense or MoE)" if cfg.moe else ""), f["blocks"],
             b.params_blocks, "params"),
        *moe.get("parts", ()),
        Line("params/norms", f"{norm}, {norms_per_block(cfg)} per block and a final one", f["norms"], b.params_norms,
             "params"),
        head,
        Line("params/exact", f"N: every parameter, as the module counts it{every}", N, b.params_exact, "params"),
        *moe.get("active", ()),
        Line("params/approx", "N, matrices only (no biases, no norms" + (", no sinks)" if cfg.sinks else ")"), f["approx"],
             b.params_approx, "params"),
        share,
        Line("flops/forward", "forward FLOPs per token, 2N" + (" (as if a token ran every expert)" if cfg.moe else ""),
             f"2·({N})", b.flops_fwd_per_token, "FLOP"),
        Line("flops/train", "training FLOPs per token, 6N (forward 2N + backward 4N)"
             + (", as if a token ran every expert" if cfg.moe else ""), f"6·({N})", b.flops_train_per_token, "FLOP"),
        *moe.get("flops", ()),
        Line("flops/steps/lookups", "− token lookups" + (" and position lookups" if cfg.positions == "learned" else "")
             + ": indexing, no matmul", f"−2·{f['emb']}", lookups, "FLOP"),
        head_step,
        Line("flops/steps/attention", "+ attention's q kᵀ and attn @ v over the full (T, T) matrix, h heads (a causal "
             "kernel skips about half)", attention, b.flops_attn_per_token, "FLOP"),
        Line("flops/steps/no_matmul", "− biases and norm gains" + (" and sinks" if cfg.sinks else "") + ": no matmul "
             "weights", f["no_matmul"], no_matmul, "FLOP"),
        Line("flops/forward_measured", "= forward FLOPs per token as the code runs (torch's flop counter)",
             measured_text, measured, "FLOP"),
        Line("flops/attention_share", "attention's share of the measured forward FLOPs",
             f"{attention} / ({measured_text})", b.attn_share, "share"),
        Line("flops/T_attention_equals_dense", f"T at which attention's {attention} equals the blocks' matmuls",
             _T_equal_formula(cfg), float(T_equal), "tokens"),
        *moe.get("tokens", ()),
    )


def moe_lines(cfg: Config, b: Budget, f: dict[str, str]) -> dict[str, tuple[Line, ...]]:
    """A mixture of experts' lines, by where `recipe_lines` lists them: one MoE block's parts ("block"), the parts
    of all blocks that the chart draws ("parts", `MOE_CHART`), N_active ("active"), 2N_active, 6N_active and the
    first step from 2N ("flops"), and the rows each expert gets when routing is balanced ("tokens")."""
    n, L_moe = f["n"], cfg.L_moe
    kind = "SwiGLU experts, each W_gate, W_up (d, d_expert) and W_down (d_expert, d)" if cfg.mlp == "swiglu" else \
        "experts, each (d, d_expert) and (d_expert, d)"
    gate = ", and their sigmoid gate (d, 1)" if cfg.shared_gate else ""
    shared = [Line("params/shared_block", f"shared experts, one MoE block: E_shared experts of width d_shared, as one "
                   f"MLP{gate}",
                   f["shared"], params_shared_block(cfg), "params")] if cfg.E_shared else []
    shared_all = [Line("params/shared", "shared experts of the MoE blocks", f"{n}·({f['shared']})",
                       L_moe * params_shared_block(cfg), "params")] if cfg.E_shared else []
    dense = [Line("params/dense_mlps", "dense MLPs of the L − L_moe dense blocks", f"(L − L_moe)·({f['mlp']})",
                  (cfg.L - L_moe) * b.params_mlp_block, "params")] if "dense" in cfg.block_kinds else []
    tokens = Fraction(cfg.B * cfg.T * cfg.k, cfg.E)
    return {
        "block": (
            Line("params/moe_block", "mixture of experts, one MoE block: router, E routed experts"
                 + (", shared experts" if cfg.E_shared else ""), f["moe"], params_moe_block(cfg), "params"),
            Line("params/experts_block", f"routed experts, one MoE block: E {kind}, "
                 + ("and their biases" if cfg.expert_bias else "no biases"), f["experts"],
                 params_experts_block(cfg), "params"),
            *shared,
            Line("params/router_block", "router, one MoE block: W_router (d, E)" + (" and its bias (E)" if cfg.expert_bias
                 else "") + ", a score per expert", f["router"],
                 params_router(cfg), "params"),
        ),
        "parts": (
            Line("params/attention", "attention of all L blocks", f"L·({f['attn']})", cfg.L * b.params_attn_block,
                 "params"),
            *dense,
            Line("params/experts", "routed experts of the MoE blocks", _times(n, f['experts']),
                 L_moe * params_experts_block(cfg), "params"),
            Line("params/experts_active", "of them, the k per block one token uses", _times(n, f['experts_used']),
                 L_moe * params_experts_block(cfg, cfg.k), "params"),
            *shared_all,
            Line("params/routers", "routers of the MoE blocks", _times(n, f['router']), L_moe * params_router(cfg),
                 "params"),
        ),
        "active": (Line("params/active", "N_active: the parameters one token uses, all but the E − k routed experts "
                        "it is not sent to in each MoE block", f["N_active"], b.params_active, "params"),),
        "flops": (
            Line("flops/forward_active", "forward FLOPs per token, 2N_active: a token runs k of the E experts",
                 f"2·({f['N_active']})", b.flops_fwd_active_per_token, "FLOP"),
            Line("flops/train_active", "training FLOPs per token, 6N_active (forward 2N_active + backward 4N_active): "
                 "what the training chain uses, C = 6·N_active·D", f"6·({f['N_active']})",
                 b.flops_train_active_per_token, "FLOP"),
            Line("flops/steps/skipped_experts", "from 2N: − the E − k routed experts a token is not sent to, every MoE "
                 "block (= 2N_active)", f["skipped"], b.flops_fwd_active_per_token - b.flops_fwd_per_token, "FLOP"),
        ),
        "tokens": (Line("flops/expert_tokens", "rows each expert runs per pass when routing is balanced (the B·T·k in "
                        "all are exact)", "BTk/E", float(tokens) if tokens.denominator != 1 else int(tokens),
                        "tokens"),),
    }


def causal_lines(cfg: Config, b: Budget) -> tuple[Line, Line]:
    """With fused attention, the FLOPs a causal kernel runs beside the measured count: q kᵀ and attn @ v over the
    pairs (query t, key s ≤ t) only, T(T + 1)/2 of the T² that eager attention and torch's flop formulas count
    (about half; a kernel that computes whole tiles runs a little more on the diagonal's tiles). Per token and
    block 2(T + 1)·h·d_head, against the measured 4T·h·d_head."""
    causal = Fraction(b.flops_attn_per_token * (cfg.T + 1), 2 * cfg.T)
    if causal.denominator != 1:
        raise RuntimeError("the causal kernel's attention FLOPs are not a whole number per token")
    causal = int(causal)
    return (
        Line("flops/attention_causal", "q kᵀ and attn @ v as a causal kernel runs them: T(T + 1)/2 of the T² scores",
             "2L(T + 1)·h·d_head", causal, "FLOP"),
        Line("flops/forward_causal", "forward FLOPs per token with a causal kernel (attention's triangle only)",
             measured_formula(cfg, "2(T + 1)·h·d_head"),
             b.flops_fwd_measured_per_token - b.flops_attn_per_token + causal, "FLOP"),
    )


def window_lines(cfg: Config, b: Budget) -> tuple[Line, Line]:
    """With a sliding window, the FLOPs a windowed causal kernel runs beside the measured count (which, as eager
    attention does, computes every (query, key) pair and masks the rest): q kᵀ and attn @ v over the pairs a query
    sees only. A windowed block's query t sees min(t + 1, W) keys, (T_W + 1)(T − T_W/2) pairs in all with T_W =
    min(T, W − 1): T(T + 1)/2 below the window, WT − W(W − 1)/2 past it; a full block's T(T + 1)/2. Per token,
    2(T_W + 1)(2T − T_W)·h·d_head / T per windowed block and 2(T + 1)·h·d_head per full block."""
    T, T_W, h, d_head, L, L_W = cfg.T, cfg.T_W, cfg.h, cfg.d_head, cfg.L, cfg.L_W
    windowed = Fraction(2 * (T_W + 1) * (2 * T - T_W) * h * d_head, T) * L_W + 2 * (L - L_W) * (T + 1) * h * d_head
    if b.flops_attn_per_token != 4 * L * T * h * d_head:
        raise RuntimeError("the measured attention FLOPs are not eager's 4LT·h·d_head per token")
    whole = int(windowed) if windowed.denominator == 1 else float(windowed)
    full = "" if L_W == L else " + 2(L − L_W)(T + 1)·h·d_head"
    return (
        Line("flops/attention_windowed", "q kᵀ and attn @ v as a windowed causal kernel runs them: each query's last "
             "W keys in the windowed blocks (the measured count computes all T² and masks them, as eager does)",
             f"2L_W·(T_W + 1)(2T − T_W)·h·d_head/T{full}", whole, "FLOP"),
        Line("flops/forward_windowed", "forward FLOPs per token with a windowed causal kernel",
             f"{measured_formula(cfg, '4T·h·d_head')} − 4LT·h·d_head + 2L_W·(T_W + 1)(2T − T_W)·h·d_head/T{full}",
             b.flops_fwd_measured_per_token - b.flops_attn_per_token + whole, "FLOP"),
    )


# The parameter chart: (line key, bar label, adds up to N); the page marks the bars that add up to N with *.
CHART: tuple[tuple[str, str, bool], ...] = (
    ("params/emb", "embeddings", True),
    ("params/blocks", "blocks × L", True),
    ("params/attn_block", "attention, 1 block", False),
    ("params/mlp_block", "MLP, 1 block", False),
    ("params/norms", "norms", True),  # LayerNorms or RMSNorms: the line says which
    ("params/head", "head", True),
)
# Latent attention's N is transformers' DeepseekV3 module's: the multi-token-prediction layer is never built
MTP_NOTE = ("without a multi-token-prediction (MTP) module, as transformers builds DeepSeek's models (DeepSeek-V3's "
            "published 671B leaves its MTP module out too)")
CHART_NOTE = "* these bars add up to N; the two per-block bars are the halves of each block in \"blocks × L\"."
# A mixture of experts' chart: the parts of all blocks (each line exists where the model has the part).
MOE_CHART: tuple[tuple[str, str, bool], ...] = (
    ("params/emb", "embeddings", True),
    ("params/attention", "attention × L", True),
    ("params/dense_mlps", "dense MLPs", True),
    ("params/experts", "routed experts", True),
    ("params/shared", "shared experts", True),
    ("params/routers", "routers", True),
    ("params/norms", "norms", True),
    ("params/head", "head", True),
    ("params/experts_active", "routed experts one token uses", False),
)
MOE_CHART_NOTE = "* these bars add up to N; a token uses the router{shared} and k of the E routed experts."


def chart(b: Budget) -> tuple[tuple[str, str, bool], ...]:
    """The parameter chart's bars of this budget: `CHART`, or `MOE_CHART` where a mixture of experts has the parts
    (the bars whose line this budget has)."""
    keys = [x.key for x in b.lines]
    if "params/experts" not in keys:
        return CHART
    return tuple(bar for bar in MOE_CHART if bar[0] in keys)


def chart_note(b: Budget) -> str:
    """The note under the parameter chart of this budget (`CHART_NOTE`, or `MOE_CHART_NOTE` for its bars, which
    names the shared experts where the model has them)."""
    bars = chart(b)
    if not any(k == "params/experts" for k, _, _ in bars):
        return CHART_NOTE
    return MOE_CHART_NOTE.format(shared=", the shared experts" if any(k == "params/shared" for k, _, _ in bars) else "")


GROUPS = {"params": "Parameters", "flops": "FLOPs per token (FLOPs, not MACs)", "memory": "Activation memory"}
