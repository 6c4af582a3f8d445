"""`Tap`: an identity module that names a tensor for tracing, so forward hooks see the tensors no module outputs
(q, k, v, the scores, ...). It costs nothing in a plain forward pass."""
from __future__ import annotations

from torch import nn


class Tap(nn.Identity):
    """Identity module that names a tensor for tracing; costs nothing in a plain forward pass."""
