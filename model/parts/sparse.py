"""DeepSeek sparse attention (DSA; DeepSeek-V3.2, GLM-5): latent attention whose every query attends to the T_k keys
a lightning indexer picks, not to all of them. The indexer is a small attention of its own in each block: h_I heads
of d_I features score every query against every key, and the top T_k of those scores are the keys the query's h heads
of latent attention see. Its one key per token (d_I features, one head for all h_I) is cached beside the latent c_kv
and the rotary key: a cache of d_c + d_R + d_I per block and token.

Per block (transformers' DeepseekV32Indexer, in DeepseekV32Attention; GlmMoeDsaIndexer likewise):
- q_I: the queries' latent (after its RMSNorm, d_cq) through W_qI (d_cq, h_I·d_I): h_I heads of d_I;
- k_I: x W_kI (d, d_I) through a LayerNorm (gain and bias, d_I each): one key of d_I per token;
- both rotated by position on their first d_R features (RoPE), as latent attention's rotary key;
- the scores ReLU(q_I k_Iᵀ) per head, (B, T, h_I, T), at fp32, summed over the heads with weights x W_w (d, h_I):
  the index score of each (query, key), (B, T, T); causal keys only, then the top min(T_k, T) per query;
- latent attention's scores are masked outside the picked keys (transformers' torch path: the full (B, h, T, T)
  scores, masked; a sparse kernel computes only the picked T_k, `sparse_lines`).

The indexer runs without gradients (transformers' torch.no_grad): it saves nothing for backward; its (B, 1, T, T)
mask of the picked keys is what latent attention's masking keeps. Its FLOPs are torch's flop counter's: its three
projections (2 per weight) and its two batched matmuls over the T keys, 2T·h_I·(d_I + 1) per token and block.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from ..expr import E, Expr
from ..fields import Field
from ..figures import Line, line
from ..notation import SYMBOL_DOCS
from ..taps import Tap
from .positions import rotate

if TYPE_CHECKING:
    from ..budgeting import Budget, Formulas
    from ..config import Config


def _width(name: str, symbol: str, hi: int, example: str, **more: str) -> Field:
    return Field(name, "whole", SYMBOL_DOCS[symbol], symbol=symbol, bounds=(1, hi), optional=True, example=example,
                 group="latent", needs="latent_dim", control=False, **more)


FIELDS = (  # DeepSeek-V3.2: h_I 64, d_I 128, T_k 2,048
    _width("index_heads", "h_I", 4_096, "64", unset="none"),  # none: no indexer (a link's h_I=none)
    _width("index_dim", "d_I", 32_768, "128"),
    _width("index_topk", "T_k", 16_777_216, "2,048"),
)
NAMES = tuple(f.name for f in FIELDS)


def check(cfg: Config) -> None:
    """The indexer's fields together (ValueError naming the problem and the fix)."""
    given = [f for f in FIELDS if getattr(cfg, f.name) is not None]
    if not given:
        return
    if len(given) < len(FIELDS):
        f = next(f for f in FIELDS if getattr(cfg, f.name) is None)
        raise ValueError(f"DeepSeek sparse attention ({', '.join(g.symbol for g in given)} set) needs {f.symbol}: set "
                         f"{f.name} ({f.doc}; DeepSeek-V3.2: {f.example}), or drop the indexer's fields")
    if cfg.latent_dim is None or cfg.q_latent_dim is None:
        raise ValueError("DeepSeek sparse attention's indexer reads the queries' latent: it needs latent attention "
                         "with d_c and d_cq set (DeepSeek-V3.2: 512 and 1,536); drop index_heads, index_dim and "
                         "index_topk, or set them")
    if cfg.index_dim < cfg.rope_dim:
        raise ValueError(f"d_I={cfg.index_dim:,} is below d_R={cfg.rope_dim:,}: the indexer rotates the first d_R of "
                         "its d_I features by position; choose d_I of at least d_R")


def present(cfg: Config) -> bool:
    """Latent attention's queries attend to the keys an indexer picks."""
    return cfg.index_heads is not None


def sizes(cfg: Config) -> dict[str, object]:
    """Its fields in a configuration's JSON, none without it."""
    return {name: getattr(cfg, name) for name in NAMES} if present(cfg) else {}


def rule_values(cfg: Config) -> dict[str, int]:
    """The sizes its rule names (`model.rules.rules_line`): h_I, d_I and T_k; none without it."""
    return {"h_I": cfg.index_heads, "d_I": cfg.index_dim, "T_k": cfg.index_topk} if present(cfg) else {}


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", sparse attention (top 2,048)"."""
    return f", sparse attention (top {cfg.T_k:,})" if present(cfg) else ""


# --- its parameters and FLOPs, as expressions of the symbols ----------------------------------------------------------
def weights(cfg: Config) -> Expr:
    """One block's indexer matrices: W_qI (d_cq, h_I·d_I), W_kI (d, d_I) and the heads' weights W_w (d, h_I)."""
    return E("d_cq·h_I·d_I + d·d_I + d·h_I")


def extras(cfg: Config) -> list[Expr]:
    """The LayerNorm of its key: a gain and a bias of d_I each."""
    return [E("2d_I")]


SCORES = E("h_I·(d_I + 1)")  # per token, block and key, halved: q_I k_Iᵀ (h_I·d_I) and the heads' weighted sum (h_I)

SAYS = {
    "budget/scored": ", and the lightning indexer's scores of every query against every key, q_I k_Iᵀ and their sum "
                     "over its h_I heads",
    "infer/decode_attn": ", the indexer's scores of the new token against them included",
    "budget/T_equal": "T at which attention's and the indexer's products over the T keys equal the blocks' matmuls",
    "kv/kept": "the latent c_kv, the rotary key k_rope and the indexer's key k_I",  # `model.report.kv_title`
    "infer/written": "latent, rotary key and indexer key",  # what a decode step writes (`model.inference`)
}


def label(cfg: Config) -> str:
    """What one block's attention line adds."""
    return ", and the indexer's W_qI (d_cq, h_I·d_I), W_kI (d, d_I), W_w (d, h_I) and its key's LayerNorm"


def words(cfg: Config) -> list[str]:
    """The recipe's words: sparse attention over the indexer's top T_k keys."""
    return [f"DeepSeek sparse attention (an indexer of {cfg.h_I:,} heads of {cfg.d_I:,} picks each query's top "
            f"{cfg.T_k:,} keys)"] if present(cfg) else []


def describe(cfg: Config) -> str:
    """Its fields in a configuration's one line."""
    return f"h_I={cfg.h_I:,} d_I={cfg.d_I:,} T_k={cfg.T_k:,}" if present(cfg) else ""


# --- its change from the GPT-2 twin (`model.changes`), after latent attention's -----------------------------------------
CHANGE_TITLES = {"sparse": ("DeepSeek sparse attention: in every block a lightning indexer of h_I = {h_I} heads of d_I = "
                            "{d_I} scores every key for each query, and attention sees the top T_k = {T_k}; its key of "
                            "d_I features joins the cache (this pass, as transformers' torch path, still computes every "
                            "key's score and masks the rest)")}


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers the change's title names (`model.changes.title_values`)."""
    if not present(cfg):
        return {}
    return {"h_I": f"{cfg.index_heads:,}", "d_I": f"{cfg.index_dim:,}", "T_k": f"{cfg.index_topk:,}"}


# --- the kernel that computes only the picked keys ---------------------------------------------------------------------
def sparse_scores(cfg: Config, keys: str = "T_s") -> Expr:
    """Latent attention's q kᵀ and attn @ v per token over `keys` keys in every block, as a sparse kernel runs them."""
    return E("2L{k}·h·(d_nope + d_R + d_v)", k=E(keys))


def budget_lines(f: Formulas, b: Budget) -> dict[str, list[Line]]:
    """What a sparse kernel (DeepSeek's FlashMLA) computes of attention per token where transformers' torch path
    computes every key: the T_s = min(T, T_k) keys the indexer picks, beside the indexer's products over all T."""
    if not present(f.cfg):
        return {}
    s = f.symbols
    picked = sparse_scores(f.cfg)
    return {"tokens": [
        line("flops/sparse_attention", "a sparse kernel's q kᵀ and attn @ v over the T_s = min(T, T_k) keys the indexer "
             "picks per query (this pass, as transformers' torch path, computes all T and masks the rest)", picked,
             s, "FLOP"),
        line("flops/sparse_indexer", "the indexer's products over all T keys, which a sparse kernel still computes",
             E("2LT·{w}", w=SCORES), s, "FLOP"),
    ]}


# --- its cache: one key of d_I per block and token --------------------------------------------------------------------


def cache_shape(cfg: Config, T: int) -> tuple[int, ...]:
    """One block's indexer keys of T tokens for B sequences, as transformers' DynamicIndexedLayer holds them."""
    return (cfg.B, T, cfg.d_I)


def decode_lines(cfg: Config, symbols: dict[str, int]) -> list[Line]:
    """What a sparse kernel (DeepSeek's FlashMLA) computes of a decode step's attention, beside the torch path's line:
    q kᵀ and attn @ v over the T_k keys the indexer picks (all T + 1 while they are fewer), and the indexer's scores
    over all T + 1, for B new tokens in every block."""
    if not present(cfg):
        return []
    picked = "T_k" if cfg.T + 1 >= cfg.T_k else "(T + 1)"
    return [line("infer/decode_sparse_flops", "a sparse kernel's q kᵀ and attn @ v over the keys the indexer picks, "
                 f"{'T_k' if picked == 'T_k' else 'all T + 1 (fewer than T_k)'}, and the indexer's scores over all "
                 "T + 1 (this step, as transformers' torch path, computes every key and masks the rest)",
                 E("2LB·({k}·h·(d_nope + d_R + d_v) + (T + 1)·{w})", k=E(picked), w=SCORES), symbols, "FLOP")]


# --- the module in the real forward pass ------------------------------------------------------------------------------
class Indexer(nn.Module):
    """The lightning indexer of one block (transformers' DeepseekV32Indexer), run without gradients.

    `forward(x, q_latent, rope, hidden, past)` -> the keys each query may not see, (B, 1, T, S) bool: the causal
    `hidden` ones and those outside its top min(T_k, S) index scores. `past` (B, T_c, d_I): a decode step's cached keys,
    which the new token's joins (`index_cache`). Its key's rotation is rotate-half on the first d_R features
    (DeepSeek-V3.2's; GLM-5's interleaves the pairs: a layout, the same FLOPs and bytes)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.h_I, self.d_I, self.d_R, self.T_k = cfg.h_I, cfg.d_I, cfg.d_R, cfg.T_k
        self.wq = nn.Linear(cfg.d_cq, cfg.h_I * cfg.d_I, bias=False)  # W_qI: (d_cq, h_I·d_I)
        self.wk = nn.Linear(cfg.d, cfg.d_I, bias=False)  # W_kI: (d, d_I)
        self.k_norm = nn.LayerNorm(cfg.d_I, eps=1e-6)
        self.weights = nn.Linear(cfg.d, cfg.h_I, bias=False)  # W_w: (d, h_I)
        for name in ("q", "k", "index_cache", "scores", "index", "picked"):
            setattr(self, name, Tap())

    @torch.no_grad()
    def forward(self, x: torch.Tensor, q_latent: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor],
                hidden: torch.Tensor, past: torch.Tensor | None = None) -> torch.Tensor:
        B, T, _ = x.shape
        h_I, d_I, d_R = self.h_I, self.d_I, self.d_R
        cos, sin = (t.unsqueeze(-2) for t in rope)  # (T, 1, d_R): over the heads of (B, T, h_I, d_I)
        q = self.wq(q_latent).view(B, T, h_I, d_I)
        q = self.q(torch.cat((rotate(q[..., :d_R], cos, sin), q[..., d_R:]), dim=-1))  # (B, T, h_I, d_I)
        k = self.k_norm(self.wk(x))  # (B, T, d_I)
        k = self.k(torch.cat((rotate(k[..., :d_R], cos[:, 0], sin[:, 0]), k[..., d_R:]), dim=-1))  # (B, T, d_I)
        if past is not None:
            k = self.index_cache(torch.cat((past, k), dim=1))  # (B, T_c + 1, d_I)
        scores = self.scores(F.relu(q.float() @ k.float().transpose(-2, -1).unsqueeze(1)) * d_I ** -0.5)  # (B, T, h_I, S)
        w = self.weights(x).float() * h_I ** -0.5  # (B, T, h_I)
        index = self.index((w.unsqueeze(-2) @ scores).squeeze(-2).masked_fill(hidden, float("-inf")))  # (B, T, S)
        top = index.topk(min(self.T_k, index.shape[-1]), dim=-1).indices
        picked = torch.zeros_like(index, dtype=torch.bool).scatter(-1, top, True)
        return self.picked((hidden | ~picked).unsqueeze(1))  # (B, 1, T, S): True where a query may not see a key


def module(cfg: Config) -> nn.Module | None:
    """One block's indexer, or None without sparse attention."""
    return Indexer(cfg) if present(cfg) else None


# --- its tensors in the lesson's notation ------------------------------------------------------------------------------
NOTATION: dict[str, tuple[str, str]] = {
    "attn.indexer.wq": ("(B, T, h_I·d_I)", "the indexer's queries from the queries' latent, W_qI (d_cq, h_I·d_I)"),
    "attn.indexer.q": ("(B, T, h_I, d_I)", "the indexer's h_I query heads, their first d_R features rotated (RoPE)"),
    "attn.indexer.wk": ("(B, T, d_I)", "the indexer's key, x W_kI (d, d_I): one head for all h_I"),
    "attn.indexer.k_norm": ("(B, T, d_I)", "its LayerNorm"),
    "attn.indexer.k": ("(B, T, d_I)", "the indexer's key rotated on its first d_R features: the cache keeps it, d_I "
                                      "per token"),
    "attn.indexer.scores": ("(B, T, h_I, T)", "ReLU(q_I k_Iᵀ) / √d_I at fp32: every query against every key, per "
                                              "indexer head"),
    "attn.indexer.weights": ("(B, T, h_I)", "each indexer head's weight for each query, x W_w (d, h_I)"),
    "attn.indexer.index": ("(B, T, T)", "the index scores: the heads' weighted sum, later keys hidden"),
    "attn.indexer.picked": ("(B, 1, T, T)", "the keys each query may not see: later ones and those outside its top "
                                            "min(T, T_k)"),
    "attn.masked": ("(B, h, T, T)", "masked: −inf above the diagonal and outside each query's top min(T, T_k) keys"),
}
DECODE_ROWS: dict[str, tuple[str, str]] = {
    "blocks.0.attn.indexer.index_cache": ("(B, T + 1, d_I)", "the indexer keys of the {T} cached tokens and the new "
                                                              "one"),
    "blocks.0.attn.indexer.scores": ("(B, 1, h_I, T + 1)", "the new token's indexer scores against every key"),
    "blocks.0.attn.indexer.picked": ("(B, 1, 1, T + 1)", "the keys outside its top min(T + 1, T_k)"),
}


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The indexer's rows, after latent attention's."""
    if present(cfg):
        rows.update(NOTATION)
