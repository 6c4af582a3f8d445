"""The token table W_te (V, d): each token id's row is the residual stream's start. Gemma scales the rows by √d."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("embed_scale", "flag", "the token rows times √d (Gemma's embedding scale; a value only)", default=False,
          group="extras", family="gemma", says="embeddings × √d"),
)


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2)
    "idx": ("(B, T)", "token ids (int64 input)"),
    "wte": ("(B, T, d)", "tok = W_te[idx]"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """Its rows beyond the lesson's: Gemma's scaled token rows."""
    if cfg.embed_scale:
        rows["scaled"] = ("(B, T, d)", "tok · √d (Gemma's embedding scale)")


def words(cfg: Config) -> list[str]:
    """The token table's extras in the recipe's words."""
    return ["embeddings × √d"] if cfg.embed_scale else []
