"""A mixture of experts in the MLP's place: a router (d, E) scores E routed experts for each token, the top k get it,
weighted; E_shared shared experts (one MLP of width E_shared·d_shared, Qwen2-MoE's with a sigmoid gate (d, 1)) see
every token. The experts take the recipe's MLP of width d_expert, without biases (gpt-oss's have them).

Which blocks are MoE: block i is when i ≥ `dense_first` (DeepSeek's first_k_dense_replace), (i + 1) is a multiple of
`moe_step` (Qwen's decoder_sparse_step) and i is not in `dense_layers` (Qwen's mlp_only_layers); the others keep the
dense MLP of width d_ff. L_moe counts the MoE blocks."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from fractions import Fraction
from typing import TYPE_CHECKING

from .. import units
from ..expr import E, Expr, num, total
from ..fields import Field, below, blocks_text
from ..figures import Line, line
from ..grouped import grouped_mm
from ..taps import Tap
from .mlp import CLAMPED_GATED, MLP, swiglu

if TYPE_CHECKING:
    from ..budgeting import Budget, Formulas
    from ..config import Config

NAME = "moe"  # the module's name in a block: its tensors are "blocks.0.moe.…"
MOE = dict(group="moe", needs="experts")  # every field of the mixture of experts sizes it
FIELDS = (
    Field("experts", "whole", "routed experts of an MoE block (its router picks k of them per token)", symbol="E",
          bounds=(1, 4_096), optional=True, cli="--experts", **MOE,  # DeepSeek-V3 256, Kimi K2 384
          absent='{key} sets a mixture of experts: choose the MLP "mixture of experts" first; kept the dense MLP'),
    Field("top_k", "whole", "experts per token (top-k of the router's E scores)", symbol="k", bounds=(1, 4_096),
          optional=True, cli="--top-k", **MOE),  # at most E
    Field("expert_dim", "whole", "each routed expert's hidden width", symbol="d_expert", bounds=(1, 262_144),
          optional=True, **MOE),
    Field("shared_experts", "whole", "shared experts of an MoE block, which every token uses (default 0: none)",
          default=0, symbol="E_shared", bounds=(0, 1_024), cli="--shared-experts", **MOE),
    Field("shared_dim", "whole", "each shared expert's hidden width (default d_expert)", symbol="d_shared",
          bounds=(1, 262_144), optional=True, **MOE),
    Field("shared_gate", "flag", "a sigmoid gate (d, 1) on the shared experts' output (Qwen2-MoE's shared_expert_gate)",
          default=False, control=False, **MOE),  # a link or a config.json sets it
    Field("score_bias", "flag", "a correction bias (E) added to the router's probabilities to pick each token's k "
          "experts, not to weigh them: a parameter (ERNIE 4.5's moe_statics)", default=False, control=False,
          tensors=True, **MOE),  # a link or a config.json sets it; the router's line names it
    Field("moe_step", "whole", "every n-th block is MoE: block i when (i + 1) is a multiple of n (Qwen's "
          "decoder_sparse_step; default 1)", default=1, bounds=(1, 1_024), **MOE),  # and ≤ L
    Field("dense_first", "whole", "the first n blocks keep the dense MLP (DeepSeek's first_k_dense_replace; default 0)",
          default=0, bounds=(0, 1_023), **MOE),  # and < L
    Field("dense_layers", "blocks", "blocks that keep the dense MLP, by index (Qwen's mlp_only_layers; default none)",
          default=(), **MOE),
    Field("expert_bias", "flag", "biases on the router (E) and on every expert's matrices (2d_expert + d each, SwiGLU)",
          default=False, group="extras", family="oss", says="the experts' biases"),
)
LAYOUT = ("moe_step", "dense_first", "dense_layers")  # which blocks are MoE (the others dense)
DEFAULTS = {f.name: f.default for f in FIELDS if f.group == "moe"}


def check(cfg: Config) -> None:
    """The mixture of experts' fields together (ValueError naming the problem and the fix)."""
    if cfg.experts is None:
        for name, default in DEFAULTS.items():
            if getattr(cfg, name) != default:
                raise ValueError(f"{name}={getattr(cfg, name)!r} is set but experts is not: a dense model has no "
                                 f"mixture of experts; set experts (E) or drop {name}")
        if cfg.expert_bias:
            raise ValueError("expert_bias is set but experts is not: set experts (E), or drop expert_bias")
        return
    E = cfg.experts
    if cfg.top_k is None:
        raise ValueError(f"E={E:,} experts need k, the experts each token goes to: set top_k (1 to {E:,}; Mixtral "
                         f"8x7B: 2, Qwen3-30B-A3B: 8)")
    if cfg.top_k > E:
        raise ValueError(f"k={cfg.top_k:,} exceeds E={E:,}: each token goes to k of the E experts, so k must be from 1 "
                         f"to {E:,}")
    if cfg.expert_dim is None:
        raise ValueError(f"E={E:,} experts need d_expert, each expert's width: set expert_dim (Mixtral 8x7B: 14,336, "
                         f"its dense MLP's d_ff; Qwen3-30B-A3B: 768)")
    if not cfg.shared_experts and (cfg.shared_dim is not None or cfg.shared_gate):
        name = "shared_dim" if cfg.shared_dim is not None else "shared_gate"
        raise ValueError(f"{name} is set but E_shared=0: there are no shared experts; set shared_experts (E_shared) "
                         f"to 1 or more, or drop {name}")
    if cfg.moe_step > cfg.L:
        raise ValueError(f"moe_step={cfg.moe_step:,} exceeds L={cfg.L:,}: block i is MoE when (i + 1) is a multiple "
                         f"of moe_step, so no block would be; set moe_step from 1 to {cfg.L:,}")
    below("dense_layers", cfg.dense_layers, cfg.L)
    if "moe" not in cfg.mlp_kinds:
        raise ValueError(f"no block is a mixture of experts (L={cfg.L:,}, dense_first={cfg.dense_first:,}, "
                         f"moe_step={cfg.moe_step:,}, dense_layers={list(cfg.dense_layers)}): lower dense_first, "
                         f"moe_step or dense_layers, or drop experts for a dense model")
    if cfg.mlp == "geglu":
        raise ValueError("mlp=geglu with experts: GeGLU experts are not modelled (Gemma's MLP is dense); choose swiglu "
                         "or gelu experts, or drop experts")
    if cfg.mlp == "xielu":
        raise ValueError("mlp=xielu with experts: xIELU experts are not modelled (Apertus' MLP is dense); choose swiglu "
                         "or gelu experts, or drop experts")


def present(cfg: Config) -> bool:
    """Some blocks' MLP is a mixture of experts."""
    return cfg.experts is not None


def structure(cfg: Config) -> tuple[object, ...] | None:
    """What of a mixture of experts decides which tensors a pass makes (`model.memory.Structure.moe`): the blocks'
    kinds in order, whether it has shared experts, their gate; None for a dense model."""
    if not present(cfg):
        return None
    return tuple(dict.fromkeys(cfg.block_kinds)), cfg.E_shared > 0, cfg.shared_gate


def shrunk(cfg: Config, d: int, L: int) -> dict[str, object]:
    """The fields of a copy of `cfg` at width d and L blocks (`model.values`' scaled-down pass): a mixture of experts
    keeps E, k and its first L blocks' kinds and scales its widths as d_ff; nothing for a dense model."""
    if not present(cfg):
        return {}
    experts = {"expert_dim": max(1, cfg.expert_dim * d // cfg.d),
               "shared_dim": None if cfg.shared_dim is None else max(1, cfg.shared_dim * d // cfg.d)}
    if "moe" in cfg.mlp_kinds[:L]:
        return {**experts, "dense_layers": tuple(i for i in cfg.dense_layers if i < L)}
    return {**experts, "moe_step": 1, "dense_first": 0, "dense_layers": ()}  # every block of the copy is MoE


def menu_words(cfg: Config) -> str:
    """What a preset's menu label adds (`model.families.menu_label`): ", top-2 of 8 experts"."""
    return f", top-{cfg.k} of {cfg.E} experts" if present(cfg) else ""


def sizes(cfg: Config) -> dict[str, object]:
    """The MLP's sizes in a configuration's JSON (`model.config.config_dict`): a dense model's d_head, h_kv and d_ff
    in use; a mixture of experts' fields, the blocks' layout, every symbol and each block's kind."""
    if not present(cfg):
        return {"d_head": cfg.d_head, "h_kv": cfg.h_kv, "d_ff": cfg.d_ff}
    return {**{f.name: getattr(cfg, f.name) for f in FIELDS if f.group == "moe"}, "dense_layers": list(cfg.dense_layers),
            **cfg.symbols(), "block_kinds": list(cfg.mlp_kinds)}


def _m(cfg: Config) -> int:
    """Matrices of one expert: the recipe's MLP's (3 gated, 2 GELU)."""
    return 3 if cfg.mlp in ("swiglu", "geglu") else 2


def bias(cfg: Config) -> Expr | None:
    """One expert's biases (`expert_bias`, gpt-oss): d_expert per matrix into its width and d out of it."""
    if not cfg.expert_bias:
        return None
    return E("2d_expert + d") if _m(cfg) == 3 else E("d_expert + d")


def experts(cfg: Config, used: bool = False, matrices: bool = False) -> Expr:
    """One MoE block's routed experts: E of the recipe's MLP of width d_expert, "3E·d·d_expert" (+ "E·(2d_expert +
    d)" with biases); `used`: the k a token runs; `matrices`: without the biases."""
    w = E("{m}k·d·d_expert" if used else "{m}E·d·d_expert", m=_m(cfg))
    b = None if matrices else bias(cfg)
    if b is None:
        return w
    return E("{w} + k·({b})" if used else "{w} + E·({b})", w=w, b=b)


def router(cfg: Config, matrices: bool = False) -> Expr:
    """One MoE block's router W_router (d, E), gpt-oss's bias (E) and ERNIE 4.5's correction bias (E)."""
    if matrices:
        return E("E·d")
    return total(E("E·d"), E("E") if cfg.expert_bias else None, E("E") if cfg.score_bias else None)


def router_words(cfg: Config) -> str:
    """What one MoE block's router holds: "W_router (d, E) and its bias (E)"."""
    biases = [words for on, words in ((cfg.expert_bias, "its bias (E)"), (cfg.score_bias, "its correction bias (E)"))
              if on]
    return "W_router (d, E)" + "".join(f" and {b}" for b in biases)


def shared(cfg: Config) -> Expr | None:
    """One MoE block's shared experts, one MLP of width E_shared·d_shared without biases, and their gate (d, 1)."""
    if not cfg.shared_experts:
        return None
    return total(E("{m}d·E_shared·d_shared", m=_m(cfg)), E("d") if cfg.shared_gate else None)


def block(cfg: Config, used: bool = False, matrices: bool = False) -> Expr:
    """One MoE block's mixture of experts: router, routed experts (`used`: the k a token runs), shared experts."""
    return total(router(cfg, matrices), experts(cfg, used, matrices), shared(cfg))


def extras(cfg: Config) -> Expr | None:
    """The biases a token uses in one MoE block (no matmul weights): the router's E and its k experts' (gpt-oss), the
    correction bias's E (ERNIE 4.5); None without them."""
    b = bias(cfg)
    terms = [*((E("E"), E("k·({b})", b=b)) if b is not None else ()), *((E("E"),) if cfg.score_bias else ())]
    return total(*terms) if terms else None


def flops(cfg: Config) -> Expr:
    """One MoE block's matmul FLOPs per token: the router, the k experts a token runs, the shared experts and their
    gate."""
    f = 2 * _m(cfg)
    return total(E("2E·d"), E("{f}k·d·d_expert", f=f), E("{f}d·E_shared·d_shared", f=f) if cfg.shared_experts else None,
                 E("2d") if cfg.shared_gate else None)


def skipped(cfg: Config, n: Expr) -> Expr:
    """From 2N: the E − k routed experts a token is not sent to, in each of the n MoE blocks."""
    b = bias(cfg)
    if b is not None:
        return E("−2{n}·(E − k)·({m}d·d_expert + {b})", n=n, m=_m(cfg), b=b)
    return E("−{f}{n}·(E − k)·d·d_expert", f=2 * _m(cfg), n=n)


def kind_words(cfg: Config) -> str:
    return ("SwiGLU experts, each W_gate, W_up (d, d_expert) and W_down (d_expert, d)" if cfg.mlp == "swiglu" else
            "ReLU² experts, each (d, d_expert) and (d_expert, d)" if cfg.mlp == "relu2" else
            "experts, each (d, d_expert) and (d_expert, d)")


def budget_lines(f: Formulas, b: Budget) -> dict[str, list[Line]]:
    """A mixture of experts' lines, by where the budget lists them (`model.budgeting.SLOTS`): one MoE block's parts
    ("block"), the parts of all blocks that the chart draws ("parts", `model.budgeting.MOE_CHART`), N_active
    ("active"), 2N_active, 6N_active and the first step from 2N ("flops"), and the rows each expert gets when routing
    is balanced ("tokens")."""
    cfg, s = f.cfg, f.symbols
    if not present(cfg):
        return {}
    n = f.counts["moe"]
    gate = ", and their sigmoid gate (d, 1)" if cfg.shared_gate else ""
    one_shared = shared(cfg)
    shared_lines = [line("params/shared_block", f"shared experts, one MoE block: E_shared experts of width d_shared, as "
                         f"one MLP{gate}", one_shared, s, "params")] if one_shared is not None else []
    shared_all = [line("params/shared", "shared experts of the MoE blocks", E("{n}·({x})", n=n, x=one_shared), s,
                       "params")] if one_shared is not None else []
    dense = [line("params/dense_mlps", "dense MLPs of the L − L_moe dense blocks", E("(L − L_moe)·({x})", x=f.mlp), s,
                  "params")] if "dense" in f.counts else []
    N_active = f.N_active
    return {
        "block": [
            line("params/moe_block", "mixture of experts, one MoE block: router, E routed experts"
                 + (", shared experts" if one_shared is not None else ""), block(cfg), s, "params"),
            line("params/experts_block", f"routed experts, one MoE block: E {kind_words(cfg)}, "
                 + ("and their biases" if cfg.expert_bias else "no biases"), experts(cfg), s, "params"),
            *shared_lines,
            line("params/router_block", f"router, one MoE block: {router_words(cfg)}, a score per expert", router(cfg),
                 s, "params"),
        ],
        "parts": [
            *([] if f.lin is not None else  # Gated DeltaNet's parts name the attention blocks beside its own
              [line("params/attention", "attention of all L blocks", E("L·({x})", x=f.attn), s, "params")]),
            *dense,
            line("params/experts", "routed experts of the MoE blocks", E("{n}·{x}", n=n, x=experts(cfg)), s, "params"),
            line("params/experts_active", "of them, the k per block one token uses",
                 E("{n}·{x}", n=n, x=experts(cfg, used=True)), s, "params"),
            *shared_all,
            line("params/routers", "routers of the MoE blocks", E("{n}·{x}", n=n, x=router(cfg)), s, "params"),
        ],
        "active": [line("params/active", "N_active: the parameters one token uses, all but the E − k routed experts "
                        "it is not sent to in each MoE block", N_active, s, "params", b.params_active)],
        "flops": [
            line("flops/forward_active", "forward FLOPs per token, 2N_active: a token runs k of the E experts",
                 E("2·({N})", N=N_active), s, "FLOP"),
            line("flops/train_active", "training FLOPs per token, 6N_active (forward 2N_active + backward 4N_active): "
                 "what the training chain uses, C = 6·N_active·D", E("6·({N})", N=N_active), s, "FLOP"),
            line("flops/steps/skipped_experts", "from 2N: − the E − k routed experts a token is not sent to, every MoE "
                 "block (= 2N_active)", skipped(cfg, n), s, "FLOP",
                 b.flops_fwd_active_per_token - b.flops_fwd_per_token),
        ],
        "tokens": [line("flops/expert_tokens", "rows each expert runs per pass when routing is balanced (the B·T·k in "
                        "all are exact)", E("BTk/E"), s, "tokens")],
    }


# A decode step's tensors of block 0's mixture of experts (`model.inference.decode_rows`), where it is one.
DECODE_ROWS: dict[str, tuple[str, str]] = {
    "blocks.0.moe.probs": ("(B, 1, E)", "the router's probabilities of the E experts for each new token (fp32)"),
    "blocks.0.moe.top_experts": ("(B, 1, k)", "the k experts each new token is sent to"),
    "blocks.0.moe.dispatched": ("(B·k, d)", "the B·k (token, expert) rows the experts run over"),
}


# --- the module in the real forward pass ------------------------------------------------------------------------------
class Experts(nn.Module):
    """E routed experts of the recipe's MLP, their matrices stacked (Mixtral's and Qwen's layout): SwiGLU's W_gate,
    W_up (E, d, d_expert) and W_down (E, d_expert, d); GELU's (or ReLU²'s, Nemotron-H's) W_fc (E, d, d_expert) and
    W_down. No biases, unless `expert_bias` (gpt-oss): b_gate, b_up (E, d_expert) and b_down (E, d), each row taking its
    expert's (gpt-oss's interleaved gate_up (E, d, 2d_expert) is W_gate and W_up apart here: a layout, the same count
    and FLOPs).

    Runs over the M = B·T·k dispatched rows sorted by expert, `counts` (E,) rows each: every tensor is (M, ·), each
    expert's share a slice of it (`model.grouped.grouped_mm`, one matmul per expert on the CPU)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        E, d, width = cfg.E, cfg.d, cfg.d_expert
        self.swiglu = cfg.mlp == "swiglu"
        first = ("w_gate", "w_up") if self.swiglu else ("w_fc",)
        for name in first:
            setattr(self, name, nn.Parameter(torch.empty(E, d, width)))  # (E, d, d_expert)
        self.w_down = nn.Parameter(torch.empty(E, width, d))  # (E, d_expert, d)
        self.biased = cfg.expert_bias
        if self.biased:
            for name in first:
                setattr(self, "b" + name[1:], nn.Parameter(torch.zeros(E, width)))  # (E, d_expert)
            self.b_down = nn.Parameter(torch.zeros(E, d))  # (E, d)
        self.limit, self.alpha = cfg.swiglu_limit, cfg.alpha
        self.relu2 = cfg.mlp == "relu2"  # Nemotron-H's experts: max(0, x)² between two matrices, no gate
        taps = ("gate", "up", "gated", "down") if self.swiglu else ("fc", "squared", "down") if self.relu2 else \
            ("fc", "down")
        for name in taps:
            setattr(self, name, Tap())
        if self.swiglu and self.limit is None:
            self.silu = nn.SiLU()
        elif self.relu2:
            self.relu = nn.ReLU()
        elif not self.swiglu:
            self.gelu = nn.GELU(approximate="tanh")

    def forward(self, x: torch.Tensor, counts: torch.Tensor, rows: torch.Tensor | None = None) -> torch.Tensor:
        """x (B·T·k, d) sorted by expert -> (B·T·k, d). `rows` (B·T·k,): each row's expert, for the biases."""
        if self.swiglu:
            gate = self.gate(self._mm(x, "gate", counts, rows))  # (B·T·k, d_expert)
            up = self.up(self._mm(x, "up", counts, rows))  # (B·T·k, d_expert)
            hidden = self.gated(swiglu(self, gate, up))
        elif self.relu2:
            hidden = self.squared(torch.square(self.relu(self.fc(self._mm(x, "fc", counts, rows)))))  # max(0, x)²
        else:
            hidden = self.gelu(self.fc(self._mm(x, "fc", counts, rows)))
        return self.down(self._mm(hidden, "down", counts, rows))  # (B·T·k, d)

    def _mm(self, x: torch.Tensor, name: str, counts: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
        """Each row through its expert's matrix `w_<name>`, plus its expert's bias `b_<name>` where the experts have
        biases (gathered per row: an add, no matmul FLOPs)."""
        y = grouped_mm(x, getattr(self, "w_" + name), counts)
        return y + getattr(self, "b_" + name)[rows] if self.biased else y


class MoE(nn.Module):
    """A mixture of experts in the MLP's place. A router (d, E) scores the E experts for each token; the top k get
    it, weighted by their softmax scores renormalised to sum to 1 (Mixtral's rule, and Qwen's with norm_topk_prob);
    the B·T·k (token, expert) pairs are sorted by expert and each token's row is copied to them, (B·T·k, d) in all;
    the experts run over their shares (`Experts`); each row's output is weighted and added back to its token. Shared
    experts (one MLP of width E_shared·d_shared, with Qwen2-MoE's sigmoid gate (d, 1) where set) see every token.

    No token is dropped or padded, so every tensor's shape is fixed by B, T, k and E whatever the routing; only how
    the B·T·k rows split among the experts (`counts`) depends on the values (balanced: B·T·k/E each). Maps (B, T, d)
    to (B, T, d)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.E, self.k = cfg.E, cfg.k
        self.router = nn.Linear(cfg.d, cfg.E, bias=cfg.expert_bias)  # W_router: (d, E), gpt-oss's bias (E,)
        if cfg.score_bias:  # ERNIE 4.5's correction bias (E,): it picks the experts, the probabilities weigh them
            self.score_bias = nn.Parameter(torch.zeros(cfg.E))
            self.scored = Tap()
        for name in ("probs", "top_weights", "top_experts", "weights", "order", "counts", "token", "dispatched",
                     "sorted_weights", "weighted", "combined"):
            setattr(self, name, Tap())
        self.experts = Experts(cfg)
        if cfg.E_shared:
            self.shared = MLP(cfg, width=cfg.E_shared * cfg.d_shared, bias=False)
            if cfg.shared_gate:
                self.shared_gate = nn.Linear(cfg.d, 1, bias=False)  # (d, 1)
                self.shared_scale, self.shared_out = Tap(), Tap()
            self.out = Tap()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, d = x.shape
        logits = self.router(x)  # (B, T, E)
        probs = self.probs(F.softmax(logits, dim=-1, dtype=torch.float32))  # (B, T, E), fp32 whatever the dtype
        if hasattr(self, "score_bias"):  # the biased probabilities pick the k experts; their own weigh them
            chosen = torch.topk(self.scored(probs + self.score_bias), self.k, dim=-1)[1]  # (B, T, E) -> (B, T, k)
            top = probs.gather(-1, chosen)  # (B, T, k)
        else:
            top, chosen = torch.topk(probs, self.k, dim=-1)  # (B, T, k) each
        top, chosen = self.top_weights(top), self.top_experts(chosen)
        weights = self.weights((top / top.sum(-1, keepdim=True)).to(x.dtype))  # (B, T, k), each row sums to 1
        flat = chosen.reshape(-1)  # (B·T·k,) the expert of each (token, expert) pair
        order = self.order(torch.argsort(flat, stable=True))  # (B·T·k,) the pairs sorted by expert
        counts = self.counts(flat.new_zeros(self.E).scatter_add_(0, flat, flat.new_ones(()).expand_as(flat)))  # (E,)
        token = self.token(order // self.k)  # (B·T·k,) the token of each sorted pair
        dispatched = self.dispatched(x.reshape(B * T, d)[token])  # (B·T·k, d)
        y = self.experts(dispatched, counts, flat[order])  # (B·T·k, d)
        scale = self.sorted_weights(weights.reshape(-1)[order].unsqueeze(1))  # (B·T·k, 1)
        weighted = self.weighted(y * scale)  # (B·T·k, d)
        out = self.combined(weighted.new_zeros(B * T, d).index_add_(0, token, weighted).view(B, T, d))  # (B, T, d)
        if not hasattr(self, "shared"):
            return out
        shared = self.shared(x)  # (B, T, d)
        if hasattr(self, "shared_gate"):
            shared = self.shared_out(self.shared_scale(torch.sigmoid(self.shared_gate(x))) * shared)  # (B, T, 1) ·
        return self.out(out + shared)


def module(cfg: Config) -> nn.Module:
    """One MoE block's mixture of experts."""
    return MoE(cfg)


# --- its tensors in the lesson's notation (`model.tensor_notation`), in the MLP's place in its blocks ------------------
NOTATION: dict[str, tuple[str, str]] = {
    "moe.router": ("(B, T, E)", "router logits x W_router, a score per expert"),
    "moe.probs": ("(B, T, E)", "softmax over the E experts, fp32 whatever the dtype"),
    "moe.top_weights": ("(B, T, k)", "the k largest probabilities of each token (top-k)"),
    "moe.top_experts": ("(B, T, k)", "which k experts each token goes to (int64)"),
    "moe.weights": ("(B, T, k)", "the k weights renormalised to sum to 1"),
    "moe.order": ("(B·T·k)", "the B·T·k (token, expert) pairs sorted by expert (int64)"),
    "moe.counts": ("(E)", "tokens each expert got, its share of the B·T·k rows (int64; B·T·k/E if balanced)"),
    "moe.token": ("(B·T·k)", "the token of each sorted pair (int64)"),
    "moe.dispatched": ("(B·T·k, d)", "tokens dispatched to their experts, sorted by expert: k rows per token"),
    "moe.experts.gate": ("(B·T·k, d_expert)", "each expert's gate x W_gate[e] over its share of the rows"),
    "moe.experts.up": ("(B·T·k, d_expert)", "each expert's up x W_up[e] over its share"),
    "moe.experts.silu": ("(B·T·k, d_expert)", "SiLU(gate)"),
    "moe.experts.gated": ("(B·T·k, d_expert)", "SiLU(gate) · up"),
    "moe.experts.fc": ("(B·T·k, d_expert)", "each expert's hidden x W_fc[e] over its share of the rows"),
    "moe.experts.gelu": ("(B·T·k, d_expert)", "GELU"),
    "moe.experts.relu": ("(B·T·k, d_expert)", "ReLU: max(0, x)"),
    "moe.experts.squared": ("(B·T·k, d_expert)", "ReLU²: max(0, x)², squared"),
    "moe.experts.down": ("(B·T·k, d)", "each expert's output, d_expert → d (W_down[e])"),
    "moe.sorted_weights": ("(B·T·k, 1)", "each row's routing weight"),
    "moe.weighted": ("(B·T·k, d)", "expert outputs times their weights"),
    "moe.combined": ("(B, T, d)", "the weighted combine: each token's k rows added back"),
    "moe.shared.gate": ("(B, T, E_shared·d_shared)", "shared experts' gate x W_gate (every token)"),
    "moe.shared.up": ("(B, T, E_shared·d_shared)", "shared experts' up x W_up"),
    "moe.shared.silu": ("(B, T, E_shared·d_shared)", "SiLU(gate)"),
    "moe.shared.gated": ("(B, T, E_shared·d_shared)", "SiLU(gate) · up"),
    "moe.shared.fc": ("(B, T, E_shared·d_shared)", "shared experts' hidden (every token)"),
    "moe.shared.gelu": ("(B, T, E_shared·d_shared)", "GELU"),
    "moe.shared.relu": ("(B, T, E_shared·d_shared)", "ReLU: max(0, x)"),
    "moe.shared.squared": ("(B, T, E_shared·d_shared)", "ReLU²: max(0, x)², squared"),
    "moe.shared.proj": ("(B, T, d)", "shared experts' output"),
    "moe.shared_gate": ("(B, T, 1)", "shared experts' gate logit x W_shared_gate (d, 1)"),
    "moe.shared_scale": ("(B, T, 1)", "sigmoid of the gate logit"),
    "moe.shared_out": ("(B, T, d)", "shared experts' output times their gate"),
    "moe.out": ("(B, T, d)", "routed experts + shared experts"),
}
ROUTING_NOTE = ("routing: the B·T·k (token, expert) rows are exact whatever the routing (no token dropped or padded); "
                "an expert's share of them is a slice, B·T·k/E rows when routing is balanced (a real pass's shares: "
                "python -m model --values)")


def notation(cfg: Config, rows: dict[str, tuple[str, str]]) -> None:
    """The mixture of experts' rows (the clamped SwiGLU's, gpt-oss's biased router and ERNIE 4.5's correction bias
    where set)."""
    if not present(cfg):
        return
    rows.update(NOTATION)
    if cfg.swiglu_limit is not None:
        for row in ("moe.experts.gated", "moe.shared.gated"):
            rows[row] = (rows[row][0], CLAMPED_GATED)
    if cfg.expert_bias:
        rows["moe.router"] = ("(B, T, E)", "router logits x W_router + b, a score per expert")
    if cfg.score_bias:
        rows["moe.scored"] = ("(B, T, E)", "the probabilities plus the correction bias (E), which pick the k experts "
                                           "(fp32)")
        rows["moe.top_weights"] = ("(B, T, k)", "the probabilities of the k experts picked (the bias does not weigh "
                                                "them)")


def words(cfg: Config) -> list[str]:
    """A mixture of experts in words: "mixture of experts: top-2 of 8 experts in every block", "… top-6 of 160
    experts and 2 shared in blocks 1 … 59 (block 0 dense)"; gpt-oss's biases."""
    if not present(cfg):
        return []
    shared_words = f" and {cfg.E_shared:,} shared" if cfg.E_shared else ""
    gate = " (gated)" if cfg.shared_gate else ""
    where = "every block"
    if "dense" in cfg.mlp_kinds:
        where = f"{_span(cfg, 'moe')} ({_span(cfg, 'dense')} dense)"
    return [f"mixture of experts: top-{cfg.k:,} of {cfg.E:,} experts{shared_words}{gate} in {where}",
            *(["router and expert biases"] if cfg.expert_bias else [])]


def _span(cfg: Config, kind: str) -> str:
    """The blocks of a kind as the shapes table's groups name them ("blocks 3 … 60", "block 0")."""
    blocks = tuple(i for i, k in enumerate(cfg.mlp_kinds) if k == kind)
    return f"block {blocks[0]}" if len(blocks) == 1 else f"blocks {blocks_text(blocks)}"


def describe(cfg: Config) -> str:
    """Its sizes in a configuration's one line: E, k, d_expert (E_shared and d_shared), L_moe."""
    if not present(cfg):
        return ""
    shared_sizes = f" E_shared={cfg.E_shared:,} d_shared={cfg.d_shared:,}" if cfg.E_shared else ""
    return f"E={cfg.E:,} k={cfg.k:,} d_expert={cfg.d_expert:,}{shared_sizes} L_moe={cfg.L_moe:,}"


def headline(cfg: Config, b: Budget) -> str:
    """What a report's first line adds beside N: the parameters one token uses."""
    return f" · N_active = {b.params_active:,}" if present(cfg) else ""


def footer(cfg: Config, b: Budget) -> str:
    """What a report's last line adds: N_active, the parameters one token uses."""
    if not present(cfg):
        return ""
    return (f"; N_active = {b.params_active:,} ({units.params(b.params_active)}), those one token uses (k of the E "
            f"experts)")


def notes(cfg: Config) -> list[str]:
    """The notes under the shapes table: the routing's."""
    return [ROUTING_NOTE] if present(cfg) else []


def counted(cfg: Config) -> str:
    """What the budget's N says it counts: every expert, as memory holds them."""
    return " (every expert: what memory holds)" if present(cfg) else ""


# --- its change from the GPT-2 twin (`model.changes`) ----------------------------------------------------------------
ORDER_NOTE = ("A mixture of experts comes after fused attention (before a family's extras, a sliding window or latent "
              "attention): where every block is MoE, the dense MLP before it has the same FLOPs per token, d_ff = "
              "k·d_expert (+ E_shared·d_shared).")


def order_note(cfg: Config) -> list[str]:
    """Where the change of a mixture of experts comes in the chain, in words."""
    return [ORDER_NOTE] if present(cfg) else []


def dense_width(cfg: Config) -> int:
    """The dense MLP's width the chain of changes passes through: d_ff, or where every block is a mixture of experts,
    the width of the same FLOPs per token, k·d_expert + E_shared·d_shared."""
    if not present(cfg) or "dense" in cfg.mlp_kinds:
        return cfg.d_ff
    return cfg.k * cfg.d_expert + cfg.E_shared * (cfg.d_shared or 0)


def title_values(cfg: Config) -> dict[str, str]:
    """The numbers the change's title names (`model.changes.title_values`)."""
    if not present(cfg):
        return {}
    ratio = cfg.E / cfg.k
    return {"E": f"{cfg.E:,}", "k": f"{cfg.k:,}", "d_expert": f"{cfg.d_expert:,}", "L_moe": f"{cfg.L_moe:,}",
            "ratio": f"{ratio:g}" if ratio == int(ratio) else f"{ratio:.3g}",
            "shared": " + E_shared·d_shared" if cfg.E_shared else ""}


def title_key(cfg: Config) -> str:
    """The change's title (`model.changes.TITLES`): where some blocks stay dense, of the MoE blocks only."""
    return "moe/mixed" if "dense" in cfg.mlp_kinds else "moe"


def change_target(key: str, cfg: Config, target: dict[str, object]) -> None:
    """The fields a change sets on the way (`model.changes`): where every block is MoE, the MLP change's d_ff is the
    dense MLP of the same FLOPs as the experts a token uses."""
    if key == "mlp" and present(cfg) and "dense" not in cfg.mlp_kinds:
        target["ff_dim"] = dense_width(cfg)


def dense_ff(s: Config, cfg: Config) -> Expr | None:
    """What a state's d_ff is in cfg's symbols where every block of cfg is a mixture of experts and the state still
    has the dense MLP of the same FLOPs: k·d_expert (+ E_shared·d_shared); None otherwise."""
    if present(cfg) and not present(s) and "dense" not in cfg.mlp_kinds and s.d_ff == dense_width(cfg):
        return E("k·d_expert + E_shared·d_shared") if cfg.E_shared else E("k·d_expert")
    return None


def change_lines(cfg: Config, cache: dict[str, Line]) -> tuple[Line, ...]:
    """The change's line beside its figures: each MoE block's routed experts hold E/k times the parameters of the k a
    token runs (checked)."""
    s = cfg.symbols()
    ratio = Fraction(experts(cfg).value(s), experts(cfg, used=True).value(s))
    if ratio != Fraction(cfg.E, cfg.k):
        raise RuntimeError(f"the experts hold {ratio} times the parameters a token uses, not E/k")
    return (line("changes/moe/params_ratio", "mixture of experts: the routed experts' parameters ÷ those of the k a "
                 "token runs, each MoE block", E("E/k"), s, "ratio"),)


CAVEAT = ("a mixture of experts is counted at N_active, the parameters one token uses: Chinchilla's D = 20·N_active, C = "
              "6·N_active·D (the FLOPs a token runs) and the fit at N_active; Chinchilla's rule and fit were measured on "
              "dense models, so for a mixture of experts they are a rough guide, not its scaling law (its memory is "
              "every expert's, N)")  # training's counts at N_active
SAYS = {  # the words a mixture of experts adds elsewhere (`model.parts.says`)
    "train/fit_note": f"; {CAVEAT}",
    "train/n": "N_active",  # what C = 6·N·D counts
    "train/active": " active",
    "train/every": " (all N: every expert)",
    "train/C": "C = 6·N_active·D, training FLOPs (a token runs k of the E experts: forward 2N_active + backward "
               "4N_active)",
    "memory/rows": ", k experts' worth of rows per token in the MoE blocks",
    "train/rule": "_active",  # the live training card's switch: Chinchilla's rule at N_active
}


# --- serving: of each MoE block's E routed experts, a step reads those its tokens' k choices touch -------------------
SERVING_WORDS = {  # what a serving line adds where some blocks are a mixture of experts (`serving_words`)
    "infer/n_q": ", and so do the routers",
    "infer/prefill_bytes": " (of each MoE block's routed experts, the E·(1 − (1 − k/E)^(BT)) its B·T tokens' choices "
                           "touch)",
    "infer/decode_weights_read": "; of each MoE block's E routed experts, the E_B its B·k choices touch",
}


def serving_words(cfg: Config, key: str) -> str:
    """What serving's line `key` adds for a mixture of experts ("" without one)."""
    return SERVING_WORDS.get(key, "") if present(cfg) else ""


def touched(cfg: Config, tokens: int) -> float:
    """E_B: the routed experts of an MoE block that `tokens` tokens' k choices each touch, expected under uniform
    routing (each token's k of E experts equally likely, tokens independent): an expert escapes one token with
    probability 1 − k/E, so E·(1 − (1 − k/E)^B) are touched at B tokens: k at B = 1, E as B grows (0 without experts)."""
    return cfg.E * (1 - (1 - cfg.k / cfg.E) ** tokens) if present(cfg) else 0


def expert_bytes(cfg: Config, w_bytes: float, scale_bytes: int, N_e: int, S_e: int) -> tuple[float, Expr | None]:
    """One routed expert's bytes with its N_e matrix weights at `w_bytes` each and its S_e scales at `scale_bytes`,
    its biases (gpt-oss's 2d_expert + d, `bias`) at 16 bits, and their formula; (0, None) without experts."""
    if not present(cfg):
        return 0, None
    b = bias(cfg)
    biases = int(b.value(cfg.symbols())) if b is not None else 0
    formula = total(E("{b}·N_e", b=num(w_bytes)), E("2·S_e") if scale_bytes else None,
                    E("2·({x})", x=b) if b is not None else None)
    return w_bytes * N_e + scale_bytes * S_e + 2 * biases, formula


def untouched(cfg: Config, tokens: int, expert: float) -> float:
    """The routed experts' bytes (`expert` each) that `tokens` tokens' choices leave unread, all MoE blocks."""
    return cfg.L_moe * (cfg.E - touched(cfg, tokens)) * expert if present(cfg) else 0


def read(cfg: Config, formula: Expr, expert: Expr | None) -> Expr:
    """The weights a decode step reads: `formula` less each MoE block's E − E_B untouched experts' bytes."""
    return E("{r} − L_moe·(E − E_B)·({x})", r=formula, x=expert) if present(cfg) else formula
