"""From N to a training run: tokens D, compute C, Chinchilla's optimum, time and cost, memory to train and to serve.

Pure functions of a `Config` (the model, and the micro-batch B at sequence length T) and a frozen, validated
`TrainSetup` (D, the GPU, MFU, GPU count, price, optimizer, ZeRO stage, recomputation, dtype):

    >>> from model import PRESETS
    >>> run = plan(PRESETS["gpt2-small"], TrainSetup())
    >>> run.D == 20 * run.N, run.memory.fits
    (True, True)

Every figure is a `Line(key, label, formula, value, unit)` in display order (`plan(...).lines`), and every
formula is true: `model.formula.evaluate(line.formula, plan(...).symbols)` gives `line.value` (a formula "" marks
a figure that is data or a search, not arithmetic). Symbols beyond the lesson's (B, T, d, h, d_head, L, V, T_max):

- N parameters (exact, the module's count), D training tokens, C = 6·N·D FLOPs; a mixture of experts' N_active,
  the parameters one token uses (`model.budgeting`), which sets its compute: C = 6·N_active·D;
- P the GPU's dense BF16 peak FLOP/s (no sparsity), MFU the model FLOPs utilisation, n the GPU count,
  price the assumed dollars per GPU-hour, G Chinchilla's G (below);
- M_fwd, M_loss, M_bwd, M_opt the bytes alive at the peak of the step's forward pass, loss, backward pass and
  optimizer step, besides weights, gradients and optimizer states (`step_phases`, measured by `model.peak`);
- S_block the bytes one block saves for the backward pass, S_rest what the rest (embeddings, final LayerNorm,
  head, loss) saves, at the micro-batch B, T and dtype: `trace(cfg, dtype).saved_bytes` = S_rest + L·S_block,
  measured with autograd's saved-tensor hooks; its formula (`model.memory.saved_formula`) is the activations'. With
  blocks of two kinds (a mixture of experts in some), S_dense and S_moe, each kind's block's (`saved_by_kind`).

Conventions:
- C = 6·N·D (the lesson: forward 2N + backward 4N FLOPs per token); C measured = 3 × the measured forward
  FLOPs per token × D (backward = 2 × forward, attention's 4LTd included). 1 PF-day = 10¹⁵ × 86,400 FLOPs.
- A mixture of experts: a token runs k of the E routed experts, so the training chain (D by Chinchilla's rule, C,
  MFU, time, cost) uses N_active: C = 6·N_active·D. Chinchilla's fit is of dense models (`MOE_NOTE`): read at
  N_active it treats the model as a dense one of N_active parameters. Memory counts every expert: weights,
  gradients and Adam's states are of N parameters; the activations hold k experts' worth of rows per token.
- MFU (PaLM, Chowdhery et al. 2022, appendix B): observed tokens/s × 6N ÷ peak FLOP/s of the GPUs used.
  PaLM adds attention's 12·L·T·h·d_head per token to 6N (12·L·T·d where h·d_head = d); we keep 6N, so the time
  follows C = 6ND.
- Memory per GPU in bytes. Mixed-precision Adam: 2 (bf16 weights) + 2 (bf16 gradients) + 12 (fp32 master
  weights, m and v) bytes per parameter; fp32 Adam: 4 + 4 + 8. ZeRO over the n GPUs (Rajbhandari et al.
  2020): stage 1 shards the optimizer states, 2 also the gradients, 3 also the weights (each ÷ n); the
  activations are not sharded. Recomputation "full" checkpoints every block: it keeps each block's input
  (B·T·d elements at dtype) and the rest's S_rest, and during one block's backward rebuilds that block's
  S_block, so the peak holds L·B·T·d·bytes + S_rest + S_block.
- The step's peak (`model.peak`): weights, gradients and optimizer states are held all step (gradient buffers
  kept between steps); on top, each phase holds what it holds at its worst moment: the forward pass its saved
  tensors and attention's locals, the loss the logits (B, T, V) and their copies, the backward pass the saved
  tensors not yet freed and the gradients flowing back, the optimizer step Adam's temporaries. The peak is the
  largest phase; "fits" and the largest micro-batch use it. The sum of the parts (`memory/total`) stays beside it.
- GPU memory is the nominal capacity in GiB (an A100 80 GB holds 80 GiB); a little of it goes to the CUDA
  context and the allocator, which is not counted here.
- Serving: the weights at dtype and the KV cache, 2·L·B·T·h_kv·d_head elements (keys and values of the h_kv
  K/V heads in every block; 2·L·B·T·d for GPT-2, whose h heads all have their own) at dtype.
"""
from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field, replace
from fractions import Fraction

from . import stack
from .budgeting import budget
from .figures import Line, check_lines, html_repr
from .formula import evaluate
from .memory import BLOCK_COUNTS, VARIANTS, block_counts, kv_cache_lines, saved_formula, structure
from .config import KIND_LABELS, Config, distinct_kinds, kind_blocks, kind_counts, largest_B, mlp_kind
from .parts import delta, kda, mamba, mamba1, says
from .peak import PHASE_LABELS, PHASE_SYMBOLS, PHASES, candidates, measured_candidates, moment_words
from .tracing import DTYPES


# --- constants, with their sources ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Gpu:
    """A GPU's dense BF16 peak (no 2:4 sparsity), its nominal memory and its memory bandwidth (serving's roofline,
    `model.inference`; None where a training run's custom GPU does not say)."""

    label: str
    peak_tflops: float  # 10¹² FLOP/s
    memory_gib: float  # 2³⁰ bytes
    bandwidth_tbs: float | None = None  # 10¹² bytes/s


GPUS: dict[str, Gpu] = {  # NVIDIA data sheets: dense BF16 tensor-core peak, HBM bandwidth
    "a100-40gb": Gpu("A100 40 GB", 312, 40, 1.555),
    "a100-80gb": Gpu("A100 80 GB", 312, 80, 2.039),
    "h100-sxm": Gpu("H100 SXM 80 GB", 989, 80, 3.35),
    "h200": Gpu("H200 141 GB", 989, 141, 4.8),
    "b200": Gpu("B200 192 GB", 2250, 192, 8.0),
}
CUSTOM_GPU = "custom"


@dataclass(frozen=True)
class Optimizer:
    """Bytes per parameter for weights, gradients and optimizer states, and the activations' default dtype."""

    label: str
    weights: int
    grads: int
    states: int
    dtype: str  # activations and serving, unless TrainSetup.dtype says otherwise


OPTIMIZERS: dict[str, Optimizer] = {
    "adam-mixed": Optimizer("Adam, mixed precision: bf16 weights and gradients, fp32 master weights, m and v",
                            2, 2, 12, "bf16"),
    "adam-fp32": Optimizer("Adam, fp32: fp32 weights and gradients, m and v", 4, 4, 8, "fp32"),
}
RECOMPUTE = ("none", "full")


@dataclass(frozen=True)
class ScalingFit:
    """L(N, D) = E + A/N^α + B/D^β, a fit of final loss (nats per token) to parameters N and tokens D."""

    label: str
    E: float
    A: float
    B: float  # Chinchilla's fitted constant, not the batch size
    alpha: float
    beta: float

    @property
    def note(self) -> str:
        """The fit and its constants, named so that its B is not read as the batch size."""
        return (f"{self.label}: loss(N, D) = E + A/N^α + B/D^β with E = {self.E}, A = {self.A}, B = {self.B}, "
                f"α = {self.alpha}, β = {self.beta} (A and B are the fit's constants, not the batch size)")

    @property
    def a(self) -> float:
        """N_opt ∝ C^a with a = β/(α + β), rounded to 4 decimals as printed (a + b = 1 still)."""
        return round(self.beta / (self.alpha + self.beta), 4)

    @property
    def b(self) -> float:
        """D_opt ∝ C^b with b = α/(α + β) = 1 − a."""
        return round(1 - self.a, 4)

    @property
    def inv(self) -> float:
        """1/(α + β), rounded to 4 decimals as printed."""
        return round(1 / (self.alpha + self.beta), 4)


FITS: dict[str, ScalingFit] = {
    "hoffmann": ScalingFit("Hoffmann et al. 2022 (Chinchilla), approach 3", 1.69, 406.4, 410.7, 0.34, 0.28),
    "besiroglu": ScalingFit("Besiroglu et al. 2024, refit of Chinchilla's approach 3", 1.82, 482.01, 2085.43,
                            0.3478, 0.3658),
}


def chinchilla_note(cfg: Config, fit: str) -> str:
    """The Chinchilla section's note: the fit and its constants (`ScalingFit.note`), and for a mixture of experts
    the caveat of counting it at N_active (`model.parts.moe.CAVEAT`)."""
    return FITS[fit].note + says(cfg, "train/fit_note")

CHINCHILLA_TOKENS_PER_PARAM = 20
MOE_NOTE = ("A mixture of experts: its compute is N_active's (C = 6·N_active·D), and the fit is read at N = N_active, "
            "as a dense model of N_active parameters. Chinchilla fitted dense models only: an MoE of N_active active "
            "and N total parameters reaches a lower loss than that dense model and a higher one than a dense model "
            "of N (MoE scaling laws: Clark et al. 2022, Krajewski et al. 2024), so read these as a dense bound.")
PF_DAY = 10**15 * 86_400  # FLOPs in one petaflop/s-day

# Bounds of the setup's numbers: wide enough for any run on record, narrow enough that no accident slips through.
SETUP_BOUNDS: dict[str, tuple[float, float]] = {
    "D": (1, 10**15),  # tokens
    "mfu": (0.001, 1.0),
    "gpus": (1, 1_048_576),
    "price": (0.0, 1_000.0),  # dollars per GPU-hour
    "peak_tflops": (0.001, 100_000.0),
    "memory_gib": (0.001, 100_000.0),
}


def _show(x: float) -> str:
    """A bound or value in a message: 40 -> "40", 0.001 -> "0.001", 10**15 -> "1,000,000,000,000,000"."""
    return f"{int(x):,}" if x == int(x) else f"{x:,}"


def _number(name: str, value: object, whole: bool = False) -> int | float:
    """`value` as a number within SETUP_BOUNDS[name], else ValueError naming the bounds."""
    lo, hi = SETUP_BOUNDS[name]
    kind = "whole number" if whole else "number"
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or (whole and value != int(value)) \
            or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(f"{name} must be a {kind} from {_show(lo)} to {_show(hi)}, got {value!r}")
    if not lo <= value <= hi:
        hint = " (write 0.4 for 40 %)" if name == "mfu" and 1 < value <= 100 else ""
        raise ValueError(f"{name}={_show(value)} is out of range: {name} must be from {_show(lo)} to {_show(hi)}{hint}")
    return int(value) if whole else float(value)


@dataclass(frozen=True)
class TrainSetup:
    """How the model is trained and served; validated at construction (ValueError names problem and fix).

    D None means Chinchilla's rule D = 20·N. dtype None means the optimizer's compute dtype (bf16 for
    mixed-precision Adam, fp32 for fp32 Adam); it sizes the saved activations and the serving weights and KV
    cache. peak_tflops and memory_gib describe a custom GPU (gpu="custom") and only that.
    """

    D: int | None = None
    gpu: str = "h100-sxm"
    mfu: float = 0.40
    gpus: int = 8
    price: float = 2.50  # dollars per GPU-hour: an assumption, not a quote
    optimizer: str = "adam-mixed"
    zero: int = 0
    recompute: str = "none"
    dtype: str | None = None
    peak_tflops: float | None = None
    memory_gib: float | None = None
    fit: str = "hoffmann"

    def __post_init__(self) -> None:
        def put(name: str, value: object) -> None:
            object.__setattr__(self, name, value)

        if self.D is not None:
            put("D", _number("D", self.D, whole=True))
        for name in ("mfu", "price"):
            put(name, _number(name, getattr(self, name)))
        put("gpus", _number("gpus", self.gpus, whole=True))
        for name, allowed in (("gpu", (*GPUS, CUSTOM_GPU)), ("optimizer", tuple(OPTIMIZERS)),
                              ("recompute", RECOMPUTE), ("fit", tuple(FITS))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name}={getattr(self, name)!r} is not one of {', '.join(allowed)}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ValueError(f"dtype={self.dtype!r} is not one of {', '.join(DTYPES)} (or None: the optimizer's)")
        if isinstance(self.zero, bool) or self.zero not in (0, 1, 2, 3):
            raise ValueError(f"zero={self.zero!r} is not a ZeRO stage: choose 0 (none), 1 (optimizer states), "
                             f"2 (+ gradients) or 3 (+ weights)")
        custom = (self.peak_tflops, self.memory_gib)
        if self.gpu == CUSTOM_GPU:
            if None in custom:
                raise ValueError("a custom GPU needs its peak and its memory: give peak_tflops and memory_gib")
            put("peak_tflops", _number("peak_tflops", self.peak_tflops))
            put("memory_gib", _number("memory_gib", self.memory_gib))
        elif custom != (None, None):
            raise ValueError(f"peak_tflops and memory_gib describe a custom GPU; with gpu={self.gpu!r} they would "
                             f"be ignored: drop them or set gpu='custom'")

    @property
    def device(self) -> Gpu:
        """The GPU: a named one from GPUS, or the custom one."""
        if self.gpu == CUSTOM_GPU:
            return Gpu("custom GPU", self.peak_tflops, self.memory_gib)
        return GPUS[self.gpu]

    @property
    def capacity(self) -> int:
        """The GPU's memory in bytes: round(memory_gib · 2³⁰)."""
        return round(self.device.memory_gib * 2**30)

    @property
    def act_dtype(self) -> str:
        """The dtype of activations, serving weights and KV cache."""
        return self.dtype or OPTIMIZERS[self.optimizer].dtype


# --- the measured activations ------------------------------------------------------------------------------
def saved_formula_of(cfg: Config, dtype: str) -> str:
    """The saved-for-backward bytes in lesson notation, true for every config of cfg's structure (model.memory)."""
    return saved_formula(structure(cfg, dtype))


def saved_symbols(cfg: Config) -> dict[str, str]:
    """Each kind of block's saved-bytes symbol: {"dense": "S_block"} for a model of one kind (MoE: {"moe": "S_block"}),
    {"dense": "S_dense", "moe": "S_moe"} for two."""
    kinds = distinct_kinds(cfg)
    return {kinds[0]: "S_block"} if len(kinds) == 1 else {kind: f"S_{kind}" for kind in kinds}


def no_peak(cfg: Config) -> str | None:
    """Why the exported page's training card has no figures for `cfg`, or None: a step's peak with a chunked part's
    blocks is measured at one config (`model.peak.measured_candidates`), never a formula of B and T, and its part's
    NO_PEAK says so (Gated DeltaNet's, Kimi delta attention's, Mamba 2's, Mamba's)."""
    return (delta.NO_PEAK if delta.present(cfg) else kda.NO_PEAK if kda.present(cfg)
            else mamba.NO_PEAK if mamba.present(cfg) else mamba1.NO_PEAK if mamba1.present(cfg) else None)


@functools.lru_cache(maxsize=1024)
def saved_by_kind(cfg: Config, dtype: str) -> tuple[int, dict[str, int]]:
    """(S_rest, {kind: bytes one block of that kind saves}): bytes saved for backward outside the blocks and by one
    block of each kind, at cfg's B and T.

    Read off the trace's saved-bytes formula (`model.memory.saved_formula`, fitted to measured passes of cfg's
    structure and cached per structure), which is S_rest + L·S_block, or S_rest + (L − L_moe)·S_dense + L_moe·S_moe:
    evaluated at L = 0, then one block of each kind. No new trace for a new B, T, d or V; a test checks the parts
    against `trace(cfg, dtype).saved_bytes`. Gated DeltaNet blocks count under L_lin (their chunked rule's own
    formula, `model.parts.delta.saved_parts`).
    """
    formula, values = saved_formula_of(cfg, dtype), cfg.symbols()
    rest = int(evaluate(formula, {**values, **dict.fromkeys(BLOCK_COUNTS, 0)}))  # (L_moe, L_nope: where there are)
    one = {kind: {"L": 1, "L_moe": int(mlp_kind(kind) == "moe"),
                  **{count: int(kind.endswith(suffix)) for suffix, count in VARIANTS.items()}}
           for kind in distinct_kinds(cfg)}  # L_nope, L_lin, L_kda, …: 1 for a kind of that variant
    return rest, {kind: int(evaluate(formula, {**values, **at})) - rest for kind, at in one.items()}


def saved_parts(cfg: Config, dtype: str) -> tuple[int, int]:
    """(S_rest, S_block) of a model whose blocks are all of one kind (`saved_by_kind`); ValueError for two kinds."""
    rest, by_kind = saved_by_kind(cfg, dtype)
    if len(by_kind) != 1:
        raise ValueError(f"blocks of {len(by_kind)} kinds save different bytes: use saved_by_kind")
    return rest, next(iter(by_kind.values()))


def _div(a: int, b: int) -> int | float:
    """a / b, an int when exact."""
    return a // b if a % b == 0 else a / b


# --- the plan ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Memory:
    """Training memory per GPU in bytes, and whether it fits."""

    weights: int | float
    grads: int | float
    optimizer: int | float
    activations: int
    total: int | float  # the sum of the parts: weights + gradients + optimizer states + saved activations
    peak: int | float  # the step's peak: weights + gradients + optimizer states + the largest phase's bytes
    peak_phase: str  # the phase where the peak is (model.peak.PHASES)
    phases: dict[str, int]  # bytes alive at each phase's peak besides weights, gradients and optimizer states
    phase_ops: dict[str, str]  # the torch operator at each phase's peak (Phase.op): data, never a label
    capacity: int
    fits: bool  # the peak fits
    max_B: int  # the largest micro-batch B (at this T) whose peak fits; 0 if not even B = 1

    def as_dict(self) -> dict[str, int | float | bool | str | dict]:
        return {k: getattr(self, k) for k in ("weights", "grads", "optimizer", "activations", "total", "peak",
                                               "peak_phase", "phases", "phase_ops", "capacity", "fits",
                                               "max_B")}


@dataclass(frozen=True)
class Plan:
    """Everything `plan` computes: the headline numbers as attributes, and every figure as `lines`."""

    cfg: Config
    setup: TrainSetup
    N: int
    N_active: int  # the parameters one token uses: N for a dense model; what C = 6·N_active·D counts
    D: int
    C_6ND: int
    C_measured: float
    gpu_hours: float
    wall_days: float
    cost: float
    memory: Memory
    kv_cache_bytes: int
    serve_weights_bytes: int
    symbols: dict[str, int | float] = field(repr=False)
    lines: tuple[Line, ...] = field(repr=False)

    def as_dict(self) -> dict:
        """The plan as JSON-ready data: headline numbers, memory, and every line."""
        return {
            "setup": {**{k: getattr(self.setup, k) for k in self.setup.__dataclass_fields__},
                      "dtype": self.setup.act_dtype},
            "N": self.N, "N_active": self.N_active, "D": self.D, "C_6ND": self.C_6ND, "C_measured": self.C_measured,
            "gpu_hours": self.gpu_hours, "wall_days": self.wall_days, "cost": self.cost,
            "memory": self.memory.as_dict(), "kv_cache_bytes": self.kv_cache_bytes,
            "serve_weights_bytes": self.serve_weights_bytes,
            "lines": [{"key": x.key, "label": x.label, "formula": x.formula, "value": x.value, "unit": x.unit}
                      for x in self.lines],
        }

    def _repr_html_(self) -> str:
        """The training run in a Jupyter cell (`model.notebook`)."""
        return html_repr(self)


def state_bytes(N: int, setup: TrainSetup) -> tuple[tuple[str, int | float, str], ...]:
    """(part, bytes per GPU, formula) for weights, gradients and optimizer states under the ZeRO stage."""
    opt = OPTIMIZERS[setup.optimizer]
    out = []
    for part, per_param, sharded_from in (("weights", opt.weights, 3), ("grads", opt.grads, 2),
                                          ("optimizer", opt.states, 1)):
        if setup.zero >= sharded_from:
            out.append((part, _div(per_param * N, setup.gpus), f"{per_param}·N/n"))
        else:
            out.append((part, per_param * N, f"{per_param}·N"))
    return tuple(out)


def activation_bytes(cfg: Config, setup: TrainSetup) -> tuple[int, str]:
    """Saved-for-backward bytes per GPU at cfg's micro-batch B and T, and the formula over S_rest, S_block (with
    recomputation, the largest block's, rebuilt one at a time)."""
    rest, by_kind = saved_by_kind(cfg, setup.act_dtype)
    if setup.recompute == "full":
        size = DTYPES[setup.act_dtype]
        kind = max(by_kind, key=by_kind.get)
        return (cfg.L * cfg.B * cfg.T * cfg.d * size + rest + by_kind[kind],
                f"L·BTd·{size} + S_rest + {saved_symbols(cfg)[kind]}")
    counts = kind_counts(cfg)
    total = rest + sum(counts[k] * b for k, b in by_kind.items())
    return total, saved_formula_of(cfg, setup.act_dtype)


PHASE_LINE = "{symbol}, {label}: {moment}"  # a phase's line label (the exported page fills it the same way)
PEAK_LINE = "peak of the step per GPU: weights, gradients, optimizer states and the {phase}'s peak"


@dataclass(frozen=True)
class Phase:
    """A phase of the step at its peak: bytes alive besides weights, gradients and optimizer states."""

    name: str  # model.peak.PHASES
    op: str  # the torch operator whose output made the peak (in the JSON, for who wants it; never a label)
    moment: str  # what the step is doing then, in the lesson's words (model.peak.MOMENTS)
    value: int
    formula: str  # in lesson notation, with S_block for each other block's saved bytes


def peak_candidates(cfg: Config, setup: TrainSetup) -> tuple[Phase, ...]:
    """Every candidate of the step's peak (`model.peak.candidates`) at cfg's B and T, as a `Phase`, the blocks the
    pass does not run included (`other_blocks`).

    A moment in a block, the head or the loss adds the blocks the pass does not run: for a dense model the other
    L − 1 blocks, their saved bytes S_block each, or with full recomputation their inputs, BTd elements each."""
    dtype = setup.act_dtype
    symbols = cfg.symbols()
    kinds = distinct_kinds(cfg)
    out = []
    found = measured_candidates(cfg, dtype) if stack.stateful(cfg) is not None else candidates(structure(cfg, dtype))
    for c in found:
        extra, text = other_blocks(cfg, c.block, dtype, setup.recompute == "full")
        out.append(Phase(c.phase, c.op, moment_words(c.phase, c.where, kinds), c.bytes(symbols) + extra,
                         c.formula + text))
    return tuple(out)


def step_phases(cfg: Config, setup: TrainSetup) -> tuple[Phase, ...]:
    """Each phase's peak at cfg's B and T (model.peak): the largest of its candidates (`peak_candidates`), the first
    on a tie."""
    best: dict[str, Phase] = {}
    for x in peak_candidates(cfg, setup):
        if x.name not in best or x.value > best[x.name].value:
            best[x.name] = x
    return tuple(best[name] for name in PHASES if name in best)


def _less(count: str, n: int) -> str:
    """A number of blocks less n, in lesson notation: ("L", 1) -> "(L − 1)", ("(L − L_moe)", 2) -> "(L − L_moe − 2)"."""
    if not n:
        return count
    return f"{count[:-1]} − {n})" if count.startswith("(") else f"({count} − {n})"


OTHER_BLOCKS = " + (L − 1)·{each}"  # a dense model's other blocks at a moment of one (page.js fills it too)


def other_blocks(cfg: Config, block: int | None, dtype: str, recompute: bool) -> tuple[int, str]:
    """What the blocks `model.peak`'s pass does not run hold at a moment of its block `block` (len(blocks): the head
    or the loss; None: neither), in bytes and as " + …" in lesson notation.

    The moment is that of the last block of its kind in the model (all L blocks for the head and the loss): every
    block before it is alive, and the pass holds one of each kind that runs before it already. Each other block keeps
    its saved bytes (S_block, or S_dense and S_moe), or with full recomputation its input, BTd elements."""
    if block is None:
        return 0, ""
    kinds, size = distinct_kinds(cfg), DTYPES[dtype]
    inputs = size * cfg.B * cfg.T * cfg.d
    if len(kinds) == 1:
        other = inputs if recompute else saved_by_kind(cfg, dtype)[1][kinds[0]]
        return (cfg.L - 1) * other, OTHER_BLOCKS.format(each=f"{size}BTd" if recompute else "S_block")
    blocks, counts = kind_blocks(cfg), kind_counts(cfg)
    last = blocks[kinds[block]][-1] if block < len(kinds) else cfg.L  # the blocks before it are alive
    held = set(kinds[:block])  # of each of these kinds, the pass holds one block already
    before = {kind: sum(1 for i in blocks[kind] if i < last) - (kind in held) for kind in kinds}
    if recompute:
        n = sum(before.values())
        return n * inputs, f" + {_less('L', cfg.L - n)}·{size}BTd"
    by_kind, names, numbers = saved_by_kind(cfg, dtype)[1], saved_symbols(cfg), block_counts(kinds)
    terms = [(before[k] * by_kind[k], f"{_less(numbers[k], counts[k] - before[k])}·{names[k]}") for k in kinds
             if before[k]]
    return sum(v for v, _ in terms), "".join(f" + {t}" for _, t in terms)


def training_memory(cfg: Config, setup: TrainSetup, N: int | None = None) -> int | float:
    """The step's peak bytes per GPU at cfg's micro-batch B: weights + gradients + optimizer states + the largest
    phase's peak (`step_phases`). N (the parameter count, which B does not change) may be passed in to skip
    `budget`."""
    N = budget(cfg).params_exact if N is None else N
    return sum(b for _, b, _ in state_bytes(N, setup)) + max(x.value for x in step_phases(cfg, setup))


def largest_micro_batch(cfg: Config, setup: TrainSetup) -> int:
    """The largest B that `model.config.largest_B` takes at cfg's T whose peak training memory fits the GPU; 0 if B = 1
    does not.

    A closed form (the exported page's twin, page.js largestMicroBatch, computes it the same way, in the same order
    of float operations): from B = 2 on, every candidate of the step's peak (`peak_candidates`) is linear in B (every
    tensor is (B, …) or free of B; at B = 1 some copies are views), v(B) = v(2) + (B − 2)·(v(3) − v(2)), and the peak
    is their largest. So B fits while every candidate fits beside the held bytes (weights, gradients, optimizer
    states): B_max = min over candidates that grow of 2 + ⌊(capacity − held − v(2)) / (v(3) − v(2))⌋, at most
    `largest_B` at T (8 or more). Where B = 2 does not fit, B = 1 is asked (its own pass structure).
    """
    capacity = setup.capacity
    N = budget(cfg).params_exact
    held = sum(b for _, b, _ in state_bytes(N, setup))

    def values(B: int) -> list[int | float]:
        return [x.value for x in peak_candidates(replace(cfg, B=B), setup)]

    v2 = values(2)
    if held + max(v2) > capacity:  # training_memory at B = 2, the same sum
        return 1 if training_memory(replace(cfg, B=1), setup, N) <= capacity else 0
    v3 = values(3)
    return min([largest_B(cfg.T), *(2 + math.floor((capacity - held - a) / (b - a)) for a, b in zip(v2, v3) if b > a)])


def _fmt_exp(x: float) -> str:
    """A rounded exponent as printed in a formula: 0.4516 -> "0.4516"."""
    return f"{x:.4f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class _Run:
    """What every section of a plan reads: the configuration, the setup and the figures made once."""

    cfg: Config
    setup: TrainSetup
    N: int  # every parameter
    Na: int  # those one token uses (N for a dense model)
    n_c: str  # the compute's N: "N", or "N_active" for a mixture of experts
    active: str  # its word: "" or " active"
    every: str  # " (all N: every expert)" for a mixture of experts, else ""
    D: int
    C: int  # 6·N_active·D
    C_measured: float
    P: float  # one GPU's peak, FLOP/s
    fwd: str  # the measured forward FLOPs per token as a formula
    rest: int  # S_rest
    by_kind: dict[str, int]  # saved bytes of one block of each kind
    names: dict[str, str]  # each kind's symbol: S_block, S_dense, S_moe
    sym: dict[str, int | float]  # every symbol of the plan's formulas (the memory section adds the phases')

    @property
    def gpu_hours(self) -> float:
        return self.C / (self.setup.mfu * self.P * 3600)


def _run(cfg: Config, setup: TrainSetup) -> _Run:
    b = budget(cfg)
    N, Na = b.params_exact, b.params_active
    fit, gpu = FITS[setup.fit], setup.device
    D = setup.D if setup.D is not None else CHINCHILLA_TOKENS_PER_PARAM * Na
    C, P = 6 * Na * D, gpu.peak_tflops * 1e12
    rest, by_kind = saved_by_kind(cfg, setup.act_dtype)
    names = saved_symbols(cfg)
    G = (fit.alpha * fit.A / (fit.beta * fit.B)) ** fit.inv
    n_c = says(cfg, "train/n", "N")  # what C counts: N, or a mixture of experts' N_active
    sym: dict[str, int | float] = {**cfg.symbols(), "N": N, n_c: Na, "D": D, "C": C,
                                   "P": P, "MFU": setup.mfu, "n": setup.gpus, "price": setup.price, "G": G,
                                   "S_rest": rest, **{names[k]: v for k, v in by_kind.items()}}
    return _Run(cfg=cfg, setup=setup, N=N, Na=Na, n_c=n_c, active=says(cfg, "train/active"),
                every=says(cfg, "train/every"), D=D, C=C,
                C_measured=3 * b.flops_fwd_measured_per_token * D, P=P,
                fwd=b.line("flops/forward_measured").formula,  # GPT-2: L·(24d² + 4Td) + 2Vd; the recipe's otherwise
                rest=rest, by_kind=by_kind, names=names, sym=sym)


def _compute_lines(r: _Run) -> list[Line]:
    """Tokens and compute: D, C = 6·N·D (N_active for a mixture of experts) and the measured C."""
    n_c, active, D, C, fwd = r.n_c, r.active, r.D, r.C, r.fwd
    out = [Line("compute/D", f"D, training tokens: Chinchilla's rule, 20 tokens per{active} parameter", f"20·{n_c}", D,
                "tokens") if r.setup.D is None else Line("compute/D", "D, training tokens (chosen)", "D", D, "tokens")]
    routed = says(r.cfg, "train/C", "C = 6·N·D, training FLOPs (forward 2N + backward 4N per token)")
    return out + [
        Line("compute/tokens_per_param", f"tokens per{active} parameter", f"D/{n_c}", _div(D, r.Na), "ratio"),
        Line("compute/C_6ND", routed, f"6·{n_c}·D", C, "FLOP"),
        Line("compute/C_6ND_pf_days", "C in PF-days (1 PF-day = 10¹⁵ FLOP/s for a day)", f"6·{n_c}·D/(10¹⁵·86400)",
             _div(C, PF_DAY), "pf_days"),
        Line("compute/C_measured", "C measured: 3 × the measured forward FLOPs per token × D (attention at this T "
             "included)", f"3·({fwd})·D", r.C_measured, "FLOP"),
        Line("compute/C_measured_pf_days", "C measured in PF-days", f"3·({fwd})·D/(10¹⁵·86400)",
             r.C_measured / PF_DAY, "pf_days"),
        Line("compute/measured_over_6ND", f"C measured ÷ 6·{n_c}·D", f"3·({fwd})·D/(6·{n_c}·D)", r.C_measured / C,
             "ratio"),
    ]


def _chinchilla_lines(r: _Run) -> list[Line]:
    """Chinchilla: the loss fit at this N and D, and the compute-optimal split of this C."""
    fit, n_c, active, C, G = FITS[r.setup.fit], r.n_c, r.active, r.C, r.sym["G"]
    N_opt = G * (C / 6) ** fit.a
    D_opt = (C / 6) ** fit.b / G
    a, b = _fmt_exp(fit.a), _fmt_exp(fit.b)
    return [
        Line("chinchilla/loss", f"predicted loss at this {n_c} and D (nats per token)",
             f"{fit.E} + {fit.A}/{n_c}^{fit.alpha} + {fit.B}/D^{fit.beta}",
             fit.E + fit.A / r.Na**fit.alpha + fit.B / r.D**fit.beta, "loss"),
        Line("chinchilla/G", "G = (α·A/(β·B))^(1/(α + β)), from the fit's constants",
             f"({fit.alpha}·{fit.A}/({fit.beta}·{fit.B}))^{_fmt_exp(fit.inv)}", G, "ratio"),
        Line("chinchilla/N_opt", f"compute-optimal {n_c} for this C", f"G·(C/6)^{a}", N_opt, "params"),
        Line("chinchilla/D_opt", "compute-optimal D for this C", f"(C/6)^{b}/G", D_opt, "tokens"),
        Line("chinchilla/tokens_per_param_opt", f"compute-optimal tokens per{active} parameter",
             f"(C/6)^{b}/G/(G·(C/6)^{a})", D_opt / N_opt, "ratio"),
        Line("chinchilla/loss_opt", f"predicted loss at the compute-optimal {n_c} and D",
             f"{fit.E} + {fit.A}/(G·(C/6)^{a})^{fit.alpha} + {fit.B}/((C/6)^{b}/G)^{fit.beta}",
             fit.E + fit.A / N_opt**fit.alpha + fit.B / D_opt**fit.beta, "loss"),
    ]


def _time_lines(r: _Run) -> list[Line]:
    """Time and cost at the setup's MFU, GPUs and price."""
    s, n_c, P, hours = r.setup, r.n_c, r.P, r.gpu_hours
    return [
        Line("time/peak", "P, peak of one GPU: dense BF16, no sparsity", "P", P, "flop_per_s"),
        Line("time/mfu", f"MFU, model FLOPs utilisation: observed tokens/s × 6{n_c} ÷ (n × P) (PaLM's, without its "
             "attention term)", "MFU", s.mfu, "share"),
        Line("time/gpus", "n, GPUs (data parallel)", "n", s.gpus, "count"),
        Line("time/tokens_per_s", "tokens per second, all GPUs", f"MFU·n·P/(6·{n_c})", s.mfu * s.gpus * P / (6 * r.Na),
             "tokens_per_s"),
        Line("time/gpu_hours", "GPU-hours", f"6·{n_c}·D/(MFU·P·3600)", hours, "gpu_hours"),
        Line("time/wall_days", "wall-clock time", f"6·{n_c}·D/(MFU·P·3600·24·n)", hours / 24 / s.gpus, "days"),
        Line("time/price", "price per GPU-hour (an assumption, not a quote)", "price", s.price, "usd"),
        Line("time/cost", "cost", f"6·{n_c}·D/(MFU·P·3600)·price", hours * s.price, "usd"),
    ]


def _memory_lines(r: _Run) -> tuple[list[Line], Memory]:
    """Training memory per GPU: weights, gradients, optimizer states, saved activations, the step's phases and
    peak, and whether it fits (adds the phases' symbols to `r.sym`)."""
    cfg, setup, names, by_kind = r.cfg, r.setup, r.names, r.by_kind
    opt = OPTIMIZERS[setup.optimizer]
    states = state_bytes(r.N, setup)
    act, act_formula = activation_bytes(cfg, setup)
    labels = {"weights": f"weights, {opt.weights} bytes per parameter{r.every}",
              "grads": f"gradients, {opt.grads} bytes per parameter{r.every}",
              "optimizer": f"optimizer states, {opt.states} bytes per parameter{r.every}"}
    out = [Line(f"memory/{part}", labels[part] + (" ÷ n (ZeRO)" if "/n" in formula else ""), formula, value, "bytes")
           for part, value, formula in states]
    for kind, saved in by_kind.items():
        what = "one block" if len(by_kind) == 1 else f"one {KIND_LABELS[kind]} block"
        out.append(Line(f"memory/{names[kind]}", f"{names[kind]}, saved for backward by {what} at this B and T "
                        "(measured)", names[kind], saved, "bytes"))
    out.append(Line("memory/S_rest", "S_rest, saved by embeddings, final norm, head and loss (measured)", "S_rest",
                    r.rest, "bytes"))
    act_label = ("activations, recomputed: each block's input, plus the rest, plus one block rebuilt"
                 if setup.recompute == "full" else "activations saved for backward, L blocks + the rest")
    out.append(Line("memory/activations", f"{act_label} ({setup.act_dtype})", act_formula, act, "bytes"))
    held = sum(v for _, v, _ in states)
    held_formula = " + ".join(f for _, _, f in states)
    blocks = " + ".join(f"{count}·{names[kind]}" for kind, count in block_counts(distinct_kinds(cfg)).items())
    act_short = f"{blocks} + S_rest" if setup.recompute == "none" else act_formula
    out.append(Line("memory/total", "sum of the parts per GPU: weights, gradients, optimizer states, saved "
                    "activations", held_formula + " + " + act_short, held + act, "bytes"))
    phases = step_phases(cfg, setup)
    for x in phases:
        r.sym[PHASE_SYMBOLS[x.name]] = x.value
        label = PHASE_LINE.format(symbol=PHASE_SYMBOLS[x.name], label=PHASE_LABELS[x.name], moment=x.moment)
        out.append(Line(f"memory/peak_{x.name}", label, x.formula, x.value, "bytes"))
    top = max(phases, key=lambda x: x.value)
    peak, capacity = held + top.value, setup.capacity
    max_B = largest_micro_batch(cfg, setup)
    out += [Line("memory/peak", PEAK_LINE.format(phase=top.name), f"{held_formula} + {PHASE_SYMBOLS[top.name]}", peak,
                 "bytes"),
            Line("memory/capacity", "memory of one GPU", "", capacity, "bytes"),
            Line("memory/fits", "the step's peak fits in one GPU's memory", "", peak <= capacity, "bool"),
            Line("memory/max_B", "largest micro-batch B whose peak fits at this T", "", max_B, "count")]
    memory = Memory(weights=states[0][1], grads=states[1][1], optimizer=states[2][1], activations=act,
                    total=held + act, peak=peak, peak_phase=top.name, phases={x.name: x.value for x in phases},
                    phase_ops={x.name: x.op for x in phases}, capacity=capacity, fits=peak <= capacity, max_B=max_B)
    return out, memory


def _serve_lines(r: _Run) -> list[Line]:
    """Serving memory: the weights at the setup's dtype and the KV cache (its one definition, `model.memory`)."""
    dtype = r.setup.act_dtype
    size = DTYPES[dtype]
    cache, per_token = kv_cache_lines(r.cfg, dtype)[:2]
    return [Line("serve/weights", f"weights at {dtype}{r.every}", f"{size}·N", size * r.N, "bytes"),
            Line("serve/kv_cache", cache.label, cache.formula, cache.value, "bytes"),
            Line("serve/kv_per_token", per_token.label, per_token.formula, per_token.value, "bytes"),
            Line("serve/total", "total to serve", f"{size}·N + {cache.formula}", size * r.N + cache.value, "bytes")]


def plan(cfg: Config, setup: TrainSetup | None = None) -> Plan:
    """Tokens, compute, Chinchilla, time, cost and memory of training `cfg` (at its B, T) under `setup`; every line's
    unit is one of `model.figures.UNITS` and every formula gives its value (`check_lines`)."""
    if not isinstance(cfg, Config):
        raise TypeError(f"plan needs a model.Config, got {type(cfg).__name__}")
    setup = setup or TrainSetup()
    if not isinstance(setup, TrainSetup):
        raise TypeError(f"plan needs a model.training.TrainSetup, got {type(setup).__name__}")
    r = _run(cfg, setup)
    memory_lines, memory = _memory_lines(r)
    serve = _serve_lines(r)
    lines = (*_compute_lines(r), *_chinchilla_lines(r), *_time_lines(r), *memory_lines, *serve)
    check_lines(lines, r.sym)
    return Plan(cfg=cfg, setup=setup, N=r.N, N_active=r.Na, D=r.D, C_6ND=r.C, C_measured=r.C_measured,
                gpu_hours=r.gpu_hours, wall_days=r.gpu_hours / 24 / setup.gpus, cost=r.gpu_hours * setup.price,
                memory=memory, kv_cache_bytes=serve[1].value, serve_weights_bytes=serve[0].value, symbols=r.sym,
                lines=lines)


REFERENCES: tuple[Line, ...] = (
    Line("reference/gpt3_175b", "GPT-3 175B on 300 billion tokens; the GPT-3 paper's table D.1 lists 3.14 × 10²³",
         "6·174.6·10⁹·300·10⁹", int(6 * Fraction("174.6") * 10**9 * 300 * 10**9), "FLOP"),
    Line("reference/chinchilla_70b", "Chinchilla: 70 billion parameters on 1.4 trillion tokens (20 per parameter)",
         "6·70·10⁹·1.4·10¹²", int(6 * 70 * 10**9 * Fraction("1.4") * 10**12), "FLOP"),
)
