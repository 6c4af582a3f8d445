"""Inference on a GPU: the prefill and a decode step, their FLOPs and bytes moved, the roofline, quantization.

Conventions (FLOPs, not MACs; bytes in 2³⁰ units where printed):

- **Prefill**: the forward pass over B sequences of T tokens, as the shapes table traces it (`model.budget`'s
  measured forward FLOPs, the head's logits at every position included). Its bytes: every weight read once and
  the KV cache of the T tokens written (`model.memory.kv_cache_lines`, at the cache's format).
- **Decode**: one new token for each of B sequences after T cached tokens, traced by a real pass of the module
  with a real cache (`model.gpt.GPT.decode` on the meta device; `decode_pass`): q of one token, K and V of the T
  cached tokens and the new one, scores (B, h, 1, T + 1). Its FLOPs are the pass's (torch's flop counter, the
  fused kernel's formula registered by `model.passes`): per token the forward pass's per-token FLOPs at T + 1
  keys. Its bytes moved: every weight read once per step (a serving kernel streams them; the token table's
  lookup reads only its B rows, and a tied head reads the whole table anyway), the cache of T tokens read and the
  new token's K and V written, and the step's activations written once (the pass's new memory).
- **A mixture of experts**: the FLOPs are at top-k (each new token through the router, its k routed experts and any
  shared experts: B·k rows through the experts, B·T·k at the prefill), one block of each kind (dense, MoE) counted by
  its count. Its decode step reads attention's, the routers', the shared experts', the dense blocks' and the head's
  weights every step, and of each MoE block's E routed experts only those the B·k choices touch: E_B, the expected
  number with uniform routing (a token's k of E experts equally likely, tokens independent: an expert escapes all B
  tokens with probability (1 − k/E)^B), E_B = E·(1 − (1 − k/E)^B), which is k at B = 1 and tends to E as B grows
  (`model.parts.moe.touched`). A skewed router touches fewer. The prefill's B·T tokens read E·(1 − (1 − k/E)^(BT)) of them
  (all E but a fraction of a byte at prompts of thousands of tokens). Serving memory holds every expert.
- **Roofline**: a step takes at least max(FLOPs / P, bytes / BW) on a GPU of peak P (dense BF16, FLOP/s) and
  memory bandwidth BW (bytes/s), whichever bound binds; B tokens per decode step. The ridge point P / BW is
  the arithmetic intensity (FLOPs per byte) above which a step is compute-bound. The bound leaves out kernel
  launches, communication between GPUs, the scheduler and attention kernels' own inefficiency: the efficiency
  factor the user sets is shown beside it, never folded into it. Quantized weights are dequantized to BF16
  math, so P stays the BF16 peak.
- **Quantization** (`WEIGHTS`, `KV`): the blocks' matrices (N_q parameters: W_qkv, W_o and the MLP's, a mixture of
  experts' routed experts (E, in, out) and shared experts) at the weights' format; the embeddings, the head, norm
  gains, biases and the routers stay at 16 bits, as common quantizers keep them. int8 and int4 are symmetric and
  group-wise: one fp16 scale per group of `group` weights along a row's inputs (GPTQ and AWQ also store a zero
  point for int4; not counted); fp8 has one fp32 scale per matrix (counted as 0). The cache's int8 keeps one fp16
  scale per token and K/V head; fp8 per tensor (0).
"""
from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

import torch

from . import stack
from .budgeting import Budget, budget, formulas
from .expr import E, Expr, num, shape_subs, total
from .parts import attention, latent, moe, says, sparse, window
from .config import BOUNDS, MAX_HEAD_T, MAX_TOKENS, Config, all_attention, largest_B, one_of_each, score_heads
from .figures import Line, check_lines
from .gpt import meta_gpt
from .parts.moe import Experts
from .passes import DTYPES, TORCH_DTYPES, Flops
from .training import GPUS, Gpu

ACT_DTYPE = "bf16"  # activations and 16-bit weights while serving


@dataclass(frozen=True)
class Format:
    """Bytes per value of a weight or cache format, and its scales' convention."""

    bytes: float  # per value
    scale_bytes: int  # per group of `group` values (weights) or per token and K/V head (cache); 0: none counted
    note: str


WEIGHTS: dict[str, Format] = {
    "bf16": Format(2, 0, "16 bits, as trained"),
    "fp16": Format(2, 0, "16 bits"),
    "fp8": Format(1, 0, "8-bit floats, one fp32 scale per matrix (not counted)"),
    "int8": Format(1, 2, "8-bit integers, one fp16 scale per group"),
    "int4": Format(0.5, 2, "4-bit integers, one fp16 scale per group (a zero point, where stored, not counted)"),
}
KV: dict[str, Format] = {
    "bf16": Format(2, 0, "16 bits"),
    "fp16": Format(2, 0, "16 bits"),
    "fp8": Format(1, 0, "8-bit floats, one scale per tensor (not counted)"),
    "int8": Format(1, 2, "8-bit integers, one fp16 scale per token and K/V head"),
}
CUSTOM_GPU = "custom"
LEAVES_OUT = ("The bound leaves out kernel launches, communication between GPUs, the scheduler and the kernels' own "
              "inefficiency; the efficiency factor is shown beside it, never folded into it.")
# the decode step's rows in the lesson's notation, around block 0's mixer's (`DECODE_ROWS` of model.parts.attention
# and latent) and a mixture of experts' (model.parts.moe): T tokens cached ({T}: T_W in a windowed block), one new
DECODE_IN = {"idx": ("(B, 1)", "each sequence's new token")}
DECODE_OUT = {"logits": ("(B, 1, V)", "the next token's logits")}


def decode_rows(one: Config) -> dict[str, tuple[str, str]]:
    """The decode step's rows of `one` (a recorded step's blocks, `one_of_each`), by tensor name: (lesson shape,
    label); with Gated DeltaNet or Mamba 2 blocks, the first one's rows, then the first attention block's."""
    rows = {**DECODE_IN}
    kinds = one.block_kinds
    part = stack.stateful(one)
    if part is not None:
        first = next(i for i, k in enumerate(kinds) if stack.stateful_kind(k))
        rows.update({f"blocks.{first}.{name}": row for name, row in part.DECODE_ROWS.items()})
    attn = next((i for i, k in enumerate(kinds) if stack.attention_kind(k, one)), None)
    if attn is not None:
        mixer = {**stack.mixer(one).DECODE_ROWS, **(sparse.DECODE_ROWS if sparse.present(one) else {}),
                 **(latent.UNROTATED_DECODE if latent.present(one) and not latent.rotates(one) else {})}
        rows.update({name.replace("blocks.0.", f"blocks.{attn}.", 1): row for name, row in mixer.items()})
    return {**rows, **moe.DECODE_ROWS, **DECODE_OUT}


@dataclass(frozen=True)
class InferSetup:
    """The GPU and formats of serving. `gpu` names a preset (`model.training.GPUS`) or "custom" with
    `peak_tflops`, `memory_gib` and `bandwidth_tbs`; `efficiency` (0 to 1) is shown beside the bound."""

    gpu: str = "h100-sxm"
    weights: str = "bf16"
    kv_dtype: str = "bf16"
    group: int = 128
    efficiency: float = 0.5
    peak_tflops: float | None = None
    memory_gib: float | None = None
    bandwidth_tbs: float | None = None

    def __post_init__(self) -> None:
        for name, table in (("weights", WEIGHTS), ("kv_dtype", KV)):
            if getattr(self, name) not in table:
                raise ValueError(f"{name}={getattr(self, name)!r} is not one of {', '.join(table)}")
        if self.gpu != CUSTOM_GPU and self.gpu not in GPUS:
            raise ValueError(f"gpu={self.gpu!r} is not one of {', '.join([*GPUS, CUSTOM_GPU])}")
        custom = (self.peak_tflops, self.memory_gib, self.bandwidth_tbs)
        if self.gpu == CUSTOM_GPU and None in custom:
            raise ValueError("a custom GPU needs peak_tflops, memory_gib and bandwidth_tbs: give all three")
        if self.gpu != CUSTOM_GPU and any(x is not None for x in custom):
            raise ValueError("peak_tflops, memory_gib and bandwidth_tbs describe a custom GPU: choose gpu=custom, "
                             "or drop them")
        if not 1 <= self.group <= 4096:
            raise ValueError(f"group={self.group} is out of range: a scale's group must be 1 to 4,096 weights")
        if not 0 < self.efficiency <= 1:
            raise ValueError(f"efficiency={self.efficiency} is out of range: from above 0 to 1 (0.5 for 50 %)")
        for x in custom:
            if x is not None and not 0 < x <= 1e6:
                raise ValueError(f"{x} is out of range for a GPU's peak, memory or bandwidth: a positive number")

    @property
    def device(self) -> Gpu:
        """The GPU: a preset (`model.training.GPUS`, with its bandwidth) or the custom one."""
        if self.gpu != CUSTOM_GPU:
            return GPUS[self.gpu]
        return Gpu("custom GPU", self.peak_tflops, self.memory_gib, self.bandwidth_tbs)

    @property
    def bandwidth(self) -> float:
        """Memory bandwidth, bytes/s."""
        return 1e12 * self.device.bandwidth_tbs


@dataclass(frozen=True)
class DecodeRow:
    """A tensor of the decode step: name, lesson shape, what it is, concrete shape, bytes (0 for a view)."""

    name: str
    symbolic: str
    label: str
    shape: tuple[int, ...]
    nbytes: int


@dataclass(frozen=True)
class DecodePass:
    """What one decode step's real pass (block 0, the embedding and the head, on the meta device) records."""

    rows: tuple[DecodeRow, ...]  # the lesson's rows (`DECODE_ROWS`) that the recipe makes
    flops: int  # the step's FLOPs, all L blocks, B new tokens
    flops_attn: int  # of them, q kᵀ and attn @ v over the T + 1 keys
    activation_bytes: int  # new memory of the step, all L blocks (the cache's concatenation excluded)


def _past(cfg: Config, kind: str, cached: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    """A decode step's cache of one block of `kind` on the meta device: K and V (or the latent and the rotary key) of
    `cached` tokens, or a Gated DeltaNet or Mamba 2 block's states (the recurrent one fp32)."""
    part = stack.stateful_kind(kind)
    kv = tuple(torch.zeros(shape, dtype=dtype, device="meta") for shape in stack.mixer(cfg).cache_shapes(cfg, cached))
    if part is None:
        return kv
    conv, state = part.cache_shapes(cfg)
    states = (torch.zeros(conv, dtype=dtype, device="meta"), torch.zeros(state, device="meta"))
    return (*kv, *states) if stack.beside(cfg) else states  # beside attention: K and V, then the states


def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


@functools.lru_cache(maxsize=256)
def decode_pass(cfg: Config, dtype: str = ACT_DTYPE) -> DecodePass:
    """One decode step of `GPT(cfg)` after cfg.T cached tokens, B sequences: a real pass on the meta device of the
    embedding, one block of each kind and the head, each block counted as often as its kind repeats (every block maps
    (B, 1, d) to itself over its own cache). A block's kind is its MLP's (dense, or a mixture of experts whose router
    sends each of the B new tokens to k of the E experts: B·k rows through the experts) and its attention's: a full
    block over its T cached tokens, a windowed one over its T_W = min(T, W − 1) (`Config.block_kinds`,
    `Config.attn_kinds`). The rows are block 0's."""
    attn_kinds = dict.fromkeys(cfg.attn_kinds)
    steps = {kind: _decode_blocks(cfg, dtype, kind) for kind in attn_kinds}
    n = Counter(zip(cfg.attn_kinds, cfg.block_kinds))  # blocks of each (attention, MLP) kind
    first = steps[cfg.attn_kinds[0]]
    return DecodePass(rows=first.rows, flops=sum(c * steps[a].flops[m] for (a, m), c in n.items()) + first.other_flops,
                      flops_attn=sum(c * steps[a].flops_attn[m] for (a, m), c in n.items()),
                      activation_bytes=sum(c * steps[a].nbytes[m] for (a, m), c in n.items()) + first.other_bytes)


@dataclass(frozen=True)
class _BlockSteps:
    """A decode step of one block of each MLP kind at one attention kind, by MLP kind ("dense", "moe"): its FLOPs,
    attention's FLOPs over the keys and its new bytes; and the embedding's and head's FLOPs and bytes, and the rows."""

    flops: dict[str, int]
    flops_attn: dict[str, int]
    nbytes: dict[str, int]
    other_flops: int
    other_bytes: int
    rows: tuple[DecodeRow, ...]


def _decode_blocks(cfg: Config, dtype: str, kind: str) -> _BlockSteps:
    """A decode step of the embedding, one block of each MLP kind with attention `kind` ("full": over T cached
    tokens; "sliding": over T_W), each on the embedding's output, and the head (`_BlockSteps`)."""
    torch_dtype = TORCH_DTYPES[dtype]
    one = one_of_each(window.of_kind(cfg, kind))
    model = meta_gpt(one).to(torch_dtype).requires_grad_(False)  # serving: no parameter asks for a gradient
    cached = cfg.T if kind == "full" else cfg.T_W
    pasts = [_past(cfg, block_kind, cached, torch_dtype) for block_kind in one.block_kinds]
    outputs: list[tuple[str, torch.Tensor]] = []
    caches = {f"blocks.{i}.{m}.{n}" for i in range(one.L) for m, n in
              (*(("attn", n) for n in ("k_cache", "v_cache", "latent_cache", "rope_cache", "indexer.index_cache")),
               *((part.KEY, "conv_cache") for part in stack.STATEFUL))}
    hooks = [m.register_forward_hook(lambda _m, _i, out, n=n: outputs.append((n, out)))
             for n, m in model.named_modules() if n and not list(m.children())]
    # A projection fed a transposed input (Mamba's x_proj and out_proj) runs a batched matmul too: what the blocks'
    # nn.Linear modules count is left out of q kᵀ and attn @ v (`projected`, block by block)
    now: list[Flops] = []
    projected, before = [0] * one.L, [0]

    def enter(_m: torch.nn.Module, _i: object) -> None:
        before[0] = now[0].attn

    def leave(_m: torch.nn.Module, _i: object, _o: object) -> None:
        projected[block] += now[0].attn - before[0]

    hooks += [h for m in model.blocks.modules() if isinstance(m, torch.nn.Linear)
              for h in (m.register_forward_pre_hook(enter), m.register_forward_hook(leave))]
    idx = torch.zeros(cfg.B, 1, dtype=torch.long, device="meta")
    counts = []
    try:
        with torch.no_grad():
            with Flops() as counter:
                x = model.embed_tokens(idx, start=cfg.T)
            counts.append(counter)
            for block in range(one.L):
                with Flops() as counter:
                    now[:] = [counter]
                    y = model.block(block, x, pasts[block])
                counts.append(counter)
            with Flops() as counter:
                logits = model.output(y)
            counts.append(counter)
    finally:
        for hook in hooks:
            hook.remove()
    kinds = one.block_kinds
    flops = {m: counts[1 + i].total for i, m in enumerate(kinds)}
    flops_attn = {m: counts[1 + i].attn - projected[i] for i, m in enumerate(kinds)}
    seen, nbytes, other_bytes = set(), dict.fromkeys(kinds, 0), 0
    kept = {id(t) for past in pasts for t in past}
    for name, t in outputs:
        if not isinstance(t, torch.Tensor) or _storage(t) in seen or id(t) in kept or name in caches:
            continue
        seen.add(_storage(t))
        block = name.split(".")[1] if name.startswith("blocks.") else None
        if block is None:
            other_bytes += t.untyped_storage().nbytes()
        else:
            nbytes[kinds[int(block)]] += t.untyped_storage().nbytes()
    recorded = {"idx": idx, "logits": logits, **dict(outputs)}
    by = attention.lesson_heads(cfg)
    cached = "T"
    if kind == "sliding":  # a windowed block's keys: its T_W cached tokens and the new one
        by, cached = {"T": E("T_W")}, "T_W"
    rows = tuple(DecodeRow(name, shape_subs(shape, **by), label.format(T=cached), tuple(recorded[name].shape),
                           recorded[name].untyped_storage().nbytes())
                 for name, (shape, label) in decode_rows(one).items() if name in recorded)
    return _BlockSteps(flops, flops_attn, nbytes, counts[0].total + counts[-1].total,
                       other_bytes, rows)


@dataclass(frozen=True)
class Inference:
    """Prefill and decode at cfg's B and T on `setup`'s GPU: every figure, and each as a `Line`."""

    cfg: Config
    setup: InferSetup
    weight_bytes: int  # all weights at their formats, scales included: what serving holds
    prefill_flops: int
    ttft_s: float  # the prefill's bound: time to first token
    decode_flops: int  # one new token for each of B sequences at context T
    decode_bytes: int
    decode_step_s: float
    decode_tokens_per_s: float  # the bound, all B sequences
    gpu_flops_per_s: float
    gpu_bytes_per_s: float
    knee_B: int | None  # the smallest B at which a decode step is compute-bound at this T (None: none up to 2²⁰)
    rows: tuple[DecodeRow, ...]
    lines: tuple[Line, ...]
    T: int  # the context the figures are at: cfg's T, or T_max − 1 where `note` says why (`decode_context`)
    note: str | None = None

    def as_dict(self) -> dict:
        """Every figure by name, the lines and the rows (for JSON)."""
        out = {k: v for k, v in asdict(self).items() if k not in ("cfg", "setup", "lines", "rows")}
        return {**out, "setup": asdict(self.setup), "rows": [{**asdict(r), "shape": list(r.shape)} for r in self.rows],
                "lines": [asdict(x) for x in self.lines]}

    def line(self, key: str) -> Line:
        return next(x for x in self.lines if x.key == key)


class Quantized(NamedTuple):
    """The weights a quantizer stores in its format (`quantized`) and one routed expert's share of them."""

    N_q: int  # the blocks' matrix weights, all L blocks
    S_q: int  # their scales
    N_e: int  # one routed expert's matrix weights (0 for a dense model)
    S_e: int  # its scales


@functools.lru_cache(maxsize=256)
def quantized(cfg: Config, group: int) -> Quantized:
    """The blocks' matrix weights, all L blocks, which a quantizer stores in its format (N_q): attention's W_qkv and
    W_o, a dense block's MLP, an MoE block's routed experts (their stacked (E, in, out) matrices) and shared experts'
    MLP. The router W_router (d, E) and the shared experts' gate (d, 1) stay at 16 bits, as AWQ and GPTQ keep
    Mixtral's and Qwen's `gate`. The scales (S_q): one per group of `group` weights along each matrix row's inputs
    (a row's last group may be shorter: ⌈in / group⌉ per row). Counted on one block of each kind
    (`model.config.one_of_each`), times the blocks of that kind."""
    blocks = meta_gpt(one_of_each(cfg)).blocks
    n = Counter(cfg.block_kinds)
    N_q = S_q = N_e = S_e = 0
    for block in blocks:
        matrices = _matrices(block)
        N_q += n[block.kind] * sum(E * i * o for E, i, o, _ in matrices)
        S_q += n[block.kind] * sum(E * o * -(-i // group) for E, i, o, _ in matrices)
        if any(expert for *_, expert in matrices):  # one routed expert, as every MoE block's (Gated DeltaNet's and
            # attention's MoE blocks are two kinds of one expert)
            N_e = sum(i * o for _, i, o, expert in matrices if expert)
            S_e = sum(o * -(-i // group) for _, i, o, expert in matrices if expert)
    return Quantized(N_q, S_q, N_e, S_e)


def _matrices(block: torch.nn.Module) -> list[tuple[int, int, int, bool]]:
    """A block's quantized matrices as (copies, inputs, outputs, whether one per routed expert): its Linears' weights
    (out, in) but the router's and the shared gate's, and the routed experts' (E, in, out) parameters."""
    ffn = block.ffn
    kept = {id(getattr(ffn, name).weight) for name in ("router", "shared_gate") if hasattr(ffn, name)}
    out = [(1, m.in_features, m.out_features, False) for m in block.modules()
           if isinstance(m, torch.nn.Linear) and id(m.weight) not in kept]
    return out + [(p.shape[0], p.shape[1], p.shape[2], True) for m in block.modules() if isinstance(m, Experts)
                  for p in m.parameters(recurse=False) if p.dim() == 3]


def _fmt(x: float) -> str:
    return f"{x:g}"


def decode_context(cfg: Config) -> tuple[Config, str | None]:
    """The configuration serving is figured at, and the sentence that says so where it is not `cfg`'s: a decode
    step after T cached tokens puts its new token at position T, which a learned position table W_pe has only
    below T_max, so at T = T_max the figures are those after T_max − 1 cached tokens (the prompt, prefill included,
    is then T_max − 1 tokens too), the longest context a decode step can follow."""
    if cfg.positions != "learned" or cfg.T < cfg.T_max:
        return cfg, None
    T = cfg.T_max - 1
    return replace(cfg, T=T), (f"T = T_max = {cfg.T:,} leaves the learned position table W_pe no row for a new "
                               f"token, so serving is figured at T = T_max − 1 = {T:,}, the longest context a decode "
                               f"step can follow (set T below {cfg.T:,} to choose another).")


def infer(cfg: Config, setup: InferSetup | None = None, check: bool = True, b: Budget | None = None) -> Inference:
    """The prefill and a decode step of `cfg` (its B, and T as `decode_context` takes it) on `setup` (see the
    module docstring). `check`: evaluate every line's formula against its value (the charts' points, made by the same
    code at other B and T, skip it). `b`: the budget of cfg at `decode_context`'s T and any B (`by_batch` passes its
    own: N and the forward FLOPs per token, all serving reads of it, do not depend on B); default `budget` at cfg's."""
    s = setup or InferSetup()
    cfg, note = decode_context(cfg)
    w, kv = WEIGHTS[s.weights], KV[s.kv_dtype]
    b = budget(cfg) if b is None else b
    N = b.params_exact
    q = quantized(cfg, s.group)
    N_q, S_q = q.N_q, q.S_q
    weights = round(2 * (N - N_q) + w.bytes * N_q) + S_q * w.scale_bytes
    w_formula = (E("2·N") if w.bytes == 2 else
                 total(E("2·(N − N_q) + {b}·N_q", b=num(w.bytes)), E("2·S_q") if w.scale_bytes else None))
    unread, read_formula = 0, w_formula
    if not cfg.tie:  # the token table's lookup reads its B rows only; a tied head reads it all
        unread, read_formula = 2 * (cfg.V - cfg.B) * cfg.d, E("{r} − 2(V − B)·d", r=read_formula)
    if cfg.positions == "learned":  # W_pe: one row, position T
        unread, read_formula = unread + 2 * (cfg.T_max - 1) * cfg.d, E("{r} − 2(T_max − 1)·d", r=read_formula)
    expert, expert_formula = moe.expert_bytes(cfg, w.bytes, w.scale_bytes, q.N_e, q.S_e)
    E_B = moe.touched(cfg, cfg.B)
    untouched = functools.partial(moe.untouched, cfg, expert=expert)  # bytes a step's tokens' choices leave unread
    read = weights - unread - untouched(cfg.B)
    read_formula = moe.read(cfg, read_formula, expert_formula)
    token_bytes, token_formula, cache_read, cache_formula = _cache_bytes(cfg, kv)
    write_formula = E("B·({t})", t=token_formula)
    part = stack.stateful(cfg)
    if part is not None:  # every step rewrites each Gated DeltaNet or Mamba 2 block's states
        write_formula = E("{w} + {st}", w=write_formula, st=part.states(cfg, DTYPES[ACT_DTYPE]))
    cache_write = int(write_formula.value({**cfg.symbols(), "h_kv": cfg.h_kv}))
    step = decode_pass(cfg)
    decode_bytes = read + cache_read + cache_write + step.activation_bytes
    P, BW = s.device.peak_tflops * 1e12, s.bandwidth
    step_s = max(step.flops / P, decode_bytes / BW)
    forward = formulas(cfg).measured()
    windowed = (f" (the {cfg.L_W:,} windowed blocks' T_W = min(T, W − 1) = {cfg.T_W:,})"
                if window.present(cfg) else "")
    attn_formula = next(p for p in (window, stack.mixer(cfg)) if p.present(cfg)).decode_scores(cfg)
    decode_formula = forward.subs(T=E("T + 1"))  # a new token's query over T + 1 keys
    if part is not None:  # the attention blocks' queries over T + 1 keys; the other blocks' step
        coeff, width = stack.mixer(cfg).scores(cfg)  # q kᵀ and attn @ v per key (latent attention's widths)
        decode_formula = formulas(cfg).measured(E("{c}(T + 1)·{w}", c=coeff, w=width), lin=part.decode_flops(cfg))
        attn_formula = E("{a} + {s}", a=attn_formula.subs(L=stack.mixer_counts(cfg)["attention"]),
                         s=part.decode_state_flops(cfg))
    for part in (window, latent):  # the keys a windowed block does not see; latent attention's K and V made again
        decode_formula = part.decode_flops(cfg, decode_formula)
    prefill_flops = b.flops_fwd_measured_per_token * cfg.B * cfg.T
    prefill_bytes = weights + cache_read - untouched(cfg.B * cfg.T)
    ttft = max(prefill_flops / P, prefill_bytes / BW)
    knee = knee_batch(cfg, s, step, lambda B: weights - unread - untouched(B), cache_read // cfg.B + token_bytes)
    memory = weights + cache_read
    bound = "compute-bound" if step.flops / P >= decode_bytes / BW else "memory-bound"
    lines = (
        Line("infer/n_q", "N_q, the blocks' matrix weights (the ones quantized; embeddings, head, norms and biases "
             + (f"stay at 16 bits{moe.serving_words(cfg, 'infer/n_q')})"), "", N_q, "params"),
        *([Line("infer/s_q", f"S_q, the scales: one per group of {s.group:,} weights along each matrix's rows", "",
                S_q, "count")] if w.scale_bytes else []),
        Line("infer/weights", f"weights to serve: the blocks' matrices at {s.weights} ({w.note}), the rest at 16 bits",
             w_formula.text, weights, "bytes"),
        Line("infer/kv_cache", f"KV cache at {s.kv_dtype} ({kv.note}): B sequences of T tokens{windowed}"
             + says(cfg, "infer/kv_cache"),
             cache_formula.text, cache_read, "bytes"),
        Line("infer/memory", "memory to serve: the weights and the cache", "", memory, "bytes"),
        Line("infer/fits", f"they fit in one {s.device.label}", "", memory <= s.device.memory_gib * 2**30, "bool"),
        Line("infer/prefill_flops", "prefill: the forward pass over B sequences of T tokens (its measured FLOPs)",
             E("BT·({f})", f=forward).text, prefill_flops, "FLOP"),
        Line("infer/prefill_bytes", f"prefill bytes: every weight read once, the cache of T tokens written{windowed}"
             + moe.serving_words(cfg, "infer/prefill_bytes"), "", prefill_bytes, "bytes"),
        Line("infer/ttft", "time to first token: the prefill's bound, max(FLOPs / P, bytes / BW)", "", ttft,
             "seconds"),
        Line("infer/decode_flops", "decode step: one new token for each of B sequences after T cached tokens",
             E("B·({f})", f=decode_formula).text, step.flops, "FLOP"),
        Line("infer/decode_attn_flops", f"of them, q kᵀ and attn @ v over the T + 1 keys{windowed}"
             + says(cfg, "infer/decode_attn"), attn_formula.text,
             step.flops_attn, "FLOP"),
        *sparse.decode_lines(cfg, {**cfg.symbols(), "h_kv": cfg.h_kv}),
        *(_expert_lines(s, q, expert, expert_formula, E_B) if expert_formula is not None else ()),
        Line("infer/decode_weights_read", "decode bytes: every weight read once (the token table's lookup: its B "
             "rows)" + moe.serving_words(cfg, "infer/decode_weights_read"),
             read_formula.text, read, "bytes"),
        Line("infer/decode_cache_read", f"decode bytes: the cache of T tokens read{windowed}", cache_formula.text,
             cache_read, "bytes"),
        Line("infer/decode_cache_write", f"decode bytes: {_written(cfg)}", write_formula.text,
             cache_write, "bytes"),
        Line("infer/decode_activations", "decode bytes: the step's activations written once (the pass's new "
             "memory)", "", step.activation_bytes, "bytes"),
        Line("infer/decode_bytes", "decode bytes moved per step", "", decode_bytes, "bytes"),
        Line("infer/intensity", "arithmetic intensity of a decode step: FLOPs per byte moved", "",
             step.flops / decode_bytes, "flop_per_byte"),
        Line("infer/ridge", f"ridge point of the {s.device.label}: P / BW (P = {_fmt(s.device.peak_tflops)} TFLOP/s, "
             f"BW = {_fmt(BW / 1e12)} TB/s)", "P/BW", P / BW, "flop_per_byte"),
        Line("infer/step", f"decode step time, the bound: max(FLOPs / P, bytes / BW); {bound} at this B and T", "",
             step_s, "seconds"),
        Line("infer/tokens_per_s", "decode tokens per second, all B sequences (the bound)", "", cfg.B / step_s,
             "tokens_per_s"),
        Line("infer/tokens_per_s_seq", "decode tokens per second of one sequence (the bound)", "", 1 / step_s,
             "tokens_per_s"),
        Line("infer/at_efficiency", f"at an efficiency of {_fmt(s.efficiency)} (beside the bound, not in it)", "",
             s.efficiency * cfg.B / step_s, "tokens_per_s"),
        Line("infer/knee_B", "the smallest B at which a decode step turns compute-bound at this T"
             + ("" if knee else " (none: each sequence's cache and activations take longer to move than its token's "
                               "FLOPs)"), "",
             0 if knee is None else knee, "count"),
    )
    symbols = {**cfg.symbols(), "N": N, "N_q": N_q, "S_q": S_q, "P": P, "BW": BW,
               **({"N_e": q.N_e, "S_e": q.S_e, "E_B": E_B} if expert_formula is not None else {})}
    if check:
        check_lines(lines, symbols)
    return Inference(cfg=cfg, setup=s, weight_bytes=weights, prefill_flops=prefill_flops, ttft_s=ttft,
                     decode_flops=step.flops, decode_bytes=decode_bytes, decode_step_s=step_s,
                     decode_tokens_per_s=cfg.B / step_s, gpu_flops_per_s=P, gpu_bytes_per_s=BW, knee_B=knee,
                     rows=step.rows, lines=lines, T=cfg.T, note=note)


def _expert_lines(s: InferSetup, q: Quantized, expert: float, formula: Expr, E_B: float) -> tuple[Line, ...]:
    """A mixture of experts' decode read: one routed expert's matrices, scales and bytes, and E_B, the experts a
    step's B·k choices touch in each MoE block (`model.parts.moe.touched`)."""
    w = WEIGHTS[s.weights]
    return (
        Line("infer/n_e", "N_e, one routed expert's matrix weights (of N_q)", "", q.N_e, "params"),
        *([Line("infer/s_e", "S_e, its scales", "", q.S_e, "count")] if w.scale_bytes else []),
        Line("infer/expert_bytes", f"one routed expert's weights at {s.weights}", formula.text, expert, "bytes"),
        Line("infer/experts_touched", "E_B, the routed experts of each MoE block that the B new tokens' k choices "
             "touch: the expected number with uniform routing, E·(1 − (1 − k/E)^B) (k at B = 1, E as B grows; a "
             "skewed router touches fewer)", "", E_B, "count"),
    )


def _written(cfg: Config) -> str:
    """What a decode step writes to the cache, in words: the new token's K and V (the mixer's `WRITTEN`), and with
    Gated DeltaNet or Mamba 2 blocks their states (`WRITTEN` of `model.parts.delta`, `model.parts.mamba`)."""
    part = stack.stateful(cfg)
    if part is not None and stack.beside(cfg):
        return part.WRITTEN_BESIDE
    return part.WRITTEN if part is not None else \
        f"the new token's {says(cfg, 'infer/written', stack.mixer(cfg).WRITTEN)} written"


def _cache_bytes(cfg: Config, kv: Format) -> tuple[int, Expr, int, Expr]:
    """The cache at format `kv`, from the elements of the part that keeps it (`model.memory.kv_cache_lines`' one
    definition): (bytes of one token of one sequence in every block, its formula, bytes of the B sequences' cache after
    T tokens, its formula). A windowed block keeps T_W = min(T, W − 1) tokens, a full one T."""
    mixer, values = stack.mixer(cfg), {**cfg.symbols(), "h_kv": cfg.h_kv}

    def at(x: Expr | None) -> Expr:  # the bytes over x block-tokens (None: one block's token), scales included
        return total(E("{e}·{b}", e=mixer.cache(cfg, x), b=num(kv.bytes)),
                     mixer.cache_scales(cfg, x) if kv.scale_bytes else None)

    token = at(E("L"))
    part = stack.stateful(cfg)
    if part is not None:  # the attention blocks' tokens, and the other blocks' states at 16 and 32 bits
        token = at(stack.mixer_counts(cfg)["attention"])
        cache = E("BT·({t}) + {st}", t=token, st=part.states(cfg, DTYPES[ACT_DTYPE]))
    elif not window.present(cfg):
        cache = E("BT·({t})", t=token)
    else:
        cache = E("B·((L − L_W)·T + L_W·T_W)·({t})", t=at(None))
    return int(token.value(values)), token, int(cache.value(values)), cache


def knee_batch(cfg: Config, s: InferSetup, step: DecodePass, read: Callable[[int], float],
               per_sequence: int) -> int | None:
    """The smallest B at which a decode step's FLOPs / P reach its bytes / BW at cfg's T: FLOPs grow as B·f, bytes
    as read(B) + B·(cache and activations per sequence), where read(B) is the weights a step reads (all of a dense
    model's; a mixture of experts' grows with the E_B experts touched, concave in B). Their difference is convex in
    B and negative at B = 0, so the B that make a step compute-bound are one range from the knee: found by
    bisection up to 2²⁰ (None where none is: each sequence's cache and activations take longer to move than its
    token's FLOPs take; 2²⁰ where the knee is beyond it)."""
    P, BW = s.device.peak_tflops * 1e12, s.bandwidth
    f = step.flops / cfg.B  # per new token (the head's and blocks' per token; exact: FLOPs are linear in B)
    c = per_sequence + step.activation_bytes / cfg.B
    if f / P - c / BW <= 0:
        return None
    bound = lambda B: B * f / P >= (read(B) + B * c) / BW  # noqa: E731 (compute-bound at B)
    lo, hi = 1, 2**20
    if not bound(hi):
        return hi
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if bound(mid) else (mid + 1, hi)
    return lo


SERIES_B = tuple(2**i for i in range(11))  # 1 … 1,024 sequences: the tokens-per-second chart's points


def by_batch(cfg: Config, setup: InferSetup | None = None) -> tuple[dict, ...]:
    """Decode at cfg's T for B = 1 … 1,024 (those that `model.config.largest_B` takes at this T): each point's step
    time and tokens per second (all B sequences, and one), and whether it is compute-bound: the chart of tokens per
    second against B, its knee where it turns."""
    out = []
    b = budget(decode_context(cfg)[0])  # cfg's own, for every point: no training pass at each B
    for B in (B for B in SERIES_B if B <= largest_B(cfg.T)):
        r = infer(replace(cfg, B=B), setup, check=False, b=b)
        out.append({"B": B, "step_s": r.decode_step_s, "tokens_per_s": r.decode_tokens_per_s,
                    "tokens_per_s_seq": 1 / r.decode_step_s,
                    "compute_bound": r.decode_flops / r.gpu_flops_per_s >= r.decode_bytes / r.gpu_bytes_per_s})
    return tuple(out)


CONTEXT_POINTS = 9  # `by_context`'s powers of two below its last T, at most


def by_context(cfg: Config, setup: InferSetup | None = None) -> tuple[dict, ...]:
    """A decode step's time at cfg's B for T = 128, 256, … up to what the positions allow (T_max − 1 cached tokens
    with a learned table; T_max with RoPE), within T's bound and the sizes a pass takes at this B and h
    (`model.config.check_sizes`): the chart of step time against context. At most `CONTEXT_POINTS` powers of two below
    the last T, one doubling apart up to 65,536 and two or more beyond (Llama 4 Scout's 10,485,760: 128, 512, …,
    8,388,608), then the last T."""
    top = min(cfg.T_max - 1 if cfg.positions == "learned" else cfg.T_max, BOUNDS["T"][1], MAX_TOKENS // cfg.B,
              MAX_HEAD_T // score_heads(cfg.h, cfg.index_heads))
    step = max(1, math.ceil(math.log2(top / 128) / CONTEXT_POINTS)) if top > 128 else 1
    Ts = [T for T in (2**i for i in range(7, 25, step)) if T < top] + [top]
    out = []
    for T in Ts:
        r = infer(replace(cfg, T=T), setup, check=False)
        out.append({"T": T, "step_s": r.decode_step_s, "tokens_per_s": r.decode_tokens_per_s,
                    "ttft_s": r.ttft_s})
    return tuple(out)


@dataclass(frozen=True)
class Serving:
    """What the page's inference card shows: the figures at cfg's B and T, and its two charts' points."""

    result: Inference
    by_B: tuple[dict, ...]  # `by_batch`: decode at cfg's T for B = 1 … 1,024
    by_T: tuple[dict, ...]  # `by_context`: decode at cfg's B for T = 128 … T_max
    twin_T: tuple[dict, ...] = ()  # with Gated DeltaNet blocks: `by_context` of the all-attention twin


@functools.lru_cache(maxsize=64)
def serving(cfg: Config, setup: InferSetup | None = None) -> Serving:
    """`infer`, `by_batch` and `by_context` of `cfg` on `setup`, once per configuration and setup (ValueError as
    `infer`'s: a mixture of experts, a decode step beyond a learned position table)."""
    twin = by_context(all_attention(cfg), setup) if stack.stateful(cfg) is not None else ()
    return Serving(infer(cfg, setup), by_batch(cfg, setup), by_context(cfg, setup), twin)
