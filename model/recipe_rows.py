"""Which rows of the shapes table exist in one recipe only: a pass beside its GPT-2 twin's, row by row.

`recipe_rows(cfg)` -> `RecipeRows`: the tensors of `cfg`'s pass that the pass of its GPT-2 twin (same d, h, L,
V; LayerNorm, the learned table W_pe, GELU at 4d, h_kv = h, eager attention: `model.changes.twin`) does not have
(RMSNorm's statistic, RoPE's angles and rotated q and k, SwiGLU's gate and up, K and V expanded to h heads,
QK-norm, fused attention's log-sum-exp), the twin's tensors that this pass no longer has (the position table's
rows, GELU, ...), and, with fused attention, the tensors only eager attention makes (the (B, h, T, T) scores,
masked scores and softmax, and K and V expanded to h heads): the pass of `cfg` with eager attention beside it.
Rows are compared by name without the block prefix ("attn.q_rot"), from real traces (`model.tracing.trace`).

Which tensors a pass records depends on its recipe only, never on its sizes, so the comparison runs once per
recipe (`model.memory.structure`'s recipe part), on a small stand-in of it (meta device, L = 1) and the stand-in's
twin; a test checks that the answer is the same at the presets' full sizes. GPT-2's recipe has no marks.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from . import stack
from .parts import mamba
from .changes import gpt2_of
from .config import Config, one_block_each
from .memory import PROBE_QUERY_SCALE, structure
from .tracing import trace

MARK = "◆"
ONLY_NOTE = (f"{MARK} only in this recipe: the pass of its GPT-2 twin (same d, h, L, V with LayerNorm, the position "
             "table W_pe, GELU at d_ff = 4d and h_kv = h) has no such tensor")
FUSED_ONLY_NOTE = ONLY_NOTE.replace(" and h_kv = h", ", h_kv = h and eager attention")  # the twin of a fused pass
GONE_NOTE = "only in the GPT-2 twin's pass, not in this one: {rows}"
EAGER_NOTE = "only with eager attention, not in this fused pass (the kernel never makes them): {rows}"


@dataclass(frozen=True)
class RecipeRows:
    """`only`: local names of this pass's rows that its twin's pass lacks; `gone`: (local name, label) of the
    twin's rows that this pass lacks for its recipe's other switches, in the twin's order; `eager_only`: with fused
    attention, (local name, label) of the rows that the same configuration's eager pass has and this one lacks.
    All empty for GPT-2's recipe."""

    only: frozenset[str]
    gone: tuple[tuple[str, str], ...]
    eager_only: tuple[tuple[str, str], ...] = ()

    def marked(self, local: str) -> bool:
        """Is the row named `local` (block prefix stripped, `model.Row.local`) only in this recipe?"""
        return local in self.only

    @property
    def legend(self) -> tuple[str, ...]:
        """The lines under the shapes table: what the mark means, and the twin's rows this pass lacks (each
        only where there is something to name)."""
        gone, eager = (", ".join(f"{name} ({label})" for name, label in rows) for rows in (self.gone, self.eager_only))
        only = FUSED_ONLY_NOTE if self.eager_only else ONLY_NOTE
        return (*([only] if self.only else []), *([GONE_NOTE.format(rows=gone)] if gone else []),
                *([EAGER_NOTE.format(rows=eager)] if eager else []))


NONE = RecipeRows(frozenset(), ())


def recipe_rows(cfg: Config) -> RecipeRows:
    """The rows of `cfg`'s pass that are only in its recipe, and its GPT-2 twin's rows it lacks (cached per
    recipe; `NONE` for GPT-2's recipe)."""
    s = structure(cfg, "fp32")
    return NONE if s.recipe is None else _compare(s.recipe, s.moe, s.window, s.gemma, s.oss, s.mla, s.lin, s.ssm)


@functools.lru_cache(maxsize=None)  # one entry per recipe (960 with the attention switch), MoE layout and extras
def _compare(recipe: tuple[object, ...], moe: tuple[object, ...] | None = None, window: bool = False,
             gemma: tuple[bool, ...] = (), oss: tuple[bool, ...] = (), mla: tuple[bool, ...] = (),
             lin: tuple[str, ...] = (), ssm: tuple[object, ...] = ()) -> RecipeRows:
    cfg = _stand_in(recipe, moe, window, gemma, oss, mla, lin, ssm)
    mine, theirs, eager = trace(cfg).rows, trace(gpt2_of(cfg)).rows, trace(replace(cfg, attention="eager")).rows
    mine_names, their_names = {r.local for r in mine}, {r.local for r in theirs}
    eager_only = tuple((r.local, r.label) for r in eager if r.local not in mine_names)
    return RecipeRows(only=frozenset(mine_names - their_names),
                      gone=tuple((r.local, r.label) for r in theirs
                                 if r.local not in mine_names and r.local not in dict(eager_only)),
                      eager_only=eager_only)


def _stand_in(recipe: tuple[object, ...], moe: tuple[object, ...] | None = None, window: bool = False,
              gemma: tuple[bool, ...] = (), oss: tuple[bool, ...] = (), mla: tuple[bool, ...] = (),
              lin: tuple[str, ...] = (), ssm: tuple[object, ...] = ()) -> Config:
    """A small configuration with this recipe and these extras (`model.memory.structure`'s parts): with a mixture
    of experts one block of each kind; a window of 2 keys at T = 4 (a band); Gemma's and gpt-oss's extras that
    make tensors; latent attention's ranks (the queries' latent where the model has one); Gated DeltaNet's or Mamba 2's
    blocks, one of each kind, and small sizes (their `STAND_IN`), Mamba 2's norm and wiring as `ssm` says
    (`model.parts.mamba.structure`)."""
    norm, positions, mlp, bias, qk_norm, kv, apart, attention = recipe
    extras: dict[str, object] = {}
    if moe is not None:
        kinds, shared, gate = moe
        extras.update(experts=4, top_k=2, expert_dim=8, shared_experts=int(shared), shared_gate=gate,
                      **one_block_each(kinds))
    if window:
        extras["window"] = 2
    if gemma:
        post_norms, embed_scale, attn_cap, final_cap, query = gemma
        extras.update(post_norms=post_norms, embed_scale=embed_scale, attn_softcap=50.0 if attn_cap else None,
                      final_softcap=30.0 if final_cap else None, query_scale=PROBE_QUERY_SCALE if query else None)
    if oss:
        sinks, expert_bias, clamp = oss
        extras.update(sinks=sinks, expert_bias=expert_bias, swiglu_limit=7.0 if clamp else None)
    if mla:
        extras.update(latent_dim=8, q_latent_dim=8 if mla[0] else None, rope_dim=2, nope_dim=4, value_dim=4)
    if lin:  # Gated DeltaNet's or Mamba 2's blocks (the kinds name which), small sizes
        part = next(stack.stateful_kind(kind) for kind in lin if stack.stateful_kind(kind))
        extras.update(one_block_each(lin), **part.STAND_IN, **mamba.stand_in(ssm))
    return Config(**{**dict(B=1, T=4, d=32, h=4, L=1, V=16, T_max=8, norm=norm, positions=positions, mlp=mlp,
                            bias=bias, qk_norm=qk_norm, kv_heads={"mha": None, "mqa": 1, "gqa": 2}[kv],
                            head_dim=4 if apart and not mla else None, attention=attention), **extras})
