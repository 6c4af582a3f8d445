"""The norms: LayerNorm (a gain and a bias) or RMSNorm (a gain only), before attention and the MLP in every block and
once before the head; Gemma's sandwich norms add one on attention's and one on the MLP's output; nanochat adds one on
the token embeddings before the first block (`embed_norm`). OLMo 1's LayerNorms and nanochat's RMSNorms have neither a
gain nor a bias (`norm_plain`): no parameters."""
from __future__ import annotations

import torch
from torch import nn

from typing import TYPE_CHECKING

from ..expr import ZERO, E, Expr
from ..taps import Tap
from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("norm", "choice", "normalisation: layernorm (gain and bias) or rmsnorm (gain only, no mean subtracted)",
          default="layernorm", choices=("layernorm", "rmsnorm")),
    Field("norm_biased", "flag", "the LayerNorms keep their biases beside matrices without them, whatever bias says "
          "(Phi-3.5-MoE, Nemotron)", default=False, control=False, tensors=True,
          says="LayerNorms with biases beside matrices without them"),
    Field("norm_plain", "flag", "norms without a gain or a bias: no parameters (OLMo 1's LayerNorms, nanochat's "
          "RMSNorms)", default=False, control=False, tensors=True,
          says="norms without a gain or a bias (no parameters)"),
    Field("embed_norm", "flag", "a norm on the token embeddings, before the first block (nanochat's)", default=False,
          control=False, tensors=True, says="a norm on the token embeddings before the first block"),
    Field("post_norms", "flag", "sandwich norms: an RMSNorm on attention's and on the MLP's output before each "
          "residual add", default=False, group="extras", family="gemma",
          says="sandwich norms"),
)


def check(cfg: Config) -> None:
    """`norm_biased` only where it adds biases: LayerNorms whose `bias` leaves them none; `norm_plain` only on norms
    that `bias` and `norm_biased` leave without a bias (ValueError)."""
    if cfg.norm_plain and cfg.norm == "layernorm" and (cfg.bias == "all" or cfg.norm_biased):
        raise ValueError(f"norm_plain is set with {'bias=all' if cfg.bias == 'all' else 'norm_biased'}, which gives "
                         "the LayerNorms their biases: drop norm_plain, or give the linears fewer biases")
    if cfg.norm_biased and cfg.norm != "layernorm":
        raise ValueError("norm_biased is set with norm=rmsnorm: an RMSNorm has no bias; set norm=layernorm or drop "
                         "norm_biased")
    if cfg.norm_biased and cfg.bias == "all":
        raise ValueError("norm_biased is set with bias=all, which gives the LayerNorms their biases already: drop "
                         "norm_biased")


def per_block(cfg: Config, pre: int) -> int:
    """Norms over d in each block: the `pre` norms of the block's wiring (2, before attention and before the MLP;
    `model.stack.wiring`'s NORMS), and 2 more with Gemma's sandwich norms (`post_norms`)."""
    return pre + (2 if cfg.post_norms else 0)


def once(cfg: Config) -> Expr | None:
    """The norms outside the blocks: the final one, and the token embeddings' where `embed_norm` ("2d": two RMSNorms'
    gains, "4d": two LayerNorms' gains and biases); None where they have no parameters."""
    norm = one(cfg)
    return norm if norm is None or not cfg.embed_norm else E("{k}d", k=4 if cfg.norm_bias else 2)


def one(cfg: Config) -> Expr | None:
    """One norm over d: LayerNorm's gain and bias (2d; d without biases: `Config.norm_bias`), RMSNorm's gain (d);
    None where it has no parameters (`norm_plain`)."""
    if cfg.norm_plain:
        return None
    return E("2d") if cfg.norm_bias else E("d")


def block(cfg: Config, pre: int) -> Expr | None:
    """One block's norms: 2d (RMSNorm's two gains), 4d (LayerNorm's gains and biases), 8d with sandwich norms; None
    where they have no parameters (`norm_plain`)."""
    if cfg.norm_plain:
        return None
    k = per_block(cfg, pre) * (2 if cfg.norm_bias else 1)
    return E("d") if k == 1 else E("{k}d", k=k)  # a parallel block's one RMSNorm or bias-free LayerNorm: d


def total(cfg: Config, pre: int) -> Expr:
    """Every norm of the model: per_block in each of the L blocks, the final one (and the token embeddings'),
    "(2L + 1)·2d" (0 where they have no parameters)."""
    if cfg.norm_plain:
        return ZERO
    n, outside = per_block(cfg, pre), 2 if cfg.embed_norm else 1
    return E("(L + {o})·{norm}", o=outside, norm=one(cfg)) if n == 1 else \
        E("({n}L + {o})·{norm}", n=n, o=outside, norm=one(cfg))


def label(cfg: Config, pre: int) -> str:
    """The norms' line, in words."""
    name = "RMSNorms" if cfg.norm == "rmsnorm" else "LayerNorms"
    kind = (f"{name} without a gain or a bias (no parameters)" if cfg.norm_plain else "RMSNorms: a gain" if
            cfg.norm == "rmsnorm" else "LayerNorms: a gain and a bias" if cfg.norm_bias else "LayerNorms: a gain (no bias)")
    n = per_block(cfg, pre)
    embed = ", one on the token embeddings" if cfg.embed_norm else ""
    return f"{kind}, {'one' if n == 1 else n} per block{embed} and a final one"


# --- the module in the real forward pass ------------------------------------------------------------------------------
NORM_EPS = 1e-5


class RMSNorm(nn.Module):
    """x / rms(x) · g over the last dimension: a gain only, no mean subtracted (Zhang & Sennrich 2019).

    Written out so that its statistic is a tensor: `rstd` (…, 1) = 1 / sqrt(mean(x²) + eps). Traced modules
    record this module's output as well as its `rstd`."""

    traced = True  # model.passes records the output of this non-leaf module

    def __init__(self, width: int, gain: bool = True) -> None:
        super().__init__()
        if gain:
            self.weight = nn.Parameter(torch.ones(width))  # g: (width,)
        self.rstd = Tap()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rstd = self.rstd(torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + NORM_EPS))  # (…, 1)
        return x * rstd * self.weight if hasattr(self, "weight") else x * rstd


def module(cfg: Config, width: int) -> nn.Module:
    """The recipe's normalisation over `width` features: LayerNorm (with a bias where `cfg.norm_bias`, with neither a
    gain nor a bias where `cfg.norm_plain`) or RMSNorm."""
    if cfg.norm == "rmsnorm":
        return RMSNorm(width, gain=not cfg.norm_plain)
    if cfg.norm_plain:
        return nn.LayerNorm(width, elementwise_affine=False)
    return nn.LayerNorm(width, bias=cfg.norm_bias)


def sandwich(cfg: Config) -> dict[str, nn.Module]:
    """A block's sandwich norms (Gemma's post_attention_layernorm and post_feedforward_layernorm) by name, on
    attention's and on the MLP's output before each residual add; none without `post_norms`."""
    return {"post_ln_1": module(cfg, cfg.d), "post_ln_2": module(cfg, cfg.d)} if cfg.post_norms else {}


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2): before attention, before the MLP, before the head
    "ln_1": ("(B, T, d)", "LayerNorm before attention"),
    "ln_2": ("(B, T, d)", "LayerNorm before the MLP"),
    "ln_f": ("(B, T, d)", "final LayerNorm"),
}
RSTD = ("(B, T, 1)", "RMS statistic 1/√(mean(x²) + ε)")
RMS_NOTATION: dict[str, tuple[str, str]] = {
    "ln_1.rstd": RSTD, "ln_1": ("(B, T, d)", "RMSNorm before attention"),
    "ln_2.rstd": RSTD, "ln_2": ("(B, T, d)", "RMSNorm before the MLP"),
    "ln_f.rstd": RSTD, "ln_f": ("(B, T, d)", "final RMSNorm"),
}
SANDWICH_NOTATION: dict[str, tuple[str, str]] = {
    "post_ln_1.rstd": RSTD, "post_ln_1": ("(B, T, d)", "RMSNorm on attention's output (sandwich norm)"),
    "post_ln_2.rstd": RSTD, "post_ln_2": ("(B, T, d)", "RMSNorm on the MLP's output (sandwich norm)"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """RMSNorm's rows (its statistic is a tensor of the pass), the sandwich norms' and the token embeddings' norm."""
    if cfg.norm == "rmsnorm":
        rows.update(RMS_NOTATION)
    if cfg.embed_norm:
        name = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
        rows.update({"ln_e.rstd": RSTD, "ln_e": ("(B, T, d)", f"{name} of the token embeddings, before the first "
                                                               "block")})
    if cfg.post_norms:
        rows.update(SANDWICH_NOTATION)


def words(cfg: Config) -> list[str]:
    """The norms in the recipe's words (`model.report.recipe_text`)."""
    name = "RMSNorm" if cfg.norm == "rmsnorm" else "LayerNorm"
    norm = (f"{name} without a gain or a bias" if cfg.norm_plain else "LayerNorm with biases" if cfg.norm_biased
            else name)
    return [norm, *(["a norm on the token embeddings"] if cfg.embed_norm else []),
            *(["sandwich norms"] if cfg.post_norms else [])]
