"""The parts a model is stacked from, one file per kind of layer, each declaring its fields once.

- `embedding`: the token table W_te (and Gemma's √d scale);
- `positions`: the learned position table W_pe or RoPE;
- `norms`: LayerNorm or RMSNorm, and Gemma's sandwich norms;
- `attention`: causal self-attention (multi-head, grouped-query, multi-query; QK-norm; eager or fused; Gemma's scale
  and soft-cap of the scores), and the biases;
- `latent`: multi-head latent attention (DeepSeek-V2/V3), in attention's place;
- `window`: sliding windows on some blocks' attention;
- `sinks`: attention sinks (gpt-oss);
- `mlp`: the dense MLP (GELU, SwiGLU, GeGLU; gpt-oss's clamp);
- `moe`: a mixture of experts in the MLP's place, in the blocks its layout names;
- `head`: the head, tied or separate (and Gemma's soft-cap of the logits).

`FIELDS` lists every field of every part with the lesson's global dims (`model.config.DIMS`) in `Config`'s order:
by the pages' groups (`model.fields.GROUPS`), then by part in `PARTS`' order.
"""
from __future__ import annotations

from ..fields import GROUPS, Field
from . import attention, embedding, head, latent, mlp, moe, norms, positions, sinks, window

PARTS = (norms, embedding, positions, mlp, attention, latent, window, sinks, moe, head)


def ordered(dims: tuple[Field, ...]) -> tuple[Field, ...]:
    """The global dims and every part's fields in `Config`'s order (see the module docstring)."""
    every = (*dims, *(f for part in PARTS for f in part.FIELDS))
    return tuple(f for group in GROUPS for f in every if f.group == group)
