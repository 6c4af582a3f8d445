"""A model is a stack of blocks: which part each block mixes its tokens with and which part is its MLP, grouped where
blocks repeat.

Every block is wired as one part says (`wiring`: the lesson's sequential residual stream, `model.parts.residual`,
unless a part wires it otherwise). Every block of a model mixes with the same part (`mixer`: attention, or latent attention), and each block's MLP is of
one kind (`kinds`): "dense" (`model.parts.mlp`) or "moe" (`model.parts.moe`, in the blocks its layout names). A kind's
blocks are counted by a symbol (`counts`): L where every block is of one kind, else L − L_moe dense blocks and L_moe
MoE blocks. Figures over all blocks sum each part under its count (`spread`): "L·(…)" for what every block has, then
"(L − L_moe)·(…) + L_moe·(…)" for what the kinds have apart.
"""
from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from .expr import ZERO, E, Expr, total
from .parts import PARTS, attention, delta, hybrid, kda, latent, mamba, mamba1, mlp, moe, residual

if TYPE_CHECKING:
    from .config import Config

MIXERS: tuple[ModuleType, ...] = (latent, attention)  # the first present is every block's mixer
FFNS: dict[str, ModuleType] = {"dense": mlp, "moe": moe}  # each kind of block's MLP, in the order figures list them
COUNTS: dict[str, Expr] = {"dense": E("(L − L_moe)"), "moe": E("L_moe")}  # a kind's blocks beside the other's
L = E("L")


def mixer(cfg: Config) -> ModuleType:
    """The part every block of `cfg` mixes its tokens with."""
    return next(part for part in MIXERS if part.present(cfg))


def wiring(cfg: Config) -> ModuleType:
    """The part that wires every block of `cfg` (`model.parts.residual`: the lesson's sequential block, unless a
    later part in `model.parts.PARTS` that wires a block is present)."""
    return [part for part in PARTS if hasattr(part, "wire") and part.present(cfg)][-1]


def check_wiring(cfg: Config) -> None:
    """One part wires the blocks: two set at once (post_norm, parallel, parallel_norms, ssm_parallel: each its part's
    flag, `FIELDS[0]`) are refused in one line, ValueError; `wiring` would otherwise take the later one silently."""
    flags = [part.FIELDS[0].name for part in PARTS if hasattr(part, "wire") and part is not residual
             and part.present(cfg)]
    if len(flags) > 1:
        raise ValueError(f"{flags[-1]} and {flags[0]} each wire the block their own way: set one of them")


def kinds(cfg: Config) -> tuple[str, ...]:
    """The kinds of cfg's blocks, each once, in the order figures list them (`FFNS`): ("dense",), ("moe",) or
    ("dense", "moe")."""
    present = set(cfg.mlp_kinds)
    return tuple(kind for kind in FFNS if kind in present)


def typed(cfg: Config) -> bool:
    """Whether tables name each block's kind: some block's MLP is not the dense one (a mixture of experts)."""
    return kinds(cfg) != ("dense",)


def counts(cfg: Config) -> dict[str, Expr]:
    """Each kind's number of blocks as a symbol: {"dense": L}, or {"dense": (L − L_moe), "moe": L_moe}."""
    found = kinds(cfg)
    return {found[0]: L} if len(found) == 1 else {kind: COUNTS[kind] for kind in found}


# The mixers with a fixed state that take attention's place in the blocks they list (a model has one of them at most):
# each names its blocks' kind (KEY: "dense_lin", Block.lin), their count (COUNT: L_lin) and itself (NAME).
STATEFUL: tuple[ModuleType, ...] = (delta, mamba, kda, mamba1)


def stateful(cfg: Config) -> ModuleType | None:
    """The part with a fixed state that mixes some blocks of `cfg` (Gated DeltaNet, Mamba 2, Kimi delta attention or
    Mamba), or None."""
    return next((part for part in STATEFUL if part.present(cfg)), None)


def stateful_kind(kind: str) -> ModuleType | None:
    """The part with a fixed state that mixes blocks of this kind ("moe_ssm": Mamba 2), or None (attention)."""
    return next((part for part in STATEFUL if kind.endswith("_" + part.KEY)), None)


def beside(cfg: Config) -> bool:
    """The part with a fixed state mixes beside attention in every block, not in its place (a parallel hybrid block,
    Falcon-H1's: `model.parts.hybrid`)."""
    return hybrid.present(cfg)


def stateful_count(cfg: Config) -> Expr:
    """The blocks the part with a fixed state mixes, as a symbol: its COUNT (L_lin, L_ssm, …), or L where it mixes
    beside attention in every block (`beside`)."""
    return L if beside(cfg) else E(stateful(cfg).COUNT)


def mixer_counts(cfg: Config) -> dict[str, Expr]:
    """The blocks of each mixer beside a part with a fixed state: {"attention": (L − L_lin), "lin": L_lin} (Gated
    DeltaNet's, `model.parts.delta`; Mamba 2's: (L − L_ssm), L_ssm); {"attention": L, "lin": L} where both mix every
    block (`beside`); {"attention": L} where every block has attention alone."""
    part = stateful(cfg)
    if part is None:
        return {"attention": L}
    if beside(cfg):
        return {"attention": L, "lin": L}
    return {"attention": E("(L − {n})", n=E(part.COUNT)), "lin": E(part.COUNT)}


def attention_kind(kind: str, cfg: Config) -> bool:
    """Blocks of this kind have attention: every block but those of a part with a fixed state in its place."""
    return stateful_kind(kind) is None or beside(cfg)


def mixed(cfg: Config, attention: Expr | None, lin: Expr | None) -> Expr | dict[str, Expr | None] | None:
    """What each block's mixer has, as `spread` takes it: `attention` alone where every block has attention, else
    {"attention": …, "lin": …} for the attention blocks and those of the part with a fixed state (`stateful`: "lin"
    names its piece, whichever it is)."""
    return {"attention": attention, "lin": lin} if stateful(cfg) is not None else attention


def spread(cfg: Config, common: Expr | dict[str, Expr | None] | None, pieces: dict[str, Expr | None],
           extra: Expr | None = None, grouped: bool = True, inner: Callable[[Expr], Expr] = lambda e: e) -> Expr:
    """A figure over all L blocks: `common` (what every block has) and each kind's piece under its count, `extra`
    beside `common`. One kind: "L·(common + piece + extra)", the sum written by `inner` (the lesson's notation
    collects its terms); two: "L·(common + extra) + (L − L_moe)·(dense) + L_moe·(moe)" (`grouped` False: a kind's
    piece in parentheses only where it is a sum). `common` as a dict (`mixed`): each mixer's piece under its count,
    after the rest: "L·(…) + (L − L_lin)·(attention) + L_lin·(Gated DeltaNet)" (or Mamba 2's L_ssm)."""
    if isinstance(common, dict):
        rest = spread(cfg, None, pieces, extra, grouped, inner) if any(
            x is not None for x in (*pieces.values(), extra)) else None
        n = mixer_counts(cfg)
        return total(rest, *(E("{n}·({x})", n=n[m], x=x) for m, x in common.items() if x is not None))
    found = counts(cfg)
    if len(found) == 1:
        (kind,) = found
        return E("L·({x})", x=inner(total(common, pieces.get(kind), extra)))
    kinds_part = [E("{n}·({x})" if grouped else "{n}·{x}", n=n, x=pieces[kind]) for kind, n in found.items()
                  if pieces.get(kind) is not None]
    shared = total(common, extra)
    return total(None if shared is ZERO else E("L·({x})", x=shared), *kinds_part)  # no "L·(0)"
