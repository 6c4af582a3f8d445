"""Why attention divides by √d_head: the scores' spread with and without the scale, and what softmax makes of it.

The lesson's argument: if q and k have independent unit-variance entries, q·k is a sum of d_head products of
variance 1, so its std is √d_head (8 at GPT-2 small's d_head = 64). A score 8 above its neighbours gets
e⁸ ≈ 3,000× the weight, softmax turns one-hot and its gradient vanishes. Dividing by √d_head brings the std
back to 1. `unit_variance` measures this on real random q, k; `compare` measures it on any raw scores q·kᵀ
(for the model's own q and k at initialisation, see `model.values`).

Conventions: scores are the raw dot products q·kᵀ, shape (..., T, T), query rows and key columns; only the
causal entries (key j ≤ query t, the ones softmax sees) are counted; entropies are in nats, and a row over
t keys has the uniform entropy ln t, its largest possible value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

SAMPLES = 2**16  # causal scores drawn for the unit-variance experiment (std known to about ±0.5 %)
MAX_ELEMENTS = 2**22  # q and k entries drawn, each: 16 MiB at fp32, whatever d_head and T are


@dataclass(frozen=True)
class ScoreStats:
    """What softmax sees in one setting (scaled or not), averaged over the causal rows of every head."""

    std: float  # std of the causal scores (key j ≤ query t)
    max_prob: float  # mean over rows of the largest attention weight (1 / t if uniform, 1 if one-hot)
    entropy: float  # mean over rows of the attention's entropy, nats (ln t if uniform, 0 if one-hot)


@dataclass(frozen=True)
class Scaling:
    """The scores of one source of q, k at d_head and T, without and with the 1/√d_head scale."""

    source: str  # "unit-variance q, k" or "this model's q, k at init"
    d_head: int
    T: int
    samples: int  # causal scores counted
    unscaled: ScoreStats  # q·kᵀ
    scaled: ScoreStats  # q·kᵀ / √d_head
    uniform_entropy: float  # mean over rows of ln t: the entropy of attention spread evenly over t keys
    uniform_max_prob: float  # mean over rows of 1 / t

    @property
    def sqrt_d_head(self) -> float:
        return math.sqrt(self.d_head)

    @property
    def mass_ratio(self) -> float:
        """e^std of the unscaled scores: the weight of a score one std above its neighbour, relative to it."""
        return math.exp(min(self.unscaled.std, 700.0))


def _causal(T: int) -> torch.Tensor:
    return torch.ones(T, T, dtype=torch.bool).tril()  # True at key j ≤ query t


def score_stats(scores: torch.Tensor) -> ScoreStats:
    """Std of the causal entries of `scores` (..., T, T), and softmax's largest weight and entropy per row."""
    T = scores.shape[-1]
    keep = _causal(T)
    s = scores.double()
    std = s[..., keep].std(correction=0).item()
    p = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)  # rows sum to 1; 0 above the diagonal
    entropy = -torch.special.xlogy(p, p).sum(-1)  # 0·log 0 = 0
    return ScoreStats(std=std, max_prob=p.amax(-1).mean().item(), entropy=entropy.mean().item())


def compare(raw: torch.Tensor, d_head: int, source: str) -> Scaling:
    """`Scaling` of raw scores q·kᵀ (..., T, T): as they are, and divided by √d_head."""
    T = raw.shape[-1]
    t = torch.arange(1, T + 1, dtype=torch.float64)
    rows = raw.numel() // (T * T)
    return Scaling(source=source, d_head=d_head, T=T, samples=rows * T * (T + 1) // 2,
                   unscaled=score_stats(raw), scaled=score_stats(raw / math.sqrt(d_head)),
                   uniform_entropy=t.log().mean().item(), uniform_max_prob=(1 / t).mean().item())


def unit_variance(d_head: int, T: int = 64, seed: int = 0) -> Scaling:
    """The lesson's assumption, measured: q and k with independent N(0, 1) entries, (n, T, d_head) each.

    n is chosen so that about SAMPLES causal scores are drawn, at most MAX_ELEMENTS entries per tensor (so a
    huge d_head draws fewer samples rather than more memory). Seeded by a local generator: reproducible, and
    torch's global random state is untouched.
    """
    if not isinstance(d_head, int) or d_head < 1 or not isinstance(T, int) or T < 1:
        raise ValueError(f"d_head and T must be positive whole numbers, got d_head={d_head!r}, T={T!r}")
    n = max(1, min(-(-SAMPLES // (T * (T + 1) // 2)), MAX_ELEMENTS // (T * d_head)))
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(n, T, d_head, generator=gen)
    k = torch.randn(n, T, d_head, generator=gen)
    return compare(q @ k.transpose(-2, -1), d_head, "unit-variance q, k")  # (n, T, T)
