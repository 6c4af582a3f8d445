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
from fractions import Fraction
from dataclasses import asdict, dataclass, replace

from . import stack
from .config import Config, architecture, kind_counts
from .expr import ZERO, E, Expr, lesson, lesson_quotient, total
from .figures import Line, check_lines, html_repr, line, number
from .parts import PARTS, each, head, mlp, moe, norms, positions, says, sinks
from .passes import run_pass
from .stack import counts, mixed, spread


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


L, T = E("L"), E("T")


@dataclass(frozen=True)
class Formulas:
    """A budget's expressions: each part's in one block, and their sums over the stack (`model.stack.spread`) that the
    lines show. With GPT-2's recipe (`lesson`) the sums inside a block are written as the lesson writes them, like terms
    collected ("L·(12d² + 13d)", `model.expr.lesson`)."""

    cfg: Config
    symbols: dict[str, int]  # every symbol's value: the configuration's, with h_kv and d_ff
    lesson: bool
    emb: Expr  # the token table (and the position table)
    attn_w: Expr  # one block's mixer's matrices
    attn_extra: Expr | None  # its parameters that are no matmul weights (biases, norm gains, sinks)
    attn: Expr  # all of one block's mixer
    mlp_w: Expr  # one dense block's MLP's matrices
    mlp_extra: Expr | None  # its biases
    mlp: Expr
    block_norms: Expr | None  # one block's norms (None: no parameters, OLMo 1's)
    norm: Expr | None  # the norms outside the blocks: the final one (and the token embeddings')
    head: Expr | None  # the head's own parameters (None: tied)
    attn_flops: Expr  # one block's mixer's matmul FLOPs per token
    dense_flops: Expr  # one dense block's MLP's
    scores: tuple[int, Expr]  # q kᵀ and attn @ v per token, block and key: (coefficient, width)
    lin: Expr | None = None  # one block's mixer with a fixed state, where the model has them (`model.stack.stateful`:
    # Gated DeltaNet's or Mamba 2's)

    @property
    def beside(self) -> bool:
        """The part with a fixed state mixes beside attention in every block (`model.stack.beside`)."""
        return stack.beside(self.cfg)

    @property
    def stateful(self):
        """The part with a fixed state in some blocks' attention's place (`model.stack.stateful`), or None."""
        return stack.stateful(self.cfg)

    def collect(self, e: Expr) -> Expr:
        """`e` with like terms collected in the lesson's notation (GPT-2's recipe), else as it is."""
        return lesson(e) if self.lesson else e

    def attention(self, blocks: Expr | None = L, keys: Expr | None = T) -> Expr:
        """q kᵀ and attn @ v per token over `blocks` blocks and `keys` keys: "4LT·h·d_head", "4h·d_head" (none)."""
        c, w = self.scores
        template = {(True, True): "{c}{n}{T}·{w}", (True, False): "{c}{n}·{w}", (False, True): "{c}{T}·{w}",
                    (False, False): "{c}{w}"}[(blocks is not None, keys is not None)]
        return E(template, c=c, w=w, **({"n": blocks} if blocks is not None else {}),
                 **({"T": keys} if keys is not None else {}))

    @functools.cached_property
    def counts(self) -> dict[str, Expr]:
        """Each kind of block's number as a symbol (`model.stack.counts`)."""
        return counts(self.cfg)

    @functools.cached_property
    def ffn(self) -> dict[str, Expr | None]:
        """Each kind of block's MLP: the dense one's, and the mixture of experts'."""
        return {"dense": self.mlp, "moe": moe.block(self.cfg) if moe.present(self.cfg) else None}

    @functools.cached_property
    def N(self) -> Expr:
        """Every parameter: "(V + T_max)·d + L·(12d² + 13d) + 2d" (GPT-2)."""
        blocks = spread(self.cfg, self.mixers, self.ffn, self.block_norms, inner=self.collect)
        return total(self.emb, blocks, self.norm, self.head)

    @property
    def mixers(self) -> Expr | dict[str, Expr | None]:
        """Each block's mixer's parameters as `model.stack.spread` takes them (`model.stack.mixed`)."""
        return mixed(self.cfg, self.attn, self.lin)

    @functools.cached_property
    def N_active(self) -> Expr:
        """The parameters one token uses: the MoE blocks' k of E routed experts."""
        used = {"dense": self.mlp, "moe": moe.block(self.cfg, used=True)}
        return total(self.emb, spread(self.cfg, self.mixers, used, self.block_norms), self.norm, self.head)

    @functools.cached_property
    def blocks(self) -> Expr:
        """Attention and MLP of all L blocks (norms apart)."""
        return spread(self.cfg, self.mixers, self.ffn, inner=self.collect)

    @functools.cached_property
    def approx(self) -> Expr:
        """The matrices only: "12Ld² + (V + T_max)·d" (GPT-2)."""
        ffn = {"dense": self.mlp_w, "moe": moe.block(self.cfg, matrices=True) if moe.present(self.cfg) else None}
        lin = self.stateful.weights(self.cfg) if self.lin is not None else None
        return total(self.collect(spread(self.cfg, mixed(self.cfg, self.attn_w, lin), ffn)), self.emb, self.head)

    def measured(self, scores: Expr | None = None, lin: Expr | None = None) -> Expr:
        """The forward FLOPs per token as the code runs: every block's matmuls, attention's `scores` per block
        (default over T keys), the blocks with a fixed state's `lin` (default their forward pass's: Gated DeltaNet's or
        Mamba 2's), and the head's 2Vd."""
        scores = self.attention(None) if scores is None else scores
        ffn = {"dense": self.dense_flops, "moe": moe.flops(self.cfg) if moe.present(self.cfg) else None}
        if self.lin is not None:  # the attention blocks' matmuls and scores, the other blocks' own
            own = self.stateful.flops(self.cfg) if lin is None else lin
            mixers = mixed(self.cfg, total(self.attn_flops, scores), own)
            return E("{b} + 2Vd", b=spread(self.cfg, mixers, ffn, grouped=False))
        return E("{b} + 2Vd", b=spread(self.cfg, self.attn_flops, ffn, scores, grouped=False, inner=self.collect))

    @property
    def attention_blocks(self) -> Expr:
        """The blocks with attention as a symbol: L, or L − L_lin beside Gated DeltaNet blocks (L − L_ssm beside Mamba
        2's)."""
        return stack.mixer_counts(self.cfg)["attention"]

    def scored(self) -> Expr:
        """The measured FLOPs per token in batched matmuls of activations: q kᵀ and attn @ v over T keys in every
        attention block ("4LT·h·d_head"), and the chunked delta rule's in the Gated DeltaNet blocks (the chunked scan's
        in Mamba 2's)."""
        if self.lin is None:
            return self.collect(self.attention())
        part = self.stateful
        return E("{a} + {n}·{r}", a=self.attention(self.attention_blocks), n=stack.stateful_count(self.cfg),
                 r=part.rule_flops(self.cfg))

    @functools.cached_property
    def no_matmul(self) -> Expr:
        """The parameters a token uses that are no matmul weights, in −2(…): biases (the head's too), norm gains,
        sinks."""
        c = counts(self.cfg)
        lin = self.stateful.extras(self.cfg)[0] if self.lin is not None else None
        if "moe" not in c and lin is None:
            every = [x for x in (self.attn_extra, self.mlp_extra, self.block_norms) if x is not None]
            inner = total(E("L·({x})", x=total(*every)) if every else None, self.norm, head.extras(self.cfg))
            return ZERO if inner is ZERO else E("−2({x})", x=self.collect(inner))
        dense = None
        if self.mlp_extra is not None and "dense" in c:
            dense = E("{n}·({x})", n=c["dense"], x=self.mlp_extra)
        mixture = moe.extras(self.cfg) if "moe" in c else None
        every = spread(self.cfg, mixed(self.cfg, self.attn_extra, lin), {}, self.block_norms)
        return E("−2({x})", x=total(every, dense, E("{n}·({x})", n=c["moe"], x=mixture) if mixture is not None
                                    else None, self.norm, head.extras(self.cfg)))

    @functools.cached_property
    def T_equal(self) -> Expr:
        """T at which attention's FLOPs equal the blocks' other matmuls (with Gated DeltaNet blocks: the attention
        blocks' q kᵀ and attn @ v against every other FLOP of the blocks, the Gated DeltaNet blocks' at this T)."""
        ffn = {"dense": self.dense_flops, "moe": moe.flops(self.cfg) if moe.present(self.cfg) else None}
        if self.lin is not None:
            a = spread(self.cfg, mixed(self.cfg, self.attn_flops, self.stateful.flops(self.cfg)), ffn, grouped=False)
            return E("({a}) / ({k})", a=a, k=self.attention(self.attention_blocks, None))
        if self.lesson:
            return lesson_quotient(total(self.attn_flops, self.dense_flops), self.attention(None, None))
        if len(counts(self.cfg)) == 1:
            (kind,) = counts(self.cfg)
            return E("({a}) / ({k})", a=total(self.attn_flops, ffn[kind]), k=self.attention(None, None))
        c = counts(self.cfg)
        a = total(E("L·{x}", x=self.attn_flops), *(E("{n}·{x}", n=n, x=ffn[kind]) for kind, n in c.items()))
        return E("({a}) / ({k})", a=a, k=self.attention(L, None))



def _pre(cfg: Config) -> int:
    """The norms before a block's mixer and MLP: its wiring's (`model.stack.wiring`: 2, or a parallel block's 1)."""
    return len(stack.wiring(cfg).NORMS)


_SHARED: dict[tuple, Formulas] = {}  # the expressions of each architecture seen (`formulas`), at most MAX_SHARED
MAX_SHARED = 512
_CACHED = ("counts", "ffn", "N", "N_active", "blocks", "approx", "no_matmul", "T_equal")  # Formulas' cached sums


def formulas(cfg: Config) -> Formulas:
    """The budget's expressions of `cfg` (see `Formulas`), with its symbols' values. The expressions depend on the
    architecture alone, not on B or T: they are built once per architecture (the served page's new T asks again) and
    `clear_caches` forgets them."""
    key = architecture(cfg)
    shared = _SHARED.get(key)
    if shared is None:
        if len(_SHARED) >= MAX_SHARED:
            _SHARED.clear()
        shared = _SHARED[key] = _formulas(cfg)
    out = replace(shared, cfg=cfg, symbols=_symbols(cfg))
    out.__dict__.update({name: shared.__dict__[name] for name in _CACHED if name in shared.__dict__})
    return out


def clear_formulas() -> None:
    """Forget every architecture's expressions (`formulas`; `model.caches.clear_caches`)."""
    _SHARED.clear()


def _formulas(cfg: Config) -> Formulas:
    """The budget's expressions of `cfg`, built."""
    mixer, stateful = stack.mixer(cfg), stack.stateful(cfg)
    is_lesson = cfg.gpt2_recipe
    collect = lesson if is_lesson else (lambda e: e)
    attn_w, attn_extra = mixer.weights(cfg), _some(*mixer.extras(cfg), *sinks.extras(cfg))
    mlp_w, mlp_extra = mlp.weights(cfg), _some(*mlp.extras(cfg))
    return Formulas(cfg=cfg, symbols=_symbols(cfg), lesson=is_lesson, emb=positions.emb(cfg), attn_w=attn_w,
                    attn_extra=attn_extra, attn=collect(total(attn_w, attn_extra)), mlp_w=mlp_w, mlp_extra=mlp_extra,
                    mlp=collect(total(mlp_w, mlp_extra)), block_norms=norms.block(cfg, _pre(cfg)), norm=norms.once(cfg),
                    head=head.params(cfg), attn_flops=collect(mixer.flops(cfg)), dense_flops=collect(mlp.flops(cfg)),
                    scores=mixer.scores(cfg),
                    lin=None if stateful is None else total(stateful.weights(cfg), *stateful.extras(cfg)))


def _symbols(cfg: Config) -> dict[str, int]:
    """Every symbol's value the budget's expressions name: the configuration's, with h_kv and d_ff."""
    return {**cfg.symbols(), "h_kv": cfg.h_kv, "d_ff": cfg.d_ff}


def _some(*terms: Expr) -> Expr | None:
    """The terms added, or None where there are none."""
    return total(*terms) if terms else None


def _same(a: int | float, b: int | float) -> bool:
    """Equal: exactly for whole numbers, to 1e-12 relative where a figure per token is a float (Gated DeltaNet's
    padding)."""
    return a == b if isinstance(a, int) and isinstance(b, int) else abs(a - b) <= 1e-12 * max(1.0, abs(b))


def _value(e: Expr, f: Formulas) -> int:
    v = e.value(f.symbols)
    return int(v)


@functools.lru_cache(maxsize=512)
def budget(cfg: Config) -> Budget:
    """Parameters (each part's formula, their total checked against the real module's count) and FLOPs (2N, 6N and
    measured).

    Raises RuntimeError if the formulas do not give the real module's parameter count or its measured FLOPs.
    """
    p = run_pass(cfg, "fp32")
    f = formulas(cfg)
    kind_n = kind_counts(cfg)
    exact = p.params_embed + sum(kind_n[b.kind] * b.params for b in p.blocks) + p.params_ln_f + p.params_head
    parts = (_value(f.emb, f), _value(f.blocks, f), _value(norms.total(cfg, _pre(cfg)), f), _value(f.head or ZERO, f))
    if sum(parts) != exact or _value(f.N, f) != exact:
        raise RuntimeError(f"analytic parameter parts {parts} sum to {sum(parts):,}, the module has {exact:,}")
    tokens = cfg.B * cfg.T
    flops_blocks = sum(kind_n[b.kind] * b.flops for b in p.blocks)
    flops_attn = sum(kind_n[b.kind] * b.flops_attn for b in p.blocks)
    if ((flops_blocks + p.flops_head) % tokens or flops_attn % tokens) and stack.stateful(cfg) is None:
        raise RuntimeError("measured FLOPs are not a whole number per token")
    # per token: a whole number, but where Gated DeltaNet pads T (its convolution's ends, its chunks of 64)
    measured = number(Fraction(flops_blocks + p.flops_head, tokens))
    attn = number(Fraction(flops_attn, tokens))
    active = _value(f.N_active, f) if moe.present(cfg) else exact
    b = Budget(
        params_emb=parts[0],
        params_attn_block=_value(f.attn, f),
        params_mlp_block=_value(f.mlp, f) if "dense" in cfg.mlp_kinds else 0,
        params_blocks=parts[1],
        params_norms=parts[2],
        params_head=parts[3],
        params_approx=_value(f.approx, f),
        params_exact=exact,
        params_active=active,
        flops_fwd_per_token=2 * exact,
        flops_train_per_token=6 * exact,
        flops_fwd_active_per_token=2 * active,
        flops_train_active_per_token=6 * active,
        flops_fwd_measured_per_token=measured,
        flops_attn_per_token=attn,
        attn_share=attn / measured,
        T_attn_equals_dense=round(f.T_equal.value(f.symbols)),
    )
    lines = budget_lines(f, b)
    check_lines(lines, cfg.symbols())
    return replace(b, lines=lines)


SLOTS = ("block", "parts", "active", "flops", "tokens", "end")  # where a part's own lines go in reading order


def _part_lines(f: Formulas, b: Budget) -> dict[str, list[Line]]:
    """Each part's own lines (`budget_lines(f, b)` of a part that has them: a mixture of experts', a causal kernel's, a
    window's), then a stateful part's (`stateful_lines`), by slot."""
    out: dict[str, list[Line]] = {slot: [] for slot in SLOTS}
    for lines_of in (*(part.budget_lines(f, b) for part in PARTS if hasattr(part, "budget_lines")), stateful_lines(f)):
        for slot, lines in lines_of.items():
            out[slot] += lines
    return out


def stateful_lines(f: Formulas) -> dict[str, list[Line]]:
    """One block's parameters of the part with a fixed state (`model.stack.STATEFUL`: Gated DeltaNet, Mamba 2, Kimi
    delta attention, Mamba), beside one attention block's ("block"), and the parts of all blocks the parameter chart
    draws ("parts", `LIN_CHART`): the attention blocks', that part's blocks' and (a dense model's) the MLPs; none
    without one."""
    part = f.stateful
    if part is None:
        return {}
    s, key, count = f.symbols, part.KEY, part.COUNT
    dense = [] if "moe" in f.counts else [line("params/mlps", "MLPs of all L blocks", E("L·({x})", x=f.mlp), s,
                                               "params")]
    block = [line(f"params/{key}_block", part.label(f.cfg), f.lin, s, "params")]
    if f.beside:  # both in every block (a parallel hybrid block)
        return {"block": block,
                "parts": [line("params/attention", "attention of all L blocks", E("L·({x})", x=f.attn), s, "params"),
                          line(f"params/{key}_all", f"{part.NAME} of all L blocks, beside attention",
                               E("L·({x})", x=f.lin), s, "params"),
                          *dense]}
    return {"block": block,
            "parts": [line(f"params/attention_{key}", f"attention of the L − {count} attention blocks",
                           E("(L − {n})·({x})", n=E(count), x=f.attn), s, "params"),
                      line(f"params/{key}", f"{part.NAME} of the {count} blocks", E("{n}·({x})", n=E(count), x=f.lin),
                           s, "params"),
                      *dense]}


def budget_lines(f: Formulas, b: Budget) -> tuple[Line, ...]:
    """The budget as `Line`s in reading order: parameters, then FLOPs from 2N to the measured count.

    The steps from 2N to the measured forward FLOPs add up exactly (checked): 2N counts every parameter as one
    multiply-add, but token and position lookups are indexing (RoPE has no table), the head's matmul uses W_te again
    when tied, attention's q kᵀ and attn @ v multiply activations by activations (no parameters; 4T·h·d_head per
    block: h query heads, whatever h_kv), and biases, norm gains and sinks are no matmul weights. SwiGLU's product and
    RoPE's rotations are elementwise: no matmul FLOPs. A mixture of experts adds its parts (`model.parts.moe`) and a
    first step, the experts a token skips (2N -> 2N_active)."""
    cfg, s = f.cfg, f.symbols
    mixture = moe.present(cfg)
    (head_label, head_formula), (step_label, step_formula) = head.lines(cfg)
    own = _part_lines(f, b)
    N, measured = f.N, f.measured()
    attention = f.scored()
    steps = [x for part in PARTS if hasattr(part, "flop_steps") for x in part.flop_steps(f)]
    lookups_label, lookups = positions.lookups(cfg, f.lesson)
    skipped = b.flops_fwd_active_per_token - b.flops_fwd_per_token
    no_matmul = _value(f.no_matmul, f)
    reached = (2 * b.params_exact + skipped + _value(lookups, f) + _value(step_formula, f) + b.flops_attn_per_token
               + no_matmul + sum(x.value for x in steps))
    if not _same(reached, b.flops_fwd_measured_per_token):
        raise RuntimeError("the steps from 2N do not reach the measured forward FLOPs")
    mlp_label = mlp.label(cfg, f.lesson, "one dense block" if mixture else "one block")
    every = "".join(sorted(each("counted", cfg), key=lambda t: t.startswith(";")))  # qualifiers, then notes
    if mixture:
        share = line("params/mlp_share", "the mixture of experts' share of one MoE block's parameters",
                     E("({m}) / ({a} + {m})", m=moe.block(cfg), a=f.attn), s, "share")
    else:
        share = line("params/mlp_share", "the MLP's share of one block's parameters",
                     E("({m}) / ({a})", m=f.mlp, a=f.collect(total(f.attn, f.mlp))), s, "share")
    if f.lesson:
        approx_label = "N, the lesson's approximation (no biases, no LayerNorms)"
        attention_label = ("+ attention's q kᵀ and attn @ v over the full (T, T) matrix (a causal kernel skips about "
                           "half)")
        no_matmul_label = "− biases and LayerNorm parameters: no matmul weights"
        dense = lesson(E("L·({x})", x=total(f.attn_flops, f.dense_flops)))
        t_label = f"T at which attention's {attention.text} equals the blocks' dense {dense.text}"
        t_value = b.T_attn_equals_dense
    else:
        approx_label = "N, matrices only (no biases, no norms" + says(cfg, "budget/no_sinks") + ")"
        attention_label = ("+ attention's q kᵀ and attn @ v over the full (T, T) matrix, h heads (a causal kernel skips "
                           "about half)" + says(cfg, "budget/scored"))
        no_matmul_label = "− biases and norm gains" + says(cfg, "budget/and_sinks") + ": no matmul weights"
        t_label = says(cfg, "budget/T_equal", f"T at which attention's {attention.text} equals the blocks' matmuls")
        t_value = float(f.T_equal.value(s))
    scaled = " (as if a token ran every expert)" if mixture else ""
    return (
        line("params/emb", positions.emb_label(cfg), f.emb, s, "params"),
        line("params/attn_block", stack.mixer(cfg).label(cfg, f.lesson), f.attn, s, "params"),
        *([line("params/mlp_block", mlp_label, f.mlp, s, "params")] if "dense" in cfg.mlp_kinds else []),
        *own["block"],
        line("params/blocks", says(cfg, "budget/blocks", "attention") + " + MLP of all L blocks"
             + (" (dense or MoE)" if mixture else ""), f.blocks, s, "params"),
        *own["parts"],
        line("params/norms", norms.label(cfg, _pre(cfg)), norms.total(cfg, _pre(cfg)), s, "params"),
        line("params/head", head_label, head_formula, s, "params"),
        line("params/exact", f"N: every parameter, as the module counts it{every}", N, s, "params"),
        *own["active"],
        line("params/approx", approx_label, f.approx, s, "params"),
        share,
        line("flops/forward", "forward FLOPs per token, 2N" + scaled, E("2·({N})", N=N), s, "FLOP"),
        line("flops/train", "training FLOPs per token, 6N (forward 2N + backward 4N)"
             + (", as if a token ran every expert" if mixture else ""), E("6·({N})", N=N), s, "FLOP"),
        *own["flops"],
        line("flops/steps/lookups", lookups_label, lookups, s, "FLOP"),
        line("flops/steps/head", step_label, step_formula, s, "FLOP"),
        line("flops/steps/attention", attention_label, attention, s, "FLOP", b.flops_attn_per_token),
        *steps,
        line("flops/steps/no_matmul", no_matmul_label, f.no_matmul, s, "FLOP"),
        line("flops/forward_measured", "= forward FLOPs per token as the code runs (torch's flop counter)", measured, s,
             "FLOP", b.flops_fwd_measured_per_token),
        line("flops/attention_share", says(cfg, "budget/share", "attention's share of the measured forward FLOPs"),
             E("{a} / ({m})", a=attention, m=measured), s, "share", b.attn_share),
        line("flops/T_attention_equals_dense", t_label, f.T_equal, s, "tokens", t_value),
        *own["tokens"],
        *own["end"],
    )


# A hybrid's bars, each part with a fixed state's (`model.stack.STATEFUL`): its attention blocks and its own blocks,
# or (a parallel hybrid, `model.parts.hybrid`: attention × L beside it) its part in all L blocks
STATEFUL_BARS: tuple[tuple[str, str, bool], ...] = tuple(
    bar for part in stack.STATEFUL for bar in ((f"params/attention_{part.KEY}", f"attention × (L − {part.COUNT})", True),
                                               (f"params/{part.KEY}", f"{part.NAME} × {part.COUNT}", True),
                                               (f"params/{part.KEY}_all", f"{part.NAME} × L", True)))
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
CHART_NOTE = "* these bars add up to N; the two per-block bars are the halves of each block in \"blocks × L\"."
# A mixture of experts' chart: the parts of all blocks (each line exists where the model has the part).
MOE_CHART: tuple[tuple[str, str, bool], ...] = (
    ("params/emb", "embeddings", True),
    ("params/attention", "attention × L", True),
    *STATEFUL_BARS,
    ("params/dense_mlps", "dense MLPs", True),
    ("params/experts", "routed experts", True),
    ("params/shared", "shared experts", True),
    ("params/routers", "routers", True),
    ("params/norms", "norms", True),
    ("params/head", "head", True),
    ("params/experts_active", "routed experts one token uses", False),
)
MOE_CHART_NOTE = "* these bars add up to N; a token uses the router{shared} and k of the E routed experts."
# A dense model with Gated DeltaNet blocks: the parts of all blocks, as a mixture of experts' chart draws them
LIN_CHART: tuple[tuple[str, str, bool], ...] = (
    ("params/emb", "embeddings", True),
    ("params/attention", "attention × L", True),
    *STATEFUL_BARS,
    ("params/mlps", "MLPs × L", True),
    ("params/norms", "norms", True),
    ("params/head", "head", True),
)
LIN_CHART_NOTE = "* these bars add up to N."


def chart(b: Budget) -> tuple[tuple[str, str, bool], ...]:
    """The parameter chart's bars of this budget: `CHART`, `LIN_CHART` for a dense model with Gated DeltaNet blocks,
    or `MOE_CHART` where a mixture of experts has the parts (the bars whose line this budget has)."""
    keys = [x.key for x in b.lines]
    if "params/experts" not in keys:
        return tuple(bar for bar in LIN_CHART if bar[0] in keys) if "params/mlps" in keys else CHART
    return tuple(bar for bar in MOE_CHART if bar[0] in keys)


def chart_note(b: Budget) -> str:
    """The note under the parameter chart of this budget (`CHART_NOTE`, or `MOE_CHART_NOTE` for its bars, which
    names the shared experts where the model has them)."""
    bars = chart(b)
    if not any(k == "params/experts" for k, _, _ in bars):
        return LIN_CHART_NOTE if any(k == "params/mlps" for k, _, _ in bars) else CHART_NOTE
    return MOE_CHART_NOTE.format(shared=", the shared experts" if any(k == "params/shared" for k, _, _ in bars) else "")


GROUPS = {"params": "Parameters", "flops": "FLOPs per token (FLOPs, not MACs)", "memory": "Activation memory"}
