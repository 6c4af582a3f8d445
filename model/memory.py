"""Activation memory as formulas: what a pass makes (new memory) and what autograd keeps for the backward pass.

Both figures are measured by `model.passes.run_pass`; this module writes them in lesson notation, so that a
formula can stand beside each value and the exported page can compute them in the browser:

- new memory: the recorded tensors that are not views, from their lesson-notation shapes (`NOTATION`);
- saved for backward: every storage autograd keeps, including some that no module outputs (LayerNorm's
  mean and rstd, the causal mask, the cross-entropy's log-probabilities). Their sizes are read off three small
  probe passes of the same structure (tie, T = 1 or not, dtype): each storage's element count is matched with
  the one monomial in B, h, T, T − 1, d, d_head, V, T_max that gives it at all three probes. The modern recipe
  has four probes (h_kv and d_ff are factors too) and its structure adds the switches; a storage that a
  recorded tensor owns takes that tensor's notation shape (the fused q, k, v output, (h + 2h_kv)·d_head, is a
  sum, no monomial);
- the KV cache of inference (`kv_cache_lines`), 2·L·B·T·h_kv·d_head elements (a sliding window caps its blocks' T;
  latent attention keeps L·B·T·(d_c + d_R)).

Blocks of several kinds (a mixture of experts in some blocks, `Config.block_kinds`) each count under their number:
"(L − L_moe)·(…)" for the dense blocks, "L_moe·(…)" for the MoE blocks ("L·(…)" where every block is of one kind).
A mixture of experts' probes add its factors E, k, d_expert (and E_shared, d_shared with shared experts) and its
structure the kinds of blocks and its shared experts' switches.

Formulas group terms by element size: "4·(L·(…) + …) + 8BT" is fp32 tensors plus int64 token ids; fused
attention's log-sum-exp is fp32 at every dtype, so a bf16 pass of it has a "4L·BhT" term beside its 2-byte ones.
The structure includes the attention switch: a fused pass saves q, k, v (the whole q, k, v projection, as v is a view of it), the
kernel's output and its log-sum-exp where an eager one saves its softmax and the causal mask.
"""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import ModuleType

from . import stack
from .config import NOPE, WRITTEN, Config, distinct_kinds, mlp_kind, one_block_each
from .figures import Line
from .formula import Poly, grouped, poly_add, poly_const, poly_mul, poly_symbol, to_poly
from .parts import attention, delta, kda, latent, mamba, mamba1, sparse
from .parts import moe as moe_part, window
from .notation import dims
from .passes import DTYPES, Pass, run_pass
from .tensor_notation import local_name, notation

# Probe values (B, T, d_head, h, V, T_max): small, far enough apart that no two candidate monomials agree on all three.
_PROBES = ((2, 5, 4, 3, 11, 7), (3, 7, 5, 4, 13, 9), (5, 4, 3, 6, 17, 11))
_FACTORS = ("B", "h", "T", "T-1", "d", "d_head", "V", "T_max")
# The modern recipe's probes (B, T, d_head, h, h_kv, V, T_max, d_ff, d when d_head is set apart): four, as it has
# two more factors; d_head even (RoPE), h_kv a divisor of h with h/h_kv varying, d_ff and d apart from the rest.
_RECIPE_PROBES = ((2, 5, 4, 6, 3, 11, 7, 13, 10), (3, 7, 2, 8, 2, 13, 9, 19, 14), (5, 4, 6, 15, 5, 17, 11, 23, 22),
                  (7, 6, 8, 10, 5, 19, 13, 29, 26))
_RECIPE_FACTORS = ("B", "h", "h_kv", "T", "T-1", "d", "d_head", "d_ff", "V", "T_max")
# A mixture of experts' probe values (E, k, d_expert, E_shared, d_shared), one per recipe probe: k ≤ E, and no factor
# equal to another at every probe.
_MOE_PROBES = ((9, 2, 15, 2, 3), (7, 4, 9, 3, 5), (12, 5, 7, 1, 11), (8, 3, 17, 2, 6))
_MOE_FACTORS = ("E", "k", "d_expert", "E_shared", "d_shared")
# Latent attention's probe values (d_c, d_cq, d_R, d_nope, d_v), one per recipe probe: d_R even (RoPE), no factor
# equal to another at every probe.
_MLA_PROBES = ((7, 9, 4, 3, 5), (11, 5, 2, 7, 3), (5, 13, 6, 2, 9), (9, 7, 8, 5, 4))
_MLA_FACTORS = ("d_c", "d_cq", "d_R", "d_nope", "d_v")
# Partial rotary's d_rot, one per recipe probe: even and below d_head (whose second probe is then 10, not 2).
_ROTARY_PROBES = (2, 4, 4, 6)
# A part with a fixed state has its own probe values (its `probe(i, structure)` at recipe probe i): its storages are
# its `saved_parts`' (checked at each probe), the rest of its blocks is fitted as every block is.
_ROTARY_HEAD = 10  # the second probe's d_head where RoPE rotates part of each head (2 leaves no part unrotated)
_MAX_DEGREE = 4  # of a monomial in a storage's elements or bytes (BhT² is 4)
PROBE_WINDOW = 2  # a window changes which keys a query sees, never a shape: any W stands for all
PROBE_CAP = 30.0  # likewise a soft-cap's c
PROBE_QUERY_SCALE = 3  # and query_pre_attn_scalar's (odd: never a RoPE model's d_head, which would make it None)
# `Structure.gemma`, as keys name them
GEMMA_KEYS = ("post_norms", "embed_scale", "attn_softcap", "final_softcap", "query_scale")
OSS_KEYS = ("sinks", "expert_bias", "swiglu_limit")  # `Structure.oss`, as keys name them
PROBE_LIMIT = 7.0  # a clamp's limit changes no shape either
FLAGS = tuple(f.name for f in WRITTEN if f.tensors)  # a part's flags that change a pass's tensors (`Field.tensors`)


@dataclass(frozen=True)
class Structure:
    """What decides which tensors are views and which storages autograd saves, besides the sizes themselves.

    A dimension of size 1 changes contiguity: at h = 1 or T = 1 the merged heads are a view (no copy), at B = 1
    or T = 2 the loss slices logits without copying, and so on. Configs with the same Structure have the same
    formulas; the exported page computes the same key (`structure_key`) in the browser.
    """

    tie: bool
    dtype: str
    ones: tuple[bool, ...]  # per field of ONES: is it 1?
    # None for GPT-2's recipe; else the switches, K/V heads, d_head kind and attention
    recipe: tuple[object, ...] | None = None
    # None for a dense model; else the kinds of blocks in order (`distinct_kinds`), shared experts, their gate
    moe: tuple[object, ...] | None = None
    window: bool = False  # a sliding window (the fused kernel's band mask is a tensor of its own)
    partial: bool = False  # partial rotary: RoPE on d_rot of each head's d_head features (its slices are tensors)
    nope: tuple[str, ...] = ()  # where some blocks have no RoPE: the kinds of blocks in order (`distinct_kinds`)
    gemma: tuple[bool, ...] = ()  # Gemma's extras that make tensors (post_norms, embed_scale, the two soft-caps) and
    # query_pre_attn_scalar (a value, but the scores' label names it)
    oss: tuple[bool, ...] = ()  # gpt-oss's extras that make tensors: sinks, the experts' biases, the clamp
    mla: tuple[bool, ...] = ()  # latent attention: (whether the queries have a latent, whether an indexer picks keys)
    flags: tuple[str, ...] = ()  # the recipe's flags that change which tensors a pass makes and are on (`FLAGS`)
    lin: tuple[str, ...] = ()  # with Gated DeltaNet or Mamba 2 blocks: the kinds of blocks in order (`distinct_kinds`)
    z_view: bool = False  # their output gate z is a view of the projection's output (`model.parts.delta.z_view`)
    ssm: tuple[object, ...] = ()  # with Mamba 2 blocks: its output norm and whether it is beside attention
    # (`model.parts.mamba.structure`)


# The sizes whose being 1 changes which tensors are views and which storages autograd keeps (found by flipping
# each size of 1 in turn: d_head, V and T_max of 1 change nothing; tests check the formulas at every bound).
ONES = ("B", "T", "T-1", "h")


def structure(cfg: Config, dtype: str) -> Structure:
    """The structure of `cfg` at `dtype` (see `Structure`)."""
    v = _factor_values(cfg)
    recipe = None
    if not cfg.gpt2_recipe:  # K/V heads: all h (no expansion), 1 (expanded by a view) or a group (copied)
        kv = "mha" if cfg.h_kv == cfg.h else "mqa" if cfg.h_kv == 1 else "gqa"
        recipe = (cfg.norm, cfg.positions, cfg.mlp, cfg.bias, cfg.qk_norm, kv, cfg.head_dim is not None, cfg.attention)
    gemma = tuple(bool(getattr(cfg, name)) for name in GEMMA_KEYS)  # each set (a flag on, a value given)
    oss = tuple(bool(getattr(cfg, name)) for name in OSS_KEYS)
    return Structure(tie=cfg.tie, dtype=dtype, ones=tuple(v[k] == 1 for k in ONES), recipe=recipe,
                     moe=moe_part.structure(cfg), window=window.present(cfg), gemma=gemma if any(gemma) else (),
                     oss=oss if any(oss) else (), mla=latent.structure(cfg), partial=cfg.rotary_dim is not None,
                     nope=distinct_kinds(cfg) if cfg.nope_layers else (),
                     flags=tuple(name for name in FLAGS if getattr(cfg, name)),
                     lin=distinct_kinds(cfg) if cfg.stateful else (),
                     z_view=delta.z_view(cfg), ssm=mamba.structure(cfg))


def structure_key(s: Structure) -> str:
    """"tied,fp32,B1" style text: tie, dtype and the sizes that are 1 (the export's JavaScript writes the same);
    the modern recipe adds its switches ("rmsnorm,rope,swiglu,none,qk_norm,gqa,d_head,fused")."""
    ones = [k for k, one in zip(ONES, s.ones) if one]
    recipe = []
    if s.recipe is not None:
        norm, positions, mlp, bias, qk_norm, kv, apart, attention = s.recipe
        recipe = [norm, positions, mlp, f"bias={bias}", *(["qk_norm"] if qk_norm else []), kv,
                  *(["d_head"] if apart else []), *(["fused"] if attention == "fused" else [])]
    if s.moe is not None:
        kinds, shared, gate = s.moe
        recipe += [f"moe={'+'.join(kinds)}", *(["shared"] if shared else []), *(["shared_gate"] if gate else [])]
    recipe += [name for name, on in zip(GEMMA_KEYS, s.gemma) if on]
    recipe += [name for name, on in zip(OSS_KEYS, s.oss) if on]
    recipe += ((["mla_q"] if s.mla[0] else ["mla"]) + (["dsa"] if s.mla[1] else [])) if s.mla else []
    if s.window:
        recipe.append("window")
    if s.partial:
        recipe.append("partial_rotary")
    if s.nope:
        recipe.append("nope=" + "+".join(s.nope))
    if s.lin:
        recipe.append("lin=" + "+".join(s.lin))
    if s.z_view:
        recipe.append("z_view")
    recipe += list(s.flags)
    return ",".join(["tied" if s.tie else "untied", s.dtype, *(f"{k}=1" for k in ones), *recipe])


def probes(s: Structure) -> list[Config]:
    """Three configs of structure `s` with otherwise different sizes."""
    one = dict(zip(ONES, s.ones))
    if s.recipe is not None:
        return _recipe_probes(s, one)
    out = []
    for B, T, d_head, h, V, T_max in _PROBES:
        T = 1 if one["T"] else 2 if one["T-1"] else T
        h = 1 if one["h"] else h
        out.append(Config(B=1 if one["B"] else B, T=T, d=h * d_head, h=h, L=1, V=V, T_max=max(T, T_max), tie=s.tie))
    return out


def _recipe_probes(s: Structure, one: dict[str, bool]) -> list[Config]:
    norm, positions, mlp, bias, qk_norm, kv, apart, attention = s.recipe
    out = []
    for i, ((B, T, d_head, h, h_kv, V, T_max, d_ff, d), moe, mla, rot) in enumerate(zip(_RECIPE_PROBES, _MOE_PROBES,
                                                                                          _MLA_PROBES, _ROTARY_PROBES)):
        T = 1 if one["T"] else 2 if one["T-1"] else T
        d_head = _ROTARY_HEAD if s.partial and d_head <= rot else d_head
        h = 1 if one["h"] else h
        h_kv = h if kv == "mha" else 1 if kv == "mqa" else h_kv
        cfg = Config(B=1 if one["B"] else B, T=T, d=d if apart else h * d_head, h=h, L=1, V=V,
                     T_max=max(T, T_max), tie=s.tie, norm=norm, positions=positions, mlp=mlp, ff_dim=d_ff,
                     kv_heads=h_kv, head_dim=d_head if apart else None, bias=bias, qk_norm=qk_norm,
                     attention=attention)
        gated = _stateful_fields(s, i) if s.lin else {}  # with the kinds of blocks, in one replace (Config checks them)
        cfg = replace(cfg, **gated) if s.moe is None else _moe_probe(cfg, s.moe, moe, gated)
        cfg = replace(cfg, **one_block_each(s.nope)) if s.nope and s.moe is None else cfg
        if s.mla:
            d_c, d_cq, d_R, d_nope, d_v = mla
            cfg = replace(cfg, latent_dim=d_c, q_latent_dim=d_cq if s.mla[0] else None, rope_dim=d_R, nope_dim=d_nope,
                          value_dim=d_v)
            if s.mla[1]:  # an indexer: it saves nothing (no gradients), its mask of picked keys is per sequence
                cfg = replace(cfg, **dict(zip(sparse.NAMES, (d_nope, d_R + d_v, T))))
        if s.gemma:
            post, scale, attn, final, query = s.gemma
            cfg = replace(cfg, post_norms=post, embed_scale=scale, attn_softcap=PROBE_CAP if attn else None,
                          final_softcap=PROBE_CAP if final else None, query_scale=PROBE_QUERY_SCALE if query else None)
        if s.oss:
            sinks, biased, clamped = s.oss
            cfg = replace(cfg, sinks=sinks, expert_bias=biased, swiglu_limit=PROBE_LIMIT if clamped else None)
        window = {"window": PROBE_WINDOW} if s.window else {}  # with the flags: chunked needs its window
        cfg = replace(cfg, **dict.fromkeys(s.flags, True), **window)
        cfg = replace(cfg, rotary_dim=rot) if s.partial else cfg
        out.append(replace(cfg, window=PROBE_WINDOW) if s.window else cfg)
    return out


def stateful_part(kinds: tuple[str, ...]) -> ModuleType:
    """The part with a fixed state that mixes some of these kinds of blocks (`model.stack.stateful_kind`)."""
    return next(part for part in map(stack.stateful_kind, kinds) if part is not None)


def _stateful_fields(s: Structure, i: int) -> dict[str, object]:
    """Recipe probe i's fields of the part with a fixed state in structure `s`: one block of each kind, in its order,
    and the part's own sizes (its `probe`)."""
    return {**one_block_each(s.lin), **stateful_part(s.lin).probe(i, s)}


def _moe_probe(cfg: Config, moe: tuple[object, ...], sizes: tuple[int, ...], more: dict[str, object]) -> Config:
    """The probe `cfg` with a mixture of experts of structure part `moe` and probe sizes (E, k, d_expert, E_shared,
    d_shared): one block of each kind, in the structure's order; `more`: fields set with them (Gated DeltaNet's)."""
    kinds, shared, gate = moe
    E, k, d_expert, E_shared, d_shared = sizes
    return replace(cfg, experts=E, top_k=k, expert_dim=d_expert, shared_experts=E_shared if shared else 0,
                   shared_dim=d_shared if shared else None, shared_gate=gate, **{**more, **one_block_each(kinds)})


def _factor_values(cfg: Config) -> dict[str, int]:
    return {**cfg.symbols(), "T-1": cfg.T - 1}


def factors_of(cfg: Config) -> tuple[str, ...]:
    """The factors of a storage's monomial at cfg's recipe: GPT-2's, the modern recipe's, or those of the modern
    recipe that a mixture of experts has (no d_ff where every block is MoE) and its own."""
    if cfg.gpt2_recipe:
        return _FACTORS
    present = _factor_values(cfg)
    return tuple(f for f in (*_RECIPE_FACTORS, *_MOE_FACTORS, *_MLA_FACTORS, "d_rot") if f in present)


BLOCK_COUNTS = ("L", "L_moe", "L_nope", *(part.COUNT for part in stack.STATEFUL))  # the symbols that number blocks
# (no factor of a tensor's shape)
VARIANTS = {NOPE: "L_nope", **{"_" + part.KEY: part.COUNT for part in stack.STATEFUL}}  # a kind of block apart from
# its MLP kind's others (a suffix of its kind), and its count


def _spans(kinds: tuple[str, ...], variant: str) -> bool:
    """Whether the blocks of `variant` ("_kda") are of both MLP kinds: "dense_kda" and "moe_kda" both in `kinds`."""
    return {"dense" + variant, "moe" + variant} <= set(kinds)


def block_counts(kinds: tuple[str, ...]) -> dict[str, str]:
    """Each kind of block's number in lesson notation, in the order given: {"dense": "L"} for one kind, {"dense":
    "(L − L_moe)", "moe": "L_moe"} for two; where some blocks have no RoPE, theirs is L_nope and their MLP kind's
    others are fewer by it: {"dense": "(L − L_nope)", "dense_nope": "L_nope"}, {"dense": "(L − L_moe)", "moe":
    "(L_moe − L_nope)", "moe_nope": "L_nope"} (`positions.check`: the NoPE blocks are of one MLP kind); so with
    Gated DeltaNet blocks, L_lin ("moe": "(L − L_lin)", "moe_lin": "L_lin"; `delta.check`: of one MLP kind too)."""
    if len(kinds) == 1:
        return {kinds[0]: "L"}
    mlps = tuple(dict.fromkeys(mlp_kind(kind) for kind in kinds))
    counts = {mlps[0]: "L"} if len(mlps) == 1 else {"dense": "(L − L_moe)", "moe": "L_moe"}
    out = {}
    for kind in kinds:
        variant = next((v for v in VARIANTS if kind.endswith(v)), None)
        if variant is not None and _spans(kinds, variant):  # Kimi Linear's KDA blocks, dense and MoE: each MLP kind's
            # blocks less its others (`kda.check`: every other block then NoPE, of one MLP kind)
            others = [VARIANTS[v] for v in VARIANTS if v != variant and mlp_kind(kind) + v in kinds]
            out[kind] = f"({' − '.join([counts[mlp_kind(kind)].strip('()'), *others])})" if others else \
                counts[mlp_kind(kind)]
            continue
        if variant is not None:
            out[kind] = VARIANTS[variant]
            continue
        fewer = [VARIANTS[v] for v in VARIANTS if kind + v in kinds]
        out[kind] = f"({' − '.join([counts[kind].strip('()'), *fewer])})" if fewer else counts[kind]
    return out



def _factor_poly(name: str) -> Poly:
    if name == "T-1":
        return poly_add(poly_symbol("T"), poly_const(1), -1)
    return poly_symbol(name)


def _monomial_poly(coeff: int, factors: tuple[str, ...]) -> Poly:
    poly = poly_const(coeff)
    for f in factors:
        poly = poly_mul(poly, _factor_poly(f))
    return poly


@functools.lru_cache(maxsize=128)
def monomials(probes: tuple[Config, ...], factors: tuple[str, ...]) -> tuple[tuple[tuple[tuple[str, ...],
                                                                                     tuple[int, ...]], ...], ...]:
    """By degree 0 … _MAX_DEGREE, each monomial in `factors` ("T-1" among them where asked) with its values at the
    probes, lowest degree first: computed once per set of probes, for all of its storages (`fit_monomial`,
    `model.peak`'s sums of two)."""
    values = [_factor_values(p) for p in probes]
    return tuple(tuple((f, tuple(math.prod(v[x] for x in f) for v in values))
                       for f in itertools.combinations_with_replacement(factors, k)) for k in range(_MAX_DEGREE + 1))


def fit_monomial(counts: list[int], probes: list[Config]) -> Poly:
    """The polynomial c·f₁·f₂… (lowest degree, whole c ≥ 1) equal to counts[i] at probes[i]; RuntimeError if none."""
    found: list[tuple[int, tuple[str, ...]]] = []
    for factors, products in (m for degree in monomials(tuple(probes), factors_of(probes[0])) for m in degree):
        if found and len(factors) > len(found[0][1]):
            break
        if not all(products):  # 0 at a probe
            continue
        c, r = divmod(counts[0], products[0])
        if not r and c >= 1 and all(c * p == n for p, n in zip(products, counts)):
            found.append((c, factors))
    if not found:
        raise RuntimeError(f"element counts {counts} at the probes fit no monomial in {', '.join(factors_of(probes[0]))}")
    return _monomial_poly(*found[0])  # several only where sizes of 1 make them equal: the first reads best


def _add(groups: dict[int, tuple[dict[str, Poly], Poly]], counts: dict[str, str], size: int, kind: str | None,
         poly: Poly) -> None:
    """Add `poly` to the bytes of element size `size`: under its kind's number of blocks, or outside the blocks."""
    blocks, outside = groups.setdefault(size, ({count: {} for count in counts.values()}, {}))
    if kind is None:
        groups[size] = (blocks, poly_add(outside, poly))
    else:
        blocks[counts[kind]] = poly_add(blocks[counts[kind]], poly)


def _merged(groups: dict[int, tuple[dict[str, Poly], Poly]],
            kinds: tuple[str, ...]) -> dict[int, tuple[dict[str, Poly], Poly]]:
    """`groups` with a NoPE or Gated DeltaNet kind's blocks (`VARIANTS`) and its MLP kind's other blocks under one
    count where they hold the same (RoPE's angles are the pass's, and each rotated q and k takes the place of the
    unrotated one; a mixture of experts routes as much beside either mixer): "(L − L_nope)·(x) + L_nope·(x)" is
    written "L·(x)"."""
    counts = block_counts(kinds)
    out = {}
    for size, (blocks, outside) in groups.items():
        blocks = dict(blocks)
        for suffix in VARIANTS:
            whole = block_counts(tuple(dict.fromkeys(kind.removesuffix(suffix) for kind in kinds)))
            for kind in kinds:
                other, variant = counts.get(kind.removesuffix(suffix)), counts[kind]
                if kind.endswith(suffix) and other is not None and blocks.get(other) == blocks.get(variant):
                    blocks[whole[kind.removesuffix(suffix)]] = blocks.pop(other)
                    del blocks[variant]
        out[size] = (blocks, outside)
    return out


@functools.lru_cache(maxsize=256)
def saved_formula(s: Structure) -> str:
    """Bytes autograd keeps for backward, in lesson notation, for every config of structure `s`."""
    configs = probes(s)
    recorded = [run_pass(p, s.dtype) for p in configs]
    passes = [tuple(x for x in r.saved if not x.lin) for r in recorded]  # (a mixer with a fixed state: its part's)
    if len({len(x) for x in passes}) != 1:
        raise RuntimeError(f"probe passes of structure {structure_key(s)} saved different numbers of storages")
    kinds = tuple(b.kind for b in recorded[0].blocks)
    groups: dict[int, tuple[dict[str, Poly], Poly]] = {}
    if s.lin:  # a fixed-state mixer's storages are its part's formula, checked at every probe (as many as its scan's
        # chunks: Mamba's ⌈√T⌉ differs from probe to probe); the rest is fitted
        for cfg, r in zip(configs, recorded):
            _check_stateful(cfg, s.dtype, r)
        for kind in kinds:
            part = stack.stateful_kind(kind)
            for size, elements in (part.saved_parts(configs[0], DTYPES[s.dtype]) if part else {}).items():
                _add(groups, block_counts(kinds), size, kind, elements.poly())
    for storages in zip(*passes):
        first = storages[0]
        counts = [x.nbytes // x.element_bytes for x in storages]
        poly = _owner_poly(first.owner, counts, configs) if s.recipe is not None else None
        kind = kinds[first.block] if first.phase == "block" else None
        _add(groups, block_counts(kinds), first.element_bytes, kind, poly or fit_monomial(counts, configs))
    return grouped(_merged(groups, kinds))


def _check_stateful(cfg: Config, dtype: str, recorded: Pass) -> None:
    """RuntimeError unless the storages first saved in each mixer with a fixed state of `cfg`'s pass (one block of each
    kind) hold what its part's `saved_parts` says, element size by element size."""
    for i, block in enumerate(recorded.blocks):
        part = stack.stateful_kind(block.kind)
        if part is None:
            continue
        measured: dict[int, int] = {}
        for x in recorded.saved:
            if x.lin and x.block == i:
                measured[x.element_bytes] = measured.get(x.element_bytes, 0) + x.nbytes
        said = {size: size * int(e.value(cfg.symbols())) for size, e in part.saved_parts(cfg, DTYPES[dtype]).items()}
        if measured != said:
            raise RuntimeError(f"a {part.NAME} block at B={cfg.B}, T={cfg.T}, {dtype} keeps {measured} bytes by element "
                               f"size for backward, its formula says {said}: update {part.__name__}.saved_parts")


def _owner_poly(owner: str | None, counts: list[int], configs: list[Config]) -> Poly | None:
    """The modern recipe's saved storage as its owner's notation shape (the fused q, k, v output is the sum
    (h + 2h_kv)·d_head, no monomial), if it has a recorded owner whose shape gives the counts; else None."""
    if owner is None:
        return None
    local = local_name(owner)
    apart = configs[0].head_dim is not None or configs[0].mla
    poly = shape_poly(notation(configs[0])[local][0], apart)
    values = [_factor_values(c) for c in configs]
    if any(sum(c * math.prod(v[s] ** k for s, k in m) for m, c in poly.items()) != n for v, n in zip(values, counts)):
        return None
    return poly


def shape_poly(symbolic: str, apart: bool = False) -> Poly:
    """The element count of a lesson-notation shape as a polynomial: "(B, h, T, T)" -> BhT², and h·d_head -> d
    (unless d_head is set apart from d / h)."""
    return dict(_shape_terms(symbolic, apart))


@functools.lru_cache(maxsize=1024)
def _shape_terms(symbolic: str, apart: bool) -> tuple[tuple[tuple[tuple[str, int], ...], int], ...]:
    poly = poly_const(1)
    for dim in dims(symbolic):
        poly = poly_mul(poly, to_poly(dim))
    out: Poly = {}
    for mono, c in poly.items():
        powers = dict(mono)
        while not apart and powers.get("h", 0) and powers.get("d_head", 0):  # h heads of d_head features: d
            for s in ("h", "d_head"):
                powers[s] -= 1
            powers["d"] = powers.get("d", 0) + 1
        key = tuple(sorted((s, k) for s, k in powers.items() if k))
        out[key] = out.get(key, 0) + c
    return tuple(out.items())


def new_memory_formula(rows: Iterable, apart: bool = False, kinds: tuple[str, ...] = ("dense",)) -> str:
    """Bytes of the rows that are new memory (not views), grouped by element size; block rows × their kind's number
    of blocks (`block_counts(kinds)`, `kinds` the model's kinds of blocks in order: L for one kind).
    `apart`: d_head is set apart from d / h (h·d_head is then no d). The same for every B and T of a structure:
    computed once per set of (shape, element size, kind or None) of the new rows."""
    return _new_memory_formula(tuple((r.symbolic, r.nbytes // r.numel, r.kind if r.block is not None else None)
                                     for r in rows if not r.view), apart, kinds)


@functools.lru_cache(maxsize=512)
def _new_memory_formula(rows: tuple[tuple[str, int, str | None], ...], apart: bool, kinds: tuple[str, ...]) -> str:
    groups: dict[int, tuple[dict[str, Poly], Poly]] = {}
    for symbolic, size, kind in rows:
        _add(groups, block_counts(kinds), size, kind, shape_poly(symbolic, apart))
    return grouped(_merged(groups, kinds))


KORTHIKANTI = "L·(34BTd + 5BhT²)"  # sbh(34 + 5as/h) bytes per layer, in the lesson's notation (s = T, b = B, h = d, a = h)
KORTHIKANTI_NOTE = ("Korthikanti et al. (2022) estimate activations at 16 bits with dropout as sbh(34 + 5as/h) bytes "
                    "per layer (s = T, b = B, h = d, a = h here). This block has no dropout, so it keeps neither their "
                    "dropout masks (as²b + 2sbh bytes) nor a separate dropout output (2as²b): attn @ v reuses the "
                    "softmax output. It does keep the (T, T) causal mask and LayerNorm's mean and rstd, and the "
                    "measured total adds the embedding, the final LayerNorm, the head and the loss.")


CACHES = (delta, mamba, kda, mamba1, window, latent, attention)  # the first present writes the cache's lines: a window caps attention's,
# Gated DeltaNet or Mamba 2 keeps states in some blocks


def kv_cache_lines(cfg: Config, dtype: str) -> list[Line]:
    """The KV cache of inference at `dtype`, the one definition every card and table shows, written by the part that
    keeps it (`CACHES`): K and V of h_kv heads of d_head features per block and token kept (`model.parts.attention`),
    latent attention's latent and rotary key (`model.parts.latent`), or a window's cap on the windowed blocks' tokens
    (`model.parts.window`). The first line is the whole cache of B sequences of T tokens, the second the bytes one more
    token of context adds; a windowed model adds a line per kind of block and what full attention would keep, latent
    attention what K and V of every head would keep.

    2·L·B·T·h_kv·d_head elements for B sequences of T tokens; per token 2·L·h_kv·d_head. GPT-2's recipe says it
    in the lesson's words (all h heads, h·d_head = d); grouped-query attention divides it by h/h_kv against
    multi-head attention; a set-apart d_head (Qwen3) is used as it is, not d / h. A mixture of experts changes
    the MLP only: the cache is attention's, the same as the dense model's."""
    part = next(p for p in CACHES if p.present(cfg))
    return part.cache_lines(cfg, dtype, DTYPES[dtype])
