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
- the KV cache of inference (`kv_cache_lines`), 2·L·B·T·h_kv·d_head elements.

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
from dataclasses import dataclass

from .config import Config
from .figures import Line
from .formula import Poly, grouped, poly_add, poly_const, poly_mul, poly_symbol, to_poly
from .notation import dims
from .passes import DTYPES, run_pass

# Probe values (B, T, d_head, h, V, T_max): small, far enough apart that no two candidate monomials agree on all three.
_PROBES = ((2, 5, 4, 3, 11, 7), (3, 7, 5, 4, 13, 9), (5, 4, 3, 6, 17, 11))
_FACTORS = ("B", "h", "T", "T-1", "d", "d_head", "V", "T_max")
# The modern recipe's probes (B, T, d_head, h, h_kv, V, T_max, d_ff, d when d_head is set apart): four, as it has
# two more factors; d_head even (RoPE), h_kv a divisor of h with h/h_kv varying, d_ff and d apart from the rest.
_RECIPE_PROBES = ((2, 5, 4, 6, 3, 11, 7, 13, 10), (3, 7, 2, 8, 2, 13, 9, 19, 14), (5, 4, 6, 15, 5, 17, 11, 23, 22),
                  (7, 6, 8, 10, 5, 19, 13, 29, 26))
_RECIPE_FACTORS = ("B", "h", "h_kv", "T", "T-1", "d", "d_head", "d_ff", "V", "T_max")
_MAX_DEGREE = 4


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
    return Structure(tie=cfg.tie, dtype=dtype, ones=tuple(v[k] == 1 for k in ONES), recipe=recipe)


def structure_key(s: Structure) -> str:
    """"tied,fp32,B1" style text: tie, dtype and the sizes that are 1 (the export's JavaScript writes the same);
    the modern recipe adds its switches ("rmsnorm,rope,swiglu,none,qk_norm,gqa,d_head,fused")."""
    ones = [k for k, one in zip(ONES, s.ones) if one]
    recipe = []
    if s.recipe is not None:
        norm, positions, mlp, bias, qk_norm, kv, apart, attention = s.recipe
        recipe = [norm, positions, mlp, f"bias={bias}", *(["qk_norm"] if qk_norm else []), kv,
                  *(["d_head"] if apart else []), *(["fused"] if attention == "fused" else [])]
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
    for B, T, d_head, h, h_kv, V, T_max, d_ff, d in _RECIPE_PROBES:
        T = 1 if one["T"] else 2 if one["T-1"] else T
        h = 1 if one["h"] else h
        h_kv = h if kv == "mha" else 1 if kv == "mqa" else h_kv
        out.append(Config(B=1 if one["B"] else B, T=T, d=d if apart else h * d_head, h=h, L=1, V=V,
                          T_max=max(T, T_max), tie=s.tie, norm=norm, positions=positions, mlp=mlp, ff_dim=d_ff,
                          kv_heads=h_kv, head_dim=d_head if apart else None, bias=bias, qk_norm=qk_norm,
                          attention=attention))
    return out


def _factor_values(cfg: Config) -> dict[str, int]:
    return {**cfg.symbols(), "T-1": cfg.T - 1}


def _factor_poly(name: str) -> Poly:
    if name == "T-1":
        return poly_add(poly_symbol("T"), poly_const(1), -1)
    return poly_symbol(name)


def _monomial_poly(coeff: int, factors: tuple[str, ...]) -> Poly:
    poly = poly_const(coeff)
    for f in factors:
        poly = poly_mul(poly, _factor_poly(f))
    return poly


@functools.cache
def _candidates(factors: tuple[str, ...] = _FACTORS) -> tuple[tuple[str, ...], ...]:
    """Monomials in `factors` up to _MAX_DEGREE, lowest degree first."""
    return tuple(c for k in range(_MAX_DEGREE + 1) for c in itertools.combinations_with_replacement(factors, k))


def fit_monomial(counts: list[int], probes: list[Config]) -> Poly:
    """The polynomial c·f₁·f₂… (lowest degree, whole c ≥ 1) equal to counts[i] at probes[i]; RuntimeError if none."""
    values = [_factor_values(p) for p in probes]
    found: list[tuple[int, tuple[str, ...]]] = []
    for factors in _candidates(_FACTORS if probes[0].gpt2_recipe else _RECIPE_FACTORS):
        if found and len(factors) > len(found[0][1]):
            break
        products = [math.prod(v[f] for f in factors) for v in values]
        if any(p == 0 for p in products):
            continue
        if counts[0] % products[0]:
            continue
        c = counts[0] // products[0]
        if c >= 1 and all(c * p == n for p, n in zip(products, counts)):
            found.append((c, factors))
    if not found:
        raise RuntimeError(f"element counts {counts} at the probes fit no monomial in {', '.join(_RECIPE_FACTORS)}")
    return _monomial_poly(*found[0])  # several only where sizes of 1 make them equal: the first reads best


def _add(groups: dict[int, tuple[Poly, Poly]], size: int, in_block: bool, poly: Poly) -> None:
    block, outside = groups.get(size, ({}, {}))
    groups[size] = (poly_add(block, poly), outside) if in_block else (block, poly_add(outside, poly))


@functools.lru_cache(maxsize=256)
def saved_formula(s: Structure) -> str:
    """Bytes autograd keeps for backward, in lesson notation, for every config of structure `s`."""
    configs = probes(s)
    passes = [run_pass(p, s.dtype).saved for p in configs]
    if len({len(x) for x in passes}) != 1:
        raise RuntimeError(f"probe passes of structure {structure_key(s)} saved different numbers of storages")
    groups: dict[int, tuple[Poly, Poly]] = {}
    for storages in zip(*passes):
        size = storages[0].element_bytes
        counts = [x.nbytes // x.element_bytes for x in storages]
        poly = _owner_poly(storages[0].owner, counts, configs) if s.recipe is not None else None
        _add(groups, size, storages[0].phase == "block", poly or fit_monomial(counts, configs))
    return grouped(groups)


def _owner_poly(owner: str | None, counts: list[int], configs: list[Config]) -> Poly | None:
    """The modern recipe's saved storage as its owner's notation shape (the fused q, k, v output is the sum
    (h + 2h_kv)·d_head, no monomial), if it has a recorded owner whose shape gives the counts; else None."""
    from .tracing import BLOCK_PREFIX, notation

    if owner is None:
        return None
    local = owner[len(BLOCK_PREFIX):] if owner.startswith(BLOCK_PREFIX) else owner
    apart = configs[0].head_dim is not None
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


def new_memory_formula(rows: Iterable, apart: bool = False) -> str:
    """Bytes of the rows that are new memory (not views), grouped by element size; block rows × L.
    `apart`: d_head is set apart from d / h (h·d_head is then no d). The same for every B and T of a structure:
    computed once per set of (shape, element size, in a block) of the new rows."""
    return _new_memory_formula(tuple((r.symbolic, r.nbytes // r.numel, r.block is not None) for r in rows
                                     if not r.view), apart)


@functools.lru_cache(maxsize=512)
def _new_memory_formula(rows: tuple[tuple[str, int, bool], ...], apart: bool) -> str:
    groups: dict[int, tuple[Poly, Poly]] = {}
    for symbolic, size, in_block in rows:
        _add(groups, size, in_block, shape_poly(symbolic, apart))
    return grouped(groups)


KORTHIKANTI = "L·(34BTd + 5BhT²)"  # sbh(34 + 5as/h) bytes per layer, in the lesson's notation (s = T, b = B, h = d, a = h)
KORTHIKANTI_NOTE = ("Korthikanti et al. (2022) estimate activations at 16 bits with dropout as sbh(34 + 5as/h) bytes "
                    "per layer (s = T, b = B, h = d, a = h here). This block has no dropout, so it keeps neither their "
                    "dropout masks (as²b + 2sbh bytes) nor a separate dropout output (2as²b): attn @ v reuses the "
                    "softmax output. It does keep the (T, T) causal mask and LayerNorm's mean and rstd, and the "
                    "measured total adds the embedding, the final LayerNorm, the head and the loss.")


def kv_cache_lines(cfg: Config, dtype: str) -> list[Line]:
    """The KV cache of inference at `dtype`, the one definition every card and table shows: K and V of h_kv heads of
    d_head features, per block, per token kept.

    2·L·B·T·h_kv·d_head elements for B sequences of T tokens; per token 2·L·h_kv·d_head. GPT-2's recipe says it
    in the lesson's words (all h heads, h·d_head = d); grouped-query attention divides it by h/h_kv against
    multi-head attention; a set-apart d_head (Qwen3) is used as it is, not d / h."""
    size = DTYPES[dtype]
    heads, width = ("all h heads", "d") if cfg.gpt2_recipe else ("h_kv heads of d_head", "·h_kv·d_head")
    per_token = 2 * cfg.L * cfg.h_kv * cfg.d_head * size
    return [
        Line("memory/kv_cache", f"KV cache at {dtype}: keys and values of {heads}, every block, B sequences of "
             "T tokens", f"2LBT{width}·{size}", per_token * cfg.B * cfg.T, "bytes"),
        Line("memory/kv_cache_per_token", f"KV cache per token of context at {dtype} (one sequence, one more token)",
             f"2L{width}·{size}", per_token, "bytes"),
    ]
