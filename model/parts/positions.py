"""Where a token is: a learned position table W_pe (T_max, d) added to the token rows (GPT-2), or RoPE, which rotates
q and k by position and has no parameters (with RoPE, T_max is the context the model was trained for, not a table).
With RoPE, some blocks may leave q and k unrotated (NoPE blocks, `nope_layers`: SmolLM3's every fourth, Llama 4's,
Command A's full-attention blocks): their attention sees no position but the causal mask's order, and they make no
rotated q and k (a kind of block of their own, `Config.block_kinds`)."""
from __future__ import annotations

import torch
from torch import nn

from typing import TYPE_CHECKING

from ..expr import E, Expr
from ..fields import Field, below, blocks_text
from ..taps import Tap

if TYPE_CHECKING:
    from ..config import Config

FIELDS = (
    Field("positions", "choice", "positions: learned (the table W_pe) or rope (q and k rotated by position; no "
          "parameters)", default="learned", choices=("learned", "rope")),
    Field("rotary_dim", "whole", "the features of each head's q and k that RoPE rotates (partial rotary; the other "
          "d_head − d_rot pass through)", symbol="d_rot", bounds=(1, 32_768), optional=True, control=False,
          unset="default", more=" (default d_head: all of them)", example="96",
          says="RoPE on d_rot = {cfg.rotary_dim:,} of each head's d_head = {cfg.d_head:,} features"),
    Field("nope_layers", "blocks", "blocks without RoPE (NoPE), by index: their q and k are not rotated (default none: "
          "RoPE in every block)", default=(), control=False),
)
ODD_D_HEAD = ("d_head={d_head} is odd: RoPE rotates pairs of features, so d_head must be even (set head_dim, or pick h "
              "so that d / h is even)")  # Config refuses it (the exported page's too: page.js configOf)


def check(cfg: Config) -> None:
    """RoPE rotates pairs (an even d_head, or d_rot where it rotates part of each head; latent attention checks its own
    d_R), a learned table has T_max rows, and NoPE blocks are some of RoPE's (ValueError naming the fix)."""
    if cfg.nope_layers:
        _check_nope(cfg)
    if cfg.rotary_dim is not None:
        _check_partial(cfg)
    elif cfg.positions == "rope" and cfg.latent_dim is None and cfg.d_head % 2:
        raise ValueError(ODD_D_HEAD.format(d_head=cfg.d_head))
    if cfg.T > cfg.T_max and cfg.positions == "learned":
        raise ValueError(
            f"T={cfg.T:,} exceeds T_max={cfg.T_max:,}: the learned position table W_pe has only T_max rows "
            f"and cannot extrapolate to later positions; lower T to at most {cfg.T_max:,} or raise T_max"
        )


def _check_partial(cfg: Config) -> None:
    """Partial rotary: RoPE, an even d_rot of at most d_head, attention's own heads (not latent attention's d_R)."""
    if cfg.positions != "rope" or cfg.latent_dim is not None:
        why = "positions are learned" if cfg.positions != "rope" else "latent attention rotates its own d_R"
        raise ValueError(f"d_rot={cfg.rotary_dim:,} is a partial RoPE's width, but the {why}: drop d_rot")
    if cfg.rotary_dim % 2 or cfg.rotary_dim > cfg.d_head:
        raise ValueError(f"d_rot={cfg.rotary_dim:,}: RoPE rotates pairs of each head's d_head = {cfg.d_head:,} "
                         f"features, so d_rot must be even and at most d_head")


def rotates(cfg: Config) -> bool:
    """Some attention block rotates q and k by position: not where every attention block is NoPE and the others keep a
    fixed state (Jamba's, Kimi Linear's, Granite 4.0-H's without position_embedding_type "rope": no angles are made
    there, as transformers makes none); beside attention in every block (Falcon-H1's) each block has attention."""
    return cfg.L_nope + (0 if cfg.ssm_parallel else cfg.L_stateful) < cfg.L


def _check_nope(cfg: Config) -> None:
    """NoPE blocks: RoPE elsewhere (not latent attention's), indices below L, and all of one MLP kind (their number
    L_nope then counts them beside L and L_moe in every formula)."""
    everywhere = set(cfg.nope_layers) == set(range(cfg.L))  # no block rotates: Kimi Linear's all-attention twin
    if cfg.positions != "rope" or (cfg.latent_dim is not None and not cfg.kda_layers and not everywhere):
        why = "positions are learned" if cfg.positions != "rope" else ("latent attention rotates its d_R in every block "
                                                                       "(NoPE latent attention is Kimi Linear's, beside "
                                                                       "Kimi delta attention blocks)")
        raise ValueError(f"nope_layers={list(cfg.nope_layers)} lists blocks without RoPE, but the {why}: drop "
                         f"nope_layers")
    below("nope_layers", cfg.nope_layers, cfg.L)
    mlps = {cfg.mlp_kinds[i] for i in cfg.nope_layers}
    if len(mlps) > 1 and not everywhere:
        raise ValueError(f"nope_layers={list(cfg.nope_layers)} lists dense and MoE blocks alike: this explorer counts "
                         f"NoPE blocks of one kind of MLP; list only dense or only MoE blocks")


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", NoPE in 9" where some blocks go without RoPE."""
    return f", NoPE in {cfg.L_nope}" if cfg.nope_layers else ""


def partial(cfg: Config) -> bool:
    """RoPE rotates part of each head (d_rot < d_head)."""
    return cfg.rotary_dim is not None


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


# --- the module in the real forward pass ------------------------------------------------------------------------------
ROPE_BASE = 10_000.0  # θ_i = base^(−2i/d_head); the base changes values, never a shape or a count


class Rotary(nn.Module):
    """RoPE's angles for T positions: angle[t, i] = t · θ_i, θ_i = base^(−2i/d_head), each frequency twice
    (the "rotate half" layout of Llama's Hugging Face port), and their cosines and sines: (T, d_head) each."""

    def __init__(self, d_head: int) -> None:
        super().__init__()
        self.d_head = d_head
        self.angles, self.cos, self.sin = Tap(), Tap(), Tap()

    def forward(self, T: int, device: torch.device, dtype: torch.dtype,
                start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """The angles of positions start … start + T − 1 (a decode step: the new token's, after `start` cached)."""
        theta = ROPE_BASE ** (-torch.arange(0, self.d_head, 2, device=device, dtype=torch.float32) / self.d_head)
        positions = torch.arange(start, start + T, device=device, dtype=torch.float32)
        freqs = torch.outer(positions, theta)  # (T, d_head/2)
        angles = self.angles(torch.cat((freqs, freqs), dim=-1).to(dtype))  # (T, d_head)
        return self.cos(angles.cos()), self.sin(angles.sin())  # (T, d_head) each


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x rotated by position: x·cos + rotate_half(x)·sin, rotate_half([a, b]) = [−b, a]. Shape kept."""
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat((-b, a), dim=-1) * sin


# --- its tensors in the lesson's notation (`model.tensor_notation`) ---------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {  # the lesson's rows (GPT-2)
    "wpe": ("(T, d)", "pos = W_pe[0:T], broadcast over B"),
    "embed": ("(B, T, d)", "x = tok + pos"),
}
ROPE_NOTATION: dict[str, tuple[str, str]] = {
    "rope.angles": ("(T, d_head)", "RoPE angles t·θ_i, θ_i = b^(−2i/d_head), each frequency twice (b: rope_theta, "
                                   "a value only; this pass uses 10,000)"),
    "rope.cos": ("(T, d_head)", "cos of the angles"),
    "rope.sin": ("(T, d_head)", "sin of the angles"),
}


PARTIAL_NOTATION: dict[str, tuple[str, str]] = {  # partial rotary: d_rot of each head's d_head features
    "rope.angles": ("(T, d_rot)", "RoPE angles t·θ_i, θ_i = b^(−2i/d_rot), each frequency twice, for the d_rot "
                                  "features rotated (b: rope_theta, a value only; this pass uses 10,000)"),
    "rope.cos": ("(T, d_rot)", "cos of the angles"),
    "rope.sin": ("(T, d_rot)", "sin of the angles"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """RoPE's angles, cosines and sines (their rows exist only with RoPE; latent attention writes its own widths),
    over d_rot where RoPE rotates part of each head (attention's rows of q and k say so)."""
    rows.update(ROPE_NOTATION)
    if partial(cfg):
        rows.update(PARTIAL_NOTATION)


def words(cfg: Config) -> list[str]:
    """The positions in the recipe's words: "RoPE", "partial RoPE (d_rot = 64 of d_head = 128)", each with the NoPE
    blocks where some are ("RoPE, NoPE in blocks 3, 7, …, 35"); "no RoPE (NoPE in every attention block: blocks 4,
    12, 20, 28)" where the other blocks keep a fixed state (Jamba's)."""
    if cfg.positions != "rope":
        return ["learned positions"]
    rope = f"partial RoPE (d_rot = {cfg.rotary_dim:,} of d_head = {cfg.d_head:,})" if partial(cfg) else "RoPE"
    if not cfg.nope_layers:
        return [rope]
    where = f"block {cfg.nope_layers[0]}" if cfg.L_nope == 1 else f"blocks {blocks_text(cfg.nope_layers)}"
    if not rotates(cfg):  # the others keep a state and see no RoPE either (Jamba, Kimi Linear)
        return [f"no RoPE (NoPE in every attention block: {where})"]
    return [f"{rope}, NoPE in {where}"]
