"""A mixture of experts in the MLP's place: a router (d, E) scores E routed experts for each token, the top k get it,
weighted; E_shared shared experts (one MLP of width E_shared·d_shared, Qwen2-MoE's with a sigmoid gate (d, 1)) see
every token. The experts take the recipe's MLP of width d_expert, without biases (gpt-oss's have them).

Which blocks are MoE: block i is when i ≥ `dense_first` (DeepSeek's first_k_dense_replace), (i + 1) is a multiple of
`moe_step` (Qwen's decoder_sparse_step) and i is not in `dense_layers` (Qwen's mlp_only_layers); the others keep the
dense MLP of width d_ff. L_moe counts the MoE blocks."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

MOE = dict(group="moe", needs="experts")  # every field of the mixture of experts sizes it
FIELDS = (
    Field("experts", "whole", "routed experts of an MoE block (its router picks k of them per token)", symbol="E",
          bounds=(1, 4_096), optional=True, cli="--experts", **MOE,  # DeepSeek-V3 256, Kimi K2 384
          absent='{key} sets a mixture of experts: choose the MLP "mixture of experts" first; kept the dense MLP'),
    Field("top_k", "whole", "experts per token (top-k of the router's E scores)", symbol="k", bounds=(1, 4_096),
          optional=True, cli="--top-k", **MOE),  # at most E
    Field("expert_dim", "whole", "each routed expert's hidden width", symbol="d_expert", bounds=(1, 262_144),
          optional=True, **MOE),
    Field("shared_experts", "whole", "shared experts of an MoE block, which every token uses (default 0: none)",
          default=0, symbol="E_shared", bounds=(0, 1_024), cli="--shared-experts", **MOE),
    Field("shared_dim", "whole", "each shared expert's hidden width (default d_expert)", symbol="d_shared",
          bounds=(1, 262_144), optional=True, **MOE),
    Field("shared_gate", "flag", "a sigmoid gate (d, 1) on the shared experts' output (Qwen2-MoE's shared_expert_gate)",
          default=False, control=False, **MOE),  # a link or a config.json sets it
    Field("moe_step", "whole", "every n-th block is MoE: block i when (i + 1) is a multiple of n (Qwen's "
          "decoder_sparse_step; default 1)", default=1, bounds=(1, 1_024), **MOE),  # and ≤ L
    Field("dense_first", "whole", "the first n blocks keep the dense MLP (DeepSeek's first_k_dense_replace; default 0)",
          default=0, bounds=(0, 1_023), **MOE),  # and < L
    Field("dense_layers", "blocks", "blocks that keep the dense MLP, by index (Qwen's mlp_only_layers; default none)",
          default=(), **MOE),
    Field("expert_bias", "flag", "biases on the router (E) and on every expert's matrices (2d_expert + d each, SwiGLU)",
          default=False, group="extras", family="oss"),
)
LAYOUT = ("moe_step", "dense_first", "dense_layers")  # which blocks are MoE (the others dense)
DEFAULTS = {f.name: f.default for f in FIELDS if f.group == "moe"}


def check(cfg: Config) -> None:
    """The mixture of experts' fields together (ValueError naming the problem and the fix)."""
    if cfg.experts is None:
        for name, default in DEFAULTS.items():
            if getattr(cfg, name) != default:
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but experts is not: a dense model has no "
                                 f"mixture of experts; set experts (E) or drop {name}")
        if cfg.expert_bias:
            raise ValueError("expert_bias is set but experts is not: set experts (E), or drop expert_bias")
        return
    E = cfg.experts
    if cfg.top_k is None:
        raise ValueError(f"E={E:,} experts need k, the experts each token goes to: set top_k (1 to {E:,}; Mixtral "
                         f"8x7B: 2, Qwen3-30B-A3B: 8)")
    if cfg.top_k > E:
        raise ValueError(f"k={cfg.top_k:,} exceeds E={E:,}: each token goes to k of the E experts, so k must be from 1 "
                         f"to {E:,}")
    if cfg.expert_dim is None:
        raise ValueError(f"E={E:,} experts need d_expert, each expert's width: set expert_dim (Mixtral 8x7B: 14,336, "
                         f"its dense MLP's d_ff; Qwen3-30B-A3B: 768)")
    if not cfg.shared_experts and (cfg.shared_dim is not None or cfg.shared_gate):
        name = "shared_dim" if cfg.shared_dim is not None else "shared_gate"
        raise ValueError(f"{name} is set but E_shared=0: there are no shared experts; set shared_experts (E_shared) "
                         f"to 1 or more, or drop {name}")
    if cfg.moe_step > cfg.L:
        raise ValueError(f"moe_step={cfg.moe_step:,} exceeds L={cfg.L:,}: block i is MoE when (i + 1) is a multiple "
                         f"of moe_step, so no block would be; set moe_step from 1 to {cfg.L:,}")
    outside = [i for i in cfg.dense_layers if not 0 <= i < cfg.L]
    if outside:
        raise ValueError(f"dense_layers lists block {outside[0]:,}, but the blocks are 0 … {cfg.L - 1:,}: list "
                         f"indices below L={cfg.L:,}")
    if "moe" not in cfg.block_kinds:
        raise ValueError(f"no block is a mixture of experts (L={cfg.L:,}, dense_first={cfg.dense_first:,}, "
                         f"moe_step={cfg.moe_step:,}, dense_layers={list(cfg.dense_layers)}): lower dense_first, "
                         f"moe_step or dense_layers, or drop experts for a dense model")
    if cfg.mlp == "geglu":
        raise ValueError("mlp=geglu with experts: GeGLU experts are not modelled (Gemma's MLP is dense); choose swiglu "
                         "or gelu experts, or drop experts")
