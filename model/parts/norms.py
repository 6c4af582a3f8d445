"""The norms: LayerNorm (a gain and a bias) or RMSNorm (a gain only), before attention and the MLP in every block and
once before the head; Gemma's sandwich norms add one on attention's and one on the MLP's output."""
from __future__ import annotations

from ..fields import Field

FIELDS = (
    Field("norm", "choice", "normalisation: layernorm (gain and bias) or rmsnorm (gain only, no mean subtracted)",
          default="layernorm", choices=("layernorm", "rmsnorm")),
    Field("post_norms", "flag", "sandwich norms: an RMSNorm on attention's and on the MLP's output before each "
          "residual add", default=False, group="extras", family="gemma"),
)
