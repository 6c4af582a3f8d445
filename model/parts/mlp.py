"""The dense MLP: GELU, d → d_ff → d with two matrices (GPT-2: d_ff = 4d; ReLU², max(0, x)², in GELU's place: Arcee's
and Jais 2's; xIELU, with its two learned gains α_p and α_n: Apertus'), or a gated one with three, act(x W_gate) ·
(x W_up) then W_down: SwiGLU (SiLU, Llama's) or GeGLU (GELU's tanh approximation, Gemma's). gpt-oss clamps its
SwiGLU: gate ≤ limit, −limit ≤ up ≤ limit, then gate·σ(α·gate)·(up + 1)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field
from ..taps import Tap

if TYPE_CHECKING:
    from ..config import Config

NAME = "mlp"  # the module's name in a block: its tensors are "blocks.0.mlp.…"
SWIGLU_ALPHA = 1.702  # gpt-oss's sigmoid gain (GptOssConfig's swiglu_alpha): x·σ(1.702x) approximates GELU
FIELDS = (
    Field("mlp", "choice", "MLP: gelu (d → d_ff → d), swiglu (SiLU(x W_gate) · x W_up, then W_down), geglu "
          "(GELU(x W_gate) · x W_up, then W_down: Gemma's), relu2 (d → d_ff → d through max(0, x)²: Arcee's, Jais "
          "2's) or xielu (d → d_ff → d through xIELU, its two gains α_p, α_n learned: Apertus')", default="gelu",
          choices=("gelu", "swiglu", "geglu", "relu2", "xielu"),
          menu=("gelu", "swiglu")),  # GeGLU, ReLU² and xIELU come with their families' config.json files
    Field("ff_dim", "whole", "MLP hidden width (default 4d for GELU, ReLU² and xIELU; 8d/3 rounded up to a multiple of 256 "
          "for SwiGLU)",
          symbol="d_ff", bounds=(1, 262_144), optional=True, unset="default"),
    Field("swiglu_limit", "real", "the clamped SwiGLU's limit: gate ≤ limit, −limit ≤ up ≤ limit, then "
          "gate·σ(α·gate)·(up + 1) (a value only)", optional=True, group="extras", family="oss",
          says="a SwiGLU clamped at ±{cfg.swiglu_limit:g} (α = {cfg.alpha:g})"),
    Field("swiglu_alpha", "real", "the clamped SwiGLU's sigmoid gain α (default 1.702; a value only)", optional=True,
          group="extras", family="oss"),
)


FAMILY_OF = {"geglu": "gemma"}  # an MLP choice that is a family's extra (`model.config.Config.extras_of`)


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


def matrices(cfg: Config) -> int:
    """GELU has two matrices (d, d_ff) and (d_ff, d); a gated MLP three: W_gate, W_up and W_down."""
    return 3 if cfg.mlp in ("swiglu", "geglu") else 2


def weights(cfg: Config) -> Expr:
    """One dense block's matrices: 2·d·d_ff (GELU) or 3·d·d_ff (gated)."""
    return E("{m}d·d_ff", m=matrices(cfg))


def extras(cfg: Config) -> list[Expr]:
    """One dense block's parameters besides its matrices: biases (d_ff per matrix into the hidden width, d out of
    it), and xIELU's two gains α_p and α_n (one number each)."""
    gains = [E("2")] if cfg.mlp == "xielu" else []
    if not cfg.mlp_bias:
        return gains
    return [E("2d_ff + d") if matrices(cfg) == 3 else E("d_ff + d"), *gains]


def flops(cfg: Config) -> Expr:
    """The matmul FLOPs per token of one dense block's MLP (2 per weight)."""
    return E("{f}d·d_ff", f=2 * matrices(cfg))


XIELU_SAYS = {"budget/no_sinks": ", no xIELU α_p, α_n", "budget/and_sinks": " and xIELU's α_p, α_n"}  # the budget's
# lines of what is not a matrix (`model.parts.says`)


def said(cfg: Config) -> dict[str, str]:
    """The words this MLP adds to the budget's lines (`model.parts.says`): xIELU's two gains are neither matrices nor
    norms."""
    return XIELU_SAYS if cfg.mlp == "xielu" else {}
GLU = {"swiglu": "SwiGLU", "geglu": "GeGLU"}  # a gated MLP's name
NAMES = {"gelu": "GELU", "relu2": "ReLU²", "xielu": "xIELU", **GLU}  # each MLP's name


def label(cfg: Config, lesson: bool, dense: str = "one block") -> str:
    """One dense block's MLP line, in words (`dense`: "one dense block" beside MoE blocks)."""
    if lesson:
        return "MLP, one block: (d, 4d), (4d, d) and their biases"
    glu = GLU.get(cfg.mlp)
    name = "" if cfg.mlp == "gelu" else f"{NAMES[cfg.mlp]} "
    return ((f"{glu} MLP, {dense}: W_gate, W_up (d, d_ff) and W_down (d_ff, d)" if glu else
             f"{name}MLP, {dense}: (d, d_ff) and (d_ff, d)")
            + (" and their biases" if cfg.mlp_bias else "") + (", and xIELU's gains α_p, α_n" if cfg.mlp == "xielu"
                                                                 else ""))


# --- the module in the real forward pass ------------------------------------------------------------------------------
def swiglu(module: nn.Module, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """SiLU(gate) · up (through `module.silu`, a traced tensor); with `module.limit` set, gpt-oss's clamped SwiGLU:
    gate ≤ limit, −limit ≤ up ≤ limit, then gate·σ(α·gate)·(up + 1). Elementwise: gate's shape, no matmul FLOPs."""
    limit, alpha = module.limit, module.alpha
    if limit is None:
        return module.silu(gate) * up
    gate, up = gate.clamp(max=limit), up.clamp(-limit, limit)
    return gate * torch.sigmoid(gate * alpha) * (up + 1)


XIELU_BETA, XIELU_EPS = 0.5, -1e-6  # transformers' XIELUActivation's β and ε (buffers, not parameters)


class XIELU(nn.Module):
    """xIELU (Huang et al. 2024), transformers' XIELUActivation on its Python path: α_p·x² + β·x where x > 0, else
    α_n·(exp(min(x, ε)) − 1 − x) + β·x, with α_p = softplus(a_p) and α_n = β + softplus(a_n) from its two learned
    numbers a_p, a_n (initialised as transformers does, to α_p = α_n = 0.8). Elementwise: no matmul FLOPs."""

    def __init__(self) -> None:
        super().__init__()
        self.alpha_p = nn.Parameter(torch.log(torch.expm1(torch.tensor(0.8))).unsqueeze(0))  # (1,)
        self.alpha_n = nn.Parameter(torch.log(torch.expm1(torch.tensor(0.8 - XIELU_BETA))).unsqueeze(0))  # (1,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha_p, alpha_n = F.softplus(self.alpha_p), XIELU_BETA + F.softplus(self.alpha_n)
        return torch.where(x > 0, alpha_p * x * x + XIELU_BETA * x,
                           (torch.expm1(x.clamp(max=XIELU_EPS)) - x) * alpha_n + XIELU_BETA * x)


class MLP(nn.Module):
    """GELU: d -> d_ff -> d (tanh approximation, as GPT-2; d_ff = 4d); ReLU² the same with max(0, x)² in GELU's place
    (ReLU, then its square, as transformers' ReLUSquaredActivation), xIELU the same with `XIELU` there. SwiGLU:
    SiLU(x W_gate) · (x W_up), then W_down;
    GeGLU (Gemma) the same with GELU's tanh approximation in SiLU's place.

    `width` (default d_ff) and `bias` (default the recipe's MLP biases) serve the shared experts of a mixture of
    experts, one MLP of width E_shared·d_shared without biases."""

    def __init__(self, cfg: Config, width: int | None = None, bias: bool | None = None) -> None:
        super().__init__()
        width = cfg.d_ff if width is None else width
        bias = cfg.mlp_bias if bias is None else bias
        self.glu = cfg.glu
        self.limit, self.alpha = cfg.swiglu_limit, cfg.alpha
        if self.glu:
            self.gate = nn.Linear(cfg.d, width, bias=bias)  # W_gate: (d, d_ff)
            self.up = nn.Linear(cfg.d, width, bias=bias)  # W_up: (d, d_ff)
            if cfg.mlp == "geglu":  # Gemma's GeGLU: GELU (tanh approximation) in SiLU's place
                self.gelu = nn.GELU(approximate="tanh")
            elif self.limit is None:
                self.silu = nn.SiLU()
            self.gated = Tap()
        elif cfg.mlp == "relu2":
            self.fc = nn.Linear(cfg.d, width, bias=bias)  # (d, d_ff) + bias
            self.relu, self.squared = nn.ReLU(), Tap()
        elif cfg.mlp == "xielu":
            self.fc = nn.Linear(cfg.d, width, bias=bias)  # (d, d_ff) + bias
            self.xielu = XIELU()
        else:
            self.fc = nn.Linear(cfg.d, width, bias=bias)  # (d, d_ff) + bias
            self.gelu = nn.GELU(approximate="tanh")
        self.proj = nn.Linear(width, cfg.d, bias=bias)  # (d_ff, d) + bias; W_down in SwiGLU

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.glu:
            gate, up = self.gate(x), self.up(x)  # (B, T, d_ff) each
            if hasattr(self, "gelu"):
                return self.proj(self.gated(self.gelu(gate) * up))  # (B, T, d_ff) -> (B, T, d)
            return self.proj(self.gated(swiglu(self, gate, up)))
        if hasattr(self, "relu"):
            return self.proj(self.squared(torch.square(self.relu(self.fc(x)))))  # max(0, x)²: (B, T, d_ff)
        if hasattr(self, "xielu"):
            return self.proj(self.xielu(self.fc(x)))  # (B, T, d_ff) -> (B, T, d)
        return self.proj(self.gelu(self.fc(x)))


def module(cfg: Config) -> nn.Module:
    """One dense block's MLP."""
    return MLP(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2)
    "mlp.fc": ("(B, T, 4d)", "MLP hidden, d → 4d"),
    "mlp.gelu": ("(B, T, 4d)", "GELU"),
    "mlp.proj": ("(B, T, d)", "MLP out, 4d → d"),
}
CLAMPED_GATED = "clamped SwiGLU: gate·σ(α·gate)·(up + 1), gate ≤ limit, −limit ≤ up ≤ limit"


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The MLP's rows at width d_ff: GELU's, or a gated MLP's (SwiGLU, GeGLU, the clamped SwiGLU)."""
    glu = GLU.get(cfg.mlp, "SwiGLU")
    gated = {"swiglu": "SiLU(gate) · up", "geglu": "GELU(gate) · up"}.get(cfg.mlp, "SiLU(gate) · up")
    rows.update({
        "mlp.fc": ("(B, T, d_ff)", "MLP hidden, d → d_ff"),
        "mlp.gelu": ("(B, T, d_ff)", "GELU"),
        "mlp.relu": ("(B, T, d_ff)", "ReLU: max(0, x)"),
        "mlp.squared": ("(B, T, d_ff)", "ReLU²: max(0, x)², squared"),
        "mlp.xielu": ("(B, T, d_ff)", "xIELU: α_p·x² + β·x above 0, α_n·(eˣ − 1 − x) + β·x below"),
        "mlp.gate": ("(B, T, d_ff)", f"{glu} gate: x W_gate"),
        "mlp.up": ("(B, T, d_ff)", f"{glu} up: x W_up"),
        "mlp.silu": ("(B, T, d_ff)", "SiLU(gate)"),
        "mlp.gated": ("(B, T, d_ff)", CLAMPED_GATED if cfg.swiglu_limit is not None else gated),
        "mlp.proj": ("(B, T, d)", "MLP out, d_ff → d"),
    })


def words(cfg: Config) -> list[str]:
    """The MLP in the recipe's words (the clamp where set)."""
    clamp = [f"SwiGLU clamped at {cfg.swiglu_limit:g} (α = {cfg.alpha:g})"] if cfg.swiglu_limit is not None else []
    return [NAMES[cfg.mlp], *clamp]


def describe(cfg: Config) -> str:
    """Its size in a configuration's one line (`model.report.describe`): d_ff where some block is dense."""
    return f"d_ff={cfg.d_ff:,}" if "dense" in cfg.mlp_kinds else ""
