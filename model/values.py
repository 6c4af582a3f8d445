"""What the tensors hold: one real forward pass of `GPT(cfg)` on CPU at GPT-2's initialisation, as numbers.

    >>> v = values(Config(B=1, T=16, d=64, h=4, L=2, V=50_257, T_max=64), "The cat sat on the mat.")
    >>> round(v.loss, 1), round(v.ln_V, 1)        # an untrained model's loss starts near ln V
    (10.9, 10.8)
    >>> float(v.attention(0, 0)[0, 1])           # above the diagonal: exactly 0 (position 0 never sees 1)
    0.0

Conventions. The pass runs at B = 1 on the first T tokens of the text (T = min(cfg.T, tokens, MAX_T)): one
sequence is enough to see values, and a batch would only repeat it. It runs eager attention whatever the
configuration's switch (`EAGER_RUN`): fused attention computes the same numbers (tests check) but keeps no
attention weights to show. Weights are N(0, 0.02), biases 0,
LayerNorm gains 1 (GPT-2's initialisation, `model.gpt.init_weights`), drawn from `seed` in parallel from
independent streams (`ParallelNormal`), so the same seed gives the same numbers on any number of cores, and
torch's global random state is left as it was. Forward hooks on the model's own modules (the `Tap`s of
model/gpt.py) read each tensor as it is made, under `torch.no_grad()`, and are removed in a `finally`. Statistics are keyed by the names of
`model.trace`'s expanded rows ("blocks.3.attn.q"); the int64 token ids ("idx") are inputs, not values, and
have none, nor have a mixture of experts' int64 indices (its top-k experts, the sorted pairs): its `expert_tokens`
are what the router sent to each expert, block by block (is routing balanced at init? balanced: T·k/E each).

Bounded cost. A pass costs memory for the weights (4 bytes per parameter) and the activations, and time for
drawing the weights (most of it, spread over the cores), the forward pass (on one torch thread) and the hooks (a
few ms per block). The limits below admit GPT-2 small and keep a pass's peak under 1 GiB (measured: 0.5 to 0.7
GiB above the process's RSS, given back afterwards); benchmarks/bench_values.py times it. Above them `plan` gives the nearest configuration that runs, a scaled-down copy that keeps d_head, V, T_max and
the head's tie; `values` refuses to run more (`TooLarge`) unless told to run that copy, labelled as such.
One pass runs at a time per process (a lock); results are cached by (configuration, token ids, seed).
"""
from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import inspect
import math
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from . import scaling, tokenizer
from . import units as fmt
from .budgeting import budget
from .config import GPT2_V, Config, snap_heads
from .parts import latent, moe
from .figures import html_repr
from .gpt import GPT, init_weights, meta_gpt
from .tensor_notation import notation
from .tracing import trace

MAX_T = 64  # tokens of text per pass: the heatmap stays legible, the (h, T, T) tensors stay small
MAX_L = 96  # blocks (GPT-3 175B's L): the hooks cost ≈ 4 ms per block, so 96 blocks ≈ 0.4 s
MAX_PARAMS = 160_000_000  # GPT-2 small (124.4 million) and GPT-3 125M run; 640 MB of fp32 weights at most
MAX_ACTIVATION_BYTES = 128 * 2**20  # new memory of the pass at fp32, model.trace (GPT-2 small at T = 64: 62.5 MiB)
MAX_SEED = 2**63 - 1
DRAW_CHUNK = 2**20  # numbers per random stream of a weight's draw (ParallelNormal)
# torch threads for a pass (the weights' draw has its own, ParallelNormal): at B = 1, T <= 64 its ops are small,
# and a pool of threads that wait for each other doubled a pass on a busy machine (5.2 s against 2.9 s at GPT-2
# small, load 8 on 2 cores)
FORWARD_THREADS = 1

_LOCK = threading.Lock()  # one real pass at a time per process
EAGER_RUN = ("attention written out (eager): the fused kernel of this configuration computes the same numbers but "
             "keeps no (T, T) weights to show")


class TooLarge(ValueError):
    """The configuration is above the limits; `plan.run` is the scaled-down copy that runs."""

    def __init__(self, plan: Plan) -> None:
        super().__init__(f"{'; '.join(plan.reasons)}. The nearest configuration that runs is a scaled-down copy: "
                         f"{plan.describe_run()}; run it with scale_down=True (the page's button, the CLI's default)")
        self.plan = plan


@dataclass(frozen=True)
class Stat:
    """Mean, std (population), min and max of one tensor's entries; −inf entries are counted, not averaged."""

    mean: float
    std: float
    min: float
    max: float
    n: int  # entries averaged
    neg_inf: int = 0  # −inf entries left out of the four numbers (the causal mask's, in attn.masked)


@dataclass(frozen=True)
class Plan:
    """What a values pass at `asked` will run: `run` (B = 1, T of the text) and why it differs from `asked`."""

    asked: Config
    run: Config
    n_tokens: int  # tokens the text had
    params: int  # of `run`, exact
    activation_bytes: int  # of `run`, every tensor at fp32
    reasons: tuple[str, ...]  # why `run` is a scaled-down copy; empty when only B and T differ

    @property
    def scaled(self) -> bool:
        """True when `run` is a smaller model than `asked` (not only a shorter batch)."""
        return bool(self.reasons)

    def describe_run(self) -> str:
        c = self.run
        heads = f"h={c.h:,} head{'s' if c.h != 1 else ''} of d_head={c.d_head:,}"
        return (f"d={c.d:,} ({heads}), L={c.L:,}, V={c.V:,}, T_max={c.T_max:,}: "
                f"{fmt.params(self.params)} parameters")


def _size(cfg: Config) -> tuple[int, int]:
    """(parameters, activation bytes at fp32) of one pass at `cfg`, from the model's own budget and trace."""
    return budget(cfg).params_exact, trace(cfg, "fp32").activation_bytes


def _fits(cfg: Config) -> bool:
    params, acts = _size(cfg)
    return cfg.L <= MAX_L and params <= MAX_PARAMS and acts <= MAX_ACTIVATION_BYTES


def _largest(lo: int, hi: int, ok) -> int | None:
    """The largest n in lo ... hi with ok(n), for ok monotone (true up to some n); None if ok(lo) fails."""
    if not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def _scale_down(cfg: Config) -> Config:
    """The nearest smaller copy within the limits: the same d_head, V, T_max and tie, and as many heads as fit
    at min(L, MAX_L) blocks; if one head is too many, fewer blocks; if one block is too many, a smaller d_head."""
    L = min(cfg.L, MAX_L)
    d_head = cfg.d_head
    h = _largest(1, cfg.h, lambda n: _fits(_shrunk(cfg, d=n * d_head, h=n, L=L)))
    if h is not None:
        return _shrunk(cfg, d=h * d_head, h=h, L=L)
    L = _largest(1, L, lambda n: _fits(_shrunk(cfg, d=d_head, h=1, L=n)))
    if L is not None:
        return _shrunk(cfg, d=d_head, h=1, L=L)
    d = _largest(2 if cfg.positions == "rope" else 1, d_head, lambda n: _fits(_shrunk(cfg, d=n, h=1, L=1)))
    if d is None:
        raise ValueError(f"even d=1, L=1 is above the limits at V={cfg.V:,}, T_max={cfg.T_max:,}")
    return _shrunk(cfg, d=d - d % 2 if cfg.positions == "rope" else d, h=1, L=1)


def _shrunk(cfg: Config, d: int, h: int, L: int) -> Config:
    """`cfg` at width d, h heads and L blocks; the modern recipe keeps its K/V group share (h_kv the divisor of h
    nearest h·h_kv/h) and its MLP's ratio d_ff/d. GPT-2's recipe: `replace(cfg, d=d, h=h, L=L)`."""
    if cfg.gpt2_recipe:
        return replace(cfg, d=d, h=h, L=L)
    kv = None if latent.present(cfg) else snap_heads(h, max(1, round(h * cfg.h_kv / cfg.h)))  # latent attention: K
    # and V of every head from the latent, its widths kept
    ff = None if cfg.ff_dim is None else max(1, cfg.ff_dim * d // cfg.d)
    head = None if cfg.head_dim is None or d == h * cfg.head_dim else cfg.head_dim
    nope = tuple(i for i in cfg.nope_layers if i < L)  # the NoPE blocks among the first L
    return replace(cfg, d=d, h=h, L=L, kv_heads=kv, ff_dim=ff, head_dim=head, nope_layers=nope, **moe.shrunk(cfg, d, L))


@functools.lru_cache(maxsize=256)
def plan(cfg: Config, n_tokens: int) -> Plan:
    """The configuration a values pass at `cfg` on `n_tokens` tokens runs: B = 1, T = min(cfg.T, n_tokens,
    MAX_T), eager attention (`EAGER_RUN`), and, above the limits (MAX_L, MAX_PARAMS, MAX_ACTIVATION_BYTES), a
    scaled-down copy."""
    if not isinstance(cfg, Config):
        raise TypeError(f"values need a model.Config, got {type(cfg).__name__}")
    if not isinstance(n_tokens, int) or n_tokens < 1:
        raise ValueError("no tokens to run: type some text (one token at least, two for a loss)")
    run = replace(cfg, B=1, T=min(cfg.T, n_tokens, MAX_T), attention="eager")
    params, acts = _size(run)
    reasons = []
    if cfg.L > MAX_L:
        reasons.append(f"L={cfg.L:,} is above {MAX_L} blocks (every block adds its hooks to the pass)")
    if params > MAX_PARAMS:
        reasons.append(f"{fmt.params(params)} parameters are above the limit of {fmt.params(MAX_PARAMS)} "
                       f"({fmt.nbytes(4 * params)} of weights to initialise)")
    if acts > MAX_ACTIVATION_BYTES:
        reasons.append(f"the activations at T={run.T} ({fmt.nbytes(acts)}) are above the limit of "
                       f"{fmt.nbytes(MAX_ACTIVATION_BYTES)}")
    if reasons:
        run = _scale_down(run)
        params, acts = _size(run)
    return Plan(asked=cfg, run=run, n_tokens=n_tokens, params=params, activation_bytes=acts, reasons=tuple(reasons))


def _piece(i: int) -> str:
    return tokenizer.gpt2().decode_single_token_bytes(i).decode("utf-8", errors="replace") if i < GPT2_V else f"<{i}>"


def token_ids(text_or_ids: str | Sequence[int]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Token ids and their strings: a text is split by GPT-2's tokenizer; a sequence of ids is taken as it is."""
    if isinstance(text_or_ids, str):
        toks = tokenizer.tokenize(text_or_ids)
        return toks.ids, toks.pieces
    if isinstance(text_or_ids, (bytes, bytearray)) or not isinstance(text_or_ids, Sequence):
        raise ValueError(f"values need a text or a sequence of token ids, got {type(text_or_ids).__name__}")
    ids = tuple(text_or_ids[: tokenizer.MAX_TEXT_CHARS])
    for pos, i in enumerate(ids):
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or i < 0:
            raise ValueError(f"token {pos} is {i!r}: token ids are whole numbers from 0 to V - 1")
    ids = tuple(int(i) for i in ids)
    return ids, tuple(_piece(i) for i in ids)


def check_ids(ids: Sequence[int], pieces: Sequence[str], V: int) -> None:
    """ValueError naming the first id ≥ V, V and the fix: W_te has no row for it (never wrapped or clipped)."""
    bad = [(pos, i) for pos, i in enumerate(ids) if i >= V]
    if bad:
        pos, i = bad[0]
        more = f" ({len(bad)} of the {len(ids)} tokens are)" if len(bad) > 1 else ""
        need = max(i for _, i in bad) + 1
        raise ValueError(f"token id {i:,} (\"{pieces[pos]}\", token {pos}) is ≥ V = {V:,}{more}: W_te has rows 0 … "
                         f"{V - 1:,} only, so this model cannot embed it; raise V to at least {need:,} "
                         f"(GPT-2's tokenizer needs V = {GPT2_V:,}) or use ids below {V:,}")


@dataclass(frozen=True, eq=False)
class Values:
    """The numbers of one forward pass at initialisation. `cfg` is what ran (B = 1, see `plan`)."""

    plan: Plan
    seed: int
    ids: tuple[int, ...]
    tokens: tuple[str, ...]  # each token's text
    stats: Mapping[str, Stat]  # by expanded trace name, in execution order: "wte", "blocks.0.ln_1", ...
    loss: float | None  # mean next-token cross-entropy; None at T = 1 (nothing to predict)
    embed_std: float  # std of the residual stream entering block 0 (tok + pos)
    resid_std: tuple[float, ...]  # std of the residual stream after each block, L entries
    scaling: scaling.Scaling  # the scores of this model's own q, k, all blocks and heads
    unit: scaling.Scaling  # the lesson's unit-variance q, k at the same d_head and T
    seconds: float  # wall time of the pass (build, initialise, forward), lock wait excluded
    probs: np.ndarray  # (L, h, T, T) attention weights, read-only
    expert_tokens: Mapping[int, tuple[int, ...]] = field(default_factory=dict)  # MoE block -> tokens per expert

    @property
    def balanced_share(self) -> float | None:
        """Tokens each expert would get if routing were balanced, T·k/E (B = 1); None for a dense model."""
        return self.cfg.T * self.cfg.k / self.cfg.E if moe.present(self.cfg) else None

    @property
    def cfg(self) -> Config:
        return self.plan.run

    @property
    def ln_V(self) -> float:
        """The loss of a uniform guess over V tokens, where an untrained model starts."""
        return math.log(self.cfg.V)

    def attention(self, block: int, head: int) -> np.ndarray:
        """The (T, T) attention weights of one block and head: row t (query) over keys 0 … t; 0 above."""
        L, h = self.cfg.L, self.cfg.h
        if not (isinstance(block, int) and 0 <= block < L and isinstance(head, int) and 0 <= head < h):
            raise ValueError(f"block must be 0 … {L - 1} and head 0 … {h - 1}; got block={block!r}, head={head!r}")
        return self.probs[block, head]

    def causal_check(self, block: int, head: int) -> tuple[float, float]:
        """(largest weight above the diagonal, largest |row sum − 1|) of one block and head."""
        a = self.attention(block, head).astype(np.float64)
        above = np.triu(a, 1)
        return float(np.abs(above).max()) if a.shape[0] > 1 else 0.0, float(np.abs(a.sum(-1) - 1).max())

    def _repr_html_(self) -> str:
        """The values report in a Jupyter cell (`model.notebook`)."""
        return html_repr(self)


def values(cfg: Config, text_or_ids: str | Sequence[int], seed: int = 0, *, scale_down: bool = False) -> Values:
    """One real forward pass of `GPT(cfg)` at init on the first T tokens of a text (or of token ids).

    Raises ValueError for no tokens or an id ≥ V (naming it and the fix), `TooLarge` above the limits unless
    `scale_down=True`, which runs the scaled-down copy `plan(cfg, n).run` (the result's `plan.scaled` says so).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be a whole number from 0 to {MAX_SEED:,}, got {seed!r}")
    ids, pieces = token_ids(text_or_ids)
    p = plan(cfg, len(ids))
    if p.scaled and not scale_down:
        raise TooLarge(p)
    T = p.run.T
    check_ids(ids[:T], pieces[:T], p.run.V)
    return _run(p, ids[:T], tuple(pieces[:T]), seed)


@functools.lru_cache(maxsize=4)  # ≤ 4 results: each holds L·h·T² weights, at most a third of the activations
def _run(p: Plan, ids: tuple[int, ...], pieces: tuple[str, ...], seed: int) -> Values:
    with _LOCK:
        start = time.perf_counter()
        try:
            with _threads(FORWARD_THREADS):
                out = _forward(p, ids, pieces, seed)
        finally:
            _trim()  # the weights were freed by reference counting as _forward returned
        return replace(out, seconds=time.perf_counter() - start)


def _trim() -> None:
    """Give freed heap memory back to the system (glibc keeps it otherwise), so a pass leaves no high-water mark."""
    name = ctypes.util.find_library("c")
    if name:
        libc = ctypes.CDLL(name)
        if hasattr(libc, "malloc_trim"):
            libc.malloc_trim(0)


def build(cfg: Config, seed: int, *, threads: int | None = None) -> GPT:
    """`GPT(cfg)` with GPT-2's initialisation drawn from `seed`, without touching the global random state.

    Built on the meta device and materialised once (`GPT(cfg)` on CPU would draw PyTorch's default init and
    then overwrite it: twice the time); the tied head is re-tied after `to_empty`. The rule is
    `model.gpt.init_weights`'s; its N(0, σ) draws run on `threads` threads (`ParallelNormal`).
    """
    model = meta_gpt(cfg)
    model.to_empty(device="cpu")
    if cfg.tie:
        model.head.weight = model.wte.weight
    with torch.random.fork_rng(devices=[]), ParallelNormal(seed, threads):
        torch.manual_seed(seed)
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.reset_parameters()  # gain 1, bias 0
        model.apply(init_weights)
    return model.eval()


class ParallelNormal(TorchFunctionMode):
    """Inside it, each `nn.init.normal_(w, mean, std)` fills w from independent streams, one per DRAW_CHUNK
    elements, each a `torch.Generator` seeded from (seed, draw, chunk) by NumPy's `SeedSequence`, on `threads`
    threads (default: the cores this process may use). The streams, not the threads, fix the numbers: the same
    for any thread count.

    Drawing is most of a pass (4 bytes per parameter, ~6.5 ns per number on one core) and torch draws one
    tensor on one core, so this divides it by the cores. A draw given its own `generator` runs as it would.
    """

    def __init__(self, seed: int, threads: int | None = None) -> None:
        super().__init__()
        self.seed, self.draws = seed, 0
        self.threads = threads or len(os.sched_getaffinity(0))
        self.pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> ParallelNormal:
        self.pool = ThreadPoolExecutor(self.threads, thread_name_prefix="draw")
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        try:
            super().__exit__(*exc)
        finally:
            self.pool.shutdown()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not nn.init.normal_:
            return func(*args, **kwargs)
        call = inspect.signature(nn.init.normal_).bind(*args, **kwargs)
        call.apply_defaults()
        if call.arguments["generator"] is not None:
            return func(*args, **kwargs)
        self._fill(call.arguments["tensor"], call.arguments["mean"], call.arguments["std"])
        return call.arguments["tensor"]

    def _fill(self, tensor: torch.Tensor, mean: float, std: float) -> None:
        flat = tensor.detach().view(-1)  # parameters are contiguous
        starts = range(0, flat.numel(), DRAW_CHUNK)
        seeds = np.random.SeedSequence([self.seed, self.draws]).generate_state(len(starts), np.uint64)
        self.draws += 1

        def fill(i: int) -> None:  # torch releases the GIL while it draws
            generator = torch.Generator().manual_seed(int(seeds[i]))
            with torch.no_grad():
                flat[starts[i]:starts[i] + DRAW_CHUNK].normal_(mean, std, generator=generator)

        list(self.pool.map(fill, range(len(starts))))


@contextlib.contextmanager
def _threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to `n` (None: unchanged) for the block, restored afterwards. The setting is
    the process's: torch work on other threads meanwhile (the page's meta-device traces) runs on `n` too."""
    before = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _stat(x: torch.Tensor, masked: bool = False) -> Stat:
    """NumPy (one thread, float64 sums): per-op costs stay small on a busy machine, unlike torch's thread pool."""
    a = x.detach().numpy().reshape(-1)
    neg_inf = 0
    if masked:  # the causal mask's −inf entries are counted and left out
        keep = np.isfinite(a)
        neg_inf = int(a.size - keep.sum())
        a = a[keep]
    mean = a.mean(dtype=np.float64)
    std = np.sqrt(np.mean(np.square(a - mean, dtype=np.float64)))
    return Stat(mean=float(mean), std=float(std), min=float(a.min()), max=float(a.max()), n=int(a.size),
                neg_inf=neg_inf)


def _split(name: str) -> tuple[int | None, str]:
    """ "blocks.3.attn.q" -> (3, "attn.q"); "wte" -> (None, "wte"): the block and the name in NOTATION."""
    parts = name.split(".", 2)
    if parts[0] == "blocks" and len(parts) == 3:
        return int(parts[1]), parts[2]
    return None, name


def _forward(p: Plan, ids: tuple[int, ...], pieces: tuple[str, ...], seed: int) -> Values:
    cfg = p.run
    model = build(cfg, seed)
    stats: dict[str, Stat] = {}
    probs = np.zeros((cfg.L, cfg.h, cfg.T, cfg.T), dtype=np.float32)
    raw = torch.zeros(cfg.L, cfg.h, cfg.T, cfg.T, dtype=torch.float64)  # this model's q·kᵀ, unscaled

    expert_tokens: dict[int, tuple[int, ...]] = {}

    def hook(name: str, block: int | None, local: str):
        def record(_module, _inputs, output: torch.Tensor) -> None:
            if local == "moe.counts":
                expert_tokens[block] = tuple(output.tolist())  # (E,) tokens each expert got
            if not output.is_floating_point():  # a mixture of experts' indices: no values to describe
                return
            stats[name] = _stat(output, masked=local == "attn.masked")
            if local == "attn.attn":
                probs[block] = output[0].numpy()  # (h, T, T)
            elif local == "attn.scores":
                raw[block] = output[0].double() * math.sqrt(cfg.d_head)  # undo the scale: q·kᵀ
        return record

    handles, shapes = [], notation(cfg)
    try:
        for name, module in model.named_modules():
            block, local = _split(name)
            if local in shapes and (not list(module.children()) or getattr(module, "traced", False)):
                handles.append(module.register_forward_hook(hook(name, block, local)))
        with torch.no_grad():
            _, loss = model(torch.tensor([ids], dtype=torch.long))  # (1, T)
    finally:
        for handle in handles:
            handle.remove()
        del model
    probs.setflags(write=False)
    return Values(
        plan=p, seed=seed, ids=ids, tokens=pieces, stats=MappingProxyType(stats),
        loss=None if loss is None else loss.item(), embed_std=stats["embed" if cfg.positions == "learned" else "wte"].std,
        resid_std=tuple(stats[f"blocks.{b}.resid_2"].std for b in range(cfg.L)),
        scaling=scaling.compare(raw, cfg.d_head, "this model's q, k at init"),
        unit=scaling.unit_variance(cfg.d_head, cfg.T, seed), seconds=0.0, probs=probs,
        expert_tokens=MappingProxyType(expert_tokens),
    )

