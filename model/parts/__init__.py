"""The parts a model is stacked from, one file per kind of layer, each declaring its fields once.

- `embedding`: the token table W_te (and Gemma's √d scale);
- `positions`: the learned position table W_pe or RoPE;
- `norms`: LayerNorm or RMSNorm, and Gemma's sandwich norms;
- `residual`: the block's residual stream, attention then the MLP (the lesson's wiring; another part may wire it);
- `parallel`: a parallel block, attention and the MLP both reading one norm of x (Cohere, Falcon, GPT-J);
- `parallel_norms`: a parallel block with a norm each, attention on ln_1(x), the MLP on ln_2(x) (GPT-NeoX, Pythia);
- `postnorm`: post-norm wiring, the block's norms on attention's and the MLP's outputs (OLMo 2 and 3);
- `attention`: causal self-attention (multi-head, grouped-query, multi-query; QK-norm per head or over all heads; an
  output gate on the heads, Qwen3-Next's; eager or fused; Gemma's scale and soft-cap of the scores), and the biases;
- `latent`: multi-head latent attention (DeepSeek-V2/V3), in attention's place;
- `sparse`: DeepSeek sparse attention, latent attention over the keys a lightning indexer picks (DeepSeek-V3.2);
- `delta`: Gated DeltaNet (Qwen3-Next), in attention's place in the blocks it lists: a fixed state, no KV cache;
- `mamba`: Mamba 2 (Granite 4.0-H), in attention's place in the blocks it lists: a fixed state too;
- `hybrid`: a parallel hybrid block, attention and Mamba 2 both reading one norm of x in every block (Falcon-H1);
- `mamba1`: the first Mamba, a selective scan (Jamba), the same way: a fixed state too;
- `kda`: Kimi delta attention (Kimi Linear), Gated DeltaNet with a decay per channel, in the blocks it lists;
- `window`: sliding windows on some blocks' attention;
- `sinks`: attention sinks (gpt-oss);
- `mlp`: the dense MLP (GELU, SwiGLU, GeGLU; gpt-oss's clamp);
- `moe`: a mixture of experts in the MLP's place, in the blocks its layout names;
- `head`: the head, tied or separate (and Gemma's soft-cap of the logits).

`ordered` lists every field of every part with the lesson's global dims (`model.config.DIMS`) in `Config`'s order:
by the pages' groups (`model.fields.GROUPS`; the extras by family, `SLOTS`), then by part in `PARTS`' order.

A part is a module. Each declares `FIELDS` and may define what the rest of the model asks of its kind of layer; the
model loops over the parts and never asks which family a configuration is of:
- `check(cfg)`: its rules between fields (`model.config.RULES`); `present(cfg)`: whether the model has it;
- `module(cfg, …)`: its module in the real forward pass (`model.gpt`);
- `weights`, `extras`, `flops`, `scores`, `label`, `budget_lines`: its parameters and FLOPs as expressions and lines
  (`model.budgeting`); `cache`, `cache_lines`, …: the cache it keeps (`model.memory`, `model.inference`);
- `notation(cfg, rows)`: its tensors' lesson-notation shapes and labels (`model.tensor_notation`);
- `words`, `describe`, `headline`, `footer`, `notes`: what the reports say of it (`model.report`, `each`);
- `SAYS`: the words it adds to a line or a note elsewhere, by key, where the model has it (`says`; `said(cfg)`, where a
  part defines it, gives them for that configuration).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field
from . import (attention, delta, embedding, head, hybrid, kda, latent, mamba, mamba1, mlp, moe, norms, parallel,
               parallel_norms, positions, postnorm, residual, sinks, sparse, window)

if TYPE_CHECKING:
    from ..config import Config

PARTS = (norms, residual, embedding, positions, mlp, attention, parallel, parallel_norms, postnorm, latent, sparse, window, sinks, moe,
         delta, mamba, hybrid, kda, mamba1, head)


def ordered(dims: tuple[Field, ...]) -> tuple[Field, ...]:
    """The global dims and every part's fields in `Config`'s order (see the module docstring)."""
    every = (*dims, *(f for part in PARTS for f in part.FIELDS))
    return tuple(sorted(every, key=lambda f: SLOTS.index(f.group + ":" + f.family if f.family else f.group)
                        + (f.family != "" and f.kind != "flag") / 2))


# Config's order of the groups: the extras family by family, Gemma's before the window and gpt-oss's after it (as they
# came), each family's flags before its values (`model.fields.linked`)
SLOTS = ("lesson", "recipe", "moe", "extras:gemma", "window", "extras:oss", "latent", "linear")


def says(cfg: Config, key: str, default: str = "") -> str:
    """What the parts the model has say for `key`: each present part's `SAYS[key]` (or its `said(cfg)`; a part that is
    always there, the MLP, has no `present`), in `PARTS`' order, joined; `default` where none says anything
    (`says(cfg, "train/active")` is " active" for a mixture of experts)."""
    tables = [part.said(cfg) if hasattr(part, "said") else part.SAYS for part in PARTS
              if (hasattr(part, "said") or hasattr(part, "SAYS"))
              and (not hasattr(part, "present") or part.present(cfg))]
    said = [table[key] for table in tables if key in table]
    return "".join(said) if said else default


def each(hook: str, *args: object) -> list:
    """What every part that defines `hook` gives for `args`, in `PARTS`' order: `each("words", cfg)`."""
    return [getattr(part, hook)(*args) for part in PARTS if hasattr(part, hook)]
