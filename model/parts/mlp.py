"""The dense MLP: GELU, d → d_ff → d with two matrices (GPT-2: d_ff = 4d), or a gated one with three, act(x W_gate) ·
(x W_up) then W_down: SwiGLU (SiLU, Llama's) or GeGLU (GELU's tanh approximation, Gemma's). gpt-oss clamps its
SwiGLU: gate ≤ limit, −limit ≤ up ≤ limit, then gate·σ(α·gate)·(up + 1)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

SWIGLU_ALPHA = 1.702  # gpt-oss's sigmoid gain (GptOssConfig's swiglu_alpha): x·σ(1.702x) approximates GELU
FIELDS = (
    Field("mlp", "choice", "MLP: gelu (d → d_ff → d), swiglu (SiLU(x W_gate) · x W_up, then W_down) or geglu "
          "(GELU(x W_gate) · x W_up, then W_down: Gemma's)", default="gelu", choices=("gelu", "swiglu", "geglu"),
          menu=("gelu", "swiglu")),  # GeGLU comes with Gemma's presets and config.json files
    Field("ff_dim", "whole", "MLP hidden width (default 4d for GELU; 8d/3 rounded up to a multiple of 256 for SwiGLU)",
          symbol="d_ff", bounds=(1, 262_144), optional=True, unset="default"),
    Field("swiglu_limit", "real", "the clamped SwiGLU's limit: gate ≤ limit, −limit ≤ up ≤ limit, then "
          "gate·σ(α·gate)·(up + 1) (a value only)", optional=True, group="extras", family="oss"),
    Field("swiglu_alpha", "real", "the clamped SwiGLU's sigmoid gain α (default 1.702; a value only)", optional=True,
          group="extras", family="oss"),
)


def swiglu_width(d: int) -> int:
    """SwiGLU's default hidden width: 8d/3 rounded up to a multiple of 256 (Llama's rule; 11,008 at d = 4,096).

    Two thirds of GELU's 4d keeps the MLP's parameters at 8d² with three matrices instead of two."""
    return -(-8 * d // (3 * 256)) * 256


def check(cfg: Config) -> None:
    """The clamp is a SwiGLU's, and its gain needs its limit (ValueError naming the fix); the default gain written out
    is the default (None)."""
    if cfg.swiglu_limit is not None and cfg.mlp != "swiglu":
        raise ValueError(f"swiglu_limit={cfg.swiglu_limit:g} clamps a SwiGLU, but mlp={cfg.mlp}: set mlp to swiglu, "
                         f"or drop swiglu_limit")
    if cfg.swiglu_alpha is not None and cfg.swiglu_limit is None:
        raise ValueError(f"swiglu_alpha={cfg.swiglu_alpha:g} is the clamped SwiGLU's gain, but swiglu_limit is not set: "
                         f"set swiglu_limit, or drop swiglu_alpha")
    if cfg.swiglu_alpha == SWIGLU_ALPHA:  # the default written out is the default
        object.__setattr__(cfg, "swiglu_alpha", None)
