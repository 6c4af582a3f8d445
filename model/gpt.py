"""The lesson's decoder as one `nn.Module`, in nanoGPT's spirit but with every intermediate tensor exposed.

One module, many recipes: the token table, the positions (a learned table or RoPE), L blocks and the head, each
block stacked from its parts (`model.stack`): a norm, the mixer every block has (`model.parts.attention`: h query
heads, h_kv heads of K and V, biases, QK-norm, eager or fused; or `model.parts.latent`, DeepSeek's), through a window
where `Config.attn_kinds` says so (`model.parts.window`), a norm, and the block's MLP of its kind
(`Config.block_kinds`): dense (`model.parts.mlp`) or a mixture of experts (`model.parts.moe`). Each part builds its
own module (`module`). With the defaults it is GPT-2, tensor for tensor.

Each tensor the lesson draws passes through a named `Tap` (an identity module), so forward hooks see the
tensors inside attention that are no module's output (q, k, v, scores, the masked scores, ...). Eager attention
(the default) is written out, so the (B, h, T, T) score tensor really exists; fused attention is one kernel
(`model.parts.attention.fused_attention`) that never makes it and keeps a (B, h, T) log-sum-exp instead.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from . import stack
from .config import NOPE, Config, mlp_kind
from .parts import hybrid, norms, window
from .parts.moe import Experts
from .parts.norms import RMSNorm
from .parts.positions import Rotary
from .taps import Tap



class Block(nn.Module):
    """Pre-norm block: x = x + Attn(norm(x)); x = x + MLP(norm(x)) (with `post_norms`, Gemma's sandwich: x = x +
    norm(Attn(norm(x))); x = x + norm(MLP(norm(x))); another wiring where a part gives one, `model.stack.wiring`), the MLP dense (`mlp`) or a mixture of experts
    (`moe`) as `kind` says ("dense" or "moe", "_nope" after it for a block without RoPE, "_lin" for one whose mixer is
    Gated DeltaNet, `lin`, in attention's place, "_ssm" for Mamba 2's, `ssm`: `Config.block_kinds`), attention through
    a window of `window` keys or full (`Config.attn_kinds`). Maps (B, T, d) to (B, T, d)."""

    def __init__(self, cfg: Config, kind: str = "dense", window: int | None = None) -> None:
        super().__init__()
        self.kind = kind
        self._wiring = stack.wiring(cfg)  # how attention and the MLP read and add to the residual stream
        self.ln_1 = norms.module(cfg, cfg.d)
        stateful = stack.stateful_kind(kind)  # Gated DeltaNet (`lin`) or Mamba 2 (`ssm`) in attention's place
        if stateful is not None:
            setattr(self, stateful.KEY, stateful.module(cfg))
            self._mixer = stateful.KEY
            if stack.beside(cfg):  # a parallel hybrid block: attention too (`model.parts.hybrid`)
                self.attn = stack.mixer(cfg).module(cfg, window, rope=not kind.endswith(NOPE))
                for name in hybrid.SCALES:
                    setattr(self, name, Tap())
        else:
            self._mixer = "attn"
            self.attn = stack.mixer(cfg).module(cfg, window, rope=not kind.endswith(NOPE))
        for name, module in norms.sandwich(cfg).items():  # Gemma's post_ln_1 and post_ln_2
            setattr(self, name, module)
        self.resid_1 = Tap()
        for name in self._wiring.NORMS[1:]:  # the lesson's ln_2 before the MLP
            setattr(self, name, norms.module(cfg, cfg.d))
        ffn = stack.FFNS[mlp_kind(kind)]
        setattr(self, ffn.NAME, ffn.module(cfg))  # "mlp" or "moe": the tensors' names say which
        self._ffn = ffn.NAME
        self.resid_2 = Tap()

    @property
    def attends(self) -> bool:
        """Its mixer is attention (not a part with a fixed state in attention's place)."""
        return self._mixer == "attn"

    @property
    def mixer(self) -> nn.Module:
        """The block's token mixer: attention (`attn`), Gated DeltaNet (`lin`) or Mamba 2 (`ssm`)."""
        return getattr(self, self._mixer)

    @property
    def ffn(self) -> nn.Module:
        """The block's MLP: dense or a mixture of experts."""
        return getattr(self, self._ffn)

    def forward(self, x: torch.Tensor, rope: tuple[torch.Tensor, torch.Tensor] | None = None,
                past: tuple[torch.Tensor, torch.Tensor] | None = None,
                band: torch.Tensor | None = None) -> torch.Tensor:
        return self._wiring.wire(self, x, (rope, past, band))

    def post(self, y: torch.Tensor, name: str) -> torch.Tensor:
        """y through the sandwich norm `name` where the block has it (no local holds y: the peak's lifetimes stay
        the lesson block's)."""
        return getattr(self, name)(y) if hasattr(self, name) else y


def init_weights(module: nn.Module) -> None:
    """GPT-2's initialisation: weights N(0, 0.02), biases 0 (norm gains 1), so an untrained model's loss starts near ln V."""
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, mean=0.0, std=0.02)
    if isinstance(module, nn.Linear) and module.bias is not None:
        nn.init.zeros_(module.bias)
    if isinstance(module, RMSNorm) and hasattr(module, "weight"):
        nn.init.ones_(module.weight)
    if isinstance(module, Experts):  # stacked expert matrices: N(0, 0.02) as every other weight; their biases 0
        for weight in module.parameters(recurse=False):
            nn.init.normal_(weight, mean=0.0, std=0.02) if weight.dim() == 3 else nn.init.zeros_(weight)


class GPT(nn.Module):
    """Token table W_te (V, d) + position table W_pe (T_max, d) or RoPE, L blocks, final norm, head.

    The head is tied to W_te when `cfg.tie` (it adds no parameters, but its matmul still costs 2dV FLOPs per
    token); `tie=False` gives a separate bias-free `Linear(d, V)`.

    `depth` builds only the first `depth` blocks (default all L), each of its kind (`Config.block_kinds`). Tracing
    builds one block of each kind (`model.config.one_of_each`): every block is a shape-preserving map
    (B, T, d) -> (B, T, d), so every block of a kind repeats that block's shapes exactly.
    With RoPE, the angles are made once per pass (`embed_tokens`) and every block rotates q and k by them; with a
    window and fused attention, so is the band mask (`window_mask`, (T, T) at the pass's dtype) every windowed block's
    kernel takes (one tensor, kept once for the backward pass).
    """

    def __init__(self, cfg: Config, *, depth: int | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.V, cfg.d)  # W_te
        if cfg.positions == "learned":
            self.wpe = nn.Embedding(cfg.T_max, cfg.d)  # W_pe
            self.embed = Tap()
        elif stack.mixer(cfg).rotary_width(cfg) is not None:  # latent attention rotates d_R features (none: NoPE)
            self.rope = Rotary(stack.mixer(cfg).rotary_width(cfg))
        if cfg.embed_norm:  # nanochat's norm on the token embeddings, before the first block
            self.ln_e = norms.module(cfg, cfg.d)
        self.blocks = nn.ModuleList(Block(cfg, kind, window.width(cfg, attn))
                                    for kind, attn in zip(cfg.block_kinds[:depth], cfg.attn_kinds))
        if window.banded(cfg):  # the fused kernel's band of W, made once per pass
            self.window_mask = Tap()
        self._band: torch.Tensor | None = None
        self.ln_f = norms.module(cfg, cfg.d)
        self.head = nn.Linear(cfg.d, cfg.V, bias=cfg.head_bias)  # Phi's bias (V,)
        if cfg.tie:
            self.head.weight = self.wte.weight
        if cfg.embed_scale:
            self.scaled = Tap()
        if cfg.final_softcap is not None:
            self.capped = Tap()
        self.loss = Tap()
        self._rope: tuple[torch.Tensor, torch.Tensor] | None = None
        if self.wte.weight.device.type != "meta":  # meta modules (tracing) need no values
            self.apply(init_weights)

    def embed_tokens(self, idx: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(B, T) token ids -> (B, T, d) residual stream: tok + pos (learned), or tok with RoPE's angles made.
        `start`: the position of idx's first token (a decode step's new token comes after `start` cached ones)."""
        T = idx.shape[1]
        tok = self.wte(idx)  # (B, T, d)
        if self.cfg.embed_scale:  # Gemma: tok · √d, the scale at the table's dtype (as transformers casts it)
            tok = self.scaled(tok * torch.tensor(math.sqrt(self.cfg.d), dtype=tok.dtype))
        if hasattr(self, "window_mask") and start == 0:  # a prefill: the windowed blocks' band, made once
            self._band = self.window_mask(window.band_mask(T, self.cfg.W, idx.device, tok.dtype, self.cfg.chunked))
        if self.cfg.positions == "rope":
            if hasattr(self, "rope"):
                self._rope = self.rope(T, idx.device, tok.dtype, start)  # cos, sin: (T, d_head) each
            return self._embed_norm(tok)
        if start + T > self.cfg.T_max:
            raise ValueError(f"T={start + T} exceeds T_max={self.cfg.T_max}: the learned position table cannot "
                             "extrapolate")
        pos = self.wpe(torch.arange(start, start + T, device=idx.device))  # (T, d), broadcast over B
        return self._embed_norm(self.embed(tok + pos))  # (B, T, d)

    def _embed_norm(self, x: torch.Tensor) -> torch.Tensor:
        """x through the norm on the token embeddings, where the recipe has one (`embed_norm`: nanochat's)."""
        return self.ln_e(x) if hasattr(self, "ln_e") else x

    def block(self, i: int, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
        """Block i on x, with the angles of the last `embed_tokens` when the recipe uses RoPE (and a decode
        step's cache of block i, `past`)."""
        if self._rope is None and past is None and self._band is None:  # GPT-2's recipe: the block's lesson call
            return self.blocks[i](x)
        return self.blocks[i](x, self._rope, past, self._band)

    def output(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> logits (B, T, V): final norm and head, soft-capped c·tanh(logits / c) with `final_softcap`."""
        logits = self.head(self.ln_f(x))
        c = self.cfg.final_softcap
        return logits if c is None else self.capped(torch.tanh(logits / c) * c)

    def logits_and_loss(self, x: torch.Tensor, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T, d) -> logits (B, T, V) and the next-token loss.

        Loss: mean cross-entropy of logits[:, :-1] against idx[:, 1:] (position t predicts token t+1);
        None when T = 1, where there is no next token to predict.
        """
        logits = self.output(x)  # (B, T, V)
        if idx.shape[1] < 2:
            return logits, None
        V = logits.shape[-1]
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), idx[:, 1:].reshape(-1))
        return logits, self.loss(loss)  # ()

    def forward(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(B, T) token ids -> (logits (B, T, V), loss () or None)."""
        x = self.embed_tokens(idx)
        for i in range(len(self.blocks)):
            x = self.block(i, x)
        self.end_blocks()
        return self.logits_and_loss(x, idx)

    def end_blocks(self) -> None:
        """Drop what the blocks shared in a pass (RoPE's angles, the window's band): after the blocks they live on
        only where autograd saved them."""
        self._rope = self._band = None

    def decode(self, idx: torch.Tensor, past: list[tuple[torch.Tensor, torch.Tensor]],
               start: int | None = None) -> torch.Tensor:
        """One decode step: idx (B, 1), each sequence's new token, after the T_c tokens cached in `past` (one
        (K, V) pair per built block, (B, h_kv, T_c, d_head) each; a windowed block's holds min(T_c, W − 1) of them)
        -> logits (B, 1, V) of the next token. `start`: T_c, the new token's position (default: the longest cache)."""
        x = self.embed_tokens(idx, start=max(p[0].shape[2] for p in past) if start is None else start)
        for i in range(len(self.blocks)):
            x = self.block(i, x, past[i])
        self.end_blocks()
        return self.output(x)

    def num_params(self) -> int:
        """Unique parameters of the built module; the tied head's weight is W_te and counts once."""
        return sum(p.numel() for p in self.parameters())


FILLS = (torch.ops.aten.uniform_.default, torch.ops.aten.normal_.default, torch.ops.aten.zero_.default,
         torch.ops.aten.fill_.Scalar)  # what torch's own layers do to their new weights (`reset_parameters`)


class _NoFill(TorchDispatchMode):
    """Skips filling a meta tensor with values (`FILLS`): the meta device holds none, so they change nothing, and
    their Python meta kernels cost half of building a module there."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in FILLS and args[0].device.type == "meta":
            return args[0]
        return func(*args, **(kwargs or {}))


def meta_gpt(cfg: Config, **kwargs) -> GPT:
    """`GPT(cfg, **kwargs)` on the meta device: every shape, no values (torch's layers' initialisations skipped)."""
    with torch.device("meta"), _NoFill():
        return GPT(cfg, **kwargs)
