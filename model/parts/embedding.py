"""The token table W_te (V, d): each token id's row is the residual stream's start. Gemma scales the rows by √d."""
from __future__ import annotations

from ..fields import Field

FIELDS = (
    Field("embed_scale", "flag", "the token rows times √d (Gemma's embedding scale; a value only)", default=False,
          group="extras", family="gemma"),
)
