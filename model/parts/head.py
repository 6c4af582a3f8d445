"""The head: the final norm and a (d, V) matrix to the logits, tied to the token table W_te (GPT-2's choice: no
parameters of its own, but its matmul still costs 2dV FLOPs per token) or separate; Gemma soft-caps the logits."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("tie", "flag", "the head reuses W_te, as GPT-2", more=" (untied adds V·d parameters)", default=True,
          group="lesson"),
    Field("head_bias", "flag", "a bias (V) on the head's logits (Phi-1, 1.5 and 2)", default=False, control=False,
          tensors=True, says="a bias (V) on the head's logits"),
    Field("final_softcap", "real", "soft-cap c of the logits, c·tanh(logits / c)", optional=True, group="extras",
          family="gemma", says="logits soft-capped at {cfg.final_softcap:g}"),
)


def params(cfg: Config) -> Expr | None:
    """The head's own parameters: none when tied to W_te; a separate bias-free head is (d, V); Phi's bias adds V."""
    if cfg.head_bias:
        return E("V") if cfg.tie else E("V·d + V")
    return None if cfg.tie else E("V·d")


def extras(cfg: Config) -> Expr | None:
    """The head's parameters a token uses that are no matmul weights: Phi's bias (V), or None."""
    return E("V") if cfg.head_bias else None


def lines(cfg: Config) -> tuple[tuple[str, Expr], tuple[str, Expr]]:
    """The head's line and its step from 2N to the measured FLOPs, (label, formula) each: tied (0, +2Vd: its matmul
    runs W_te again) or untied (V·d, 0: its matmul is already in 2N)."""
    own = params(cfg) or E("0")
    if cfg.tie:
        return (("head: tied to W_te, " + ("its own bias (V)" if cfg.head_bias else "no parameters of its own"), own),
                ("+ the head's matmul: the tied W_te, counted once in N as a lookup table", E("2Vd")))
    return (("head: a separate (d, V) matrix" + (" and its bias (V)" if cfg.head_bias else ""), own),
            ("+ the head's matmul: already in 2N (the untied head's V·d parameters)", E("0")))


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2)
    "head": ("(B, T, V)", "logits (head tied to W_te)"),
    "loss": ("()", "cross-entropy of logits[:, :-1] vs idx[:, 1:]"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """Gemma's soft-capped logits."""
    if cfg.final_softcap is not None:
        rows["capped"] = ("(B, T, V)", "soft-capped logits c·tanh(logits / c)")


def words(cfg: Config) -> list[str]:
    return [*(["a bias on the logits"] if cfg.head_bias else []),
            *([f"logits soft-capped at {cfg.final_softcap:g}"] if cfg.final_softcap is not None else [])]
