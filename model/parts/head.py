"""The head: the final norm and a (d, V) matrix to the logits, tied to the token table W_te (GPT-2's choice: no
parameters of its own, but its matmul still costs 2dV FLOPs per token) or separate; Gemma soft-caps the logits."""
from __future__ import annotations

from ..fields import Field

FIELDS = (
    Field("tie", "flag", "the head reuses W_te, as GPT-2", more=" (untied adds V·d parameters)", default=True,
          group="lesson"),
    Field("final_softcap", "real", "soft-cap c of the logits, c·tanh(logits / c)", optional=True, group="extras",
          family="gemma"),
)
