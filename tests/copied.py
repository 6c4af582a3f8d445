"""transformers' module of a config.json with random weights, and this explorer's module holding the same weights: the
logits tests of the families built from Llama's block (OLMo 2 and 3, SmolLM3, Command A, EXAONE 4, Arcee, Jais 2,
Llama 4, Qwen3-Next). A test copies what its family has beyond the embeddings and the final norm with `attention`,
`gated_attention` and `gated`."""
from __future__ import annotations

from dataclasses import replace

import torch

from model import GPT
from model.config import from_hf
from test_window import _module


@torch.no_grad()
def pair(doc: dict) -> tuple[torch.nn.Module, GPT]:
    """transformers' CPU module of `doc` (every weight N(0, 0.3), seed 0) and this explorer's eager module at B = 2,
    T = 10 with its token table, head and final norm copied in."""
    torch.manual_seed(0)
    ref = _module(doc, "cpu").eval()
    for p in ref.parameters():
        p.normal_(0, 0.3)
    ours = GPT(replace(from_hf(doc, B=2, T=10), attention="eager")).eval()
    ours.wte.weight.copy_(ref.model.embed_tokens.weight)
    ours.head.weight.copy_(ref.lm_head.weight)
    ours.ln_f.load_state_dict(ref.model.norm.state_dict())
    return ref, ours


@torch.no_grad()
def attention(block: torch.nn.Module, attn: torch.nn.Module, q: torch.Tensor | None = None,
              k: torch.Tensor | None = None, q_bias: torch.Tensor | None = None) -> None:
    """transformers' q_proj, k_proj, v_proj (their rows `q`, `k` and q's bias `q_bias` where a test reorders or splits
    them) and o_proj, and their biases where it has them, into `block`'s fused W_qkv and W_o."""
    q = attn.q_proj.weight if q is None else q
    k = attn.k_proj.weight if k is None else k
    block.attn.qkv.weight.copy_(torch.cat([q, k, attn.v_proj.weight]))
    block.attn.proj.weight.copy_(attn.o_proj.weight)
    if attn.q_proj.bias is not None:
        q_bias = attn.q_proj.bias if q_bias is None else q_bias
        block.attn.qkv.bias.copy_(torch.cat([q_bias, attn.k_proj.bias, attn.v_proj.bias]))
    if attn.o_proj.bias is not None:
        block.attn.proj.bias.copy_(attn.o_proj.bias)


@torch.no_grad()
def gated_attention(block: torch.nn.Module, attn: torch.nn.Module, heads: int) -> None:
    """Qwen3-Next's attention into `block`'s: its q_proj's rows, (h, 2·d_head) each head's query then its gate, split
    into W_qkv's query rows and the output gate's W_g (their biases alike); k_proj, v_proj and o_proj as `attention`."""
    def split(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        both = t.view(heads, 2, attn.head_dim, *t.shape[1:])  # (h, query or gate, d_head, …)
        return both[:, 0].reshape(-1, *t.shape[1:]), both[:, 1].reshape(-1, *t.shape[1:])

    q, gate = split(attn.q_proj.weight)
    q_bias, gate_bias = split(attn.q_proj.bias) if attn.q_proj.bias is not None else (None, None)
    attention(block, attn, q=q, q_bias=q_bias)
    block.attn.gate.weight.copy_(gate)
    if gate_bias is not None:
        block.attn.gate.bias.copy_(gate_bias)


@torch.no_grad()
def gated(mlp: torch.nn.Module, m: torch.nn.Module) -> None:
    """transformers' gate_proj, up_proj and down_proj into a SwiGLU's W_gate, W_up and W_down."""
    mlp.gate.weight.copy_(m.gate_proj.weight)
    mlp.up.weight.copy_(m.up_proj.weight)
    mlp.proj.weight.copy_(m.down_proj.weight)


def assert_same_module(ref: torch.nn.Module, ours: torch.nn.Module, x: torch.Tensor, tol: float = 1e-5) -> None:
    """`ours` holding `ref`'s weights computes its output on `x`, counts its FLOPs (FlopCounterMode, both on the
    CPU) and has as many parameters: a stateful mixer's test against transformers' (Gated DeltaNet, Mamba 2, Mamba,
    Kimi delta attention, Falcon-H1's)."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as theirs:
        expected = ref(x)
    with FlopCounterMode(display=False) as mine:
        got = ours(x)
    torch.testing.assert_close(got, expected, atol=tol, rtol=tol)
    assert mine.get_total_flops() == theirs.get_total_flops() > 0
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in ref.parameters())


def real_saved_bytes(cfg, dtype: str = "fp32") -> int:
    """What autograd keeps for backward of `GPT(cfg)`, all L blocks on real CPU tensors at `dtype` (seed 0, random
    token ids): the reference of the meta pass's `trace(cfg, dtype).saved_bytes`."""
    from model.passes import TORCH_DTYPES, saved_bytes_of

    torch.manual_seed(0)
    m = GPT(cfg).to(TORCH_DTYPES[dtype])
    return saved_bytes_of(m, torch.randint(0, cfg.V, (cfg.B, cfg.T)))
