"""Where a token is: a learned position table W_pe (T_max, d) added to the token rows (GPT-2), or RoPE, which rotates
q and k by position and has no parameters (with RoPE, T_max is the context the model was trained for, not a table)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("positions", "choice", "positions: learned (the table W_pe) or rope (q and k rotated by position; no "
          "parameters)", default="learned", choices=("learned", "rope")),
)
ODD_D_HEAD = ("d_head={d_head} is odd: RoPE rotates pairs of features, so d_head must be even (set head_dim, or pick h "
              "so that d / h is even)")  # Config refuses it (the exported page's too: page.js configOf)


def check(cfg: Config) -> None:
    """RoPE rotates pairs (an even d_head; latent attention checks its own d_R), and a learned table has T_max rows
    (ValueError naming the fix)."""
    if cfg.positions == "rope" and cfg.latent_dim is None and cfg.d_head % 2:
        raise ValueError(ODD_D_HEAD.format(d_head=cfg.d_head))
    if cfg.T > cfg.T_max and cfg.positions == "learned":
        raise ValueError(
            f"T={cfg.T:,} exceeds T_max={cfg.T_max:,}: the learned position table W_pe has only T_max rows "
            f"and cannot extrapolate to later positions; lower T to at most {cfg.T_max:,} or raise T_max"
        )


def emb(cfg: Config) -> Expr:
    """The embeddings' parameters: token table W_te (V, d) + position table W_pe (T_max, d); RoPE has no table."""
    return E("(V + T_max)·d") if cfg.positions == "learned" else E("V·d")


def emb_label(cfg: Config) -> str:
    return ("embeddings: token table W_te and position table W_pe" if cfg.positions == "learned" else
            "embeddings: token table W_te (RoPE has no position table)")


def lookups(cfg: Config, lesson: bool) -> tuple[str, Expr]:
    """The step from 2N that takes the lookups out (indexing, no matmul): its label and formula."""
    if lesson:
        return "− token and position lookups: indexing, no matmul", E("−2(V + T_max)·d")
    words = " and position lookups" if cfg.positions == "learned" else ""
    return f"− token lookups{words}: indexing, no matmul", E("−2·{emb}", emb=emb(cfg))
